#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The systemd units as built: `systemd-analyze verify` finds nothing, and
`systemd-analyze security --offline=true` rates the service 2.0 or better.
ExecStart= and ExecReload= point at the built daemon and client, so verify checks
real binaries."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

SERVICE = os.environ["FTRACED_SERVICE"]
SOCKET = os.environ["FTRACED_SOCKET_UNIT"]
FTRACED = os.environ["FTRACED"]
FTRACECTL = os.environ["FTRACECTL"]
EXPOSURE_MAX = 2.0


def main():
    if not shutil.which("systemd-analyze"):
        print("SKIP: systemd-analyze is not installed")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        with open(SERVICE) as f:
            text = f.read()
        assert re.search(r"^ExecStart=\S*/ftraced$", text, re.M), "unexpected ExecStart="
        assert re.search(r"^ExecReload=\S*/ftracectl .*reload$", text, re.M), \
            "unexpected ExecReload="
        text = re.sub(r"^ExecStart=.*$", "ExecStart=" + os.path.abspath(FTRACED), text,
                      flags=re.M)
        text = re.sub(r"^ExecReload=\S*/ftracectl ", "ExecReload=" + os.path.abspath(FTRACECTL)
                      + " ", text, flags=re.M)
        with open(os.path.join(tmp, "ftraced.service"), "w") as f:
            f.write(text)
        shutil.copy(SOCKET, os.path.join(tmp, "ftraced.socket"))
        units = [os.path.join(tmp, u) for u in ("ftraced.service", "ftraced.socket")]
        r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + units,
                           capture_output=True, text=True)
        assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), \
            "systemd-analyze verify:\n" + r.stdout + r.stderr
        r = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                            units[0]], capture_output=True, text=True)
        m = re.search(r"Overall exposure level for ftraced.service: ([\d.]+)", r.stdout)
        assert m, "no exposure level:\n" + r.stdout + r.stderr
        level = float(m.group(1))
        assert level <= EXPOSURE_MAX, "exposure %.1f > %.1f:\n%s" % (level, EXPOSURE_MAX,
                                                                   r.stdout)
        print("verify clean; exposure level %.1f" % level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
