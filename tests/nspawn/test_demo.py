#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The README's first command on a fresh Debian 12 machine: a minimal
bookworm root (mmdebstrap, nothing but apt and its base) gets a copy of the
source tree and runs `scripts/demo.sh` in a container with the host's
tracefs bound in. demo.sh must install what it needs from Debian's archive,
build, record and summarise; its demo.dat is then read here with trace-cmd.

The bare root is bootstrapped once and kept in /var/tmp/ftraced-nspawn/;
every run works on a fresh copy of it, so nothing installed by an earlier
run can hide a missing install step."""

import os
import shutil
import subprocess
import sys
import tempfile

from test_nspawn import CACHE, copy_tree, skip_unless_possible

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from harness import (check_events, event_lines, instance_tag, instances_of_tags,  # noqa: E402
                     report, TRACING)

DEMO_TIMEOUT = 1500


def bare_root():
    """A minbase bookworm root, built on first use."""
    root = os.path.join(CACHE, "bare-minbase")
    if os.path.isdir(root):
        return root
    os.makedirs(CACHE, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="building-", dir=CACHE)
    print("bootstrapping a bare Debian 12 root (once)", flush=True)
    subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase", "bookworm", tmp + "/root"],
                   check=True, timeout=900)
    os.rename(tmp + "/root", root)
    os.rmdir(tmp)
    return root


# Where the demo's daemon keeps its state in the container (FTRACED_DEMO_STATE_DIR).
DEMO_STATE = "var/tmp/demo-state"


def remove_demo_instances(root):
    """What the demo's daemon left in tracefs (nothing, unless it failed): only instances
    of its own tag, read in its state directory; another daemon's are not touched."""
    tag = instance_tag(os.path.join(root, DEMO_STATE))
    if not tag:
        return []
    left = instances_of_tags([tag])
    for name in left:
        try:
            os.rmdir(os.path.join(TRACING, "instances", name))
        except OSError:
            pass
    return left


def main():
    skip_unless_possible()
    # ftraced raises saved_cmdlines_size, as a real install does; the machine's is put back.
    cmdlines = os.path.join(TRACING, "saved_cmdlines_size")
    with open(cmdlines) as f:
        cmdlines_before = f.read().strip()
    work = tempfile.mkdtemp(prefix="ftraced-demo-", dir="/var/tmp")
    root = os.path.join(work, "root")
    try:
        subprocess.run(["cp", "-a", "--reflink=auto", bare_root(), root], check=True)
        copy_tree(os.path.join(root, "src"))
        for tool in ("meson", "gcc", "trace-cmd"):
            assert not os.path.exists(os.path.join(root, "usr/bin", tool)), \
                "the bare root already has " + tool
        p = subprocess.run(
            ["systemd-nspawn", "--quiet", "--directory=" + root, "--register=no",
             "--keep-unit", "--console=pipe", "--capability=CAP_SYSLOG",
             "--bind=/sys/kernel/tracing", "--chdir=/src",
             "--setenv=FTRACED_DEMO_STATE_DIR=/" + DEMO_STATE, "--", "bash", "scripts/demo.sh"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            timeout=DEMO_TIMEOUT)
        out = p.stdout.decode(errors="replace")
        print(out[-6000:])
        if p.returncode != 0:
            print("FAIL: scripts/demo.sh exited with %d in a fresh root" % p.returncode)
            return 1
        demo = os.path.join(root, "src", "demo.dat")
        check_events(demo)
        events = event_lines(report(demo))
        assert events, "demo.dat holds no events"
        assert any(name.startswith("sched_") for _, name, _ in events), "no sched events in demo.dat"
        assert "events:" in out and "by type:" in out, "demo.sh printed no summary"
        left = remove_demo_instances(root)
        assert not left, "the demo's daemon left instances behind: %s" % left
        print("PASS scripts/demo.sh in a fresh Debian 12 root: %d events in demo.dat"
              % len(events))
        print("1 passed, 0 failed")
        return 0
    finally:
        remove_demo_instances(root)
        with open(cmdlines, "w") as f:
            f.write(cmdlines_before)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
