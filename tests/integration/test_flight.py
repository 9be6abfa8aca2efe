#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Flight recorder sessions through the real daemon on the real kernel: with
numbered markers written far beyond the history budget, a snapshot holds a
gap-free suffix of every CPU's markers ending at the last one written, while
recording goes on; the same for the kernel backend; --trim; triggers with
post time and rate limits; concurrent snapshots; bad requests."""

import calendar
import json
import re
import signal
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (daemon, Daemon, our_instances, markers, start_markers, check_events,  # noqa: E402
                     count_markers, CPUS, FTRACECTL, TRACING, event_lines, report, run,
                     assert_complete_sequences, parse_markers,
                     wait_cpus_have_events, wall_seconds)



def assert_gap_free(path, tag, cpus):
    """Each CPU's markers in @path: some, in order, no duplicate, no gap."""
    c = count_markers(path, tag)
    for cpu in cpus:
        g = c["generators"].get(str(cpu))
        assert g, "CPU %d: no markers %s in %s" % (cpu, tag, path)
        assert g["duplicates"] == 0 and g["in_order"], "CPU %d: %s" % (cpu, g)
        assert g["distinct"] == g["max"] - g["min"] + 1, "CPU %d: gaps in %s" % (cpu, g)
    return c


def assert_suffix(path, tag, written):
    """Gap-free and ending at the last marker written on each CPU."""
    c = assert_gap_free(path, tag, written)
    for cpu, n in written.items():
        g = c["generators"][str(cpu)]
        assert g["max"] == n - 1, "CPU %d: ends at %d, last written %d" % (cpu, g["max"], n - 1)
    return c


def snapshot(d, name, *args):
    """Takes a snapshot; returns the file's path (and the reply)."""
    reply = d.ctl_json("snapshot", name, *args)
    assert os.path.exists(reply["file"]), reply
    check_events(reply["file"])
    return reply["file"], reply


def info(path):
    r = subprocess.run([FTRACECTL, "--json", "info", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def check_report_count(path):
    n = len(event_lines(report(path)))
    assert n == count_markers(path, "t")["events"], "%s: trace-cmd report and our reader disagree" % path


def test_memory_suffix_and_recording_goes_on():
    with daemon() as d:
        d.ctl("create", "fl", "--mode", "flight", "-e", "ftrace:print", "--flight-size", "1M")
        d.ctl("start", "fl")
        instance = d.ctl_json("status", "fl")["instance"]
        # ~36 MiB of raw trace per CPU, some 2 MiB compressed: far beyond 512 KiB per CPU.
        began = time.time()
        written = markers(instance, CPUS, 1000000, tag="t")
        ended = time.time()
        st = d.ctl_json("status", "fl")
        assert st["evicted_raw_bytes"] > 0, st
        # Older data evicted: complete on every CPU from a time inside the run, in UTC.
        assert began <= wall_seconds(st["history_from"]) <= ended, (began, ended, st)
        assert st["history_bytes"] <= 1 << 20, st
        assert st["history_raw_bytes"] >= 5 * st["history_bytes"], st
        first, reply = snapshot(d, "fl")
        assert os.path.dirname(first).endswith("sessions/fl/snapshots"), first
        c = assert_suffix(first, "t", written)
        assert all(g["min"] > 0 for g in c["generators"].values()), "nothing was evicted?"
        check_report_count(first)
        for cpu in info(first)["cpus"]:
            assert cpu["older_data_dropped"] and cpu["complete_from_ts"] > 0, cpu
        # Recording went on: later markers are in a later snapshot.
        assert d.ctl_json("status", "fl")["state"] == "running"
        later = markers(instance, CPUS, 20000, tag="u")
        second, _ = snapshot(d, "fl")
        assert second != first
        assert_suffix(second, "u", later)
        assert d.ctl_json("status", "fl")["snapshots"] == 2
        d.ctl("destroy", "fl")


def hold_dir_entries(state):
    """The kept flight histories (flight-<session>) in a state directory's holds."""
    holds = os.path.join(state, "hold")
    return sorted(e for e in os.listdir(holds) if e.startswith("flight-")) \
        if os.path.isdir(holds) else []


def test_memory_history_survives_kill9_and_restart():
    """A memory flight recorder holding 1 M markers is killed with -9 and started again:
    a snapshot then holds every one of them (as one taken before the kill did), what
    came after, and says the gap. A clean restart (SIGTERM, as systemctl restart) keeps
    the history too; destroy removes it."""
    first = Daemon()
    daemons = [first]
    try:
        first.start()
        first.ctl("create", "fk", "--mode", "flight", "-e", "ftrace:print", "--flight-size",
                  "16M")
        first.ctl("start", "fk")
        instance = first.ctl_json("status", "fk")["instance"]
        written = markers(instance, CPUS, 1000000 // len(CPUS), rate=250000, tag="a")
        before, _ = snapshot(first, "fk")
        a = count_markers(before, "a")
        assert a["markers"] == sum(written.values()), "lost before the kill: %s" % a
        assert hold_dir_entries(first.state) == ["flight-fk"]
        first.kill()
        d = Daemon(state=first.state)
        daemons.append(d)
        d.start()
        d.wait_state("fk")
        assert "took up the history the daemon kept" in d.log(), d.log()[-3000:]
        st = d.ctl_json("status", "fk")
        assert "after a crash" in st["gap"], st
        instance = st["instance"]
        later = markers(instance, CPUS, 20000, tag="b")
        after, _ = snapshot(d, "fk")
        got = count_markers(after, "a")
        for cpu, n in written.items():
            g = got["generators"][str(cpu)]
            assert (g["distinct"], g["duplicates"], g["in_order"]) == (n, 0, True), (cpu, g)
        assert_suffix(after, "b", later)
        check_report_count(after)
        text = subprocess.run(["trace-cmd", "report", "--stat", after], capture_output=True,
                              text=True).stdout
        assert "ftraced-gap:" in text and "after a crash" in text, text[-2000:]
        # A clean restart: SIGTERM leaves it, the next start takes it up again.
        d.stop()
        assert hold_dir_entries(first.state) == ["flight-fk"]
        d = Daemon(state=first.state)
        daemons.append(d)
        d.start()
        d.wait_state("fk")
        again, _ = snapshot(d, "fk")
        assert count_markers(again, "a")["markers"] == sum(written.values())
        assert_suffix(again, "b", later)
        d.ctl("destroy", "fk")
        assert hold_dir_entries(first.state) == []
        d.stop()
    except BaseException:
        print(daemons[-1].log()[-4000:])
        raise
    finally:
        for x in reversed(daemons):
            x.cleanup()


def test_memory_history_with_no_room_to_keep_it():
    """The memory the history is kept in beyond the daemon (its runtime directory, a
    tmpfs) is full: the daemon goes on recording on its heap (no SIGBUS), says so, and a
    snapshot holds every marker."""
    d = Daemon()
    runtime = os.path.join(d.dir, "run")
    os.mkdir(runtime, 0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", runtime],
                   check=True)
    d.daemon_env = dict(os.environ, RUNTIME_DIRECTORY=runtime)
    try:
        d.start()
        d.ctl("create", "nr", "--mode", "flight", "-e", "ftrace:print", "--flight-size", "64M")
        d.ctl("start", "nr")
        instance = d.ctl_json("status", "nr")["instance"]
        written = markers(instance, CPUS, 200000, rate=200000, tag="n")
        path, _ = snapshot(d, "nr")
        c = count_markers(path, "n")
        assert c["markers"] == sum(written.values()), c
        assert d.proc.poll() is None, d.log()[-3000:]
        assert "no room to keep the flight recorder's history" in d.log(), d.log()[-3000:]
        d.ctl("destroy", "nr")
        d.stop()
    finally:
        if d.proc is not None:
            d.proc.kill()
            d.proc.wait()
            d.proc = None
        subprocess.run(["umount", "-q", runtime])
        d.cleanup()


def test_status_shows_history_at_a_low_rate():
    """A slow flight recorder holds trace long before its first chunk is full: status
    says how much and how long, and the snapshot holds it."""
    with daemon() as d:
        d.ctl("create", "slow", "--mode", "flight", "-e", "ftrace:print")
        before = time.time()
        d.ctl("start", "slow")
        started = time.time()
        instance = d.ctl_json("status", "slow")["instance"]
        written = markers(instance, CPUS, 200, rate=400)
        st = d.ctl_json("status", "slow")
        assert st["history_raw_bytes"] > 0 and st["history_ms"] >= 400, st
        # Nothing evicted: the history reaches back to the start, said in UTC too.
        assert before - 0.01 <= wall_seconds(st["history_from"]) <= started + 0.01, \
            (before, started, st)
        assert "complete on every CPU, from %s" % st["history_from"] in \
            d.ctl("status", "slow").stdout
        out = os.path.join(d.dir, "slow.dat")
        d.ctl("snapshot", "slow", "-o", out)
        assert_complete_sequences(parse_markers(report(out)), written)
        d.ctl("destroy", "slow")


def test_trim_and_client_file():
    with daemon() as d:
        d.ctl("create", "tr", "--mode", "flight", "-e", "ftrace:print", "--flight-size", "1M")
        d.ctl("start", "tr")
        instance = d.ctl_json("status", "tr")["instance"]
        # Uneven load at the same time: CPU 0 wraps (600k markers are some 3x its share of
        # the ring), the others do not, and they go on for longer (3 s), so --trim's start
        # (the time CPU 0 is complete from) falls inside their run even on a slow build.
        busy = start_markers(instance, [0], 600000, tag="t")
        light = start_markers(instance, CPUS[1:], 60000, rate=20000, tag="t")
        written = busy()
        written.update(light())
        out = os.path.join(d.dir, "trimmed.dat")
        r = d.ctl("snapshot", "tr", "-o", out, "--trim")
        assert r.stdout.strip() == out and not os.path.exists(out + ".partial")
        check_events(out)
        assert_suffix(out, "t", written)
        cpus = info(out)["cpus"]
        start = max(c["complete_from_ts"] for c in cpus)
        assert start > 0 and all(c["complete_from_ts"] == start for c in cpus), cpus
        for c in cpus:
            if c["events"]:
                assert c["first_ts"] >= start, "CPU %d starts before %d: %s" % (
                    c["cpu"], start, c)
        # The light CPUs lost nothing themselves: only --trim cut their beginning.
        gens = count_markers(out, "t")["generators"]
        assert all(gens[str(cpu)]["min"] > 0 for cpu in CPUS[1:]), gens
        d.ctl("destroy", "tr")


def test_snapshot_since_keeps_only_its_window():
    """snapshot --since cuts at the event: markers written before the time are gone, every
    one written after it is there, in the file trace-cmd and our counter read."""
    with daemon() as d:
        d.ctl("create", "win", "--mode", "flight", "-e", "ftrace:print")
        d.ctl("start", "win")
        instance = d.ctl_json("status", "win")["instance"]
        before = markers(instance, CPUS, 3000, tag="a")
        a_end = time.time()
        # A margin on both sides of the cut, far above the anchor's error (milliseconds).
        while time.time() < a_end + 0.1:
            time.sleep(0.01)
        cut = a_end + 0.05
        after = markers(instance, CPUS, 3000, tag="b")
        since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(cut)) + \
            ".%06dZ" % int((cut % 1) * 1e6)
        out, _ = snapshot(d, "win", "--since", since)
        kept = count_markers(out, "a")["generators"]
        assert all(g["distinct"] == 0 for g in kept.values()), "kept from before: %s" % kept
        gens = count_markers(out, "b")["generators"]
        for cpu, n in after.items():
            g = gens[str(cpu)]
            assert (g["distinct"], g["duplicates"], g["min"], g["max"]) == (n, 0, 0, n - 1), g
        check_report_count(out)
        for c in info(out)["cpus"]:
            if c["events"]:
                assert wall_seconds(c["first_wall"]) >= cut - 0.001, (cut, c)
        # A relative time before both batches keeps both, whole.
        whole, _ = snapshot(d, "win", "--since", "-1h")
        for tag, written in (("a", before), ("b", after)):
            gens = count_markers(whole, tag)["generators"]
            assert all(gens[str(cpu)]["distinct"] == n for cpu, n in written.items()), gens
        # What is not a time is refused by the client, and the session is untouched.
        r = d.ctl("snapshot", "win", "--since", "yesterday", check=False)
        assert r.returncode == 2 and "invalid --since 'yesterday'" in r.stderr, r.stderr
        d.ctl("destroy", "win")
        # A counter clock has no wall-clock anchor to place the time on.
        d.ctl("create", "ctr", "--mode", "flight", "-e", "ftrace:print", "-C", "counter")
        d.ctl("start", "ctr")
        r = d.ctl("snapshot", "ctr", "--since", "-1m", check=False)
        assert r.returncode == 1 and "no wall-clock anchor" in r.stderr, r.stderr
        d.ctl("destroy", "ctr")


def test_kernel_backend():
    with daemon() as d:
        d.ctl("create", "kf", "--mode", "flight", "--flight-backend", "kernel",
              "-e", "ftrace:print", "-b", "512")
        d.ctl("start", "kf")
        st = d.ctl_json("status", "kf")
        assert st["flight_backend"] == "kernel" and "pauses tracing" in st["note"], st
        instance = st["instance"]
        with open(os.path.join(TRACING, "instances", instance, "options/overwrite")) as f:
            assert f.read().strip() == "1"
        written = markers(instance, CPUS, 300000, tag="t")
        first, reply = snapshot(d, "kf")
        assert "paused" in reply.get("note", ""), reply
        c = assert_suffix(first, "t", written)
        assert all(g["min"] > 0 for g in c["generators"].values()), "the ring did not wrap?"
        for cpu in info(first)["cpus"]:
            assert cpu["older_data_dropped"], cpu
        # Tracing resumed after the drain.
        later = markers(instance, CPUS, 5000, tag="u")
        second, _ = snapshot(d, "kf")
        c = assert_suffix(second, "u", later)
        assert all(g["min"] == 0 for g in c["generators"].values()), c
        d.ctl("stop", "kf")
        d.ctl("destroy", "kf")


def test_kernel_backend_history_survives_a_crash():
    """The kernel backend's history is in the instance's ring: after a
    crash, the next start drains it into a snapshot before removing it."""
    first = Daemon().start()
    second = None
    try:
        first.ctl("create", "kc", "--mode", "flight", "--flight-backend", "kernel",
                  "-e", "ftrace:print", "-b", "512")
        first.ctl("start", "kc")
        instance = first.ctl_json("status", "kc")["instance"]
        written = markers(instance, CPUS, 50000, tag="t")
        first.kill()
        assert instance in our_instances(), "instance vanished with the daemon"
        second = Daemon(state=first.state).start()
        assert instance not in our_instances(), "orphan not removed at restart"
        snapshots = os.path.join(first.state, "sessions", "kc", "snapshots")
        files = [f for f in os.listdir(snapshots) if f.endswith("-history-recovered.dat")]
        assert len(files) == 1, os.listdir(snapshots)
        path = os.path.join(snapshots, files[0])
        check_events(path)
        c = assert_suffix(path, "t", written)
        assert all(g["min"] > 0 for g in c["generators"].values()), "the ring did not wrap?"
        check_report_count(path)
        assert "Recovered the flight recorder history" in second.log(), second.log()
        # The session itself came back (it was made with create): its own recipe is the
        # only one in the spool, and it goes with it.
        st = second.wait_state("kc")
        assert st["state"] == "running", st
        # status names the file, for whoever looks after the crash.
        assert st["recovered"] == os.path.realpath(path), st
        assert "recovered:    %s" % os.path.realpath(path) in second.ctl("status", "kc").stdout
        second.ctl("destroy", "kc")
        assert os.listdir(os.path.join(first.state, "spool")) == []
        # Nothing to recover twice, and a clean stop leaves no recipe behind.
        second.stop()
        third = Daemon(state=first.state).start()
        third.ctl("create", "k2", "--mode", "flight", "--flight-backend", "kernel",
                  "-e", "ftrace:print")
        assert len(os.listdir(os.path.join(first.state, "spool"))) == 1
        third.ctl("destroy", "k2")
        assert os.listdir(os.path.join(first.state, "spool")) == []
        third.stop()
        third.cleanup()
        assert [f for f in os.listdir(snapshots) if not f.startswith(".")] == files
    finally:
        if second:
            second.cleanup()
        first.cleanup()


def kill_probe():
    """The trigger event of these tests: kill(424242, 0), which nothing else does."""
    try:
        os.kill(424242, 0)
    except ProcessLookupError:
        pass


def wait_snapshots(d, name, n, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = d.ctl_json("status", name)
        if st["snapshots"] >= n:
            return st
        time.sleep(0.05)
    raise AssertionError("no snapshot %d after %d s: %s" % (n, timeout, st))


def write_marker(instance, text):
    with open(os.path.join(TRACING, "instances", instance, "trace_marker"), "w") as f:
        f.write(text)


def test_trigger_post_and_rate_limit():
    with daemon() as d:
        d.ctl("create", "tg", "--mode", "flight", "-e", "ftrace:print",
              "--trigger", "event=syscalls:sys_enter_kill,filter=pid == 424242,post=300ms,"
              "min-interval=3s")
        d.ctl("start", "tg")
        instance = d.ctl_json("status", "tg")["instance"]
        background = start_markers(instance, CPUS, 80000, rate=10000, tag="t")
        try:
            time.sleep(1)
            write_marker(instance, "TRIGGER-MOMENT-1")
            for _ in range(5):
                kill_probe()
            st = wait_snapshots(d, "tg", 1)
            assert "fired 1, suppressed 4" in st["triggers"][0], st["triggers"]
            path = st["triggers"][0].split("last: ")[1]
            check_events(path)
            lines = report(path)
            moment = [line for line in lines if "TRIGGER-MOMENT-1" in line]
            assert len(moment) == 1, "the triggering moment is not in the snapshot"
            ts = lambda line: float(line.split(":")[0].split()[-1])  # noqa: E731
            last = max(ts(line) for _, _, line in event_lines(lines))
            assert last - ts(moment[0]) >= 0.25, "post: only %.3f s after the trigger" % (
                last - ts(moment[0]))
            # The firing's event in UTC (report prints wall-clock times too), in status
            # and in the log.
            fired_at = wall_seconds(st["triggers"][0].split("last at ")[1].split(",")[0])
            assert 0 <= fired_at - ts(moment[0]) < 2, (st["triggers"], moment)
            assert re.search(r"Trigger '.*' fired \(event at 20\S+Z, trace clock \d+\.\d{6}\)",
                             d.log()), d.log()[-2000:]
            # Within min-interval nothing more fires; after it, the next one does.
            kill_probe()
            time.sleep(0.5)
            assert d.ctl_json("status", "tg")["snapshots"] == 1
            time.sleep(3)
            kill_probe()
            st = wait_snapshots(d, "tg", 2)
            assert "fired 2, suppressed 5" in st["triggers"][0], st["triggers"]
        finally:
            background()
        d.ctl("destroy", "tg")


def test_snapshots_and_segments_say_why_they_were_taken():
    """A triggered snapshot names its trigger, the event and the pid that fired it: in
    trace-cmd report, as a line at that moment (the session records no markers of its
    own), and in ftracectl info. A snapshot asked for names the uid and client; a
    continuous segment names its session and number."""
    with daemon() as d:
        d.ctl("create", "why", "--mode", "flight", "-e", "sched:sched_process_exit",
              "--trigger", "signal=SIGSEGV")
        d.ctl("start", "why")
        crash = subprocess.Popen([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"])
        assert crash.wait() == -signal.SIGSEGV
        st = wait_snapshots(d, "why", 1)
        path = st["triggers"][0].split("last: ")[1]
        check_events(path)
        said = "trigger 'signal=SIGSEGV' fired: signal:signal_deliver in pid %d (python3) " \
            "at 20" % crash.pid
        fired = [line for line in report(path) if "ftraced: " + said in line]
        assert len(fired) == 1, [line for line in report(path) if "ftraced" in line]
        i = info(path)
        assert i["origin"] == "session 'why' (flight recorder), snapshot 1", i
        assert i["cause"].startswith(said), i
        out = subprocess.run([FTRACECTL, "info", path], capture_output=True, text=True).stdout
        assert "taken for:   " + said in out, out
        stat = subprocess.run(["trace-cmd", "report", "--stat", path], capture_output=True,
                              text=True).stdout
        assert "ftraced-cause: " + said in stat, stat[-2000:]
        # Asked for: the uid and the client's pid.
        asked, _ = snapshot(d, "why")
        i = info(asked)
        assert re.match(r"snapshot asked for by uid 0 \(pid \d+, ftracectl snapshot\)$",
                        i["cause"]), i
        assert i["origin"] == "session 'why' (flight recorder), snapshot 2", i
        assert [line for line in report(asked) if "ftraced: snapshot asked for by uid 0" in line]
        d.ctl("destroy", "why")
        # A continuous session's segment.
        d.ctl("create", "seg", "-e", "sched:sched_switch", "--segment-size", "64M")
        d.ctl("start", "seg")
        first = d.ctl("rotate", "seg").stdout.strip()
        assert info(first)["origin"] == "session 'seg' (continuous), segment 1", info(first)
        d.ctl("stop", "seg")
        d.ctl("destroy", "seg")


def test_trigger_pre_keeps_only_its_window():
    """pre=1s: the trigger's snapshot holds what came in the second before its event
    and after, cut at the event; markers older than that are not in it."""
    with daemon() as d:
        d.ctl("create", "tp", "--mode", "flight", "-e", "ftrace:print", "--trigger",
              "event=syscalls:sys_enter_kill,filter=pid == 424242,pre=1s")
        d.ctl("start", "tp")
        instance = d.ctl_json("status", "tp")["instance"]
        old = markers(instance, CPUS, 2000, tag="a")
        # Well past a second after the last old marker (a condition on the clock)...
        a_end = time.monotonic()
        while time.monotonic() < a_end + 1.3:
            time.sleep(0.05)
        b_start = time.monotonic()
        recent = markers(instance, CPUS, 300, tag="b")
        kill_probe()
        fired = time.monotonic()
        st = wait_snapshots(d, "tp", 1, timeout=120)
        path = st["triggers"][0].split("last: ")[1]
        check_events(path)
        kept = count_markers(path, "a")["generators"]
        assert all(g["distinct"] == 0 for g in kept.values()), "older than pre: %s" % kept
        gens = count_markers(path, "b")["generators"]
        for cpu, n in recent.items():
            g = gens[str(cpu)]
            # All of them when they took less than the second before the event (a busy
            # machine may take longer: then the end of them, gap-free).
            if fired - b_start < 0.9:
                assert (g["distinct"], g["min"], g["max"]) == (n, 0, n - 1), g
            else:
                assert g["max"] == n - 1 and g["distinct"] == n - g["min"], g
        assert sum(old.values()) > 0
        d.ctl("destroy", "tp")


def test_status_and_list_say_wall_clock_times():
    """When a session started and when its last snapshot was, in UTC, in list and
    status (text and JSON), between the times the test read around them."""
    def utc_of(text):
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))

    with daemon() as d:
        before = time.time()
        d.ctl("create", "wc", "--mode", "flight", "-e", "ftrace:print")
        d.ctl("start", "wc")
        out, _ = snapshot(d, "wc")
        after = time.time()
        st = d.ctl_json("status", "wc")
        for key in ("started", "last_snapshot_at"):
            assert int(before) <= utc_of(st[key]) <= after, (key, st[key], before, after)
        assert os.path.exists(st["last_snapshot"]), st
        text = d.ctl("status", "wc").stdout
        started = re.search(r"started: +(\S+Z)", text).group(1)
        last = re.search(r"last one: +(\S+Z), ", text).group(1)
        assert started == st["started"] and last == st["last_snapshot_at"], text
        row = [line for line in d.ctl("list").stdout.splitlines() if line.startswith("wc ")]
        assert len(row) == 1 and row[0].split()[2] == st["started"], row
        assert d.ctl_json("list")[0]["started"] == st["started"]
        # Into the client's own file: status says so (the reply has no path for it).
        snapshot(d, "wc", "-o", os.path.join(d.dir, "own.dat"))
        st = d.ctl_json("status", "wc")
        assert "last_snapshot" not in st and st["last_snapshot_at"], st
        assert "into the client's file" in d.ctl("status", "wc").stdout
        d.ctl("destroy", "wc")


def test_concurrent_snapshots_on_two_sessions():
    with daemon() as d:
        for name in ("a", "b"):
            d.ctl("create", name, "--mode", "flight", "-e", "ftrace:print", "--flight-size",
                  "2M", "--max-files", "3")
            d.ctl("start", name)
        instances = [d.ctl_json("status", n)["instance"] for n in ("a", "b")]
        background = [start_markers(i, CPUS, 200000, rate=100000, tag="t") for i in instances]
        # Every generator must have started before the snapshots: each has to hold some.
        for i in instances:
            wait_cpus_have_events(i, CPUS)
        results = []

        def take(name):
            r = subprocess.run([FTRACECTL, "--socket", d.socket, "--json", "snapshot", name],
                               capture_output=True, text=True, timeout=60)
            results.append((name, r.returncode, r.stdout, r.stderr))

        threads = [threading.Thread(target=take, args=(n,)) for n in ("a", "b") * 3]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for b in background:
            b()
        assert all(rc == 0 for _, rc, _, _ in results), results
        files = {json.loads(out)["file"] for _, _, out, _ in results}
        assert len(files) == 6, files
        for name in ("a", "b"):
            kept = [f for f in os.listdir(os.path.join(d.state, "sessions", name, "snapshots"))
                    if f.endswith(".dat")]
            assert len(kept) == 3, "--max-files 3 keeps 3 snapshots: %s" % kept
            for f in kept:
                path = os.path.join(d.state, "sessions", name, "snapshots", f)
                check_events(path)
                assert_gap_free(path, "t", CPUS)
        d.ctl("destroy", "a")
        d.ctl("destroy", "b")


def test_flight_session_file():
    d = Daemon().with_session_files({
        "incidents.conf": "mode = flight\nevents = ftrace:print\nflight-size = 2M\n"
                          "trigger = oom\n"
                          "trigger = event=syscalls:sys_enter_kill,filter=pid == 424242\n"})
    try:
        d.start()
        st = d.wait_state("incidents")
        assert st["mode"] == "flight" and st["state"] == "running", st
        assert st["flight_size"] == 2 << 20 and len(st["triggers"]) == 2, st
        written = markers(st["instance"], CPUS, 1000, tag="t")
        kill_probe()
        st = wait_snapshots(d, "incidents", 1)
        assert "fired 1" in st["triggers"][1], st["triggers"]
        assert_suffix(st["triggers"][1].split("last: ")[1], "t", written)
        d.stop()
    finally:
        d.cleanup()


def test_bad_requests():
    with daemon() as d:
        def refused(*args, message):
            r = d.ctl(*args, check=False)
            assert r.returncode != 0 and message in r.stderr, (args, r.returncode, r.stderr)

        refused("create", "x", "--mode", "flight", "-e", "ftrace:print", "--trigger", "nope",
                message="unknown trigger 'nope'")
        refused("create", "x", "--mode", "flight", "-e", "ftrace:print", "--trigger",
                "event=nosuch:event", message="not available on this kernel")
        refused("create", "x", "--mode", "flight", "-e", "ftrace:print", "--trigger",
                "event=syscalls:sys_enter_kill,filter=nosuchfield == 1",
                message="filter rejected by the kernel")
        refused("create", "x", "--mode", "flight", "-e", "ftrace:print", "--trigger",
                "oom,post=5s,min-interval=1s", message="min-interval must be at least post")
        refused("create", "x", "--mode", "flight", "-e", "ftrace:print", "--flight-size", "64K",
                message="--flight-size must be at least")
        refused("create", "x", "--mode", "flight", "--flight-backend", "kernel", "-e",
                "ftrace:print", "--flight-size", "8M", message="--buffer-size")
        refused("create", "x", "-e", "ftrace:print", "--trigger", "oom",
                message="need --mode flight")
        # The persistent backend needs what only the kernel command line sets up (this
        # host has no boot-mapped instance): the message says what to add.
        if not os.path.exists(os.path.join(TRACING, "instances", "ftraced-no-such-boot-map")):
            refused("create", "x", "--mode", "flight", "--flight-backend", "persistent", "-e",
                    "ftrace:print", "--boot-instance", "ftraced-no-such-boot-map",
                    message="add 'reserve_mem=64M:4096:trace trace_instance="
                    "ftraced-no-such-boot-map^traceoff@trace' to GRUB_CMDLINE_LINUX")
        refused("create", "x", "--mode", "flight", "--flight-backend", "persistent", "-e",
                "ftrace:print", "-b", "1024", message="size it there, on the kernel command line")
        refused("create", "x", "--mode", "flight", "-e", "ftrace:print", "--boot-instance",
                "bm", message="--boot-instance is for --flight-backend persistent")
        d.ctl("create", "c", "-e", "ftrace:print")
        refused("snapshot", "c", message="not a flight recorder")
        d.ctl("create", "f", "--mode", "flight", "-e", "ftrace:print")
        refused("snapshot", "f", message="never started")
        refused("snapshot", "nosuch", message="no session 'nosuch'")
        out = os.path.join(d.dir, "exists.dat")
        open(out, "w").close()
        d.ctl("start", "f")
        refused("snapshot", "f", "-o", out, message="exists")
        d.ctl("snapshot", "f", "-o", out, "--force")
        check_events(out)
        # Presets name events this kernel has.
        d.ctl("create", "p", "--mode", "flight", "-e", "ftrace:print", "--trigger", "oom",
              "--trigger", "warn", "--trigger", "hung-task", "--trigger", "signal=SIGSEGV")
        st = d.ctl_json("status", "p")
        assert len(st["triggers"]) == 4, st
        for name in ("c", "f", "p"):
            d.ctl("destroy", name)
        assert d.ctl_json("list") == []


if __name__ == "__main__":
    sys.exit(run())
