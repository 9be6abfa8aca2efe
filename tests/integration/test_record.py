#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ftracectl record through the real daemon on the real kernel, checked
with trace-cmd report: numbered markers arrive exactly once and in order,
pid-filtered syscalls are counted exactly, errors are specific and start
nothing, and no ftraced-* instance is left behind."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, daemon, FTRACECTL, FTRACED, LOADGEN, Daemon,  # noqa: E402
                     assert_complete_sequences,
                     assert_real_kallsyms, kallsyms_addresses,
                     check_events, daemon_fds, event_lines, first_section_id,
                     is_symbol_cache, load_bpf_program, loadgen, loadgen_result,
                     markers, our_instances, parse_markers, report, run, start_markers,
                     stop_loadgens, TRACING,
                     V7_SECTION_BUFFER, wait_until)



def record_markers(d, count, rate, *options):
    out = os.path.join(d.dir, "markers.dat")
    rec = d.record_background("-e", "ftrace:print", "-o", out, *options)
    session = d.wait_running()
    written = markers(session["instance"], CPUS, count, rate)
    d.ctl("stop", session["name"])
    stdout, stderr = rec.communicate(timeout=120)
    assert rec.returncode == 0, "record failed: " + stderr
    return out, written, stdout


def check_markers_file(path, written):
    check_events(path)
    lines = report(path)
    assert_complete_sequences(parse_markers(lines), written)
    events = event_lines(lines)
    assert len(events) == sum(written.values()), \
        "report shows %d events, %d markers were written" % (len(events), sum(written.values()))
    # The reader's own count: every line after the "cpus=N" header is one event.
    assert len(lines) - 1 == len(events), "unparsed report lines"


def test_markers_zstd():
    with daemon() as d:
        path, written, summary = record_markers(d, 50000, 100000)
        check_markers_file(path, written)
        assert "No events lost." in summary, summary
        assert not os.path.exists(path + ".partial")


def test_markers_none_subbuf_8k():
    with daemon() as d:
        path, written, _ = record_markers(d, 30000, 100000, "--compression", "none", "--subbuf-kb", "8")
        check_markers_file(path, written)
        with open(path, "rb") as f:
            head = f.read(64)
        assert head[:10] == b"\x17\x08Dtracing" and b"zstd\x00" in head
        # Raw data (its flyrecord section's flag), compressed metadata (symbols above all).
        info = json.loads(subprocess.run([FTRACECTL, "--json", "info", path], capture_output=True,
                                         text=True, check=True).stdout)
        assert info["compression"] == "none" and info["metadata_compression"] == "zstd", info
        sizes = {}
        for line in subprocess.run(["trace-cmd", "dump", "--flyrecord", "--kallsyms", "-i", path],
                                   capture_output=True, text=True).stdout.splitlines():
            m = re.search(r'"(buffer flyrecord |kallsyms)", flags (0x\d+), (\d+) bytes', line)
            if m:
                sizes[m.group(1)] = (int(m.group(2), 16), int(m.group(3)))
        assert sizes["buffer flyrecord "][0] == 0 and sizes["kallsyms"][0] == 1, sizes
        assert sizes["kallsyms"][1] < 2 << 20, "uncompressed symbols in %s" % sizes
        assert int.from_bytes(head[14:18], "little") == 8192, "file page size is not 8 KiB"


def test_markers_zstd_subbuf_16k():
    with daemon() as d:
        path, written, _ = record_markers(d, 30000, 100000, "--subbuf-kb", "16", "--level", "1")
        check_markers_file(path, written)


def test_default_subbuf_size_follows_the_ring():
    """A session that names no sub-buffer size gets 32 KiB ones where the
    kernel can change it (fewer, cheaper splices; smaller files), smaller
    ones for a small ring, and the kernel's page where it cannot; a size
    named is kept. The file's page size says which, and it reads back whole."""
    settable = os.path.exists(os.path.join(TRACING, "buffer_subbuf_size_kb"))
    page = os.sysconf("SC_PAGE_SIZE")
    cases = [((), 32768 if settable else page), (("-b", "256"), 8192 if settable else page)]
    if settable:
        cases.append((("--subbuf-kb", "4", "-b", "256"), 4096))
    with daemon() as d:
        for n, (options, size) in enumerate(cases):
            out = os.path.join(d.dir, "markers-%d.dat" % n)
            rec = d.record_background("-e", "ftrace:print", "-o", out, *options)
            session = d.wait_running()
            assert session["subbuf_size"] == size, (options, session)
            written = markers(session["instance"], CPUS, 20000, 100000)
            d.ctl("stop", session["name"])
            _, stderr = rec.communicate(timeout=120)
            assert rec.returncode == 0, "record failed: " + stderr
            with open(out, "rb") as f:
                head = f.read(18)
            assert int.from_bytes(head[14:18], "little") == size, (options, head)
            check_markers_file(out, written)


def test_markers_flat_out_json():
    """Flat-out writers with a large buffer: still exactly once, and the JSON summary agrees."""
    with daemon() as d:
        path, written, summary = record_markers(d, 200000, 0, "-b", "16384", "--json")
        info = json.loads(summary)
        check_markers_file(path, written)
        assert info["lost_events"] == 0 and info["state"] == "done"
        assert info["file_bytes"] == os.path.getsize(path)
        assert sum(c["bytes_raw"] for c in info["cpus"]) == info["bytes_raw"] > 0


CAP_SYS_NICE = 23
SCHED_FIFO = 1


def thread_stats(pid):
    """{tid: fields of /proc/PID/task/TID/stat, field N of proc(5) at index N - 3, and
    the thread's Cpus_allowed_list}."""
    found = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rpartition(")")[2].split()
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                allowed = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M).group(1)
        except OSError:
            continue  # a short-lived thread (reaper, kallsyms) gone meanwhile
        found[int(tid)] = (fields, allowed)
    return found


def worker_policies(pid, cpus_allowed=False):
    """[(policy, rt_priority)] of the daemon's threads but the main one; with CPUS_ALLOWED,
    [(policy, rt_priority, Cpus_allowed_list)]."""
    found = []
    for tid, (fields, allowed) in thread_stats(pid).items():
        if tid == pid:
            continue
        policy = (int(fields[41 - 3]), int(fields[40 - 3]))
        found.append(policy + (allowed,) if cpus_allowed else policy)
    return found


def configured_daemon(conf, wrapper=()):
    """A daemon whose ftraced.conf says CONF, exec'd by WRAPPER."""
    d = Daemon()
    path = os.path.join(d.dir, "ftraced.conf")
    with open(path, "w") as f:
        f.write("saved-cmdlines = 0\n" + conf)
    d.extra_args = ["--group", "", "--config", path]
    d.wrapper = list(wrapper)
    return d


def rt_daemon(priority_max, wrapper=()):
    """A daemon whose ftraced.conf sets rt-priority-max, exec'd by WRAPPER."""
    return configured_daemon("rt-priority-max = %d\n" % priority_max, wrapper)


def test_rt_priority_for_capture_workers():
    """-r as trace-cmd's: the capture workers run SCHED_FIFO at PRIO while the session
    captures, up to ftraced.conf's rt-priority-max; off unless the admin sets it."""
    def refused(d, priority, why):
        r = d.ctl("record", "-r", str(priority), "-e", "ftrace:print", "-o",
                  os.path.join(d.dir, "no.dat"), check=False)
        assert r.returncode != 0 and why in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(d.dir, "no.dat.partial"))

    with daemon() as d:
        refused(d, 10, "real-time scheduling (-r) is off in this daemon: set rt-priority-max")
        assert all(creds["CapEff"] == 0 for creds in thread_credentials(d.proc.pid).values())
    # Neither RLIMIT_RTPRIO nor CAP_SYS_NICE: said at start, and -r refused.
    with daemon(rt_daemon(20, ["prlimit", "--rtprio=0:0", "setpriv",
                               "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"])) as d:
        assert "real-time scheduling is not allowed here" in d.log(), d.log()
        refused(d, 10, "is off in this daemon")

    with daemon(rt_daemon(20, ["prlimit", "--rtprio=0:0"])) as d:
        pid = d.proc.pid
        # CAP_SYS_NICE kept for it (RLIMIT_RTPRIO 0), and nothing else, in every thread.
        for tid, creds in thread_credentials(pid).items():
            assert creds == dict(CapInh=0, CapPrm=1 << CAP_SYS_NICE, CapEff=1 << CAP_SYS_NICE,
                                 CapBnd=1 << CAP_SYS_NICE, CapAmb=0, NoNewPrivs="1"), \
                "thread %d: %s" % (tid, creds)
        assert all(p == (0, 0) for p in worker_policies(pid)), worker_policies(pid)
        refused(d, 30, "real-time priority 30 is above this daemon's rt-priority-max (20)")
        r = d.ctl("record", "-r", "0", "-e", "ftrace:print", "-o",
                  os.path.join(d.dir, "no.dat"), check=False)
        assert r.returncode != 0 and "real-time priority" in r.stderr, r.stderr

        out = os.path.join(d.dir, "rt.dat")
        rec = d.record_background("-r", "10", "-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        # One real-time worker per CPU, each pinned to its own.
        fifo = sorted(p[2] for p in worker_policies(pid, True) if p[:2] == (SCHED_FIFO, 10))
        assert fifo == sorted(str(c) for c in CPUS), worker_policies(pid, True)
        assert "SCHED_FIFO 10" in d.ctl("status", session["name"]).stdout
        assert d.ctl_json("status", session["name"])["rt_priority"] == 10
        written = markers(session["instance"], CPUS, 20000, 100000)
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=120)
        assert rec.returncode == 0, stderr
        check_markers_file(out, written)
        # Back to normal scheduling, anywhere the daemon may run, once no session asks.
        with open("/proc/%d/status" % pid) as f:
            anywhere = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M).group(1)
        assert all(p == (0, 0, anywhere) for p in worker_policies(pid, True)), \
            worker_policies(pid, True)


def test_capture_workers_run_at_capture_nice():
    """The capture workers (one per configured CPU) run at ftraced.conf's capture-nice,
    -5 unless it says otherwise; the main thread at the nice value the daemon was started
    with, never below 0 (a unit's Nice= is for the workers)."""
    workers = os.sysconf("SC_NPROCESSORS_CONF")

    def nices_of(d):
        nices = {tid: int(fields[19 - 3])
                 for tid, (fields, _) in thread_stats(d.proc.pid).items()}
        main = nices.pop(d.proc.pid)
        return main, sorted(nices.values())

    with daemon() as d:
        main, others = nices_of(d)
        assert main == 0 and others.count(-5) == workers and set(others) <= {-5, 0}, \
            (main, others)
        assert "Capture workers run at nice -5" in d.log()
        path, written, _ = record_markers(d, 20000, 100000)
        check_markers_file(path, written)
        main, others = nices_of(d)
        assert main == 0 and others.count(-5) == workers, (main, others)
    with daemon(configured_daemon("capture-nice = -12\n", ["nice", "-n", "3"])) as d:
        main, others = nices_of(d)
        assert main == 3 and others.count(-12) == workers, (main, others)
    with daemon(configured_daemon("capture-nice = 0\n")) as d:
        main, others = nices_of(d)
        assert main == 0 and set(others) == {0}, (main, others)
    # Nothing allows a lower nice value (no CAP_SYS_NICE, RLIMIT_NICE 0): said at start.
    with daemon(configured_daemon("", ["prlimit", "--nice=0:0", "setpriv",
                                       "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"])) as d:
        main, others = nices_of(d)
        assert main == 0 and set(others) == {0}, (main, others)
        assert "capture-nice = -5, but the nice value cannot be lowered" in d.log(), d.log()


def test_info_and_verify_offline():
    """verify catches the damage trace-cmd report reads silently; info counts what is there."""
    with daemon() as d:
        path, written, _ = record_markers(d, 20000, 100000)
        info = json.loads(subprocess.run([FTRACECTL, "--json", "info", path],
                                         capture_output=True, text=True, check=True).stdout)
        assert info["events"]["ftrace:print"] == sum(written.values())
        assert sum(c["events"] for c in info["cpus"]) == sum(written.values())
        assert info["compression"] == "zstd" and info["writer"].startswith("ftraced")
        text = subprocess.run([FTRACECTL, "info", path], capture_output=True, text=True,
                              check=True).stdout
        assert "ftrace:print" in text and "trace-cmd v7, zstd" in text
        data = open(path, "rb").read()
        damaged = os.path.join(d.dir, "damaged.dat")
        for what, content in (("truncated", data[:len(data) * 2 // 3]),
                              ("flipped", data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 1])
                               + data[len(data) // 2 + 1:])):
            with open(damaged, "wb") as f:
                f.write(content)
            r = subprocess.run([FTRACECTL, "verify", damaged], capture_output=True, text=True)
            assert r.returncode == 1 and "invalid:" in r.stderr, (what, r.stdout, r.stderr)
        # trace-cmd report exits 0 on the truncated file, printing nothing.
        with open(damaged, "wb") as f:
            f.write(data[:len(data) * 2 // 3])
        r = subprocess.run(["trace-cmd", "report", "-i", damaged], capture_output=True)
        assert r.returncode == 0 and len(event_lines(r.stdout.decode().splitlines())) == 0


def test_syscall_filtered_by_pid():
    n = 12345
    with daemon() as d:
        gen = loadgen("--syscall", "--cpu", "0", "--count", str(n), wait=True)
        pid = int(gen.stdout.readline().split("=")[1])
        out = os.path.join(d.dir, "syscalls.dat")
        rec = d.record_background("-e", "syscalls:sys_enter_getppid",
                                  "--filter", "common_pid == %d" % pid, "-o", out)
        session = d.wait_running()
        gen.stdin.write("go\n")
        gen.stdin.flush()
        loadgen_result(gen)
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        check_events(out)
        events = event_lines(report(out))
        names = {name for _, name, _ in events}
        assert names == {"sys_enter_getppid"}, names
        assert len(events) == n, "%d events for %d calls" % (len(events), n)


def test_duration_and_sigint():
    with daemon() as d:
        out = os.path.join(d.dir, "sched.dat")
        r = d.ctl("record", "-e", "sched", "-e", "irq", "--duration", "1s", "-o", out)
        assert "sched.dat" in r.stdout
        check_events(out)
        assert len(event_lines(report(out))) > 0

        # Ctrl-C, and a closed terminal (SIGHUP): a complete file under its own name.
        # "-e ftrace" names the ftrace events a session delivers: markers among them.
        for sig, event in ((signal.SIGINT, "ftrace:print"), (signal.SIGHUP, "ftrace")):
            out2 = os.path.join(d.dir, "sig%d.dat" % sig)
            rec = d.record_background("-e", event, "-o", out2)
            session = d.wait_running()
            written = markers(session["instance"], CPUS, 1000)
            rec.send_signal(sig)
            _, stderr = rec.communicate(timeout=60)
            assert rec.returncode == 0, stderr
            assert not os.path.exists(out2 + ".partial"), "%s left the .partial" % sig
            check_markers_file(out2, written)


# Large enough that the kernel takes a while to allocate it (256 MiB per CPU).
BIG_RING_KB = "262144"


def wait_allocating(d):
    """The record's session, seen while its ring is still being allocated:
    the daemon answers others meanwhile."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        sessions = d.ctl_json("list")
        if sessions:
            assert sessions[0]["state"] in ("allocating", "running"), sessions
            return sessions[0]
        time.sleep(0.005)
    raise AssertionError("no session appeared:\n" + d.log())


def test_ring_allocated_off_the_event_loop():
    with daemon() as d:
        out = os.path.join(d.dir, "big.dat")
        rec = subprocess.Popen([FTRACECTL, "record", "-e", "ftrace:print", "-b", BIG_RING_KB,
                                "--duration", "1s", "-o", out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=d.env())
        seen = wait_allocating(d)
        assert seen["state"] == "allocating", "allocation over before the first list? %s" % seen
        stdout, stderr = rec.communicate(timeout=120)
        assert rec.returncode == 0, stderr
        # -d counts from when tracing is on, not from the request.
        m = re.search(r"in ([0-9.]+) s", stdout)
        assert m and float(m.group(1)) >= 0.95, stdout
        check_events(out)

        # The daemon stopping while a ring is allocated: it exits cleanly, the
        # client is told (or, if the allocation just ended, gets its file), nothing is left.
        out = os.path.join(d.dir, "late.dat")
        rec = d.record_background("-e", "ftrace:print", "-b", BIG_RING_KB, "-o", out)
        wait_allocating(d)
        d.stop()
        _, stderr = rec.communicate(timeout=60)
        if rec.returncode != 0:
            assert "shutting down" in stderr, stderr
        else:
            check_events(out)
        assert set(our_instances()) <= d.instances_before, our_instances()


def test_stacktrace_with_each_event():
    with daemon() as d:
        out = os.path.join(d.dir, "stack.dat")
        d.ctl("record", "-T", "-e", "sched:sched_switch", "--duration", "300ms", "-o", out)
        check_events(out)
        lines = report(out)
        # Each event comes with the kernel stack that emitted it (instance option
        # stacktrace), right after it on its CPU. The kernel records the stack after
        # committing the event, so tracing turned off between the two can leave a CPU's
        # last event without one; anywhere else a lone event is a lost record.
        per_cpu = {}
        for cpu, name, _ in event_lines(lines):
            per_cpu.setdefault(cpu, []).append("S" if name == "sched_switch" else
                                               "K" if name == "kernel_stack" else "?")
        assert any("S" in seq for seq in per_cpu.values()), lines[:20]
        for cpu, seq in per_cpu.items():
            assert re.fullmatch(r"(SK)*S?", "".join(seq)), (cpu, "".join(seq))
        assert any("=> __schedule" in line for line in lines), lines[:40]
        # Without -T: no stacks.
        plain = os.path.join(d.dir, "plain.dat")
        d.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o", plain)
        assert not any("kernel_stack:" in line for line in report(plain))


def test_ignore_missing_events():
    with daemon() as d:
        out = os.path.join(d.dir, "lenient.dat")
        r = d.ctl("record", "-e", "nosuch:event", "-e", "sched:sched_switch", "--duration", "300ms",
                  "-o", out, check=False)
        assert r.returncode != 0 and "unknown event 'nosuch:event'" in r.stderr and \
            "-i skips" in r.stderr, r.stderr
        r = d.ctl("record", "-i", "-e", "nosuch:event", "-e", "sched:sched_switch",
                  "-e", "sched:nosuch", "--duration", "300ms", "-o", out)
        assert "no event 'nosuch:event'; skipped (-i)" in r.stderr, r.stderr
        assert "no event 'sched:nosuch'; skipped (-i)" in r.stderr, r.stderr
        lines = event_lines(report(out))
        assert lines and all("sched_switch" in line for line in lines), lines[:5]
        assert "this kernel has no event 'nosuch:event', skipping it" in d.log()
        # A continuous session says so in status, text and JSON.
        d.ctl("create", "mixed", "-i", "-e", "sched:sched_switch", "-e", "nosuch")
        st = d.ctl_json("status", "mixed")
        assert st["skipped_events"] == ["nosuch"] and st["events"] == ["sched:sched_switch",
                                                                        "nosuch"], st
        assert "nosuch (skipped: not in this kernel)" in d.ctl("status", "mixed").stdout
        d.ctl("destroy", "mixed")
        r = d.ctl("create", "none", "-i", "-e", "nosuch", check=False)
        assert r.returncode != 0 and "none of the events" in r.stderr, r.stderr


def test_bash_completion_of_sessions_and_events():
    """Session names come from the daemon, event names from tracefs."""
    completion = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                              "completion", "ftracectl.bash")
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
              '_ftracectl; printf "%s\\n" "${COMPREPLY[@]}"')
    path = os.path.dirname(os.path.abspath(FTRACECTL)) + os.pathsep + os.environ["PATH"]

    def complete(*words):
        r = subprocess.run(["bash", "-c", script, "bash", completion, "ftracectl"] + list(words),
                           capture_output=True, text=True, env=dict(os.environ, PATH=path),
                           check=True)
        return sorted(w for w in r.stdout.splitlines() if w)

    with daemon() as d:
        d.ctl("create", "alpha", "-e", "sched")
        d.ctl("create", "alps", "-e", "sched")
        d.ctl("create", "beta", "-e", "sched")
        assert complete("--socket", d.socket, "status", "al") == ["alpha", "alps"]
        assert complete("--socket", d.socket, "destroy", "b") == ["beta"]
        assert complete("record", "-e", "sched:sched_swi") == ["sched:sched_switch"]
        assert "sched" in complete("record", "-e", "sch")
        for name in ("alpha", "alps", "beta"):
            d.ctl("destroy", name)


def task_counts(path):
    """Events per task in a file: {(comm, pid): n} (report lines start with COMM-PID)."""
    counts = {}
    for _, _, line in event_lines(report(path)):
        comm, _, pid = line.split()[0].rpartition("-")
        counts[comm, int(pid)] = counts.get((comm, int(pid)), 0) + 1
    return counts


def test_record_a_command_and_its_children_only():
    """record -F -c -- CMD: exact counts from the command's processes, none from
    a concurrent outsider doing the same syscall."""
    with daemon() as d:
        outsider = loadgen("--syscall", "--cpu", "1", "--count", "1000000", "--rate", "20000")
        try:
            out = os.path.join(d.dir, "cmd.dat")
            cmd = "%s --syscall --cpu 0 --count 700 >/dev/null; " \
                  "%s --syscall --cpu 1 --count 300 >/dev/null" % (LOADGEN, LOADGEN)
            r = d.ctl("record", "-F", "-c", "-e", "syscalls:sys_enter_getppid", "-o", out,
                      "--", "sh", "-c", cmd)
            assert "'sh' exited with status 0" in r.stderr, r.stderr
            counts = task_counts(out)
            assert {comm for comm, _ in counts} <= {"ftraced-loadgen", "sh"}, counts
            # The two children asked exactly 300 and 700 times. (A sanitizer's runtime
            # forks helpers of its own, which ask a couple of times: followed too.)
            per_pid = sorted(n for (comm, _), n in counts.items() if comm == "ftraced-loadgen")
            assert per_pid[-2:] == [300, 700] and all(n < 10 for n in per_pid[:-2]), per_pid
            assert outsider.pid not in {pid for _, pid in counts}, counts
            # -F alone: the command's own process, exactly.
            r = d.ctl("record", "-q", "-F", "-e", "syscalls:sys_enter_getppid", "-o", out,
                      "--force", "--", LOADGEN, "--syscall", "--cpu", "0", "--count", "500")
            counts = task_counts(out)
            assert list(counts.values()) == [500], counts
            # Without -c a shell's children are outside the scope; the shell is in it.
            r = d.ctl("record", "-q", "-F", "-e", "syscalls:sys_enter_getppid", "-e",
                      "sched:sched_process_exit", "-o", out, "--force", "--", "sh", "-c", cmd)
            counts = task_counts(out)
            assert {comm for comm, _ in counts} == {"sh"}, counts
            # -P: an existing process only.
            r = d.ctl("record", "-q", "-P", str(outsider.pid), "-e",
                      "syscalls:sys_enter_getppid", "--duration", "300ms", "-o", out, "--force")
            counts = task_counts(out)
            assert list(counts) == [("ftraced-loadgen", outsider.pid)], counts
            # A command that cannot run: the record ends, and says why.
            r = d.ctl("record", "-q", "-F", "-e", "sched", "-o", out, "--force", "--",
                      "/nonexistent/cmd", check=False)
            assert "cannot run '/nonexistent/cmd'" in r.stderr, r.stderr
            r = d.ctl("record", "-P", "999999999", "-e", "sched", "-o", out, "--force",
                      check=False)
            assert r.returncode != 0 and "no process 999999999" in r.stderr, r.stderr
            r = d.ctl("record", "-P", "abc", "-e", "sched", "-o", out, "--force", check=False)
            assert r.returncode != 0 and "invalid pid 'abc'" in r.stderr, r.stderr
            r = d.ctl("record", "-c", "-e", "sched", "-o", out, "--force", check=False)
            assert r.returncode != 0 and "-c follows the children" in r.stderr, r.stderr
        finally:
            outsider.kill()
            outsider.wait()


def test_client_killed_file_still_finished():
    with daemon() as d:
        out = os.path.join(d.dir, "killed.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        written = markers(session["instance"], CPUS, 2000)
        rec.kill()
        rec.wait()
        deadline = time.monotonic() + 20
        while d.ctl_json("list") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert d.ctl_json("list") == [], "session still there after its client died"
        # Nobody renamed it, but the daemon finished every byte into the fd it held.
        check_markers_file(out + ".partial", written)


def test_list_and_status():
    with daemon() as d:
        assert d.ctl_json("list") == []
        assert "No sessions." in d.ctl("list").stdout
        out = os.path.join(d.dir, "x.dat")
        rec = d.record_background("-e", "sched:sched_switch", "-e", "irq:*", "-o", out)
        session = d.wait_running()
        assert session["instance"] in our_instances()
        assert session["events"] == ["sched:sched_switch", "irq:*"]
        status = d.ctl_json("status", session["name"])
        assert status["name"] == session["name"] and len(status["cpus"]) == len(CPUS)
        text = d.ctl("status", session["name"]).stdout
        assert session["instance"] in text and "lost events:  0" in text
        assert session["name"] in d.ctl("list").stdout
        r = d.ctl("stop", "no-such-session", check=False)
        assert r.returncode == 1 and "no session 'no-such-session'" in r.stderr
        d.ctl("stop", session["name"])
        rec.communicate(timeout=60)
        assert rec.returncode == 0
        r = d.ctl("stop", session["name"], check=False)
        assert r.returncode == 1


def expect_error(d, args, code, text):
    r = d.ctl(*args, check=False)
    assert r.returncode == code, "exit %d (want %d): %s" % (r.returncode, code, r.stderr)
    assert text in r.stderr, "%r not in %r" % (text, r.stderr)
    assert d.ctl_json("list") == [], "a session was started by an invalid request"


def test_errors_are_specific():
    with daemon() as d:
        out = os.path.join(d.dir, "e.dat")
        expect_error(d, ["record", "-e", "nosuch:event", "-o", out], 1,
                     "unknown event 'nosuch:event'")
        expect_error(d, ["record", "-e", "sched:nosuch", "-o", out], 1,
                     "unknown event 'sched:nosuch'")
        expect_error(d, ["record", "-e", "sched", "--filter", "bogus_field == 1", "-o", out],
                     1, "Field not found")
        expect_error(d, ["record", "-e", "ftrace:print", "--filter", "x == 1", "-o", out], 1,
                     "cannot be filtered")
        expect_error(d, ["record", "-e", "sched", "--clock", "nope", "-o", out], 1,
                     "unknown clock 'nope'")
        # Bad text is refused by the protocol, naming the field and its rule.
        expect_error(d, ["record", "-e", "sched", "--filter", "prev_pid == 1\nx", "-o", out], 1,
                     "malformed request: bad filter (printable ASCII on one line")
        expect_error(d, ["record", "-e", "../../..:x", "-o", out], 1,
                     "malformed request: bad event (all, SYSTEM")
        # ftrace events a session cannot deliver are refused, not silently empty.
        for event, why in (("ftrace:function", "comes from the function tracer"),
                           ("ftrace:user_stack", "cannot be recorded: a session's instance"),
                           ("ftrace:kernel_stack", "comes with stack traces: add -T")):
            expect_error(d, ["record", "-e", event, "-o", out], 1, "'%s' %s" % (event, why))
        expect_error(d, ["record", "-e", "sched", "--subbuf-kb", "3", "-o", out], 1,
                     "not a power of two")
        expect_error(d, ["record", "-e", "sched", "--subbuf-kb", "1024", "-o", out], 1,
                     "the kernel's largest sub-buffer is 512 KiB")
        expect_error(d, ["record", "-e", "sched", "-b", "999999999", "-o", out], 1,
                     "buffer size")
        expect_error(d, ["record", "-e", "sched", "-o", "/nonexistent/dir/x.dat"], 1,
                     "cannot create '/nonexistent/dir/x.dat.partial'")
        expect_error(d, ["record", "-e", "sched", "--compression", "lz4", "-o", out], 2,
                     "unknown compression 'lz4'")
        # trace-cmd's letters: -C is the clock, -d is not a duration; old habits are told.
        expect_error(d, ["record", "-e", "sched", "-C", "none", "-o", out], 2,
                     "-C sets the trace clock, as in trace-cmd; for compression use "
                     "--compression none")
        expect_error(d, ["record", "-e", "sched", "-C", "nope", "-o", out], 1,
                     "unknown clock 'nope'")
        expect_error(d, ["record", "-e", "sched", "-d", "10s", "-o", out], 2,
                     "use --duration TIME")
        expect_error(d, ["record", "-e", "sched", "--duration", "31d", "-o", out], 2,
                     "from 1 ms to 30 days")
        expect_error(d, ["record", "-o", out], 2, "no events given")
        expect_error(d, ["record", "-e", "sched", "--duration", "0s", "-o", out], 2, "invalid duration")
        assert not os.path.exists(out) and not os.path.exists(out + ".partial")
        with open(out, "w") as f:
            f.write("precious")
        expect_error(d, ["record", "-e", "sched", "-o", out], 1, "use --force")
        with open(out) as f:
            assert f.read() == "precious"
        # Not root and not in the group: the socket (0660 root) refuses the connection.
        r = d.ctl("list", check=False, user=65534)
        assert r.returncode in (3, 4) and "permission denied" in r.stderr, r.stderr
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([FTRACECTL, "--socket", os.path.join(tmp, "none"), "list"],
                           capture_output=True, text=True)
        assert p.returncode == 3 and "ftraced is not running" in p.stderr, p.stderr


def test_daemon_survives_and_second_daemon_refused():
    with daemon() as d:
        p = subprocess.run([FTRACED, "--socket", d.socket, "--state-dir",
                            os.path.join(d.dir, "other-state")],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 1 and "already listening" in p.stderr, p.stderr
        assert d.ctl_json("list") == []


def test_peer_credentials_checked_by_the_daemon():
    """The daemon checks SO_PEERCRED/SO_PEERGROUPS itself, whatever the socket's mode says."""
    import grp
    nogroup = grp.getgrnam("nogroup").gr_gid
    d = Daemon(extra_args=["--group", "nogroup"]).start()
    try:
        os.chmod(d.dir, 0o755)
        os.chmod(d.socket, 0o666)  # a misconfiguration: the daemon must still refuse
        r = d.ctl("list", check=False, user=65534, gid=1)
        assert r.returncode == 4 and "accepts root and members of its group" in r.stderr, \
            r.stderr
        r = d.ctl("list", check=False, user=65534, gid=nogroup)
        assert r.returncode == 0, r.stderr
        r = d.ctl("list", check=False, user=65534, gid=1, groups=[nogroup])
        assert r.returncode == 0, r.stderr
        # A member may record (into a file it opened itself) and may not stop root's session.
        out = os.path.join(d.dir, "member.dat")
        os.chmod(d.dir, 0o777)
        rec = d.record_background("-e", "sched:sched_switch", "-o", os.path.join(d.dir, "r.dat"))
        session = d.wait_running()
        r = d.ctl("stop", session["name"], check=False, user=65534, gid=nogroup)
        assert r.returncode == 4 and "belongs to another user" in r.stderr, r.stderr
        d.ctl("stop", session["name"])
        rec.communicate(timeout=60)
        # Root's flight recorder: a member may list it, not snapshot, stop or destroy it.
        d.ctl("create", "fl", "--mode", "flight", "--flight-size", "4M", "-e",
              "sched:sched_switch")
        d.ctl("start", "fl")
        r = d.ctl("list", check=False, user=65534, gid=nogroup)
        assert r.returncode == 0 and "fl" in r.stdout, r.stdout + r.stderr
        for args in (["snapshot", "fl"], ["stop", "fl"], ["destroy", "fl"], ["start", "fl"]):
            r = d.ctl(*args, check=False, user=65534, gid=nogroup)
            assert r.returncode == 4 and "belongs to another user" in r.stderr, \
                "%s: %s" % (args, r.stderr)
        d.ctl("destroy", "fl")
        r = d.ctl("record", "-e", "sched:sched_switch", "--duration", "100ms", "-o", out,
                  user=65534, gid=nogroup)
        assert os.stat(out).st_uid == 65534
        check_events(out)
        # The command would run as the daemon's user: members may not choose one.
        r = d.ctl("create", "hook", "-e", "sched", "--on-segment", "/bin/true", check=False,
                  user=65534, gid=nogroup)
        assert r.returncode == 4 and "only root may set --on-segment" in r.stderr, r.stderr
        d.stop()
    finally:
        d.cleanup()


def shown_to_users():
    """What /proc/kallsyms shows a user without CAP_SYSLOG, by the kernel's rule."""
    with open("/proc/sys/kernel/kptr_restrict") as f:
        kptr = int(f.read())
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        paranoid = int(f.read())
    return kptr == 0 and paranoid <= 1


def test_group_members_get_symbols_as_kallsyms_shows_them():
    import grp
    nogroup = grp.getgrnam("nogroup").gr_gid
    for setting, expected in ((None, shown_to_users()), ("yes", True), ("no", False)):
        d = Daemon(extra_args=["--group", "nogroup"])
        if setting:
            conf = os.path.join(d.dir, "ftraced.conf")
            with open(conf, "w") as f:
                f.write("# test\ngroup-symbols = %s\nsaved-cmdlines = 0\n" % setting)
            d.extra_args += ["--config", conf]
        try:
            d.start()
            os.chmod(d.dir, 0o777)
            member = os.path.join(d.dir, "member.dat")
            d.ctl("record", "-e", "sched:sched_switch", "--duration", "100ms", "-o", member,
                  user=65534, gid=nogroup)
            addresses = kallsyms_addresses(member)
            n, real = len(addresses), sum(1 for a in addresses if a)
            if expected:
                assert n > 1000 and real > n // 2, (setting, n, real)
            else:
                assert real == 0, (setting, n, real)
            # Root's own files always have them.
            mine = os.path.join(d.dir, "root.dat")
            d.ctl("record", "-e", "sched:sched_switch", "--duration", "100ms", "-o", mine)
            assert_real_kallsyms(mine)
            d.stop()
        finally:
            d.cleanup()


def test_memory_limit_over_all_sessions():
    d = Daemon()
    conf = os.path.join(d.dir, "ftraced.conf")
    with open(conf, "w") as f:
        f.write("memory-limit = %dK\nsaved-cmdlines = 0\n" % (3 * 8192 * len(CPUS)))
    d.extra_args = ["--group", "", "--config", conf]
    try:
        d.start()
        d.ctl("create", "one", "-e", "sched", "-b", "8192")
        d.ctl("create", "two", "-e", "sched", "-b", "8192")
        r = d.ctl("create", "three", "-e", "sched", "-b", "16384", check=False)
        assert r.returncode != 0 and "memory-limit in ftraced.conf" in r.stderr, r.stderr
        r = d.ctl("record", "-e", "sched", "-b", "16384", "-o", os.path.join(d.dir, "x.dat"),
                  check=False)
        assert r.returncode != 0 and "memory-limit" in r.stderr, r.stderr
        d.ctl("destroy", "two")
        d.ctl("create", "three", "-e", "sched", "-b", "16384")
        d.ctl("destroy", "one")
        d.ctl("destroy", "three")
        d.stop()
    finally:
        d.cleanup()
    # A malformed file: the daemon does not start, and says where.
    with tempfile.TemporaryDirectory(prefix="ftraced-test-") as tmp:
        conf = os.path.join(tmp, "ftraced.conf")
        with open(conf, "w") as f:
            f.write("memory-limit = 25%\nmemory-limit = lots\n")
        p = subprocess.run([FTRACED, "--socket", os.path.join(tmp, "s"), "--state-dir",
                            os.path.join(tmp, "state"), "--config", conf],
                           capture_output=True, text=True, timeout=20)
        assert p.returncode == 1 and \
            "ftraced.conf:2: memory-limit: invalid size 'lots'" in p.stderr, p.stderr


def test_spool_full_keeps_what_was_captured():
    """ENOSPC in the state directory: a valid file of what came before, a clear error."""
    d = Daemon().mount_tmpfs_state("256k")
    try:
        d.start()
        out = os.path.join(d.dir, "full.dat")
        # Workers wake once 512 KiB wait in a CPU's buffer: 8000 markers (about 320 KB)
        # stay in the kernel until the stop, whose final drain hits ENOSPC.
        rec = d.record_background("-e", "ftrace:print", "--compression", "none", "-b", "16384", "-o", out)
        session = d.wait_running()
        written = markers(session["instance"], CPUS, 8000)
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 1, stderr
        assert "No events lost" not in stdout, stdout
        assert "No space left on device" in stderr and "holds what was captured" in stderr, \
            stderr
        check_events(out)
        seen = parse_markers(report(out))
        assert seen, "nothing was kept"
        for cpu, numbers in seen.items():
            assert numbers == list(range(len(numbers))), "CPU %d: not a gap-free prefix" % cpu
            assert len(numbers) < written[cpu]
        # Every marker that is not in the file is counted as lost: by the client, and per
        # CPU in the file's statistics.
        missing = {cpu: written[cpu] - len(seen.get(cpu, [])) for cpu in written}
        m = re.search(r"(\d+) events were read but could not be stored", stderr)
        assert m and int(m.group(1)) == sum(missing.values()), (missing, stderr)
        dump = subprocess.run(["trace-cmd", "dump", "--options", out], capture_output=True,
                              text=True).stdout
        counted = {int(c): int(n) for c, n in
                   re.findall(r"CPU: (\d+)\n(?:.*\n)*?ftraced-discarded: (\d+)", dump)}
        assert {c: n for c, n in missing.items() if n} == counted, (missing, counted)
        assert d.ctl_json("list") == []
        # The spool is gone, so there is room again.
        d.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o",
              os.path.join(d.dir, "after.dat"))
        check_events(os.path.join(d.dir, "after.dat"))
        d.stop()
    finally:
        d.cleanup()


def test_full_output_keeps_everything_captured():
    """The output's file system fills up: the spool is kept and recovered into the state
    directory at once, the client's message names that file, and it holds every marker."""
    with daemon() as d:
        small = os.path.join(d.dir, "small")
        os.mkdir(small)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", small], check=True)
        try:
            out = os.path.join(small, "r.dat")
            cwd = os.path.join(d.dir, "cwd")
            os.mkdir(cwd)
            rec = subprocess.Popen([FTRACECTL, "record", "-e", "ftrace:print", "--compression",
                                    "none", "-o", out], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=d.env(), cwd=cwd)
            session = d.wait_running()
            # About 19 MB of raw markers: more than the 8 MiB the output may take.
            written = markers(session["instance"], CPUS, 200000)
            d.ctl("stop", session["name"])
            _, stderr = rec.communicate(timeout=300)
            assert rec.returncode == 1, stderr
            assert "No space left on device" in stderr, stderr
            m = re.search(r"what was captured is in '([^']+)'", stderr)
            assert m, stderr
            recovered = m.group(1)
            assert recovered.startswith(os.path.join(os.path.realpath(d.state), "recovered")), \
                recovered
            check_markers_file(recovered, written)
            # The client has its own copy (the state directory is root's): beside the
            # output could not take it, so the current directory did.
            m = re.search(r"a copy of what was captured is in '([^']+)'", stderr)
            assert m and m.group(1) == "r-recovered.dat", stderr
            check_markers_file(os.path.join(cwd, "r-recovered.dat"), written)
            assert os.listdir(os.path.join(d.state, "spool")) == [], "the spool was not removed"
            assert "what was captured is in" in d.log()
        finally:
            subprocess.run(["umount", small], check=False)


def test_record_written_into_its_file_as_it_goes():
    """On ext4 a zstd record's chunks go into FILE.partial while it captures, each
    CPU's in a region of a sparse file (its spool stays for recovery): the stop
    collapses the holes and appends the metadata, so the flyrecord section comes
    right after the header, and the file holds every marker."""
    with daemon() as d:
        out = os.path.join(d.dir, "asgo.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        partial = out + ".partial"
        assert os.stat(partial).st_size >= 4 << 30, os.stat(partial)
        written = markers(session["instance"], CPUS, 300000)
        # About 12 MB of raw markers per CPU against a 4 MiB ring: most of it is read
        # before the stop, compressed, and on its way into the client's file.
        wait_until("chunks written into the output",
                 lambda: os.stat(partial).st_blocks * 512 >= 512 * 1024)
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=120)
        assert rec.returncode == 0, stderr
        check_markers_file(out, written)
        assert first_section_id(out) == V7_SECTION_BUFFER
        st = os.stat(out)
        assert st.st_size <= st.st_blocks * 512 + 64 * 1024, st
        assert "the output is written at the stop" not in d.log()
        assert "Cannot collapse" not in d.log()


def test_record_where_holes_cannot_collapse_written_at_the_stop():
    """tmpfs cannot collapse: the record's file is written from the spools at the stop,
    in the usual layout, and never grows sparse while capturing."""
    with daemon() as d:
        small = os.path.join(d.dir, "tmpfs")
        os.mkdir(small)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", small], check=True)
        try:
            out = os.path.join(small, "r.dat")
            rec = d.record_background("-e", "ftrace:print", "-o", out)
            session = d.wait_running()
            written = markers(session["instance"], CPUS, 100000)
            assert os.stat(out + ".partial").st_size == 0
            d.ctl("stop", session["name"])
            _, stderr = rec.communicate(timeout=120)
            assert rec.returncode == 0, stderr
            check_markers_file(out, written)
            assert first_section_id(out) != V7_SECTION_BUFFER
            assert "the output is written at the stop, from the spool: Operation not " \
                   "supported" in d.log(), d.log()
        finally:
            subprocess.run(["umount", "-l", small], check=False)


def test_record_output_full_for_a_while_still_complete():
    """The output's file system fills up during the capture and has room again by the
    stop: the writes into FILE.partial stop at the first ENOSPC, and the stop writes
    the whole file from the spools instead."""
    with daemon() as d:
        image, small = os.path.join(d.dir, "ext4.img"), os.path.join(d.dir, "ext4")
        os.mkdir(small)
        with open(image, "wb") as f:
            f.truncate(64 << 20)
        subprocess.run(["mkfs.ext4", "-q", "-m", "0", image], check=True)
        if subprocess.run(["mount", "-o", "loop", image, small]).returncode != 0:
            print("SKIP: no loop device to mount a small ext4 on")
            return
        rec = None
        try:
            out = os.path.join(small, "r.dat")
            filler = os.path.join(small, "filler")
            rec = d.record_background("-e", "ftrace:print", "-o", out)
            session = d.wait_running()
            assert os.stat(out + ".partial").st_size >= 4 << 30
            sv = os.statvfs(small)
            subprocess.run(["fallocate", "-l", str(sv.f_bavail * sv.f_frsize - (128 << 10)),
                            filler], check=True)
            written = markers(session["instance"], CPUS, 300000)
            wait_until("the output's first ENOSPC",
                     lambda: "cannot write the output file as the capture goes" in d.log())
            os.unlink(filler)
            d.ctl("stop", session["name"])
            _, stderr = rec.communicate(timeout=120)
            assert rec.returncode == 0, stderr
            check_markers_file(out, written)
            assert first_section_id(out) != V7_SECTION_BUFFER
            assert "No space left on device" in d.log()
        finally:
            if rec and rec.poll() is None:
                rec.kill()
                rec.wait()
            # Lazily: a daemon whose session failed may still hold the file open.
            subprocess.run(["umount", "-l", small], check=False)


def test_busy_instance_removed_once_free():
    """A marker writer keeps the instance's trace_marker open past the record's end: tracefs
    refuses to remove it (EBUSY). The daemon lists it, keeps trying, and removes it as soon
    as the writer lets go."""
    with daemon() as d:
        out = os.path.join(d.dir, "busy.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        instance = session["instance"]
        marker = open(os.path.join(TRACING, "instances", instance, "trace_marker"), "w")
        try:
            marker.write("ftseq=t:0:0\n")
            marker.flush()
            d.ctl("stop", session["name"])
            _, stderr = rec.communicate(timeout=60)
            assert rec.returncode == 0, stderr
            assert instance in our_instances(), "the busy instance should still be there"
            text = d.ctl("list").stdout
            assert "Waiting for removal: instance " + instance in text, text
            text = d.ctl("status").stdout
            assert "Waiting for removal: instance " + instance in text, text
        finally:
            marker.close()
        deadline = time.monotonic() + 30
        while instance in our_instances():
            assert time.monotonic() < deadline, "the instance was never removed"
            time.sleep(0.05)
        assert "Waiting for removal" not in d.ctl("list").stdout
        assert "Removed instance '%s'" % instance in d.log()


def test_interference_is_reported():
    """Another process turns tracing off in the session's instance, disables one of its
    events and clears its buffer: status, the log, the client and the file say so, and
    nothing claims that no events were lost."""
    with daemon() as d:
        out = os.path.join(d.dir, "meddled.dat")
        rec = d.record_background("-e", "ftrace:print", "-e", "sched:sched_switch", "-o", out)
        session = d.wait_running()
        base = os.path.join(TRACING, "instances", session["instance"])
        markers(session["instance"], CPUS, 20000)
        # A status request looks at the instance: it has now seen the unread markers.
        assert "warning" not in d.ctl_json("status", session["name"])
        with open(os.path.join(base, "tracing_on"), "w") as f:
            f.write("0")
        with open(os.path.join(base, "events", "sched", "sched_switch", "enable"), "w") as f:
            f.write("0")
        open(os.path.join(base, "trace"), "w").close()  # O_TRUNC clears the buffer
        warning = d.ctl_json("status", session["name"]).get("warning", "")
        assert "tracing was turned off" in warning, warning
        assert "event sched:sched_switch was disabled" in warning, warning
        assert "trace was written by another process, which clears every CPU's buffer" in \
            warning, warning
        with open(os.path.join(base, "tracing_on")) as f:
            assert f.read().strip() == "1", "tracing was not turned on again"
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 1 and "events may be missing" in stderr, stdout + stderr
        assert "No events lost" not in stdout, stdout
        assert "which clears every CPU's buffer" in d.log()
        dump = subprocess.run(["trace-cmd", "dump", "--options", out], capture_output=True,
                              text=True).stdout
        assert "ftraced-warning: " in dump and "tracing was turned off" in dump, dump[-2000:]


def test_interference_noticed_when_it_happens():
    """The daemon watches the instance's files (inotify), so it notices another process
    turning tracing off at once, with nobody asking for status and no polling timer."""
    with daemon() as d:
        out = os.path.join(d.dir, "watched.dat")
        rec = d.record_background("-e", "ftrace:print", "-e", "sched:sched_switch", "-o", out)
        session = d.wait_running()
        base = os.path.join(TRACING, "instances", session["instance"])
        # One watch each: tracing_on, set_event, events/enable, the settings (clock, CPU
        # mask, buffer sizes, tracer, pid filters, snapshot, every option), trace and
        # each CPU's, sched's and sched_switch's enable and filter files.
        settings = ["tracing_on", "set_event", "events/enable", "trace_clock",
                    "tracing_cpumask", "buffer_size_kb", "buffer_subbuf_size_kb",
                    "current_tracer", "set_event_pid", "set_event_notrace_pid",
                    "set_ftrace_pid", "set_ftrace_notrace_pid", "snapshot", "trace"]
        expected = sum(os.path.exists(os.path.join(base, f)) for f in settings) + \
            len(os.listdir(os.path.join(base, "options"))) + len(CPUS) + 4
        watches = 0
        for fd in os.listdir("/proc/%d/fdinfo" % d.proc.pid):
            try:
                with open("/proc/%d/fdinfo/%s" % (d.proc.pid, fd)) as f:
                    watches += sum(line.startswith("inotify wd:") for line in f)
            except FileNotFoundError:
                pass  # a file the daemon had open for a moment (symbols, a spool)
        assert watches == expected, (watches, expected)
        with open(os.path.join(base, "tracing_on"), "w") as f:
            f.write("0")
        deadline = time.monotonic() + 30
        while "tracing was turned off" not in d.log():
            assert time.monotonic() < deadline, d.log()
            time.sleep(0.02)
        with open(os.path.join(base, "tracing_on")) as f:
            assert f.read().strip() == "1", "tracing was not turned on again"
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 1 and "tracing was turned off" in stderr, stdout + stderr


def test_daemons_leave_each_other_alone():
    """A second daemon (own state directory) must not touch the first one's instance."""
    with daemon() as a:
        out = os.path.join(a.dir, "a.dat")
        rec = a.record_background("-e", "ftrace:print", "-o", out)
        session = a.wait_running()
        with daemon() as b:
            assert session["instance"] in our_instances()
            b.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o",
                  os.path.join(b.dir, "b.dat"))
            assert session["instance"] in our_instances()
        written = markers(session["instance"], CPUS, 3000)
        a.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        check_markers_file(out, written)


def test_crash_recovered_on_restart():
    first = Daemon().start()
    try:
        rec = first.record_background("-e", "ftrace:print", "-o", os.path.join(first.dir, "x.dat"))
        session = first.wait_running()
        before = markers(session["instance"], CPUS, 5000)
        first.kill()
        rec.communicate(timeout=30)
        assert rec.returncode != 0
        assert session["instance"] in our_instances(), "instance vanished with the daemon"
        # Written after the crash: still in the orphaned instance's ring buffers.
        after = markers(session["instance"], CPUS, 1000, tag="late")

        second = Daemon(state=first.state).start()
        p = subprocess.run([FTRACED, "--socket", os.path.join(first.dir, "other"),
                            "--state-dir", first.state], capture_output=True, text=True,
                           timeout=20)
        assert p.returncode == 1 and "Another ftraced (pid %d) uses state directory" % \
            second.proc.pid in p.stderr, p.stderr
        assert session["instance"] not in our_instances(), "orphan not removed at restart"
        recovered = os.path.join(first.state, "recovered")
        files = [f for f in os.listdir(recovered) if not f.startswith(".")]
        assert len(files) == 1 and files[0].endswith("-recovered.dat"), files
        path = os.path.join(recovered, files[0])
        check_events(path)
        lines = report(path)
        assert_complete_sequences(parse_markers(lines), before)
        assert_complete_sequences(parse_markers(lines, tag="late"), after)
        assert "Recovered '" in second.log() and "drained and removed" in second.log()
        assert os.listdir(os.path.join(first.state, "spool")) == []
        second.stop()
        second.cleanup()
    finally:
        first.cleanup()


def thread_credentials(pid):
    """{tid: {CapInh, CapPrm, CapEff, CapBnd, CapAmb: int, NoNewPrivs: str}}: capabilities
    and no-new-privs are per thread, so every one of the daemon's is read."""
    found = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        status = {}
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    key, _, value = line.partition(":")
                    status[key] = value.strip()
        except OSError:
            continue  # a short-lived thread gone meanwhile
        found[int(tid)] = dict({k: int(status[k], 16) for k in
                                ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
                               NoNewPrivs=status["NoNewPrivs"])
    return found


def test_no_capabilities_after_start():
    """No thread of the running daemon holds a capability, its capture workers included,
    yet its files carry real kernel addresses."""
    with daemon() as d:
        out = os.path.join(d.dir, "syms.dat")
        rec = d.record_background("-e", "sched:sched_switch", "-o", out)
        session = d.wait_running()
        threads = thread_credentials(d.proc.pid)
        assert len(threads) > len(CPUS), threads  # the main thread and the workers
        for tid, creds in threads.items():
            assert creds == dict(CapInh=0, CapPrm=0, CapEff=0, CapBnd=0, CapAmb=0,
                                 NoNewPrivs="1"), "thread %d: %s" % (tid, creds)
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        assert_real_kallsyms(out)


def symbol_caches(d):
    """The daemon's fds to its cached symbols: (what /proc shows, bytes)."""
    return [(link, os.stat(path).st_size) for path, link in daemon_fds(d).items()
            if is_symbol_cache(d, link)]


def test_symbols_cached_in_a_file_not_in_memory():
    """The compressed symbols are kept in an unlinked file of the state directory, copied
    into every file from there; a state directory without room to spare (a small tmpfs:
    spools must not lose their room to them) gets them in memory instead."""
    for small in (False, True):
        d = Daemon()
        if small:
            d.mount_tmpfs_state("32m")
        with daemon(d):
            st = os.statvfs(d.state)
            on_disk = st.f_bavail * st.f_frsize >= 64 << 20
            assert on_disk != small, "the test needs 64 MiB free in " + d.state
            files = []
            for i in range(2):
                out = os.path.join(d.dir, "syms%d.dat" % i)
                rec = d.record_background("-e", "ftrace:print", "-o", out)
                session = d.wait_running()
                written = markers(session["instance"], CPUS, 1000)
                d.ctl("stop", session["name"])
                _, stderr = rec.communicate(timeout=60)
                assert rec.returncode == 0, stderr
                check_markers_file(out, written)
                assert_real_kallsyms(out)
                files.append(out)
            caches = symbol_caches(d)
            assert len(caches) == 1, caches
            link, size = caches[0]
            assert link.startswith("/memfd:") == small, caches
            assert size > 100 << 10, caches
            # Both files carry the same symbols, read once.
            assert kallsyms_addresses(files[0]) == kallsyms_addresses(files[1])


def record_markers_session(d, name, rate=None):
    """A record session of markers into NAME.dat in D's directory, running; with RATE,
    fed that many per second per CPU until stop_markers_session(). Returns the file, the
    client and the session."""
    out = os.path.join(d.dir, name + ".dat")
    rec = d.record_background("-e", "ftrace:print", "-o", out)
    session = d.wait_running()
    if rate:
        start_markers(session["instance"], CPUS, 10 ** 8, rate=rate)
    return out, rec, session


def stop_markers_session(d, rec, session):
    d.ctl("stop", session["name"])
    stop_loadgens()
    _, stderr = rec.communicate(timeout=60)
    assert rec.returncode == 0, stderr


def short_symbols_lifetime_daemon():
    """A daemon whose copy of the kernel's symbols lives 3 s (a test hook), not 60."""
    d = Daemon()
    d.daemon_env = dict(os.environ, FTRACED_TEST_HOOKS="1", FTRACED_TEST_SYMBOLS_LIFETIME_MS="3000")
    return d


def sleep_past_symbols_lifetime(read_at):
    """Until a copy of the symbols read at READ_AT (monotonic) is past its 3 s."""
    while time.monotonic() < read_at + 3.5:
        time.sleep(0.1)


def wait_symbol_reads_over(d):
    """Until every read of the kernel's symbols the daemon began has ended."""
    done = ("The kernel's symbols are read:", "The kernel's symbols are unchanged")
    deadline = time.monotonic() + 60
    while d.log().count("Reading the kernel's symbols") > \
            sum(d.log().count(line) for line in done):
        assert time.monotonic() < deadline, d.log()[-3000:]
        time.sleep(0.05)


def test_symbols_refreshed_while_capturing_not_at_the_stop():
    """A session whose data grows refreshes the symbols on a thread ahead of their expiry
    (on its workers' progress: half their lifetime here), so its stop never waits
    for /proc/kallsyms. The lifetime is cut to 3 s by a test hook."""
    ahead = "Reading the kernel's symbols ahead of the files"
    for_file = "Reading the kernel's symbols for a file"
    kept = "The kernel's symbols are unchanged: the copy is kept"
    with open("/proc/kallsyms", "rb") as f:
        symbols_before = f.read()
    d = short_symbols_lifetime_daemon()
    with daemon(d):
        out, rec, session = record_markers_session(d, "fresh", 200000)
        # One read when the session started, one more as its data grew.
        deadline = time.monotonic() + 60
        while d.log().count(ahead) < 2:
            assert time.monotonic() < deadline, d.log()[-3000:]
            time.sleep(0.05)
        stop_markers_session(d, rec, session)
        assert for_file not in d.log(), d.log()[-3000:]
        # Unchanged symbols are compared with the copy, not compressed again: the
        # second read keeps it (unless the kernel's really changed meanwhile).
        with open("/proc/kallsyms", "rb") as f:
            if f.read() == symbols_before:
                deadline = time.monotonic() + 60
                while kept not in d.log():
                    assert time.monotonic() < deadline, d.log()[-3000:]
                    time.sleep(0.05)
        # The writers held the instance busy: the daemon removes it once they are gone.
        deadline = time.monotonic() + 30
        while session["instance"] in our_instances():
            assert time.monotonic() < deadline, "the instance was never removed"
            time.sleep(0.05)
        check_events(out)
        assert_real_kallsyms(out)
        # Nothing lost (exit 0): every CPU's markers up to the stop, none missing.
        seen = parse_markers(report(out))
        for cpu in CPUS:
            numbers = seen.get(cpu, [])
            assert numbers and numbers == list(range(len(numbers))), \
                "CPU %d: %d markers, not a gap-free prefix" % (cpu, len(numbers))


def test_symbols_of_any_age_for_a_file_without_events():
    """A session whose events never fire looks at its instance at most twice (at half
    and three quarters of the symbols' lifetime, 3 s by a test hook: the refresh lead is
    capped at half of it), finds nothing and
    reads nothing: stopped once the symbols are past their lifetime, its file refers to
    no address, so the cached copy goes in as it is and the stop does not read
    /proc/kallsyms either."""
    d = short_symbols_lifetime_daemon()
    with daemon(d):
        out, rec, session = record_markers_session(d, "idle")
        # Every read begun (the start refreshes a copy past its lifetime) is over...
        wait_symbol_reads_over(d)
        log_after_start = len(d.log())
        # ... and the copy is past its lifetime by the stop.
        read_at = time.monotonic()
        sleep_past_symbols_lifetime(read_at)
        stop_markers_session(d, rec, session)
        assert "Reading the kernel's symbols" not in d.log()[log_after_start:], \
            d.log()[log_after_start:][-3000:]
        check_events(out)
        assert event_lines(report(out)) == []
        assert_real_kallsyms(out)


def test_slow_session_symbols_refreshed_ahead_of_its_stop():
    """A session whose few events never wake its workers (ten markers: no progress to
    go by) still has the symbols refreshed ahead, by a look at half their lifetime (3 s,
    a test hook) that finds events captured: stopped past the lifetime, its stop does not
    read /proc/kallsyms, and the file has every marker and real symbols."""
    ahead = "Reading the kernel's symbols ahead of the files"
    d = short_symbols_lifetime_daemon()
    with daemon(d):
        out, rec, session = record_markers_session(d, "slow")
        wait_symbol_reads_over(d)
        read_at = time.monotonic()
        aheads = d.log().count(ahead)
        written = markers(session["instance"], CPUS, 10)
        # The look reads ahead within the copy's lifetime; none of it waits for the stop.
        deadline = time.monotonic() + 60
        while d.log().count(ahead) == aheads:
            assert time.monotonic() < deadline, d.log()[-3000:]
            time.sleep(0.05)
        wait_symbol_reads_over(d)
        sleep_past_symbols_lifetime(read_at)
        log_before_stop = len(d.log())
        stop_markers_session(d, rec, session)
        stop_log = d.log()[log_before_stop:]
        assert "Reading the kernel's symbols for a file" not in stop_log, stop_log[-3000:]
        check_markers_file(out, written)
        assert_real_kallsyms(out)


def test_symbols_kept_longer_while_unchanged_fresh_again_after_a_change():
    """Each read that finds the kernel's symbols unchanged doubles how long the copy is
    used (3 s by a test hook, then 6, then 12); a change the daemon cannot see in
    /proc/modules (a BPF program loaded) is found by the next read, which takes the new
    text and brings the lifetime back to 3 s. The file written after it lists the
    program. The kernel's own symbols, which do not change, are compressed once (at a
    high level) and their frame reused by the new copy."""
    kept = re.compile(r"The kernel's symbols are unchanged: the copy is kept \(for (\d+) s\)")
    read = "The kernel's symbols are read:"
    d = short_symbols_lifetime_daemon()
    with daemon(d):
        out, rec, session = record_markers_session(d, "growing", 2000)
        deadline = time.monotonic() + 120
        while [int(v) for v in kept.findall(d.log())][:2] != [6, 12]:
            assert time.monotonic() < deadline, d.log()[-3000:]
            time.sleep(0.1)
        reads_before = d.log().count(read)
        fd = load_bpf_program("ftraced_test")
        try:
            deadline = time.monotonic() + 120
            while d.log().count(read) == reads_before:
                assert time.monotonic() < deadline, d.log()[-3000:]
                time.sleep(0.1)
            after_change = d.log()[d.log().rindex(read):]
            while not kept.search(after_change):
                assert time.monotonic() < deadline, d.log()[-3000:]
                time.sleep(0.1)
                after_change = d.log()[d.log().rindex(read):]
            assert kept.search(after_change).group(1) == "6", after_change[-3000:]
            stop_markers_session(d, rec, session)
        finally:
            os.close(fd)
        dump = subprocess.run(["trace-cmd", "dump", "--kallsyms", out], capture_output=True,
                              text=True, check=True).stdout
        assert re.search(r"\bbpf_prog_[0-9a-f]+_ftraced_test\b", dump), \
            "the BPF program is not in the file's symbols"
        assert re.search(r" T schedule\n", dump), "the kernel's own symbols are missing"
        assert d.log().count("The kernel's own symbols are compressed") == 1, \
            "the kernel's own symbols were compressed again after a change elsewhere"
        check_events(out)


def test_recovery_refuses_planted_links():
    """A state directory an attacker wrote into: a recipe whose target goes through a
    symlinked directory, a spool file hard-linked to a file elsewhere, a spool named with
    terminal escapes. Recovery writes nothing outside, truncates nothing, logs safely."""
    d = Daemon().start()
    outside = tempfile.mkdtemp(prefix="ftraced-outside-")
    try:
        rec = d.record_background("-e", "ftrace:print", "-o", os.path.join(d.dir, "x.dat"))
        session = d.wait_running()
        markers(session["instance"], CPUS, 2000)
        d.kill()
        rec.communicate(timeout=30)
        # The orphaned instance is drained by the recovery below only if it is ours.
        (spool,) = os.listdir(os.path.join(d.state, "spool"))
        spool = os.path.join(d.state, "spool", spool)
        with open(os.path.join(spool, "recipe")) as f:
            recipe = f.read()
        recipe = re.sub(r"(?m)^target=.*$", "target=sessions/evil/sub/x.dat", recipe)
        with open(os.path.join(spool, "recipe"), "w") as f:
            f.write(recipe)
        os.makedirs(os.path.join(d.state, "sessions"), exist_ok=True)
        os.symlink(outside, os.path.join(d.state, "sessions", "evil"))
        victim = os.path.join(outside, "victim")
        with open(victim, "wb") as f:
            f.write(b"precious" * 1000)
        os.unlink(os.path.join(spool, "cpu0"))
        os.link(victim, os.path.join(spool, "cpu0"))
        os.mkdir(os.path.join(d.state, "spool", "\x1b[31mevil"))
        r = subprocess.run([FTRACECTL, "recover", d.state], capture_output=True, text=True)
        assert r.returncode == 1 and "0 capture(s) recovered, 1 could not be" in r.stdout, \
            r.stdout + r.stderr
        assert os.listdir(outside) == ["victim"], os.listdir(outside)
        assert os.path.getsize(victim) == 8000, "the hard-linked file was truncated"
        assert "not a regular file with one link" in r.stderr, r.stderr
        assert "\\x1b[31mevil" in r.stderr and "\x1b" not in r.stderr, r.stderr
    finally:
        subprocess.run(["rm", "-rf", outside])
        d.cleanup()


def test_recover_by_hand():
    d = Daemon().start()
    try:
        rec = d.record_background("-e", "ftrace:print", "-o", os.path.join(d.dir, "x.dat"))
        session = d.wait_running()
        written = markers(session["instance"], CPUS, 3000)
        d.kill()
        rec.communicate(timeout=30)
        # FTRACED_BINARY still overrides; without it, the ftraced beside ftracectl (here
        # the build tree's ../daemon/ftraced), not the installed path.
        env = dict(os.environ, FTRACED_BINARY="/nonexistent/ftraced")
        r = subprocess.run([FTRACECTL, "recover", d.state], capture_output=True, text=True,
                           env=env)
        assert r.returncode == 1 and "cannot run '/nonexistent/ftraced'" in r.stderr, r.stderr
        del env["FTRACED_BINARY"]
        r = subprocess.run([FTRACECTL, "recover", d.state], capture_output=True, text=True,
                           env=env)
        assert r.returncode == 0 and "1 capture(s) recovered" in r.stdout, r.stdout + r.stderr
        recovered = os.path.join(d.state, "recovered")
        (name,) = [f for f in os.listdir(recovered) if not f.startswith(".")]
        check_markers_file(os.path.join(recovered, name), written)
        # Nothing of the killed daemon's is left, its clock anchor's instance (-0) included.
        tag = session["instance"].rsplit("-", 1)[0] + "-"
        assert not [i for i in our_instances() if i.startswith(tag)], our_instances()
        # While a daemon runs on the directory, recover leaves it alone.
        d.start()
        r = subprocess.run([FTRACECTL, "recover", d.state], capture_output=True, text=True)
        assert r.returncode == 1 and "ftraced is running" in r.stderr, r.stderr
        d.stop()
        # Not a state directory: refused, and nothing is created in it.
        empty = os.path.join(d.dir, "empty")
        os.mkdir(empty)
        r = subprocess.run([FTRACECTL, "recover", empty], capture_output=True, text=True)
        assert r.returncode == 1 and "not an ftraced state directory" in r.stderr, r.stderr
        assert os.listdir(empty) == [], os.listdir(empty)
        # Not root: refused with the reason, before the directory is touched.
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            FTRACECTL, "recover", d.state], capture_output=True, text=True)
        assert r.returncode == 1 and "needs root" in r.stderr, r.stderr
    finally:
        d.cleanup()


STACK_LINE = re.compile(r"^=> (\S+) \(([0-9a-f]+)\)$")


def test_symbols_leave_out_padding_and_still_resolve():
    """A file's kallsyms leave out the padding before each function (__pfx_*,
    __cfi_*: half of an x86 kernel's symbols since 6.2), and trace-cmd still
    names every function the events hold: timer callbacks (a %ps field) and
    every frame of the kernel stacks (-T), each a symbol of /proc/kallsyms."""
    with open("/proc/kallsyms") as f:
        names = {line.split()[2] for line in f}
    with daemon() as d:
        out = os.path.join(d.dir, "symbols.dat")
        rec = d.record_background("-e", "timer:hrtimer_expire_entry", "-T", "-o", out)
        session = d.wait_running()
        # Ticks and wake-ups fire on any machine; wait for a few hundred (with their stacks).
        wait_until("timer events", lambda: sum(
            c["entries"] + c["read"] for c in d.ctl_json("status", session["name"])["cpus"])
            > 400)
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        in_file = subprocess.run(["trace-cmd", "dump", "--kallsyms", out], capture_output=True,
                                 text=True).stdout
        assert_real_kallsyms(out)
        padding = [n for n in names if n.startswith(("__pfx_", "__cfi_"))]
        assert not re.search(r" (__pfx_|__cfi_)", in_file), "padding symbols in the file"
        if padding:
            assert len(in_file.splitlines()) < len(names) - len(padding) // 2, \
                "the file's symbols are not fewer than the kernel's"
        lines = report(out)
        functions = [m.group(1) for m in re.finditer(r"function=(\S+?)/0x0", "\n".join(lines))]
        frames = [STACK_LINE.match(line) for line in lines if line.startswith("=> ")]
        assert len(functions) > 100 and len(frames) > 100, (len(functions), len(frames))
        unknown = [f for f in functions if f not in names]
        assert not unknown, "callbacks not resolved: %s" % unknown[:5]
        unresolved = [m for m in frames if not m or m.group(1) not in names]
        assert not unresolved, "stack frames not resolved: %s" % unresolved[:5]


def test_kernel_symbols_compressed_once_per_boot():
    """The kernel's own symbols (all but modules' and BPF's) are compressed once per
    boot, at a high level: a daemon started again on the same state directory takes
    the frame its predecessor kept there, and its files still resolve every symbol.
    A kept frame that does not decompress to the text it claims is not taken."""
    compressed = "The kernel's own symbols are compressed"
    kept = "The kernel's own symbols are those kept for this boot"
    first = Daemon().start()
    try:
        out = os.path.join(first.dir, "first.dat")
        first.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o", out)
        assert first.log().count(compressed) == 1 and kept not in first.log()
        first.stop()
        head = os.path.join(first.state, "kallsyms-head")
        assert os.path.getsize(head) > 100000, "the frame was not kept"

        second = Daemon(state=first.state).start()
        try:
            out2 = os.path.join(first.dir, "second.dat")
            second.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o", out2)
            assert kept in second.log() and compressed not in second.log(), second.log()
            check_events(out2)
            assert_real_kallsyms(out2)
            dump = subprocess.run(["trace-cmd", "dump", "--kallsyms", out2], capture_output=True,
                                  text=True, check=True).stdout
            assert re.search(r" T schedule\n", dump), "the kernel's own symbols are missing"
            second.stop()
        finally:
            second.cleanup()

        # Damaged: the next daemon compresses them again (and keeps a good copy).
        with open(head, "r+b") as f:
            f.seek(os.path.getsize(head) // 2)
            byte = f.read(1)
            f.seek(os.path.getsize(head) // 2)
            f.write(bytes([byte[0] ^ 0xff]))
        third = Daemon(state=first.state).start()
        try:
            out3 = os.path.join(first.dir, "third.dat")
            third.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o", out3)
            assert compressed in third.log() and kept not in third.log(), third.log()
            check_events(out3)
            third.stop()
        finally:
            third.cleanup()
    finally:
        first.cleanup()


if __name__ == "__main__":
    sys.exit(run())
