#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Continuous sessions through the real daemon on the real kernel: rotation
by time and by size across many segment boundaries with numbered markers
(every marker exactly once, in order, each segment readable on its own and
all of them together by trace-cmd report), retention limits, restart, and
shutdown while recording."""

import grp
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (daemon, start_markers, count_markers, CPUS, Daemon, FTRACECTL,  # noqa: E402
                     assert_complete_sequences, print_log_tail, check_events, event_lines, loadgen,
                     first_section_id, loadgen_result, our_instances, parse_markers, report,
                     run, TimedMarkers, TRACING, V7_SECTION_BUFFER, wait_until)



def segments(d, name):
    directory = os.path.join(d.state, "sessions", name)
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if f.endswith(".dat") and not f.startswith(".")]


def file_lost_events(path):
    """The loss a file's CPU statistics report, per CPU (as ftracectl info reads them)."""
    out = subprocess.run([FTRACECTL, "--json", "info", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return {c["cpu"]: c["lost_events"] for c in json.loads(out.stdout)["cpus"]}


def markers_for(instance, seconds, rate_per_cpu, tag="t"):
    """Markers at a rate for a time, in the background (see harness.start_markers)."""
    return start_markers(instance, CPUS, int(seconds * rate_per_cpu), rate_per_cpu, tag)


def check_segments(files, written, tag="t", rounds=None):
    """Each segment readable alone; all together: every marker (of TAG, or of each
    (tag, written) of ROUNDS) once, in order."""
    total = 0
    for f in files:
        check_events(f)
        lines = report(f)
        n = len(event_lines(lines))
        assert n == count_markers([f])["events"], "%s: report and our reader disagree" % f
        total += n
    # trace-cmd merges the segments back into one stream just as well.
    merged = report(files[0], *sum((["-i", f] for f in files[1:]), []))
    for tag, written in rounds or [(tag, written)]:
        together = count_markers(files, tag)
        for cpu, n in written.items():
            g = together["generators"][str(cpu)]
            assert (g["distinct"], g["duplicates"], g["max"] + 1, g["in_order"]) == \
                (n, 0, n, True), "CPU %d across segments: %s (written %d)" % (cpu, g, n)
        assert_complete_sequences(parse_markers(merged, tag), written)
    assert total == together["events"]


def test_rotation_by_time():
    with daemon() as d:
        d.ctl("create", "bytime", "-e", "ftrace:print", "--segment-time", "200ms")
        d.ctl("start", "bytime")
        instance = d.ctl_json("status", "bytime")["instance"]
        written = markers_for(instance, 5.0, 3000)()
        d.ctl("stop", "bytime")
        files = segments(d, "bytime")
        assert len(files) >= 20, "only %d segments" % len(files)
        check_segments(files, written)
        d.ctl("destroy", "bytime")
        assert d.ctl_json("list") == []
        assert segments(d, "bytime") == files, "destroy must keep the files"


def test_rotation_by_size():
    with daemon() as d:
        d.ctl("create", "bysize", "-e", "ftrace:print", "--compression", "none", "--segment-size", "256K")
        d.ctl("start", "bysize")
        instance = d.ctl_json("status", "bysize")["instance"]
        written = markers_for(instance, 2.0, 60000)()
        d.ctl("stop", "bysize")
        files = segments(d, "bysize")
        assert len(files) >= 20, "only %d segments" % len(files)
        check_segments(files, written)
        d.ctl("destroy", "bysize")


def assert_cut_complete(path, tag="t"):
    """Every generator's markers in PATH start at 0 and have no hole: a CPU's events up to
    a cut, each once."""
    for cpu, g in count_markers([path], tag)["generators"].items():
        assert (g["min"], g["duplicates"], g["distinct"]) == (0, 0, g["max"] + 1), \
            "%s: CPU %s's markers: %s" % (path, cpu, g)


def test_rotate_on_request():
    """ftracectl rotate closes the open segment of a running session whose size limit
    (64 MiB) this load would not reach for minutes, and prints its path once the file is
    complete: it holds the timed markers up to at most 1 s before the request and every
    CPU's numbered markers up to the cut, each once. Capture goes on into the next
    segment: a second rotation's file starts where the first ended, and all segments
    together lose nothing."""
    with daemon() as d:
        d.ctl("create", "bg", "-e", "ftrace:print", "--segment-size", "64M")
        d.ctl("start", "bg")
        instance = d.ctl_json("status", "bg")["instance"]
        with TimedMarkers(instance) as tm:
            finish = markers_for(instance, 3.0, 2000)
            wait_until("50 timed markers", lambda: len(tm.times) >= 50)
            asked = tm.request_time()
            first = json.loads(d.ctl("--json", "rotate", "bg").stdout)
            assert segments(d, "bg") == [first["file"]], (first, segments(d, "bg"))
            assert os.path.getsize(first["file"]) == first["bytes"]
            check_events(first["file"])
            n = tm.assert_window(first["file"], asked)
            assert_cut_complete(first["file"])
            wait_until("50 more timed markers", lambda: len(tm.times) >= n + 50)
            asked = tm.request_time()
            second = d.ctl("rotate", "bg").stdout.strip()
            assert segments(d, "bg") == [first["file"], second]
            assert tm.seen(second)[0] == n, "the second window does not start at the first's end"
            tm.assert_window([first["file"], second], asked)
            written = finish()
        st = d.ctl_json("status", "bg")
        assert st["state"] == "running" and st["segment"] == 3, st
        d.ctl("stop", "bg")
        files = segments(d, "bg")
        assert len(files) == 3, files
        check_segments(files, written)
        assert tm.seen(files) == list(range(len(tm.times)))
        d.ctl("destroy", "bg")


def test_rotations_at_once():
    """Eight clients rotate one session at the same moment, with markers going on: each
    is answered with a segment complete on disk (one asked during a rotation gets the
    next one), then a rotate races a stop: it gets the last segment, or is told the
    session is not running. Every marker is in the segments once."""
    with daemon() as d:
        d.ctl("create", "bg", "-e", "ftrace:print", "--segment-size", "64M")
        d.ctl("start", "bg")
        instance = d.ctl_json("status", "bg")["instance"]
        finish = markers_for(instance, 2.0, 2000)
        cmd = [FTRACECTL, "rotate", "bg"]
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=d.env()) for _ in range(8)]
        paths = set()
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and os.path.isfile(out.strip()), (p.returncode, err)
            paths.add(out.strip())
        assert paths <= set(segments(d, "bg")) and len(paths) >= 1, paths
        for path in paths:
            check_events(path)
        written = finish()
        racer = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=d.env())
        d.ctl("stop", "bg")
        out, err = racer.communicate(timeout=120)
        if racer.returncode == 0:
            assert out.strip() in segments(d, "bg"), (out, segments(d, "bg"))
        else:
            assert racer.returncode == 1 and "not running" in err, (racer.returncode, err)
        files = segments(d, "bg")
        check_segments(files, written)
        d.ctl("destroy", "bg")


def test_rotate_refusals():
    """rotate says why it cannot: no such session, not running (created, stopped), not
    continuous (a flight recorder, a record), another user's session; a group member
    rotates its own session."""
    nogroup = grp.getgrnam("nogroup").gr_gid
    d = Daemon(extra_args=["--group", "nogroup"])
    with daemon(d):
        os.chmod(d.dir, 0o755)
        member = dict(check=False, user=65534, gid=nogroup)
        for args, code, text in ((["rotate"], 2, "usage: ftracectl rotate SESSION"),
                                 (["rotate", "a/b"], 2, "invalid session name 'a/b'"),
                                 (["rotate", "nosuch"], 1, "no session 'nosuch'")):
            r = d.ctl(*args, check=False)
            assert r.returncode == code and text in r.stderr, (args, r.returncode, r.stderr)
        d.ctl("create", "bg", "-e", "ftrace:print", "--segment-size", "64M")
        r = d.ctl("rotate", "bg", check=False)
        assert r.returncode == 1 and "'bg' is created, not running" in r.stderr, r.stderr
        d.ctl("start", "bg")
        r = d.ctl("rotate", "bg", **member)
        assert r.returncode == 4 and "belongs to another user" in r.stderr, r.stderr
        d.ctl("stop", "bg")
        r = d.ctl("rotate", "bg", check=False)
        assert r.returncode == 1 and "'bg' is stopped, not running" in r.stderr, r.stderr
        d.ctl("create", "fl", "--mode", "flight", "--flight-size", "4M", "-e", "ftrace:print")
        d.ctl("start", "fl")
        r = d.ctl("rotate", "fl", check=False)
        assert r.returncode == 1 and "'fl' is a flight recorder" in r.stderr, r.stderr
        rec = d.record_background("-e", "ftrace:print", "-o", os.path.join(d.dir, "r.dat"))
        wait_until("the record running", lambda: [
            s for s in d.ctl_json("list") if s["mode"] == "record" and s["state"] == "running"])
        name = [s["name"] for s in d.ctl_json("list") if s["mode"] == "record"][0]
        r = d.ctl("rotate", name, check=False)
        assert r.returncode == 1 and "an on-demand record" in r.stderr, r.stderr
        d.ctl("stop", name)
        rec.communicate(timeout=60)
        # A member's own session: it may rotate it.
        d.ctl("create", "mine", "-e", "ftrace:print", **member)
        d.ctl("start", "mine", **member)
        r = d.ctl("rotate", "mine", **member)
        assert r.returncode == 0 and os.path.isfile(r.stdout.strip()), r.stdout + r.stderr
        assert os.path.dirname(r.stdout.strip()) == os.path.join(d.state, "sessions", "mine")
        for name in ("bg", "fl", "mine"):
            d.ctl("destroy", name)
        assert d.ctl_json("list") == []


def in_place_segments(d, name, limit=("--segment-size", "64K")):
    """A zstd session of 64 KiB segments (or LIMIT), markers on every CPU, stopped: its
    files."""
    d.ctl("create", name, "-e", "ftrace:print", *limit)
    d.ctl("start", name)
    instance = d.ctl_json("status", name)["instance"]
    # Markers until four segments are closed, a round (a tag) at a time: how much data
    # a segment takes depends on how often a busy machine lets the workers wake.
    rounds = []
    while len(segments(d, name)) < 4 and len(rounds) < 40:
        tag = "t%d" % len(rounds)
        rounds.append((tag, markers_for(instance, 0.5, 40000, tag=tag)()))
    d.ctl("stop", name)
    files = segments(d, name)
    assert len(files) >= 4, "only %d segments after %d rounds" % (len(files), len(rounds))
    check_segments(files, None, rounds=rounds)
    assert os.listdir(os.path.join(d.state, "spool")) == [], d.log()
    for f in files:
        st = os.stat(f)
        assert st.st_mode & 0o777 == 0o640, (f, oct(st.st_mode))
        # No sparse regions left: what the file says it holds is on disk.
        assert st.st_size <= st.st_blocks * 512 + 64 * 1024, (f, st.st_size, st.st_blocks)
    return files


def test_segments_spooled_in_place():
    """On ext4 each segment's spool becomes its file: the holes between the
    CPUs' regions collapsed, the metadata appended, so the flyrecord section
    comes right after the header."""
    with daemon() as d:
        for f in in_place_segments(d, "inplace"):
            assert first_section_id(f) == V7_SECTION_BUFFER, f
        assert "Cannot collapse" not in d.log()


def test_time_segments_spooled_in_place():
    """Segments closed by time alone are spooled in place too: they also close at the
    largest size trace-cmd reads (2 GiB), which a CPU's region holds."""
    with daemon() as d:
        for f in in_place_segments(d, "bytime", ("--segment-time", "300ms")):
            assert first_section_id(f) == V7_SECTION_BUFFER, f
        assert "Cannot collapse" not in d.log()


def test_segments_copied_where_holes_cannot_collapse():
    """tmpfs cannot collapse a range: the regions are copied into a file of the usual layout."""
    d = Daemon().mount_tmpfs_state("256m")
    try:
        d.start()
        for f in in_place_segments(d, "copied"):
            assert first_section_id(f) != V7_SECTION_BUFFER, f
        assert "Cannot collapse the spool in place, copying it" in d.log()
        d.stop()
    finally:
        d.cleanup()


def test_file_size_limit_spools_per_cpu():
    """Under a file-size limit (ulimit -f) the sparse in-place spool is refused with
    EFBIG, not SIGXFSZ: the segments are spooled per CPU and copied as before."""
    d = Daemon()
    d.wrapper = ["prlimit", "--fsize=%d" % (64 << 20)]
    with daemon(d):
        for f in in_place_segments(d, "limited"):
            assert first_section_id(f) != V7_SECTION_BUFFER, f
        assert "Cannot spool in place, using a spool file per CPU: File too large" in d.log()


def test_restart_continues():
    with daemon() as d:
        d.ctl("create", "again", "-e", "ftrace:print", "--segment-time", "300ms")
        written = {cpu: 0 for cpu in CPUS}
        for round_ in range(2):
            d.ctl("start", "again")
            st = d.ctl_json("status", "again")
            assert st["state"] == "running"
            r = markers_for(st["instance"], 1.0, 2000, tag="r%d" % round_)()
            d.ctl("stop", "again")
            assert d.ctl_json("status", "again")["state"] == "stopped"
            files = segments(d, "again")
            for cpu, n in r.items():
                g = count_markers(files, tag="r%d" % round_)["generators"][str(cpu)]
                assert (g["distinct"], g["duplicates"], g["in_order"]) == (n, 0, True), g
                written[cpu] += n
        names = [os.path.basename(f) for f in segments(d, "again")]
        seqs = [int(n.rsplit("-", 1)[1].split(".")[0]) for n in names]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), names
        d.ctl("destroy", "again")


def test_retention_max_files_and_total():
    with daemon() as d:
        d.ctl("create", "few", "-e", "sched:sched_switch", "--segment-time", "150ms",
              "--max-files", "3")
        # Files someone else put there, named as if they were the newest segments: retention
        # goes by what the daemon wrote, in its order, and never touches them.
        foreign = [os.path.join(d.state, "sessions", "few", "few-20991231T000000.000Z-%06d.dat" % i)
                   for i in (1, 2)]
        for f in foreign:
            with open(f, "w") as out:
                out.write("not ours")
        d.ctl("start", "few")
        time.sleep(1.5)
        d.ctl("stop", "few")
        assert all(os.path.exists(f) for f in foreign), "retention deleted files it did not write"
        files = [f for f in segments(d, "few") if f not in foreign]
        assert len(files) == 3, files
        st = d.ctl_json("status", "few")
        assert st["segments_kept"] == 3 and st["max_files"] == 3
        assert st["disk_bytes"] == sum(os.stat(f).st_blocks * 512 for f in files)
        seqs = [int(f.rsplit("-", 1)[1].split(".")[0]) for f in files]
        assert seqs[0] > 1, "the oldest segments should have gone: %s" % files
        d.ctl("destroy", "few")

        d.ctl("create", "small", "-e", "sched:sched_switch", "--segment-time", "150ms",
              "--max-total", "3M")
        d.ctl("start", "small")
        time.sleep(1.5)
        d.ctl("stop", "small")
        files = segments(d, "small")
        used = sum(os.stat(f).st_blocks * 512 for f in files)
        assert 0 < used <= 3 * 2 ** 20, "%d bytes in %d files" % (used, len(files))
        d.ctl("destroy", "small")


def test_retention_max_age():
    with daemon() as d:
        d.ctl("create", "young", "-e", "sched:sched_switch", "--segment-time", "200ms",
              "--max-age", "1s")
        d.ctl("start", "young")
        time.sleep(2.5)
        d.ctl("stop", "young")
        now = time.time()
        files = segments(d, "young")
        assert files, "nothing kept"
        # Retention runs after each close: at the last one, nothing older than 1 s stayed.
        ages = [now - os.stat(f).st_mtime for f in files]
        assert max(ages) < 1.0 + 0.5, ages
        assert len(files) <= 7, files
        d.ctl("destroy", "young")


def test_retention_keep_free():
    d = Daemon().mount_tmpfs_state("24m")
    try:
        d.start()
        # 24 MiB cannot keep 22 MiB free and hold a 4 MiB segment, even when empty.
        r = d.ctl("create", "cramped", "-e", "sched:sched_switch", "--segment-size", "4M",
                  "--keep-free", "22M", check=False)
        assert r.returncode == 1 and "leaves no room for one segment" in r.stderr, r.stderr
        d.ctl("create", "roomy", "-e", "sched:sched_switch", "--segment-time", "150ms",
              "--keep-free", "16M")
        d.ctl("start", "roomy")
        time.sleep(2.0)
        d.ctl("stop", "roomy")
        sv = os.statvfs(d.state)
        free = sv.f_bavail * sv.f_frsize
        assert free >= 16 * 2 ** 20 - 2 * 2 ** 20, "only %d bytes free" % free
        assert len(segments(d, "roomy")) >= 1
        d.ctl("destroy", "roomy")
        d.stop()
    finally:
        d.cleanup()


def test_status_and_errors():
    with daemon() as d:
        d.ctl("create", "bg", "-e", "sched", "--segment-size", "1M", "--max-total", "64M")
        st = d.ctl_json("status", "bg")
        assert st["mode"] == "continuous" and st["state"] == "created"
        assert st["instance"] in our_instances()
        r = d.ctl("create", "bg", "-e", "sched", check=False)
        assert r.returncode == 1 and "exists already" in r.stderr
        r = d.ctl("create", "bad/name", "-e", "sched", check=False)
        assert r.returncode == 2 and "invalid session name" in r.stderr
        r = d.ctl("create", "x", "-e", "sched", "--segment-size", "1K", check=False)
        assert r.returncode == 1 and "segment size" in r.stderr
        r = d.ctl("create", "x", "-e", "sched", "--keep-free", "150%", check=False)
        assert r.returncode == 2
        # Budgets that would keep nothing are refused, saying why.
        for args, words in ((["--max-total", "1"], "cannot hold one segment"),
                            (["--max-age", "1ms"], "--max-age must be at least"),
                            (["--keep-free", "99%"], "at most 90% may be kept free")):
            r = d.ctl("create", "x", "-e", "sched", *args, check=False)
            assert r.returncode == 1 and words in r.stderr, (args, r.stderr)
        r = d.ctl("stop", "bg", check=False)
        assert r.returncode == 1 and "already created" in r.stderr
        d.ctl("start", "bg")
        r = d.ctl("start", "bg", check=False)
        assert r.returncode == 1 and "is running" in r.stderr
        text = d.ctl("status", "bg").stdout
        assert "segment:" in text and "max total:    64.0 MiB" in text, text
        st = d.ctl_json("status", "bg")
        assert st["segment"] == 1 and st["lost_events"] == 0 and st["lost_events_segment"] == 0
        # Another user in the group may look but not touch (the daemon runs with --group "").
        r = d.ctl("destroy", "record-1", check=False)
        assert r.returncode == 1 and "no session" in r.stderr
        d.ctl("destroy", "bg")
        assert d.ctl_json("list") == []


def test_destroy_waits_for_a_busy_instance():
    """destroy returns once the session's instance is gone: while a writer holds its
    trace_marker open it waits (and says why at its deadline), then succeeds once freed."""
    with daemon() as d:
        for name, release_after in (("held", None), ("freed", 1.0)):
            d.ctl("create", name, "-e", "ftrace:print", "--segment-time", "1s")
            d.ctl("start", name)
            instance = d.ctl_json("status", name)["instance"]
            marker = open(os.path.join(TRACING, "instances", instance, "trace_marker"), "w")
            if release_after:
                threading.Timer(release_after, marker.close).start()
            r = d.ctl("destroy", name, check=False)
            if release_after:
                assert r.returncode == 0, r.stderr
                assert instance not in our_instances(), "destroy returned before removal"
                continue
            assert r.returncode == 1 and "still busy" in r.stderr and instance in r.stderr, \
                r.stderr
            assert "Waiting for removal: instance " + instance in d.ctl("list").stdout
            marker.close()
            deadline = time.monotonic() + 30
            while instance in our_instances():
                assert time.monotonic() < deadline, "the instance was never removed"
                time.sleep(0.05)


def test_on_segment_command():
    with daemon() as d:
        hook = os.path.join(d.dir, "hook.sh")
        seen = os.path.join(d.dir, "seen.txt")
        with open(hook, "w") as f:
            f.write('#!/bin/sh\necho "$1 $2" >> %s\n' % seen)
        os.chmod(hook, 0o755)
        d.ctl("create", "hooked", "-e", "sched:sched_switch", "--segment-time", "200ms",
              "--on-segment", "%s 'first arg'" % hook)
        d.ctl("start", "hooked")
        time.sleep(1.0)
        d.ctl("stop", "hooked")
        files = segments(d, "hooked")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            lines = open(seen).read().splitlines() if os.path.exists(seen) else []
            if len(lines) >= len(files):
                break
            time.sleep(0.05)
        assert sorted(lines) == sorted("first arg " + f for f in files), (lines, files)
        d.ctl("destroy", "hooked")
        # Relative programs and unterminated quotes are refused at create.
        r = d.ctl("create", "h2", "-e", "sched", "--on-segment", "hook.sh", check=False)
        assert r.returncode == 1 and "full path" in r.stderr, r.stderr
        r = d.ctl("create", "h2", "-e", "sched", "--on-segment", "/bin/x 'a", check=False)
        assert r.returncode == 1 and "full path" in r.stderr, r.stderr


def test_kill9_loop_recovers_everything():
    """20 SIGKILLs at random moments: every marker ends up in a file, once and in order,
    but what the daemon had read and not yet stored when it died; the files of the
    round count exactly that loss, per CPU."""
    import random
    rng = random.Random(1234)
    first = Daemon()
    state = first.state
    # Every daemon of the loop, cleaned up at the end, newest first (cleaning a killed one
    # earlier would remove the orphans recovery drains; the first owns the state dir).
    daemons = [first]
    seen = set()  # files of earlier rounds
    lost_rounds = []
    two_spool_rounds = []
    try:
        for i in range(20):
            d = first if i == 0 else Daemon(state=state)
            if d is not first:
                daemons.append(d)
            d.start()
            d.ctl("create", "k", "-e", "ftrace:print", "--segment-time", "150ms")
            d.ctl("start", "k")
            instance = d.ctl_json("status", "k")["instance"]
            finish = markers_for(instance, 0.6, 5000, tag="k%d" % i)
            time.sleep(rng.uniform(0.05, 0.7))
            d.kill()
            written = finish()
            # The next start recovers this round; check it then.
            d = Daemon(state=state)
            daemons.append(d)
            d.start()
            files = segments(d, "k")
            every = count_markers(files, tag="k%d" % i)["generators"]
            lost = {cpu: 0 for cpu in written}
            for f in files:
                if f not in seen:
                    for cpu, n in file_lost_events(f).items():
                        lost[cpu] = lost.get(cpu, 0) + n
            seen.update(files)
            # A kill while a closed segment was still being written leaves two spools
            # of the session: the older is complete, the newer takes the ring's rest.
            if len(re.findall(r"Recovered 'sessions/k/", d.log())) > 1:
                two_spool_rounds.append(i)
            for cpu, n in written.items():
                empty = {"distinct": 0, "max": -1, "in_order": True, "duplicates": 0}
                g = every.get(str(cpu), empty)
                assert g["duplicates"] == 0 and g["in_order"], "round %d CPU %d: %s" % (
                    i, cpu, g)
                assert n - g["distinct"] == lost[cpu], \
                    "round %d CPU %d: %s, written %d, the files say %d lost" % (
                        i, cpu, g, n, lost[cpu])
            if any(lost.values()):
                lost_rounds.append((i, lost))
            assert instance not in our_instances()
            # The session came back by itself (made with create): it goes, for a fresh one
            # next round, and its spool with it.
            d.wait_state("k")
            d.ctl("destroy", "k")
            assert os.listdir(os.path.join(state, "spool")) == [], d.log()
            d.stop()
            d.cleanup()
        for f in segments(first, "k"):
            check_events(f)
        print("rounds that lost what the daemon had read and not stored (counted): %s"
              % lost_rounds)
        print("rounds recovered from two spools of the session: %s" % two_spool_rounds)
    except BaseException:
        print_log_tail(d)
        raise
    finally:
        for d in reversed(daemons):
            d.cleanup()


def test_kill9_between_two_workers_cuts():
    """A rotation cuts the CPUs one worker at a time. A daemon killed when CPU 1 was cut
    and CPU 0 was not (its worker held by a test hook, with markers it had read and not
    yet stored): those outlived it in the worker's hold (or reached the spool within a
    second), and the next start recovers them with every other one, once each."""
    first = Daemon()
    first.daemon_env = dict(os.environ, FTRACED_TEST_HOOKS="1")
    daemons = [first]
    try:
        first.start()
        # 1 MiB rings wake their reader every ~100 KiB; 3000 markers stay within the
        # worker's 512 KiB chunk, so what it read is in its hands when it is held. The
        # first rotation comes long after that, even on a busy machine.
        first.ctl("create", "k", "-e", "ftrace:print", "-b", "1024", "--segment-time", "10s")
        first.ctl("start", "k")
        instance = first.ctl_json("status", "k")["instance"]
        stats = os.path.join(TRACING, "instances", instance, "per_cpu", "cpu0", "stats")

        def read_by_worker():
            with open(stats) as f:
                return int(re.search(r"^read events: (\d+)", f.read(), re.M).group(1))
        written, _, _ = loadgen_result(loadgen("--instance", instance, "--cpu", "0",
                                               "--count", "3000", "--tag", "h"))
        wait_until("CPU 0's worker reads markers", lambda: read_by_worker() >= 1000)
        spool = os.path.join(first.state, "spool")
        before = set(os.listdir(spool))
        os.kill(first.proc.pid, signal.SIGUSR2)
        wait_until("CPU 0's worker held", lambda: "CPU 0: test hook" in first.log())
        assert len(before) == 1 and read_by_worker() < written, \
            "a rotation came first: %s, %d read" % (before, read_by_worker())
        # The next segment's spool, with its recipe: the rotation has begun, and CPU 0's
        # worker will never cut.
        wait_until("the rotation", lambda: any(
            os.path.exists(os.path.join(spool, n, "recipe"))
            for n in set(os.listdir(spool)) - before), timeout=60)
        first.kill()
        d = Daemon(state=first.state)
        daemons.append(d)
        d.start()
        files = segments(d, "k")
        got = count_markers(files, tag="h")["generators"]["0"]
        lost = sum(file_lost_events(f).get(0, 0) for f in files)
        assert got["duplicates"] == 0 and got["in_order"], got
        assert written - got["distinct"] == lost, \
            "%s, written %d, the files say %d lost (%s)" % (got, written, lost, d.log())
        assert (got["distinct"], lost) == (written, 0), (got, d.log())
        # Held, unless the worker stored them (a second old) before the hook held it.
        print("what CPU 0's worker had read was %s" % (
            "still held" if "were still held" in d.log() else "stored before the kill"))
        # The session came back by itself (made with create): it goes, its spool with it.
        d.wait_state("k")
        d.ctl("destroy", "k")
        assert os.listdir(spool) == [], d.log()
        d.stop()
    finally:
        for d in reversed(daemons):
            d.cleanup()


def test_sessions_from_files():
    d = Daemon().with_session_files({
        "alpha.conf": "# started with the daemon\nevents = ftrace:print\nsegment-time = 200ms\n",
        "broken.conf": "events = sched\nsegment-size = 64M\nsegment-time = soon\n",
        "gamma.conf": "name = third\nevents = sched:sched_switch, irq:*\nmax-files = 2\n",
        "nosuch.conf": "events = nosuch:event\n",
        "ignored.txt": "events = sched\n",
    })
    try:
        d.start()
        d.wait_state("alpha")
        d.wait_state("third")
        sessions = {s["name"]: s for s in d.ctl_json("list")}
        assert sorted(sessions) == ["alpha", "third"], sessions
        assert all(s["state"] == "running" and s["owner_uid"] == 0 for s in sessions.values())
        log = d.log()
        assert "broken.conf:3: invalid duration 'soon'" in log, log
        assert "nosuch.conf: unknown event 'nosuch:event'" in log, log
        written = markers_for(sessions["alpha"]["instance"], 0.6, 2000)()
        d.ctl("stop", "alpha")
        check_segments(segments(d, "alpha"), written)
        d.stop()
    finally:
        d.cleanup()


def tmux(name, *args):
    return subprocess.run(["tmux", "-L", name] + list(args), capture_output=True, text=True)


def test_status_watch_in_tmux_and_a_pipe():
    """The live view in a real 80x24 terminal under load: it changes every second,
    shows every CPU, fits, and quits on q; in a pipe, one line per refresh."""
    with daemon() as d:
        d.ctl("create", "w", "-e", "ftrace:print", "--max-total", "1G", "--keep-free", "5%")
        d.ctl("start", "w")
        instance = d.ctl_json("status", "w")["instance"]
        finish = start_markers(instance, CPUS, 200000, rate=40000)
        name = "ftraced-test-%d" % os.getpid()
        cmd = "env FTRACED_SOCKET=%s %s status --watch w" % (d.socket, os.path.abspath(FTRACECTL))
        r = tmux(name, "new-session", "-d", "-x", "80", "-y", "24", cmd)
        assert r.returncode == 0, r.stderr
        try:
            screens = []
            deadline = time.monotonic() + 30
            while len(set(screens)) < 3 and time.monotonic() < deadline:
                screen = tmux(name, "capture-pane", "-p").stdout
                if "CPU" in screen and (not screens or screen != screens[-1]):
                    screens.append(screen)
                time.sleep(0.2)
            assert len(set(screens)) >= 3, "the view did not change:\n%s" % screens
            last = screens[-1]
            for cpu in CPUS:
                assert "CPU%-3d" % cpu in last, last
            assert "disk   [" in last and "keep 5% free" in last and "lost: 0" in last, last
            assert any(ch in last for ch in "▁▂▃▄▅▆▇█"), "no sparkline:\n" + last
            assert all(len(line) <= 80 for line in last.splitlines()), last
            tmux(name, "send-keys", "q")
            deadline = time.monotonic() + 120
            while tmux(name, "has-session").returncode == 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert tmux(name, "has-session").returncode != 0, "q did not quit"
            # 40 columns: the pictures shrink, nothing wraps.
            r = tmux(name, "new-session", "-d", "-x", "40", "-y", "24", cmd)
            assert r.returncode == 0, r.stderr
            screen, deadline = "", time.monotonic() + 30
            while screen.count("ring [") < len(CPUS) and time.monotonic() < deadline:
                time.sleep(0.2)
                screen = tmux(name, "capture-pane", "-p").stdout
            lines = screen.splitlines()
            assert "q: quit" in lines[0], screen
            cpu_lines = [line for line in lines if line.startswith("  CPU")]
            assert len(cpu_lines) == len(CPUS), screen
            for line in cpu_lines:
                assert "ring [" in line and line.rstrip().endswith("]"), screen
            assert any(line.startswith("  disk   [") for line in lines), screen
            tmux(name, "send-keys", "q")
        finally:
            tmux(name, "kill-server")

        # Not a terminal: one line per refresh; Ctrl-C ends it cleanly.
        p = subprocess.Popen([FTRACECTL, "status", "--watch", "w"], stdout=subprocess.PIPE,
                             text=True, env=d.env())
        lines = [p.stdout.readline() for _ in range(3)]
        for line in lines:
            assert " | w running " in line and "\033" not in line, lines
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
        assert p.returncode == 0, p.returncode
        finish()
        d.ctl("stop", "w")
        d.ctl("destroy", "w")

        # Every session, while sessions come and go.
        p = subprocess.Popen([FTRACECTL, "status", "--watch"], stdout=subprocess.PIPE,
                             text=True, env=d.env())

        def wait_line(text):
            deadline = time.monotonic() + 30
            seen = []
            while time.monotonic() < deadline:
                line = p.stdout.readline()
                if text in line:
                    return line
                seen.append(line[:100])
            raise AssertionError("no line with %r in %s" % (text, seen[-3:]))

        # Sessions come and go (records get a new name each time): the view keeps up
        # past the 16 it can show at once.
        names = ["churn%d" % i for i in range(16)]
        for name in names:
            d.ctl("create", name, "-e", "sched:sched_switch", "-b", "64")
        wait_line("16 session(s)")
        for name in names:
            d.ctl("destroy", name)
        d.ctl("create", "late", "-e", "sched:sched_switch", "-b", "64")
        wait_line(" | late created ")
        d.ctl("destroy", "late")
        p.send_signal(signal.SIGINT)
        rest, _ = p.communicate(timeout=30)
        assert p.returncode == 0, p.returncode


def test_disk_full():
    d = Daemon().mount_tmpfs_state("6m")
    other = Daemon().start()
    try:
        d.start()
        other.ctl("create", "elsewhere", "-e", "sched:sched_switch", "--segment-time", "200ms")
        other.ctl("start", "elsewhere")
        d.ctl("create", "full", "-e", "ftrace:print", "--compression", "none", "--segment-time", "200ms")
        d.ctl("start", "full")
        instance = d.ctl_json("status", "full")["instance"]
        deadline = time.monotonic() + 30
        written = {}  # per run: each run numbers its markers from 0 under a tag of its own
        while time.monotonic() < deadline and d.ctl_json("status", "full")["state"] == "running":
            tag = "f%d" % len(written)
            written[tag] = loadgen_result(loadgen("--instance", instance, "--cpu", "0",
                                                  "--count", "100000", "--tag", tag))[0]
        while d.ctl_json("status", "full")["state"] == "stopping":
            assert time.monotonic() < deadline + 30, "the session never stopped"
            time.sleep(0.05)
        st = d.ctl_json("status", "full")
        assert st["state"] == "stopped", st
        # What could not be stored is counted as lost, not silently dropped. Which fills
        # the disk first is a race: the spool (its events are discarded, and counted),
        # or a segment's file (its spool is kept whole for recovery: nothing lost).
        if st["discarded_events"] > 0:
            assert st["lost_events"] >= st["discarded_events"], st
        else:
            assert "failed, keeping its spool" in d.log(), d.log()
        assert "No space left on device" in st.get("error", ""), st
        assert "No space left on device" in d.log()
        for f in segments(d, "full"):
            check_events(f)  # every closed segment stays valid
        # It says how to go on, and goes on once there is room.
        assert "start it again (ftracectl start) once its file system has room" in \
            st.get("error", ""), st
        # The daemon and the other session are fine.
        assert other.ctl_json("status", "elsewhere")["state"] == "running"
        assert d.ctl_json("list")[0]["name"] == "full"
        subprocess.run(["mount", "-o", "remount,size=64m", d.state], check=True)
        d.ctl("start", "full")
        assert d.wait_state("full")["state"] == "running"
        d.ctl("stop", "full")
        assert "error" not in d.ctl_json("status", "full")
        d.ctl("destroy", "full")
        other.ctl("stop", "elsewhere")
        assert len(segments(other, "elsewhere")) >= 1
        # Room again: what the session kept (spools) becomes files at the next start.
        d.stop(spool_empty=False)
        d.start()
        assert os.listdir(os.path.join(d.state, "spool")) == [], d.log()
        for f in segments(d, "full"):
            check_events(f)
        # Kept plus counted as lost is everything that was written.
        kept = sum(count_markers(segments(d, "full"), tag=tag)["generators"]
                   .get("0", {"distinct": 0})["distinct"] for tag in written)
        assert kept + st["lost_events"] == sum(written.values()), (kept, st, written)
        d.stop()
        other.stop()
    finally:
        other.cleanup()
        d.cleanup()


def test_sigterm_finishes_segments():
    d = Daemon().start()
    try:
        d.ctl("create", "term", "-e", "ftrace:print", "--segment-time", "300ms")
        d.ctl("start", "term")
        instance = d.ctl_json("status", "term")["instance"]
        written = markers_for(instance, 1.0, 2000)()
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=60) == 0, d.log()
        d.proc = None
        files = segments(d, "term")
        check_segments(files, written)
        assert instance not in our_instances()
    finally:
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
