#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tracefs is shared: what another process does to the daemon's instances,
and to its tag, is noticed and healed where it can be. The clock-anchor
instance removed comes back; a stopped session whose instance was removed
ends with that error and can be destroyed; a refused --top-level takes no
lease; a second daemon with the same tag refuses to start. Only the
instances of the daemons these tests started are ever removed."""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Daemon, FTRACECTL, TRACING, check_events, daemon,  # noqa: E402
                     instance_tag, run, wait_until)


def instance_dir(name):
    return os.path.join(TRACING, "instances", name)


def segments(d, name):
    directory = os.path.join(d.state, "sessions", name)
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if f.endswith(".dat") and not f.startswith(".")]


def utc(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def test_clock_anchor_instance_removed_comes_back():
    """The clock-anchor instance (ftraced-TAG-0) removed from outside while a
    continuous session runs: the next session's files still have their wall-clock
    anchor (info shows it, extract --since finds their events)."""
    with daemon() as d:
        d.ctl("create", "a", "-e", "sched:sched_switch", "--segment-time", "300ms")
        d.ctl("start", "a")
        anchor = "ftraced-%s-0" % instance_tag(d.state)
        wait_until("the anchor instance", lambda: os.path.isdir(instance_dir(anchor)))
        os.rmdir(instance_dir(anchor))
        wait_until("a segment of a", lambda: len(segments(d, "a")) >= 1)
        since = time.time() - 1
        d.ctl("create", "b", "-e", "sched:sched_switch", "--segment-time", "300ms")
        d.ctl("start", "b")
        wait_until("2 segments of b", lambda: len(segments(d, "b")) >= 2)
        d.ctl("stop", "b")
        d.ctl("stop", "a")
        note = d.ctl_json("status", "b").get("note", "")
        assert "no wall-clock anchor" not in note, note
        for f in segments(d, "b"):
            check_events(f)
            info = d.ctl("info", f).stdout
            assert "wall clock:  trace time 0 is 20" in info, info
        assert os.path.isdir(instance_dir(anchor)), "the anchor was not made again"
        out = os.path.join(d.dir, "window.dat")
        reply = d.ctl_json("extract", "--state-dir", d.state, "b", "--since", utc(since),
                           "-o", out)
        assert reply["events"] > 0, reply
        check_events(out)
        assert "was removed by another process; making it again" in d.log()
        d.ctl("destroy", "a")
        d.ctl("destroy", "b")


def test_stopped_session_instance_removed():
    """A stopped session's instance removed from outside: status and list say so,
    destroy succeeds at once, and nothing is retried."""
    with daemon() as d:
        d.ctl("create", "s", "-e", "sched:sched_switch")
        d.ctl("start", "s")
        d.ctl("stop", "s")
        instance = d.ctl_json("status", "s")["instance"]
        os.rmdir(instance_dir(instance))
        st = d.ctl_json("status", "s")
        assert "was removed by another process" in st.get("error", ""), st
        human = d.ctl("status", "s").stdout
        assert "was removed by another process" in human, human
        listed = d.ctl("list").stdout
        assert "removed by another process" in listed, listed
        r = d.ctl("destroy", "s", timeout=20)
        assert r.returncode == 0, r.stderr
        assert d.ctl_json("list") == []
        assert "retried" not in d.ctl("status").stdout
        assert "Removing instance '%s' failed" % instance not in d.log(), d.log()


if __name__ == "__main__":
    sys.exit(run())
