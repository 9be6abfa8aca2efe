#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a hostile tester broke, each through the real daemon: retention that
deleted files the daemon never wrote, or another user's; losses after a
crash or an outside change that nothing reported; orphans that leaked; two
daemons whose instance tags collided. Each test counts files or markers."""

import grp
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, FTRACECTL, Daemon, count_markers, daemon, loadgen,  # noqa: E402
                     loadgen_result, our_instances, run, spool_holds_all_read, start_markers,
                     wait_cpus_have_events, wait_until)


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



def lost_per_cpu(path):
    """The loss a file reports per CPU, as `ftracectl info` reads its CPU statistics."""
    out = subprocess.run([FTRACECTL, "--json", "info", path], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return {c["cpu"]: c["lost_events"] for c in json.loads(out.stdout)["cpus"]}


def assert_loss_said_exactly(path, written):
    """PATH holds each tag's markers ({tag: {cpu: written}}) in order, none twice, and
    the markers missing on each CPU are exactly the loss it reports there.
    Returns that loss per CPU."""
    lost = lost_per_cpu(path)
    got = {tag: count_markers([path], tag=tag)["generators"] for tag in written}
    for cpu in CPUS:
        missing = 0
        for tag, counts in written.items():
            g = got[tag].get(str(cpu), {"distinct": 0, "duplicates": 0, "in_order": True})
            assert g["duplicates"] == 0 and g["in_order"], (cpu, tag, g)
            missing += counts[cpu] - g["distinct"]
        assert missing == lost[cpu], "CPU %d: %d markers missing, the file says %d lost" % (
            cpu, missing, lost[cpu])
    return lost


def test_kill_with_the_load_going_on_loss_counted_exactly():
    """kill -9 of the daemon while markers keep coming until the orphan's small ring
    overwrites: the recovered file holds the spool, then the ring's rest after a hole,
    and the loss its CPU statistics report is exactly the markers missing, per CPU."""
    first = Daemon().start()
    try:
        rec = first.record_background("-e", "ftrace:print", "-b", "64",
                                      "-o", os.path.join(first.dir, "x.dat"))
        session = first.wait_running()
        instance = session["instance"]
        # 4 s of markers per CPU, far more than a 64 KiB ring holds.
        finish = start_markers(instance, CPUS, 40000, 10000)
        wait_cpus_have_events(instance, CPUS)
        first.kill()
        rec.communicate(timeout=30)
        written = finish()
        stats = {}
        for cpu in CPUS:
            with open("/sys/kernel/tracing/instances/%s/per_cpu/cpu%d/stats" % (instance, cpu)) as f:
                stats[cpu] = dict(line.split(":", 1) for line in f if ":" in line)
        assert any(int(s["overrun"]) > 0 for s in stats.values()), \
            "the ring never overwrote: %s" % stats

        second = Daemon(state=first.state).start()
        try:
            recovered = os.path.join(first.state, "recovered")
            files = [os.path.join(recovered, f) for f in os.listdir(recovered)
                     if f.endswith("-recovered.dat")]
            assert len(files) == 1, files
            lost = assert_loss_said_exactly(files[0], {"t": written})
            assert sum(lost.values()) > 0
            assert "were lost (overwritten in the ring" in second.log(), second.log()
            assert instance not in our_instances()
        finally:
            second.stop()
            second.cleanup()
    finally:
        first.cleanup()



def kill_once_stored(mode):
    """Markers, then none: what the daemon took from the ring reaches its spool by itself
    (within a second; a quiet server's batch used to wait in the daemon's heap for hours).
    Killed then, the daemon loses nothing: the next start's file holds every marker once,
    the spool's and the rest the orphan's ring kept."""
    first = Daemon().start()
    try:
        rec = None
        if mode == "record":
            rec = first.record_background("-e", "ftrace:print",
                                          "-o", os.path.join(first.dir, "x.dat"))
            instance = first.wait_running()["instance"]
        else:
            first.ctl("create", "k", "-e", "ftrace:print", "--segment-time", "1h")
            first.ctl("start", "k")
            instance = first.ctl_json("status", "k")["instance"]
        # 2 MB of markers a CPU: batches of 512 KiB are stored as they fill, the last
        # one only by its age.
        written = start_markers(instance, CPUS, 30000, 15000, tag="f")()
        stopped = time.monotonic()
        wait_until("the spool holds what the daemon read",
                   lambda: spool_holds_all_read(first.state, instance), timeout=30)
        print("%s: the spool held what was read %.2f s after the load stopped" % (
            mode, time.monotonic() - stopped))
        first.kill()
        if rec:
            rec.communicate(timeout=30)
        second = Daemon(state=first.state).start()
        try:
            if mode == "record":
                directory = os.path.join(first.state, "recovered")
                files = [os.path.join(directory, f) for f in os.listdir(directory)
                         if f.endswith("-recovered.dat")]
            else:
                files = [os.path.join(session_dir(second, "k"), f)
                         for f in dat_files(second, "k")]
            assert len(files) == 1, files
            lost = assert_loss_said_exactly(files[0], {"f": written})
            assert sum(lost.values()) == 0, (lost, second.log())
            assert instance not in our_instances()
            if mode != "record":
                second.wait_state("k")
                second.ctl("destroy", "k")
        finally:
            second.stop()
            second.cleanup()
    finally:
        first.cleanup()


def test_continuous_spools_what_it_read_and_a_kill_loses_nothing():
    kill_once_stored("continuous")


def test_record_spools_what_it_read_and_a_kill_loses_nothing():
    kill_once_stored("record")


def kernel_overrun(instance):
    """Events INSTANCE's ring overwrote or dropped, all CPUs (read while no daemon runs)."""
    total = 0
    for cpu in CPUS:
        with open("/sys/kernel/tracing/instances/%s/per_cpu/cpu%d/stats" % (instance, cpu)) as f:
            stats = dict(line.split(":", 1) for line in f if ":" in line)
        total += int(stats["overrun"]) + int(stats["dropped events"])
    return total


def test_kill9_loop_loses_nothing_taken():
    """kill -9 at random instants (52 rounds), during the markers and after, for
    continuous sessions and records, compressed and not: every marker the kernel accepted is in the next
    start's files exactly once (what a worker had taken and not stored outlived it in
    its hold, the rest was in the ring), and no file reports a loss."""
    import random
    rng = random.Random(4404)
    first = Daemon()
    state = first.state
    daemons = [first]
    seen = set()
    held = []  # rounds whose recovery took what a worker held
    d = first
    try:
        for i, (mode, compression) in enumerate(
                [(m, c) for m in ("continuous", "record") for c in ("zstd", "none")] * 13):
            tag = "r%d" % i
            d = first if i == 0 else Daemon(state=state)
            if d is not first:
                daemons.append(d)
            d.start()
            rec = None
            if mode == "record":
                rec = d.record_background("-e", "ftrace:print", "-b", "512", "--compression",
                                          compression, "-o", os.path.join(d.dir, "x.dat"))
                instance = d.wait_running()["instance"]
            else:
                # Segments of an hour, or rotations (each stores what is held) in between.
                d.ctl("create", "k", "-e", "ftrace:print", "-b", "512", "--compression",
                      compression, "--segment-time", "300ms" if i // 4 % 3 == 1 else "1h")
                d.ctl("start", "k")
                instance = d.ctl_json("status", "k")["instance"]
            # 512 KiB rings wake their reader every ~50 KiB, and 100 KB/s a CPU takes
            # a second to fill a batch: the worker holds up to a second of markers
            # (before holds, they died with it); what comes after the kill fits the ring.
            finish = start_markers(instance, CPUS, 2000, 2000, tag=tag)
            time.sleep(rng.uniform(0.05, 1.3))
            d.kill()
            if rec:
                rec.communicate(timeout=30)
            written = finish()
            assert kernel_overrun(instance) == 0, "round %d: the ring overflowed" % i
            d = Daemon(state=state)
            daemons.append(d)
            d.start()
            recovered = os.path.join(state, "recovered")
            files = [os.path.join(recovered, f) for f in sorted(os.listdir(recovered))
                     if f.endswith(".dat")] if os.path.isdir(recovered) else []
            if os.path.isdir(session_dir(d, "k")):
                files += [os.path.join(session_dir(d, "k"), f) for f in dat_files(d, "k")]
            if "were still held" in d.log():
                held.append((i, mode, compression))
            new = [f for f in files if f not in seen]
            seen.update(files)
            assert new, "round %d: nothing recovered:\n%s" % (i, d.log())
            got = count_markers(new, tag=tag)["generators"]
            lost = {cpu: sum(lost_per_cpu(f).get(cpu, 0) for f in new) for cpu in CPUS}
            for cpu, n in written.items():
                g = got.get(str(cpu), {"distinct": 0, "duplicates": 0, "in_order": True})
                assert (g["distinct"], g["duplicates"], g["in_order"], lost[cpu]) == \
                    (n, 0, True, 0), "round %d (%s, %s) CPU %d: %s, written %d, %d said lost" \
                    % (i, mode, compression, cpu, g, n, lost[cpu])
            assert instance not in our_instances()
            if mode == "continuous":
                d.wait_state("k")
                d.ctl("destroy", "k")
            d.stop()
            d.cleanup()
        print("rounds that recovered what a worker held: %s" % held)
        assert held, "no kill came while a worker held markers"
    except BaseException:
        print(d.log()[-3000:])
        raise
    finally:
        for x in reversed(daemons):
            x.cleanup()


def test_held_batch_found_through_the_state_directory():
    """Under systemd the holds live in the service's runtime directory
    ($RUNTIME_DIRECTORY), which the state directory names (its "hold" link): a daemon
    killed while its worker held markers, `ftracectl recover` (no daemon, no
    RUNTIME_DIRECTORY) finds them there and writes every marker once, none lost."""
    first = Daemon()
    runtime = os.path.join(first.dir, "run")
    os.mkdir(runtime, 0o700)
    first.daemon_env = dict(os.environ, RUNTIME_DIRECTORY=runtime)
    first.start()
    try:
        holds = os.readlink(os.path.join(first.state, "hold"))
        assert os.path.dirname(holds) == runtime, holds
        rec = first.record_background("-e", "ftrace:print", "-b", "512",
                                      "-o", os.path.join(first.dir, "x.dat"))
        instance = first.wait_running()["instance"]
        # 1500 markers a CPU: one wake-up of a 512 KiB ring's reader, far from a batch.
        written = start_markers(instance, CPUS, 1500, 0, tag="h")()
        wait_until("the workers read the markers",
                   lambda: all(read_events(instance, cpu) > 0 for cpu in CPUS))
        held = not spool_holds_all_read(first.state, instance)
        first.kill()
        rec.communicate(timeout=30)
        assert sorted(os.listdir(holds)) != [], "no hold in %s" % holds
        r = subprocess.run([FTRACECTL, "recover", first.state], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        directory = os.path.join(first.state, "recovered")
        files = [os.path.join(directory, f) for f in os.listdir(directory)
                 if f.endswith("-recovered.dat")]
        assert len(files) == 1, files
        lost = assert_loss_said_exactly(files[0], {"h": written})
        assert sum(lost.values()) == 0, (lost, r.stderr)
        print("the workers still held markers at the kill: %s" % held)
        assert os.listdir(holds) == [], "recovered holds kept: %s" % os.listdir(holds)
    finally:
        first.cleanup()


def read_events(instance, cpu):
    with open("/sys/kernel/tracing/instances/%s/per_cpu/cpu%d/stats" % (instance, cpu)) as f:
        stats = dict(line.split(":", 1) for line in f if ":" in line)
    return int(stats["read events"])


def test_kill_during_recovery_recovers_again():
    """kill -9 of the daemon while its start-up drains an orphan's full ring: the
    orphan stays until the recovered file is on disk, so the next start recovers
    it all, and what it reports lost is exactly what is missing."""
    first = Daemon().start()
    second = third = None
    try:
        rec = first.record_background("-e", "ftrace:print", "-b", "32768",
                                      "-o", os.path.join(first.dir, "x.dat"))
        instance = first.wait_running()["instance"]
        before = start_markers(instance, CPUS, 20000)()
        first.kill()
        rec.communicate(timeout=30)
        # Left in the orphan's ring, to drain at the next start.
        after = start_markers(instance, CPUS, 200000, tag="late")()
        base = {cpu: read_events(instance, cpu) for cpu in CPUS}

        second = Daemon(state=first.state).launch()
        wait_until("the drain of the orphan", lambda: any(
            read_events(instance, cpu) > base[cpu] for cpu in CPUS), timeout=60)
        second.kill()
        spool = os.path.join(first.state, "spool")
        assert os.listdir(spool) and instance in our_instances(), \
            "recovery was over before the kill:\n" + second.log()

        third = Daemon(state=first.state).start()
        recovered = os.path.join(first.state, "recovered")
        files = [os.path.join(recovered, f) for f in os.listdir(recovered)
                 if f.endswith("-recovered.dat")]
        assert len(files) == 1, files
        assert_loss_said_exactly(files[0], {"t": before, "late": after})
        assert os.listdir(spool) == [] and instance not in our_instances()
    finally:
        for d in (third, second, first):
            if d:
                d.cleanup()



def test_kill_during_a_kernel_backend_snapshot_loses_nothing_silently():
    """kill -9 while a kernel-backend flight recorder's snapshot drains its ring: what
    the drain took is kept on disk until the snapshot is written, so the next start
    recovers it with the ring's rest; what is missing is exactly what it reports."""
    first = Daemon().start()
    second = None
    try:
        # A ring large enough that its drain takes a while to kill it in.
        first.ctl("create", "kf", "--mode", "flight", "--flight-backend", "kernel",
                  "-e", "ftrace:print", "-b", "262144")
        first.ctl("start", "kf")
        instance = first.wait_state("kf")["instance"]
        written = start_markers(instance, CPUS, 1500000)()
        base = {cpu: read_events(instance, cpu) for cpu in CPUS}
        snap = subprocess.Popen([FTRACECTL, "snapshot", "kf"], env=first.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until("the drain", lambda: any(read_events(instance, cpu) > base[cpu]
                                            for cpu in CPUS), timeout=60)
        first.kill()
        snap.communicate(timeout=30)
        spool = os.path.join(first.state, "spool")
        copies = [f for d in os.listdir(spool) for f in os.listdir(os.path.join(spool, d))
                  if f.startswith("cpu")]
        assert copies, "the snapshot was written before the kill:\n" + first.log()

        second = Daemon(state=first.state).start()
        snapshots = os.path.join(first.state, "sessions", "kf", "snapshots")
        files = [os.path.join(snapshots, f) for f in os.listdir(snapshots)
                 if f.endswith("-recovered.dat")]
        assert len(files) == 1, os.listdir(snapshots)
        assert_loss_said_exactly(files[0], {"t": written})
        assert "Recovered the flight recorder history" in second.log(), second.log()
        # The saved session is started again after the daemon listens (its ring is sized
        # on a thread): a destroy before it runs is refused as busy.
        second.wait_state("kf")
        second.ctl("destroy", "kf")
        assert os.listdir(spool) == []
    finally:
        for d in (second, first):
            if d:
                d.cleanup()



def test_clearing_the_buffer_during_a_record_is_reported_with_an_estimate():
    """`: > trace` in the session's instance while markers come in: the client, status
    and the file say so, with about how many events it lost, and the client exits 1."""
    with daemon() as d:
        out = os.path.join(d.dir, "cleared.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        instance = session["instance"]
        procs = {cpu: loadgen("--instance", instance, "--cpu", str(cpu), "--count", "200000",
                              "--rate", "100000") for cpu in CPUS}
        wait_cpus_have_events(instance, CPUS)
        # Half way: the buffer holds what came in since its reader's last turn.
        wait_until("markers stored", lambda: all(
            read_events(instance, cpu) > 50000 for cpu in CPUS))
        open("/sys/kernel/tracing/instances/%s/trace" % instance, "w").close()
        # Writes while the kernel clears fail: the writer counts them, not lost events.
        written, failed = {}, {}
        for cpu, p in procs.items():
            written[cpu], failed[cpu], _ = loadgen_result(p)
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 1 and "events may be missing" in stderr, stdout + stderr
        assert "No events lost" not in stdout, stdout
        got = count_markers([out])["generators"]
        estimates = {int(cpu): int(n) for cpu, n in re.findall(
            r"the buffer of CPU (\d+) was cleared by another process \(about (\d+)", stderr)}
        assert "trace was written by another process" in stderr, stderr
        for cpu in CPUS:
            lost = written[cpu] - got[str(cpu)]["distinct"]
            assert lost > 0, "nothing was lost on CPU %d: %s" % (cpu, got)
            # An estimate, from the rate events came in (writes that failed during the
            # clear count in it): within a factor of two.
            assert cpu in estimates and \
                lost / 2 <= estimates[cpu] <= (lost + failed[cpu]) * 2, \
                "CPU %d: %d lost, estimated %s (%s)" % (cpu, lost, estimates.get(cpu), stderr)
        dump = subprocess.run(["trace-cmd", "dump", "--options", out], capture_output=True,
                              text=True).stdout
        assert "ftraced-warning: " in dump and "was cleared by another process" in dump


def test_outside_changes_to_what_is_recorded_are_reported():
    """Another process changes the clock, the CPU mask, an event's filter, an option,
    the buffer's size and the pid filter of a running session's instance: each is
    compared with the start, and status, the client and the file name it."""
    with daemon() as d:
        out = os.path.join(d.dir, "changed.dat")
        rec = d.record_background("-e", "ftrace:print", "-e", "sched:sched_switch", "-o", out)
        session = d.wait_running()
        base = "/sys/kernel/tracing/instances/%s" % session["instance"]
        changes = [("trace_clock", "global", "trace_clock was changed by another process "
                    "(from 'local' to 'global')"),
                   ("tracing_cpumask", "1", "tracing_cpumask was changed"),
                   ("events/sched/sched_switch/filter", "prev_pid == 1",
                    "events/sched/sched_switch/filter was changed"),
                   ("options/record-tgid", "1", "options/record-tgid was changed"),
                   ("buffer_size_kb", "1024", "buffer_size_kb was changed"),
                   ("set_event_pid", "1", "set_event_pid was written by another process")]
        for path, value, _ in changes:
            with open(os.path.join(base, path), "w") as f:
                f.write(value)
        # Writing the same value again is no change.
        with open(os.path.join(base, "options", "irq-info")) as f:
            same = f.read()
        with open(os.path.join(base, "options", "irq-info"), "w") as f:
            f.write(same)
        warning = d.ctl_json("status", session["name"]).get("warning", "")
        for _, _, said in changes:
            assert said in warning, (said, warning)
        assert "irq-info" not in warning, warning
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 1 and "trace_clock was changed" in stderr, stdout + stderr
        dump = subprocess.run(["trace-cmd", "dump", "--options", out], capture_output=True,
                              text=True).stdout
        assert "tracing_cpumask was changed" in dump, dump[-2000:]



def test_busy_orphan_listed_shrunk_and_removed_once_free():
    """A process holds an instance's trace_marker open across a crash of the daemon: the
    next start recovers its capture, cannot remove it (EBUSY), shrinks its ring, lists
    it, and removes it once the holder lets go; a new session never gets its name."""
    first = Daemon().start()
    second = None
    marker = None
    try:
        rec = first.record_background("-e", "ftrace:print", "-o", os.path.join(first.dir, "x.dat"))
        instance = first.wait_running()["instance"]
        base = "/sys/kernel/tracing/instances/%s" % instance
        marker = open(os.path.join(base, "trace_marker"), "w")
        marker.write("ftseq=t:0:0\n")
        marker.flush()
        first.kill()
        rec.communicate(timeout=30)

        second = Daemon(state=first.state).start()
        assert instance in our_instances(), "a busy instance cannot have been removed"
        with open(os.path.join(base, "buffer_size_kb")) as f:
            assert int(f.read().split()[0]) < 64, "the busy orphan's ring was not shrunk"
        text = second.ctl("list").stdout
        assert "Waiting for removal: instance " + instance in text, text
        second.ctl("record", "-e", "ftrace:print", "--duration", "100ms",
                   "-o", os.path.join(first.dir, "y.dat"))
        marker.close()
        marker = None
        wait_until("the orphan's removal", lambda: instance not in our_instances(), timeout=30)
        assert "Waiting for removal" not in second.ctl("list").stdout
        assert "Removed instance '%s'" % instance in second.log(), second.log()
    finally:
        if marker:
            marker.close()
        for d in (second, first):
            if d:
                d.cleanup()



def test_zero_filled_spool_is_not_taken_for_data():
    """A spool grown by 100 GiB of zeros (a planted sparse file) after a crash: start-up
    does not scan it as pages, the recovered file holds just the markers, and the log
    says what was left out."""
    first = Daemon().start()
    second = None
    try:
        rec = first.record_background("-e", "ftrace:print", "--compression", "none",
                                      "-o", os.path.join(first.dir, "x.dat"))
        instance = first.wait_running()["instance"]
        written = start_markers(instance, CPUS, 5000)()
        first.kill()
        rec.communicate(timeout=30)
        spool = os.path.join(first.state, "spool")
        (trace_id,) = os.listdir(spool)
        cpu0 = os.path.join(spool, trace_id, "cpu0")
        with open(cpu0, "r+b") as f:
            f.truncate(os.path.getsize(cpu0) + (100 << 30))

        second = Daemon(state=first.state).start()
        recovered = os.path.join(first.state, "recovered")
        (name,) = [f for f in os.listdir(recovered) if f.endswith("-recovered.dat")]
        path = os.path.join(recovered, name)
        assert os.path.getsize(path) < 64 << 20, os.path.getsize(path)
        assert_loss_said_exactly(path, {"t": written})
        assert "bytes after its last intact record" in second.log(), second.log()
    finally:
        for d in (second, first):
            if d:
                d.cleanup()



def test_messages_say_what_to_do():
    """The messages a tester found misleading: each now says what happened and what to
    do, through the real daemon."""
    with daemon() as d:
        def refused(*args):
            r = d.ctl(*args, check=False)
            assert r.returncode != 0, (args, r.stdout)
            return r.stderr

        err = refused("record", "-e", "sched", "--duration", "31d", "-o", "/dev/null")
        assert "from 1 ms to 30 days" in err, err
        err = refused("create", "t", "--mode", "flight", "-e", "sched:sched_switch",
                      "--trigger", "signal=SIGUSR1")
        assert "only a process dying of a fatal signal" in err and \
            "event=signal:signal_deliver" in err, err
        size = os.path.getsize("/bin/true")
        err = refused("record", "--probe", "p:past /bin/true:0x%x" % (size + 4096),
                      "--duration", "100ms", "-o", os.path.join(d.dir, "u.dat"))
        assert "is past the end of '/bin/true' (%d bytes)" % size in err, err

        # Ctrl-C while the daemon allocates a large ring: nothing was recorded, said so.
        rec = subprocess.Popen([FTRACECTL, "record", "-e", "sched", "-b", "1000000",
                                "-o", os.path.join(d.dir, "big.dat")], env=d.env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until("the allocation", lambda: "allocating" in d.ctl("list").stdout)
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=60)
        assert rec.returncode == 1 and "stopped before recording began" in err and \
            "Interrupted system call" not in err, err
        assert not [f for f in os.listdir(d.dir) if f.startswith("big.dat")]

        # A wall-clock anchor that cannot be measured is said to the client and in status.
        d.ctl("record", "-e", "sched:sched_switch", "--duration", "100ms",
              "-o", os.path.join(d.dir, "a.dat"))
        (anchor,) = [i for i in our_instances() if i.endswith("-0")]
        with open("/sys/kernel/tracing/instances/%s/options/markers" % anchor, "w") as f:
            f.write("0")
        r = d.ctl("record", "-e", "sched:sched_switch", "--duration", "100ms",
                  "-o", os.path.join(d.dir, "b.dat"))
        assert "note: no wall-clock anchor for clock local" in r.stderr, r.stderr



def test_create_refused_while_shutting_down():
    """SIGTERM while a record's file is still being written (its reader, a pipe, is
    slow): a create in that window is refused, not answered OK for a session that
    would never exist."""
    d = Daemon().start()
    try:
        rec = subprocess.Popen([FTRACECTL, "record", "-e", "ftrace:print", "-o", "-"],
                               env=d.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        session = d.wait_running()
        start_markers(session["instance"], CPUS, 30000)()
        d.proc.send_signal(signal.SIGTERM)
        # The file does not fit in the pipe: the daemon cannot exit before it is read.
        wait_until("the shutdown", lambda: "finishing 1 session(s) and exiting" in d.log())
        r = d.ctl("create", "late", "-e", "sched", check=False)
        assert r.returncode != 0 and "the daemon is shutting down" in r.stderr, r
        trace, _ = rec.communicate(timeout=60)
        assert rec.returncode == 0 and len(trace) > 65536, (rec.returncode, len(trace))
        assert d.proc.wait(timeout=60) == 0
        assert "late" not in d.log()
    finally:
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
