#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The bash completion of ftracectl, in a real bash: commands, each command's
options (as its --help lists them) and fixed values. Session and event names
need a daemon and tracefs: tests/integration/test_record.py covers them."""

import os
import subprocess
import sys

COMPLETION = os.environ["COMPLETION"]
FTRACECTL = os.environ["FTRACECTL"]


def complete(line, env=None):
    """COMPREPLY for the command line @line (completing its last word)."""
    words = line.split(" ")
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
              '_ftracectl; printf "%s\\n" "${COMPREPLY[@]}"')
    path = os.path.dirname(os.path.abspath(FTRACECTL)) + os.pathsep + os.environ["PATH"]
    r = subprocess.run(["bash", "-c", script, "bash", COMPLETION] + words, capture_output=True,
                       text=True, env=dict(os.environ, PATH=path, **(env or {})), check=True)
    return sorted(w for w in r.stdout.splitlines() if w)


def main():
    checks = [
        ("ftracectl rec", ["record", "recover"]),
        ("ftracectl ", sorted("record create start stop snapshot rotate destroy save reload list "
                              "status metrics recover info verify extract".split())),
        ("ftracectl rel", ["reload"]),
        ("ftracectl ro", ["rotate"]),
        ("ftracectl --js", ["--json"]),
        ("ftracectl record --du", ["--duration"]),
        ("ftracectl record --compression ", ["none", "zstd"]),
        ("ftracectl record -C mo", ["mono", "mono_raw"]),
        ("ftracectl record --no-f", ["--no-filter"]),
        ("ftracectl --json record --stack", ["--stacktrace"]),
        ("ftracectl create x --mo", ["--mode", "--module"]),
        ("ftracectl create x --mode f", ["flight"]),
        ("ftracectl create x --flight-backend ", ["kernel", "memory", "persistent"]),
        ("ftracectl extract --un", ["--until"]),
        ("ftracectl snapshot --t", ["--trim"]),
    ]
    failed = 0
    for line, expected in checks:
        got = complete(line)
        if got != expected:
            print("'%s': expected %s, got %s" % (line, expected, got))
            failed += 1
    print("completion: %d of %d checks failed" % (failed, len(checks)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
