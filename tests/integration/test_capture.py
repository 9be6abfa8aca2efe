#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Capture breadth on this host's kernel: per-event filters, probes made for
a session, tracers and what this kernel refuses, and the files read back
with trace-cmd."""

import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (daemon, Daemon, LOADGEN, TRACING, check_events,  # noqa: E402
                     event_lines, loadgen, loadgen_result, our_instances, report, run,
                     wall_seconds)


def by_pid(path, event):
    """{pid: count} of @event's lines in a file (report lines start with COMM-PID)."""
    counts = {}
    for _, name, line in event_lines(report(path)):
        if name == event:
            pid = int(line.split()[0].rpartition("-")[2])
            counts[pid] = counts.get(pid, 0) + 1
    return counts


def our_probes():
    with open(os.path.join(TRACING, "dynamic_events")) as f:
        return [line for line in f if "ftraced_" in line]


def expect_error(d, args, text):
    r = d.ctl(*args, check=False)
    assert r.returncode != 0, "accepted: %s" % (args,)
    assert text in r.stderr, "%r not in %r" % (text, r.stderr)
    assert d.ctl_json("list") == [], "a session was started by an invalid request"


def test_per_event_filter():
    """-f filters the -e just before it, and --filter every event: both hold."""
    with daemon() as d:
        a = loadgen("--syscall", "--cpu", "0", "--count", "100000000", "--rate", "2000")
        b = loadgen("--syscall", "--cpu", "1", "--count", "100000000", "--rate", "2000")
        try:
            out = os.path.join(d.dir, "f.dat")
            d.ctl("record", "-q", "--filter", "common_pid == %d || common_pid == %d" %
                  (a.pid, b.pid), "-e", "syscalls:sys_enter_getppid", "-f",
                  "common_pid == %d" % a.pid, "-e", "syscalls:sys_exit_getppid", "--duration", "500ms",
                  "-o", out)
            enter, leave = by_pid(out, "sys_enter_getppid"), by_pid(out, "sys_exit_getppid")
            assert list(enter) == [a.pid], enter
            assert set(leave) == {a.pid, b.pid}, leave
            # create takes -f too: the kernel holds it as that event's filter, and
            # --filter applies to the other event alone.
            d.ctl("create", "pf", "--filter", "common_pid != 0", "-e", "sched:sched_switch",
                  "-e", "syscalls:sys_exit_getppid", "-f", "common_pid == %d" % b.pid)
            events = os.path.join(TRACING, "instances", d.ctl_json("status", "pf")["instance"],
                                  "events")
            with open(os.path.join(events, "syscalls", "sys_exit_getppid", "filter")) as f:
                assert f.read().strip() == "(common_pid != 0) && (common_pid == %d)" % b.pid
            with open(os.path.join(events, "sched", "sched_switch", "filter")) as f:
                assert f.read().strip() == "common_pid != 0"
            d.ctl("destroy", "pf")
        finally:
            for p in (a, b):
                p.kill()
                p.wait()
        expect_error(d, ["record", "-f", "common_pid == 1", "-e", "sched", "-o", out,
                         "--force"], "-f 'common_pid == 1' filters the -e just before it: "
                     "there is none")
        expect_error(d, ["record", "-e", "sched", "-f", "common_pid == 1", "-f", "prev_pid == 1",
                         "-o", out, "--force"], "that event already has a filter")
        expect_error(d, ["record", "-e", "sched:sched_switch", "-f", "nosuch_field == 1", "-o",
                         out, "--force"], "filter rejected by the kernel for sched:sched_switch")
        expect_error(d, ["record", "-e", "sched:sched_switch", "-f", "prev_pid == 1", "-e",
                         "sched", "-f", "common_pid == 2", "-o", out, "--force"],
                     "'sched' names an event that already has a different filter")


def test_uprobe_by_symbol_counts_exactly():
    """A uprobe on the load generator's own function, resolved from its ELF
    symbols: exactly one hit per call, its argument fetched; gone afterwards."""
    with daemon() as d:
        out = os.path.join(d.dir, "u.dat")
        probe = "p:tick %s:loadgen_syscall n=%%di:u64" % os.path.abspath(LOADGEN)
        d.ctl("record", "-q", "-F", "--probe", probe, "-o", out, "--", LOADGEN, "--syscall",
              "--cpu", "0", "--count", "500")
        lines = [line for _, name, line in event_lines(report(out)) if name == "tick"]
        assert len(lines) == 500, len(lines)
        ns = sorted(int(re.search(r"n=(\d+)", line).group(1)) for line in lines)
        assert ns == list(range(500)), ns[:10]
        assert our_probes() == [], our_probes()
        # Two sessions may name a probe alike: each has its own group.
        d.ctl("create", "u1", "--probe", probe)
        d.ctl("create", "u2", "--probe", probe, "-e", "sched:sched_switch")
        assert len(our_probes()) == 2, our_probes()
        d.ctl("destroy", "u1")
        d.ctl("destroy", "u2")
        assert our_probes() == [], our_probes()
        expect_error(d, ["record", "--probe", "p:tick %s:no_such_function" %
                         os.path.abspath(LOADGEN), "-o", out, "--force"],
                     "defines no function 'no_such_function'")
        expect_error(d, ["record", "--probe", "p:tick /nonexistent:main", "-o", out, "--force"],
                     "cannot open '/nonexistent'")
        expect_error(d, ["record", "--probe", "x:tick do_sys_open", "-o", out, "--force"],
                     "expected p:NAME or r:NAME")
        expect_error(d, ["record", "--probe", "p:a/b do_sys_open", "-o", out, "--force"],
                     "the name must be 1 to 64 letters")
        expect_error(d, ["record", "--probe", probe, "--probe", probe, "-o", out, "--force"],
                     "two probes are named 'tick'")
        # Fetch arguments are the kernel's to judge; its words come back.
        expect_error(d, ["record", "--probe", probe.replace("%di", "%nosuchreg"), "-o", out,
                         "--force"], "refused by the kernel")
        if not os.path.exists(os.path.join(TRACING, "kprobe_events")):
            expect_error(d, ["record", "--probe", "p:op do_sys_openat2", "-o", out, "--force"],
                         "this kernel has no kprobes")
        assert our_probes() == [], our_probes()


def test_globs_leave_other_sessions_probes_out():
    """-a and globs take no other session's probe group, this daemon's or another's: it
    comes and goes with that session (a shared tracefs), so it would fail the record when
    it went first. A session's own probes are named exactly and stay in."""
    with daemon() as d:
        out = os.path.join(d.dir, "all.dat")
        probe = "p:tick %s:loadgen_syscall n=%%di:u64" % os.path.abspath(LOADGEN)
        d.ctl("create", "other", "--probe", probe)
        assert len(our_probes()) == 1, our_probes()
        d.ctl("record", "-q", "-a", "-o", out, "--", "true")
        names = re.findall(r"^name: (\S+)$", subprocess.run(
            ["trace-cmd", "dump", "--events", out], capture_output=True, text=True).stdout,
            re.M)
        assert "sched_switch" in names, names[:20]
        assert "tick" not in names, "-a took another session's probe"
        d.ctl("record", "-q", "--probe", probe, "-a", "-o", out, "--force", "--", "true")
        names = re.findall(r"^name: (\S+)$", subprocess.run(
            ["trace-cmd", "dump", "--events", out], capture_output=True, text=True).stdout,
            re.M)
        assert names.count("tick") == 1, "the record's own probe is in its file once"
        d.ctl("destroy", "other")


def test_probes_after_a_crash():
    """A crash leaves the session's probe behind: the next start recovers the
    capture (the probe's events with their format) and then removes it."""
    first = Daemon().start()
    try:
        probe = "p:tick %s:loadgen_syscall" % os.path.abspath(LOADGEN)
        rec = first.record_background("--probe", probe, "-o", os.path.join(first.dir, "x.dat"))
        first.wait_running()
        loadgen_result(loadgen("--syscall", "--cpu", "0", "--count", "300"))
        first.kill()
        rec.communicate(timeout=30)
        assert len(our_probes()) == 1, our_probes()
        second = Daemon(state=first.state).start()
        assert our_probes() == [], our_probes()
        assert "Removed orphaned probe" in second.log(), second.log()
        recovered = os.path.join(first.state, "recovered")
        files = [f for f in os.listdir(recovered) if not f.startswith(".")]
        assert len(files) == 1, files
        ticks = [line for _, name, line in event_lines(report(os.path.join(recovered, files[0])))
                 if name == "tick"]
        assert len(ticks) == 300, len(ticks)
        # Same boot: the rebuilt file keeps its session's wall-clock anchor.
        assert "wall clock:  trace time 0 is 20" in \
            second.ctl("info", os.path.join(recovered, files[0])).stdout
        second.stop()
        second.cleanup()
    finally:
        first.cleanup()
        for line in our_probes():  # a failed run leaves nothing behind either
            with open(os.path.join(TRACING, "dynamic_events"), "a") as f:
                f.write("-:%s\n" % line.split()[0].split(":", 1)[1])


def report_times(path, *extra):
    return [float(re.search(r"\]\s+([\d.]+):", line).group(1)) for _, _, line in
            event_lines(report(path, *extra))]


def assert_wall_span(info, info_json, before, after):
    """info says each CPU's first and last event on the wall clock, within the record."""
    cpus = [c for c in info_json["cpus"] if c["events"] > 0]
    assert cpus, info_json
    for c in cpus:
        first, last = wall_seconds(c["first_wall"]), wall_seconds(c["last_wall"])
        assert before - 1 <= first <= last <= after + 1, (before, after, c)
        assert "  CPU %-4u %s  %s" % (c["cpu"], c["first_wall"], c["last_wall"]) in info, info
    assert "Wall clock (UTC), first and last event:" in info and "  all      20" in info, info


def test_wall_clock_anchor_in_every_file():
    """Every file carries trace-cmd's DATE option: report prints wall-clock
    times (they line up with journald), --nodate the trace clock's; a
    counter clock has no time to map and gets none."""
    with daemon() as d:
        for clock in ("local", "mono", "boot", "global"):
            out = os.path.join(d.dir, "%s.dat" % clock)
            before = time.time()
            d.ctl("record", "-q", "--clock", clock, "-e", "sched:sched_switch", "--duration", "200ms",
                  "-o", out)
            after = time.time()
            if clock != "boot":  # trace-cmd 3.1.6 prints boot-clock times raw
                times = report_times(out)
                assert times and all(before - 1 <= t <= after + 1 for t in times), \
                    (clock, before, after, times[:3])
                assert all(t < before - 1000 for t in report_times(out, "--nodate")), clock
            info = d.ctl("info", out).stdout
            assert "wall clock:  trace time 0 is 20" in info, info
            info_json = json.loads(d.ctl("--json", "info", out).stdout)
            assert "date_offset_us" in info_json, info_json
            assert_wall_span(info, info_json, before, after)
        out = os.path.join(d.dir, "counter.dat")
        d.ctl("record", "-q", "--clock", "counter", "-e", "sched:sched_switch", "--duration", "200ms",
              "-o", out)
        assert "wall clock:  not recorded" in d.ctl("info", out).stdout
        # Continuous segments: each anchored when it is written.
        d.ctl("create", "bg", "-e", "sched:sched_switch", "--segment-time", "200ms")
        d.ctl("start", "bg")
        d.ctl("stop", "bg")
        seg_dir = os.path.join(d.state, "sessions", "bg")
        names = [n for n in os.listdir(seg_dir) if n.endswith(".dat")]
        assert names, os.listdir(seg_dir)
        for name in names:
            assert "wall clock:  trace time 0 is 20" in \
                d.ctl("info", os.path.join(seg_dir, name)).stdout, name
        d.ctl("destroy", "bg")
        # The calibration instance is the daemon's own, and goes with it.
        assert any(i.endswith("-0") for i in our_instances())
    assert not any(i.endswith("-0") for i in our_instances()), our_instances()


def test_wall_clock_anchor_within_milliseconds():
    """A marker's wall-clock time in the report is when it was written, to
    within 50 ms: the daemon anchors the local clock with a marker
    of its own, read back from the CPU it went to."""
    slack_s = 0.05  # the anchor's error is half its narrowest window: microseconds when calm
    with daemon() as d:
        out = os.path.join(d.dir, "anchor.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        written = {}
        fd = os.open(os.path.join(TRACING, "instances", session["instance"], "trace_marker"),
                     os.O_WRONLY)
        try:
            for k in range(5):
                before = time.time()
                os.write(fd, b"ftraced-test-anchor-%d\n" % k)
                written["ftraced-test-anchor-%d" % k] = (before, time.time())
        finally:
            os.close(fd)
        d.ctl("stop", session["name"])
        rec.communicate(timeout=60)
        seen = {}
        for _, name, line in event_lines(report(out)):
            text = line.rsplit(" ", 1)[-1]
            if name == "print" and text in written:
                seen[text] = float(re.search(r"\]\s+([\d.]+):", line).group(1))
        assert seen.keys() == written.keys(), seen
        for text, (before, after) in written.items():
            assert before - slack_s <= seen[text] <= after + slack_s, (text, before, seen[text])


def test_top_level_markers_reach_a_session():
    """Where the kernel copies top-level trace_marker writes into instances
    (copy_trace_marker, 6.17+), a session asking for ftrace:print gets them
    as well as its own; ftrace:bprint is offered only by name."""
    if not os.path.exists(os.path.join(TRACING, "options", "copy_trace_marker")):
        print("  (this kernel has no copy_trace_marker: only the session's own markers)")
        return
    with open(os.path.join(TRACING, "tracing_on")) as f:
        if f.read().strip() != "1":
            print("  (top-level tracing is off here, and tests leave it as it is)")
            return
    with daemon() as d:
        out = os.path.join(d.dir, "top.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        stamp = "ftraced-test-top-%d" % os.getpid()
        # EBADF: the top-level ring refused the write (another tool on this shared
        # tracefs has its recording paused); the copies are then not counted.
        top = True
        try:
            with open(os.path.join(TRACING, "trace_marker"), "w") as f:
                f.write(stamp + "\n")
        except OSError as e:
            if e.errno != errno.EBADF:
                raise
            top = False
            print("  (the top-level ring refused the marker: its recording is paused)")
        with open(os.path.join(TRACING, "instances", session["instance"], "trace_marker"),
                  "w") as f:
            f.write(stamp + "-own\n")
        d.ctl("stop", session["name"])
        rec.communicate(timeout=60)
        texts = [line for _, name, line in event_lines(report(out)) if name == "print"]
        if top:  # refused above, the kernel may still have copied it, once or more
            assert sum(line.endswith(stamp) for line in texts) == 1, texts[-5:]
        assert sum(line.endswith(stamp + "-own") for line in texts) == 1, texts[-5:]
        # "-e ftrace" does not take trace_printk() away from the top level.
        d.ctl("create", "allftrace", "-e", "ftrace")
        options = os.path.join(TRACING, "instances", d.ctl_json("status", "allftrace")["instance"],
                               "options")
        with open(os.path.join(options, "trace_printk_dest")) as f:
            assert f.read().strip() == "0"
        with open(os.path.join(options, "copy_trace_marker")) as f:
            assert f.read().strip() == "1"
        d.ctl("destroy", "allftrace")


def tracecmd_record(tmp, instance, args):
    """trace-cmd record into instance @instance (never the top level), as bench/compare.py
    runs it: -k, and a private mount namespace where ftrace_enabled reads 1 (trace-cmd
    3.1.6 exits when writing the real one is refused, as on this host)."""
    fake = os.path.join(tmp, "ftrace_enabled")
    with open(fake, "w") as f:
        f.write("1\n")
    script = ('mount --bind "$1" /proc/sys/kernel/ftrace_enabled && shift && '
              'exec trace-cmd record --file-version 7 -k -B "$@"')
    return subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                             "sh", fake, instance] + args, cwd=tmp,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_same_options_same_events_as_trace_cmd():
    """The same -e/-f options given to trace-cmd record and to ftracectl record on
    one deterministic workload: the same event set, with exact counts."""
    if not shutil.which("trace-cmd") or not shutil.which("unshare"):
        print("  (no trace-cmd or unshare)")
        return
    with daemon() as d:
        gen = loadgen("--syscall", "--cpu", "0", "--count", "700", wait=True)
        try:
            pid = gen.pid
            options = []
            for event in ("syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"):
                options += ["-e", event, "-f", "common_pid == %d" % pid]
            ours = os.path.join(d.dir, "ours.dat")
            theirs = os.path.join(d.dir, "theirs.dat")
            instance = "ftraced-test-tc-%d" % os.getpid()
            rec = d.record_background(*(options + ["-o", ours]))
            tc = tracecmd_record(d.dir, instance, options + ["-o", theirs])
            session = d.wait_running()
            on = os.path.join(TRACING, "instances", instance, "tracing_on")
            deadline = time.monotonic() + 30
            while not (os.path.exists(on) and open(on).read().strip() == "1"):
                assert time.monotonic() < deadline and tc.poll() is None, tc.stderr.read()
                time.sleep(0.02)
            loadgen_result_released(gen)
            d.ctl("stop", session["name"])
            rec.communicate(timeout=60)
            tc.send_signal(signal.SIGINT)
            _, err = tc.communicate(timeout=60)
            assert tc.returncode == 0, err
        finally:
            if gen.poll() is None:
                gen.kill()
                gen.wait()
            try:
                os.rmdir(os.path.join(TRACING, "instances", instance))
            except OSError:
                pass

        def event_set(path):
            counts = {}
            for _, name, line in event_lines(report(path)):
                # trace-cmd prefixes an instance's lines with "INSTANCE: "
                key = (name, int(re.search(r"-(\d+)\s+\[\d+\]", line).group(1)))
                counts[key] = counts.get(key, 0) + 1
            return counts

        expected = {("sys_enter_getppid", pid): 700, ("sys_exit_getppid", pid): 700}
        assert event_set(ours) == expected, event_set(ours)
        assert event_set(theirs) == expected, event_set(theirs)


def loadgen_result_released(gen):
    """Lets a --wait load generator go, and waits for it to finish."""
    gen.stdin.write("\n")
    gen.stdin.flush()
    loadgen_result(gen)


def test_only_root_adds_probes_or_leases_the_top_level():
    """A probe reads kernel and process memory, the top level is every tool's: group
    members may not add one, nor lease it."""
    import grp
    nogroup = grp.getgrnam("nogroup").gr_gid
    d = Daemon(extra_args=["--group", "nogroup"])
    try:
        d.start()
        os.chmod(d.dir, 0o777)
        r = d.ctl("record", "--probe", "p:tick %s:loadgen_syscall" % os.path.abspath(LOADGEN),
                  "-o", os.path.join(d.dir, "member.dat"), check=False, user=65534, gid=nogroup)
        assert r.returncode != 0 and "only root may add probes" in r.stderr, r.stderr
        assert our_probes() == [], our_probes()
        # The top level is every tool's: a member may not lease it (refused before any
        # write; root's lease is tested in the guests, never on this shared host).
        r = d.ctl("record", "--top-level", "-e", "sched:sched_switch", "-o",
                  os.path.join(d.dir, "member.dat"), check=False, user=65534, gid=nogroup)
        assert r.returncode != 0 and "only root may lease the top-level buffer" in r.stderr, \
            r.stderr
        assert not os.path.exists(os.path.join(d.state, "top-level-lease"))
        d.stop()
    finally:
        d.cleanup()


def test_tracers_refused_clearly_on_this_kernel():
    """This host's function tracer refuses writes and its instances have no
    function_graph: each says so plainly, and nothing is left behind."""
    with daemon() as d:
        out = os.path.join(d.dir, "t.dat")
        with open(os.path.join(TRACING, "available_tracers")) as f:
            top = f.read().split()
        expect_error(d, ["record", "-p", "function", "-o", out],
                     "this kernel refuses the function tracer (Operation not permitted")
        expect_error(d, ["record", "-p", "function", "-l", "vfs_*", "-o", out],
                     "this kernel refuses -l 'vfs_*'")
        graph = "runs the function_graph tracer only in the top-level buffer" \
            if "function_graph" in top else "this kernel has no function_graph tracer"
        expect_error(d, ["record", "-p", "function_graph", "-o", out], graph)
        if "function_graph" in top:
            expect_error(d, ["record", "-p", "function_graph", "-o", out], "--top-level")
        expect_error(d, ["record", "-p", "nosuch", "-o", out], "unknown tracer 'nosuch'")
        expect_error(d, ["record", "-e", "ftrace:function", "-o", out],
                     "comes from the function tracer: add -p function")
        expect_error(d, ["record", "-e", "ftrace:funcgraph_entry", "-o", out],
                     "comes from the function_graph tracer")
        expect_error(d, ["record", "-e", "sched", "-l", "vfs_*", "-o", out],
                     "-l, -n and -g limit a tracer")
        expect_error(d, ["record", "-p", "function", "-g", "vfs_read", "-o", out],
                     "-g and --max-graph-depth are for -p function_graph")
        expect_error(d, ["record", "-p", "function_graph", "--func-stack", "-o", out],
                     "--func-stack is for -p function")
        expect_error(d, ["record", "-p", "function", "-l", "bad glob", "-o", out],
                     "malformed request: bad function")
        # -T makes kernel_stack deliverable, so asking for it is fine then.
        d.ctl("record", "-q", "-T", "-e", "sched:sched_switch", "-e", "ftrace:kernel_stack",
              "--duration", "200ms", "-o", out, "--force")
        assert any(name == "kernel_stack" for _, name, _ in event_lines(report(out)))
        assert not os.path.exists(out + ".partial")


def test_session_file_keys_for_capture_breadth():
    """sessions.d files take the same options, started with the daemon."""
    d = Daemon().with_session_files({
        "pf.conf": "events = syscalls:sys_enter_getppid\n"
                   "event-filter = common_pid == 1\n"
                   "probe = p:tick %s:loadgen_syscall n=%%di:u64\n" % os.path.abspath(LOADGEN),
        "bad.conf": "event-filter = common_pid == 1\nevents = sched\n"})
    try:
        d.start()
        d.wait_state("pf")
        assert len(our_probes()) == 1, our_probes()
        assert "bad.conf:1: event-filter applies to the event listed just before it" in d.log()
        d.ctl("destroy", "pf")
        assert our_probes() == [], our_probes()
        d.stop()
    finally:
        d.cleanup()


def kernel_events(n, system=None):
    """@n events of this kernel as SYSTEM:EVENT (of @system, or of any but ftrace's,
    which cannot be enabled), syscalls:sys_enter_getppid first: the one counted."""
    root = os.path.join(TRACING, "events")
    names = []
    for sys_name in sorted(os.listdir(root)):
        if sys_name == "ftrace" or (system and sys_name != system) or \
                not os.path.isdir(os.path.join(root, sys_name)):
            continue
        for ev in sorted(os.listdir(os.path.join(root, sys_name))):
            if os.path.isdir(os.path.join(root, sys_name, ev)):
                names.append(sys_name + ":" + ev)
    names.remove("syscalls:sys_enter_getppid")
    names = ["syscalls:sys_enter_getppid"] + names[:n - 1]
    assert len(names) == n, "this kernel has only %d events" % len(names)
    return names


def file_event_formats(path):
    """The names of the event formats a file carries, as trace-cmd reads them."""
    r = subprocess.run(["trace-cmd", "dump", "--events", "-i", path], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return sorted(line[len("name: "):] for line in r.stdout.splitlines()
                  if line.startswith("name: "))


def check_many_events_file(path, events, pid, n):
    """Every event's format in the file, and each getppid call of @pid once."""
    check_events(path)
    assert file_event_formats(path) == sorted(e.split(":")[1] for e in events)
    counts = by_pid(path, "sys_enter_getppid")
    assert counts == {pid: n}, counts


def getppid_loadgen():
    gen = loadgen("--syscall", "--cpu", "0", "--count", "3000", wait=True)
    return gen, int(gen.stdout.readline().split("=")[1])


def test_record_hundreds_and_thousands_of_events():
    """No small cap on events: 300 and 2,000 separate -e options are recorded,
    the long list travelling in a memfd, and status lists them all."""
    with daemon() as d:
        for n, system in ((300, "syscalls"), (2000, None)):
            events = kernel_events(n, system)
            gen, pid = getppid_loadgen()
            out = os.path.join(d.dir, "many-%d.dat" % n)
            args = [a for e in events for a in ("-e", e)]
            # One filter for all: only the load's calls, however many events are on.
            rec = d.record_background(*args, "--filter", "common_pid == %d" % pid, "-o", out)
            session = d.wait_running()
            assert session["events"] == events, len(session["events"])
            st = d.ctl_json("status", session["name"])
            assert st["events"] == events and not st.get("skipped_events"), len(st["events"])
            gen.stdin.write("go\n")
            gen.stdin.flush()
            loadgen_result(gen)
            d.ctl("stop", session["name"])
            _, stderr = rec.communicate(timeout=120)
            assert rec.returncode == 0, stderr
            check_many_events_file(out, events, pid, 3000)


def test_too_many_events_is_a_usage_error():
    with daemon() as d:
        r = d.ctl("record", *["-esched"] * 100001, "-o", os.path.join(d.dir, "x.dat"),
                  check=False)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert "too many events: at most 100000 -e options" in r.stderr, r.stderr
        assert d.ctl_json("list") == []


def test_session_file_with_thousands_of_events():
    """A sessions.d file naming 2,000 events, one per line: started with the
    daemon, listed whole, and its segment carries every event's format."""
    events = kernel_events(2000)
    gen, pid = getppid_loadgen()
    text = "".join("event = %s\n" % e for e in events) + "filter = common_pid == %d\n" % pid
    assert len(text) > 64 * 1024
    d = Daemon().with_session_files({"many.conf": text})
    try:
        d.start()
        st = d.wait_state("many")
        assert st["events"] == events, len(st["events"])
        gen.stdin.write("go\n")
        gen.stdin.flush()
        loadgen_result(gen)
        d.ctl("stop", "many")
        directory = os.path.join(d.state, "sessions", "many")
        files = [os.path.join(directory, f) for f in sorted(os.listdir(directory))
                 if f.endswith(".dat") and not f.startswith(".")]
        assert len(files) == 1, files
        check_many_events_file(files[0], events, pid, 3000)
        saved = d.ctl("save", "many").stdout
        assert saved.count("event = ") == 2000, saved[:200]
        d.stop()
    finally:
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
