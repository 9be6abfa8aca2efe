#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a hostile tester broke, each through the real daemon: retention that
deleted files the daemon never wrote, or another user's; losses after a
crash or an outside change that nothing reported; orphans that leaked; two
daemons whose instance tags collided. Each test counts files or markers."""

import grp
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, Daemon, count_markers, daemon, our_instances, run,  # noqa: E402
                     start_markers, wait_until)


def session_dir(d, name):
    return os.path.join(d.state, "sessions", name)


def dat_files(d, name):
    return sorted(f for f in os.listdir(session_dir(d, name)) if f.endswith(".dat"))


def test_retention_deletes_only_its_own_files():
    """A user's own s5-mine.dat in a session's directory, there before the session
    (no manifest) and put there after (a manifest), named like the segments: retention
    with --max-files 1 deletes segments only."""
    with daemon() as d:
        os.makedirs(session_dir(d, "s5"))
        before = os.path.join(session_dir(d, "s5"), "s5-mine.dat")
        with open(before, "w") as f:
            f.write("mine")
        d.ctl("create", "s5", "-e", "sched:sched_switch", "--segment-time", "200ms",
              "--max-files", "1")
        d.ctl("start", "s5")
        wait_until("retention at work",
                   lambda: d.ctl_json("status", "s5")["files_deleted"] >= 2)
        after = os.path.join(session_dir(d, "s5"), "s5-20000101T000000.000Z-000001.dat")
        with open(after, "w") as f:
            f.write("mine too")
        deleted = d.ctl_json("status", "s5")["files_deleted"]
        wait_until("more retention",
                   lambda: d.ctl_json("status", "s5")["files_deleted"] >= deleted + 2)
        d.ctl("stop", "s5")
        d.ctl("destroy", "s5")
        with open(before) as f:
            assert f.read() == "mine"
        with open(after) as f:
            assert f.read() == "mine too"
        ours = [f for f in dat_files(d, "s5") if f not in (os.path.basename(before),
                                                             os.path.basename(after))]
        assert len(ours) == 1, ours


def test_a_members_reuse_of_roots_name_deletes_nothing():
    nogroup = grp.getgrnam("nogroup").gr_gid
    d = Daemon(extra_args=["--group", "nogroup"])
    try:
        d.start()
        os.chmod(d.dir, 0o777)  # the socket's directory: the member may reach it
        d.ctl("create", "shared", "-e", "sched:sched_switch", "--segment-time", "200ms")
        d.ctl("start", "shared")
        wait_until("root's segments", lambda: len(dat_files(d, "shared")) >= 3)
        d.ctl("stop", "shared")
        d.ctl("destroy", "shared")
        roots = dat_files(d, "shared")
        r = d.ctl("create", "shared", "-e", "sched:sched_switch", "--segment-time", "200ms",
                  "--max-files", "1", check=False, user=65534, gid=nogroup)
        assert r.returncode == 1 and "holds another user's files" in r.stderr, r.stderr
        assert dat_files(d, "shared") == roots
        # Another name is the member's own; root may take any name.
        d.ctl("create", "members", "-e", "sched:sched_switch", user=65534, gid=nogroup)
        d.ctl("destroy", "members", user=65534, gid=nogroup)
        r = d.ctl("create", "members", "-e", "sched:sched_switch")
        d.ctl("destroy", "members")
        d.stop()
    finally:
        d.cleanup()


def test_two_daemons_in_two_mount_namespaces():
    """Two daemons whose state directories have the same path, in two mount namespaces:
    the second's start does not take the first's instances for its own orphans."""
    a = Daemon()
    b = Daemon(state=a.state)
    # The same path, another directory: a tmpfs mounted over it in a namespace of its own.
    b.wrapper = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                 'mount -t tmpfs tmpfs "$0" && exec "$@"', a.state]
    try:
        a.start()
        out = os.path.join(a.dir, "a.dat")
        rec = a.record_background("-e", "ftrace:print", "-o", out)
        session = a.wait_running()
        finish = start_markers(session["instance"], CPUS, 3000, 3000, tag="a")
        b.start()
        assert session["instance"] in our_instances(), "the second daemon removed the first's"
        b.ctl("create", "other", "-e", "sched:sched_switch")
        b.ctl("start", "other")
        written = finish()
        a.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        got = count_markers(out, tag="a")["generators"]
        for cpu, n in written.items():
            assert got[str(cpu)]["distinct"] == n, (cpu, got[str(cpu)], n)
        b.ctl("destroy", "other")
        b.stop(spool_empty=False)
        a.stop()
    finally:
        b.cleanup()
        a.cleanup()


if __name__ == "__main__":
    sys.exit(run())
