#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Help, man pages and README agree with the code, in both directions:
every ftracectl command and every option of each command's --help is in
ftracectl(1), with the same letter; every option ftracectl(1) describes is
one some --help shows; every ftraced option is in ftraced(8); the units
--help and the man page give for TIME and SIZE are the same; and every
option the README's usage block gives a command is one that command's
--help lists. (The bash completion reads --help itself.)"""

import os
import re
import subprocess
import sys

MAN = os.environ["MAN_DIR"]
README = os.path.join(MAN, "..", "README.md")
FTRACECTL = os.environ["FTRACECTL"]


def help_text(*argv):
    r = subprocess.run(list(argv) + ["--help"], capture_output=True, text=True)
    return r.stdout + r.stderr


def described(opt, page):
    """In bold, alone or after its short form: *--opt* or *-o, --opt*."""
    return re.search(r"\*(-[a-zA-Z], )?%s[* ]" % re.escape(opt), page) is not None


def long_options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text))


def letters(text):
    """{--long: -x} for every '-x, --long' pairing in a help text or page."""
    return {long: short for short, long in re.findall(r"(-[a-zA-Z]), (--[a-z][a-z-]+)", text)}


def usage_commands():
    with open(README) as f:
        block = f.read().split("## Using it", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#")[0] for line in block.replace("\\\n", " ").splitlines()
            if line.startswith("ftracectl ")]


def main():
    problems = []
    with open(os.path.join(MAN, "ftracectl.1.scd")) as f:
        page = f.read()
    top = help_text(FTRACECTL)
    commands = re.findall(r"^  ([a-z]+) ", top.split("Commands:")[1].split("Options:")[0], re.M)
    assert len(commands) >= 10, commands
    every = long_options(top)
    page_letters = letters(page)
    for cmd in commands:
        text = help_text(FTRACECTL, cmd)
        if not re.search(r"^\*%s\*" % cmd, page, re.M):
            problems.append("ftracectl.1: command '%s' is not described" % cmd)
        for opt in long_options(text) - {"--help"}:
            if not described(opt, page):
                problems.append("ftracectl.1: '%s %s' is not described" % (cmd, opt))
        for long, short in letters(text).items():
            if long != "--help" and page_letters.get(long) != short:
                problems.append("ftracectl.1: '%s %s' has the letter %s in --help, %s here" %
                                (cmd, long, short, page_letters.get(long)))
        every |= long_options(text)
    # Definitions (a line of their own), not mentions such as trace-cmd's own options.
    for opt in sorted(set(re.findall(r"^\*(?:-[a-zA-Z], )?(--[a-z][a-z-]+)", page, re.M)) - every):
        problems.append("ftracectl.1 describes '%s', which no --help shows" % opt)
    for opt in long_options(top) - {"--help"}:
        if not described(opt, page):
            problems.append("ftracectl.1: '%s' is not described" % opt)
    units = re.search(r"TIME takes ([^.]*)\.", help_text(FTRACECTL, "create"))
    page_units = re.search(r"_TIME_ takes ([^.]*)\.", page)
    if not units or not page_units or units.group(1) != page_units.group(1):
        problems.append("TIME units differ: --help '%s', ftracectl.1 '%s'" % (
            units and units.group(1), page_units and page_units.group(1)))
    with open(os.path.join(MAN, "ftraced.8.scd")) as f:
        page = f.read()
    for opt in long_options(help_text(os.environ["FTRACED"])):
        if not described(opt, page):
            problems.append("ftraced.8: '%s' is not described" % opt)
    for line in usage_commands():
        cmd = line.split()[1]
        text = help_text(FTRACECTL, cmd) + top
        for opt in long_options(line.split(" -- ")[0]):
            if opt not in long_options(text):
                problems.append("README: '%s' gives '%s', which its --help does not list" %
                                (line.strip(), opt))
        for short in re.findall(r"(?<=\s)(-[a-zA-Z])(?=\s)", line):
            if not re.search(r"(^|\s)%s[, ]" % short, text, re.M):
                problems.append("README: '%s' gives '%s', which its --help does not list" %
                                (line.strip(), short))
    for p in problems:
        print(p)
    print("docs: %d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
