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


# Top-level files a lease would change, read only here: the test checks they stay as found.
TOP_LEVEL_SEEN = ("tracing_on", "current_tracer", "trace_clock", "buffer_size_kb",
                  "tracing_cpumask", "set_event")


def top_level_state():
    state = {}
    for name in TOP_LEVEL_SEEN:
        with open(os.path.join(TRACING, name)) as f:
            state[name] = f.read()
    return state


def refused_to_root():
    """The top-level lists a lease changes that this kernel will not even let root read."""
    refused = []
    for name in ("set_ftrace_filter", "set_ftrace_notrace", "set_ftrace_pid",
                 "set_ftrace_notrace_pid", "set_graph_function", "set_graph_notrace"):
        try:
            os.close(os.open(os.path.join(TRACING, name), os.O_RDONLY))
        except PermissionError:
            refused.append(name)
        except FileNotFoundError:
            pass
    return refused


def test_refused_top_level_takes_no_lease():
    """Where the kernel refuses a top-level list even to root (here set_ftrace_filter
    and set_ftrace_notrace_pid, EPERM), --top-level is refused before anything of the
    top level is written, naming the file; a second try is refused for that same
    reason, not as leased already; no lease journal stays and status names no holder.
    Only on such a kernel: elsewhere the record would really lease the shared top
    level (the guests test that, tests/vm)."""
    refused = refused_to_root()
    if not refused:
        print("  (this kernel lets root read every top-level list: the refusal cannot be "
              "shown here without leasing the shared top level)")
        return
    before = top_level_state()
    with daemon() as d:
        out = os.path.join(d.dir, "top.dat")
        for attempt in range(2):
            r = d.ctl("record", "--top-level", "-e", "sched:sched_switch", "-o", out, "--",
                      "true", check=False)
            assert r.returncode != 0, r.stdout
            assert "already" not in r.stderr and "leased by" not in r.stderr, r.stderr
            assert "cannot be leased here: the kernel refuses" in r.stderr and \
                any(name in r.stderr for name in refused), r.stderr
            assert not os.path.exists(os.path.join(d.state, "top-level-lease"))
        assert "Top-level buffer leased" not in d.ctl("status").stdout
        assert top_level_state() == before, "the top level changed"
    assert top_level_state() == before, "the top level changed"


def refused_start(d):
    """Starts daemon @d, which must refuse: its exit code and its log."""
    d.launch()
    try:
        rc = d.proc.wait(timeout=60)
    finally:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait()
    d.proc = None
    return rc, d.log()


def test_second_daemon_with_the_same_tag_refuses():
    """A second daemon on the first one's state directory, and one on a copy of it
    (the same instance tag: as a copy in another mount namespace would have), refuse
    to start, naming the first by its pid; the first's session and instances are
    left as they were, and the first goes on."""
    with daemon() as first:
        first.ctl("create", "keep", "-e", "sched:sched_switch")
        first.ctl("start", "keep")
        tag = instance_tag(first.state)
        ours = sorted(n for n in os.listdir(os.path.join(TRACING, "instances"))
                      if n.startswith("ftraced-%s-" % tag))
        assert "ftraced-%s-0" % tag in ours and len(ours) == 2, ours
        pid = first.proc.pid
        same = Daemon(state=first.state)
        copy = Daemon()
        # What makes the copy the first's twin: its instance tag (spools are large sparse
        # files, sessions and symbols do not matter here).
        os.makedirs(os.path.join(copy.state, "spool"))
        shutil.copy(os.path.join(first.state, "instance-tag"), copy.state)
        try:
            rc, log = refused_start(same)
            assert rc != 0 and "Another ftraced (pid %d) uses state directory" % pid in log, log
            rc, log = refused_start(copy)
            assert instance_tag(copy.state) == tag
            assert rc != 0 and "Another ftraced (pid %d) runs with instance tag %s" % (
                pid, tag) in log, log
            # ftracectl recover of the copy would drain and remove the first's instances.
            r = subprocess.run([FTRACECTL, "recover", copy.state], capture_output=True,
                               text=True, timeout=120)
            assert r.returncode != 0 and "runs with instance tag %s" % tag in r.stderr, \
                r.stdout + r.stderr
        finally:
            same.cleanup()
            copy.cleanup()
        assert sorted(n for n in os.listdir(os.path.join(TRACING, "instances"))
                      if n.startswith("ftraced-%s-" % tag)) == ours
        st = first.ctl_json("status", "keep")
        assert st["state"] == "running" and "error" not in st and "warning" not in st, st
        first.ctl("stop", "keep")
        first.ctl("destroy", "keep")


if __name__ == "__main__":
    sys.exit(run())
