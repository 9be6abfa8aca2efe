#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ftracectl is a thin, unprivileged client: it links the format library
(zstd) and libc, never the daemon's tracing, systemd or capability
libraries, nor babeltrace2 (the plugin is its own shared object). Checked on the built binary with ldd and nm."""

import os
import subprocess
import sys

FTRACECTL = os.environ["FTRACECTL"]
FORBIDDEN_LIBS = ("libtracefs", "libtraceevent", "libsystemd", "libcap", "libbabeltrace2")
# Symbols of daemon-only modules that must not be linked in.
FORBIDDEN_SYMBOLS = ("instance_", "recovery_", "session_new", "manager_", "capture_stream",
                     "capture_worker", "segment_", "metadata_", "v7_write_",
                     "tracefs_", "tep_", "sd_", "bt_", "tc_source_", "tc_iter_")


def main():
    libs = subprocess.run(["ldd", FTRACECTL], capture_output=True, text=True, check=True).stdout
    problems = ["links %s" % lib for lib in FORBIDDEN_LIBS if lib in libs]
    nm = subprocess.run(["nm", "-P", FTRACECTL], capture_output=True, text=True)
    if nm.returncode == 0:
        for line in nm.stdout.splitlines():
            name = line.split()[0]
            if any(name.startswith(p) for p in FORBIDDEN_SYMBOLS):
                problems.append("carries %s" % name)
    for p in problems:
        print("ftracectl " + p)
    print("%d passed, %d failed" % (0 if problems else 1, 1 if problems else 0))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
