#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The man pages cover what --help shows: every ftracectl command and every
long option of each command, and every ftraced option."""

import os
import re
import subprocess
import sys

MAN = os.environ["MAN_DIR"]


def help_text(*argv):
    r = subprocess.run(list(argv) + ["--help"], capture_output=True, text=True)
    return r.stdout + r.stderr


def described(opt, page):
    """In bold, alone or after its short form: *--opt* or *-o, --opt*."""
    return re.search(r"\*(-[a-zA-Z], )?%s[* ]" % re.escape(opt), page) is not None


def long_options(text):
    return set(re.findall(r"(--[a-z][a-z-]+)", text))


def main():
    problems = []
    with open(os.path.join(MAN, "ftracectl.1.scd")) as f:
        page = f.read()
    top = help_text(os.environ["FTRACECTL"])
    commands = re.findall(r"^  ([a-z]+) ", top.split("Commands:")[1].split("Options:")[0], re.M)
    assert len(commands) >= 10, commands
    for cmd in commands:
        if not re.search(r"^\*%s\*" % cmd, page, re.M):
            problems.append("ftracectl.1: command '%s' is not described" % cmd)
        for opt in long_options(help_text(os.environ["FTRACECTL"], cmd)) - {"--help"}:
            if not described(opt, page):
                problems.append("ftracectl.1: '%s %s' is not described" % (cmd, opt))
    for opt in long_options(top) - {"--help"}:
        if not described(opt, page):
            problems.append("ftracectl.1: '%s' is not described" % opt)
    with open(os.path.join(MAN, "ftraced.8.scd")) as f:
        page = f.read()
    for opt in long_options(help_text(os.environ["FTRACED"])):
        if not described(opt, page):
            problems.append("ftraced.8: '%s' is not described" % opt)
    for p in problems:
        print(p)
    print("man pages: %d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
