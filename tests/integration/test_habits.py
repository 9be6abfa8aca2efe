#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""trace-cmd record's habits carry over: its option letters and their meanings
(-C clock, -O option, -M cpumask, -a, -q, -o defaulting to trace.dat), a command
after the options without '--' and its exit status, events as trace-cmd takes
them (globs, bare names, all), and ftraced's own threads left out of the trace
unless --no-filter. Every file is read back with trace-cmd and its events
counted."""

import grp
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, FTRACECTL, TRACING, Daemon, assert_complete_sequences, daemon,  # noqa: E402
                     check_events, event_lines, loadgen, loadgen_result, markers, parse_markers, report,
                     run, wait_until)


def events_by_name(path):
    counts = {}
    for _, name, _ in event_lines(report(path)):
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_command_without_dashes_exit_status():
    """`record -e sched_switch sh -c 'exit 7'`: a bare event name, a command after the
    options, and the command's status as record's."""
    with daemon() as d:
        out = os.path.join(d.dir, "cmd.dat")
        r = d.ctl("record", "-e", "sched_switch", "-o", out, "sh", "-c",
                  "for i in 1 2 3; do sleep 0.01; done; exit 7", check=False)
        assert r.returncode == 7, (r.returncode, r.stderr)
        assert events_by_name(out).get("sched_switch", 0) > 0
        # Killed by a signal: 128 + its number, as a shell says.
        out2 = os.path.join(d.dir, "killed.dat")
        r = d.ctl("record", "-e", "sched:sched_switch", "-o", out2, "--", "sh", "-c",
                  "kill -TERM $$", check=False)
        assert r.returncode == 128 + 15, (r.returncode, r.stderr)
        assert os.path.exists(out2)
        # A command that cannot run: 127 and why, and nothing recorded.
        out3 = os.path.join(d.dir, "none.dat")
        r = d.ctl("record", "-e", "sched", "-o", out3, "no-such-command-here", check=False)
        assert r.returncode == 127 and "cannot run 'no-such-command-here'" in r.stderr, \
            (r.returncode, r.stderr)
        assert not os.path.exists(out3) and not os.path.exists(out3 + ".partial")
        assert d.ctl_json("list") == []
        # The command's own options are its own, --json included.
        r = d.ctl("record", "-q", "-e", "sched", "-o", out3, "sh", "-c", 'echo "$@"', "sh",
                  "-e", "--json", "-o", "x")
        assert r.stdout == "-e --json -o x\n", r.stdout


def test_default_output_is_trace_dat():
    with daemon() as d, tempfile.TemporaryDirectory(dir=d.dir) as cwd:
        r = subprocess.run([FTRACECTL, "record", "-q", "-e", "sched:sched_switch",
                            "--duration", "200ms"], cwd=cwd, env=d.env(),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        path = os.path.join(cwd, "trace.dat")
        assert events_by_name(path).get("sched_switch", 0) > 0
        # As any output: an existing one is kept unless --force.
        r = subprocess.run([FTRACECTL, "record", "-e", "sched", "--duration", "100ms"],
                           cwd=cwd, env=d.env(), capture_output=True, text=True)
        assert r.returncode == 1 and "'trace.dat' exists; use --force" in r.stderr, r.stderr


def test_output_to_stdout():
    """-o -: the file streams into a pipe, or into a shell's > FILE; what is said to a
    person goes to stderr. Every marker arrives."""
    with daemon() as d:
        out = os.path.join(d.dir, "piped.dat")
        rec = subprocess.Popen([FTRACECTL, "record", "-e", "ftrace:print", "-o", "-"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=d.env())
        chunks = []
        reader = threading.Thread(target=lambda: chunks.append(rec.stdout.read()))
        reader.start()
        session = d.wait_running()
        written = markers(session["instance"], CPUS, 5000)
        d.ctl("stop", session["name"])
        reader.join(timeout=120)
        stderr = rec.communicate(timeout=60)[1].decode()
        assert rec.returncode == 0, stderr
        assert "standard output" in stderr and "No events lost." in stderr, stderr
        with open(out, "wb") as f:
            f.write(chunks[0])
        assert_complete_sequences(parse_markers(report(out)), written)

        redirected = os.path.join(d.dir, "redirected.dat")
        with open(redirected, "wb") as f:
            r = subprocess.run([FTRACECTL, "record", "-q", "-e", "sched:sched_switch",
                                "--duration", "200ms", "-o", "-"], stdout=f, env=d.env())
        assert r.returncode == 0
        assert events_by_name(redirected).get("sched_switch", 0) > 0
        # Appending could not be written in place; --json has nowhere to go.
        with open(redirected, "ab") as f:
            r = subprocess.run([FTRACECTL, "record", "-e", "sched", "-o", "-"], stdout=f,
                               stderr=subprocess.PIPE, env=d.env(), text=True)
        assert r.returncode == 1 and "appending" in r.stderr, r.stderr
        r = d.ctl("record", "--json", "-e", "sched", "-o", "-", check=False)
        assert r.returncode == 2 and "--json cannot go there too" in r.stderr, r.stderr


def test_quiet_is_quiet():
    with daemon() as d:
        out = os.path.join(d.dir, "q.dat")
        r = d.ctl("record", "-q", "-e", "sched:sched_switch", "--duration", "100ms", "-o", out,
                  "true")
        assert r.stdout == "" and r.stderr == "", (r.stdout, r.stderr)
        assert events_by_name(out).get("sched_switch", 0) > 0


def test_clock_option_and_cpumask():
    """-C is the clock; -O sets and clears instance options; -M keeps only those CPUs."""
    with daemon() as d:
        out = os.path.join(d.dir, "opts.dat")
        rec = d.record_background("-C", "mono", "-O", "record-tgid", "-O", "noirq-info",
                                  "-M", "1", "-e", "sched:sched_switch", "-o", out)
        session = d.wait_running()
        base = os.path.join(TRACING, "instances", session["instance"])

        def read(rel):
            with open(os.path.join(base, rel)) as f:
                return f.read().strip()
        assert read("options/record-tgid") == "1" and read("options/irq-info") == "0"
        assert int(read("tracing_cpumask").replace(",", ""), 16) == 1
        assert "[mono]" in read("trace_clock")
        # sched_switch happens on every CPU of a busy machine: wait for CPU 1 to have had some.
        lg = loadgen("--syscall", "--cpu", "1", "--count", "20000", "--rate", "20000")
        loadgen_result(lg)
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        cpus = {cpu for cpu, _, _ in event_lines(report(out))}
        assert cpus == {0}, cpus
        info = d.ctl("info", out).stdout
        assert re.search(r"^clock:\s+mono$", info, re.M), info
        # Options ftraced sets itself, and names the kernel does not have, are refused.
        r = d.ctl("record", "-O", "stacktrace", "-e", "sched", "-o", out, "--force",
                  check=False)
        assert r.returncode == 1 and "ftraced sets 'stacktrace' itself; use -T" in r.stderr
        r = d.ctl("record", "-O", "no-such-option", "-e", "sched", "-o", out, "--force",
                  check=False)
        assert r.returncode == 1 and "unknown trace option 'no-such-option'" in r.stderr
        assert "record-tgid" in r.stderr, r.stderr
        r = d.ctl("record", "-M", "0", "-e", "sched", "-o", out, "--force", check=False)
        assert r.returncode == 1 and "selects no CPU" in r.stderr, r.stderr
        assert d.ctl_json("list") == []


def test_event_globs_and_bare_names():
    with daemon() as d:
        out = os.path.join(d.dir, "glob.dat")
        lg = loadgen("--syscall", "--cpu", "0", "--count", "100000000", "--rate", "5000")
        try:
            r = d.ctl("record", "-i", "-e", "syscalls:sys_enter_getpp*", "-e",
                      "sys_exit_getppid", "-e", "sch*:sched_process_e?it", "--duration",
                      "300ms", "-o", out)
        finally:
            lg.kill()
            lg.communicate()
        assert "warning" not in r.stderr, r.stderr
        names = events_by_name(out)
        assert names.get("sys_enter_getppid", 0) > 0 and names.get("sys_exit_getppid", 0) > 0
        assert not any(n.startswith("sys_enter_") and n != "sys_enter_getppid" for n in names)
        # A glob that matches nothing is skipped by -i like a missing event, and named.
        r = d.ctl("record", "-i", "-e", "nosuch*", "-e", "sched:sched_switch",
                  "--duration", "100ms", "-o", out, "--force")
        assert "no event 'nosuch*'" in r.stderr, r.stderr
        r = d.ctl("record", "-e", "sched:nosuch*", "-o", out, "--force", check=False)
        assert r.returncode == 1 and "unknown event 'sched:nosuch*'" in r.stderr, r.stderr


def test_every_event():
    """-a (and -e all): every event the kernel has, with no limit on their number."""
    with daemon() as d:
        out = os.path.join(d.dir, "all.dat")
        with open(os.path.join(TRACING, "available_events")) as f:
            n_kernel = len(f.read().splitlines())
        assert n_kernel > 512, "this kernel has too few events to test the old limit"
        rec = d.record_background("-a", "-o", out)
        session = d.wait_running()
        status = d.ctl_json("status", session["name"])
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=120)
        assert rec.returncode == 0, stderr
        assert status["events"] == ["all"], status["events"]
        names = events_by_name(out)
        assert len(names) >= 10 and "sched_switch" in names, names
        # The file carries the format of every event enabled: trace-cmd knows them all.
        dump = subprocess.run(["trace-cmd", "dump", "--events", out], capture_output=True,
                              text=True)
        formats = len(re.findall(r"^name: ", dump.stdout, re.M))
        assert formats >= n_kernel, (formats, n_kernel)


def test_own_threads_left_out():
    """Like trace-cmd's recorders, ftraced's threads are not in the trace; --no-filter
    keeps them."""
    with daemon() as d:
        tids = {int(t) for t in os.listdir("/proc/%d/task" % d.proc.pid)}
        kept = os.path.join(d.dir, "kept.dat")
        left = os.path.join(d.dir, "left.dat")
        d.ctl("record", "-q", "-e", "raw_syscalls", "--duration", "500ms", "-o", left)
        d.ctl("record", "-q", "--no-filter", "-e", "raw_syscalls", "--duration", "500ms",
              "-o", kept)

        def pids(path):
            out = set()
            for _, _, line in event_lines(report(path)):
                out.add(int(line.split()[0].rpartition("-")[2]))
            return out
        assert not pids(left) & tids, pids(left) & tids
        assert pids(kept) & tids, "--no-filter: none of ftraced's threads in the trace"


# trace-cmd record's options ftraced does not have, each with an argument if it takes one.
FOREIGN = [["-d"], ["-D"], ["-S"], ["-G"], ["-H", "hook"], ["--profile"], ["--by-comm"],
           ["-N", "host:1234"], ["-t"], ["-V", "3:1234"], ["-A", "guest"], ["--proxy", "3:1"],
           ["--name", "agent"], ["--tsync-interval", "10"], ["--ts-offset", "5"],
           ["--tsc2nsec"], ["-B", "buf"], ["-k"], ["--temp", "/tmp"],
           ["--cmdlines-size", "4096"], ["--poll"], ["--file-version", "6"], ["--stderr"],
           ["--verbose"]]


def test_trace_cmd_options_named():
    """Each trace-cmd record option ftracectl lacks is named as trace-cmd's with what to use
    instead, for record and create alike, and nothing is started; --date is taken, as every
    file has its wall-clock anchor."""
    with daemon() as d:
        out = os.path.join(d.dir, "foreign.dat")
        for opt in FOREIGN:
            for cmd in (["record", "-o", out], ["create", "foreign"]):
                r = d.ctl(*(cmd + opt + ["-e", "sched"]), check=False)
                assert r.returncode == 2, (opt, r.returncode, r.stderr)
                assert "%s is trace-cmd record's" % opt[0] in r.stderr, (opt, r.stderr)
                assert "invalid option" not in r.stderr and "unrecognized" not in r.stderr
        assert not os.path.exists(out) and d.ctl_json("list") == []
        d.ctl("record", "-q", "--date", "-e", "sched:sched_switch", "--duration", "200ms",
              "-o", out)
        assert events_by_name(out).get("sched_switch", 0) > 0
        # The anchor --date stands for: trace-cmd report prints wall-clock seconds from it.
        stamps = [float(m.group(1)) for m in
                  (re.search(r"\]\s+(\d+\.\d+):", line) for line in report(out)) if m]
        assert stamps and all(abs(t - time.time()) < 3600 for t in stamps), stamps[:3]


def test_user_runs_command_as():
    """--user USER: the command runs with USER's uid, gid and groups, none of root's;
    refused without a command, for a user that does not exist, and when not root."""
    with daemon() as d:
        out = os.path.join(d.dir, "user.dat")
        r = d.ctl("record", "-q", "-F", "-c", "-e", "sched:sched_process_exec", "--user", "nobody",
                  "-o", out, "--", "sh", "-c", "id -u; id -g; id -G")
        assert r.stdout.split() == ["65534", "65534", "65534"], r.stdout
        execs = [line for _, name, line in event_lines(report(out))
                 if name == "sched_process_exec"]
        assert any("/id" in line for line in execs), execs
        r = d.ctl("record", "-e", "sched", "--user", "nobody", "-o", out, "--force",
                  check=False)
        assert r.returncode == 2 and "there is none" in r.stderr, r.stderr
        r = d.ctl("record", "-e", "sched", "--user", "no-such-user-here", "-o", out,
                  "--force", "true", check=False)
        assert r.returncode == 2 and "no such user 'no-such-user-here'" in r.stderr, r.stderr
        r = d.ctl("record", "-e", "sched", "--user", "root", "-o", out, "--force", "true",
                  check=False, user=65534)
        assert r.returncode == 2 and "only root can do" in r.stderr, r.stderr
        assert d.ctl_json("list") == []


def test_kernel_refusal_has_its_own_status():
    """What this kernel refuses (lockdown's EPERM on the function tracer's files, a tracer
    its instances lack) exits 5 and says "this kernel refuses"; ftraced's own permission
    refusals (a group member's --top-level) stay 4."""
    with daemon() as d:
        if d.ctl_json("list", "--kernel")["kernel"].get("function-in-instance") == "yes":
            print("SKIP: this kernel lets instances run the function tracer")
            return
        out = os.path.join(d.dir, "k.dat")
        r = d.ctl("record", "-p", "function", "-l", "vfs_read", "-o", out, check=False)
        assert r.returncode == 5, (r.returncode, r.stderr)
        assert "this kernel refuses -l 'vfs_read' (Operation not permitted)" in r.stderr, \
            r.stderr
        r = d.ctl("create", "fn", "-p", "function", check=False)
        assert r.returncode == 5 and "this kernel refuses the function tracer" in r.stderr, \
            (r.returncode, r.stderr)
        r = d.ctl("--json", "record", "-p", "function", "-o", out, check=False)
        assert r.returncode == 5, (r.returncode, r.stderr)
        assert d.ctl_json("list") == [] and not os.path.exists(out + ".partial")
    nogroup = grp.getgrnam("nogroup").gr_gid
    with daemon(Daemon(extra_args=["--group", "nogroup"])) as d:
        os.chmod(d.dir, 0o777)
        r = d.ctl("record", "--top-level", "-e", "sched:sched_switch", "-o",
                  os.path.join(d.dir, "member.dat"), check=False, user=65534, gid=nogroup)
        assert r.returncode == 4 and "only root may lease the top-level buffer" in r.stderr, \
            (r.returncode, r.stderr)


def test_module_limits_the_function_tracer():
    """--module MOD: each -l and -n gets ':mod:MOD' (without -l, '-l *:mod:MOD'), as in
    trace-cmd. This host refuses the function tracer: the refusal names the glob the
    kernel was given, and exits 5; a glob naming its own module is refused."""
    with daemon() as d:
        if d.ctl_json("list", "--kernel")["kernel"].get("function-in-instance") == "yes":
            print("SKIP: this kernel runs the function tracer (the guests test it)")
            return
        out = os.path.join(d.dir, "mod.dat")
        for args, glob in ((["--module", "ext4"], "*:mod:ext4"),
                           (["-l", "ext4_*", "--module", "ext4"], "ext4_*:mod:ext4"),
                           (["--module", "ext4", "-n", "ext4_x*"], "*:mod:ext4")):
            r = d.ctl("record", "-p", "function", *args, "-o", out, check=False)
            assert r.returncode == 5, (args, r.returncode, r.stderr)
            assert "this kernel refuses -l '%s' (Operation not permitted)" % glob in r.stderr, \
                (args, r.stderr)
        r = d.ctl("create", "m", "-p", "function", "-l", "a:mod:b", "--module", "c",
                  check=False)
        assert r.returncode == 2 and "names its module already" in r.stderr, r.stderr
        r = d.ctl("record", "-p", "function", "--module", "no/such", "-o", out, check=False)
        assert r.returncode == 2 and "invalid module name" in r.stderr, r.stderr
        assert d.ctl_json("list") == [] and not os.path.exists(out + ".partial")


def test_v_excludes_the_events_after_it():
    """-v: the -e after it are left out of what the -e before it give (trace-cmd's "-v will
    negate all -e options that follow it"); kept by save, refused when it leaves nothing."""
    with daemon() as d:
        out = os.path.join(d.dir, "v.dat")
        lg = loadgen("--syscall", "--cpu", "0", "--count", "100000000", "--rate", "2000")
        try:
            d.ctl("record", "-q", "-e", "sched", "-v", "-e", "sched_w*", "-e",
                  "sched:sched_stat_*", "--duration", "500ms", "-o", out)
            names = events_by_name(out)
            d.ctl("record", "-q", "-e", "sched", "--duration", "500ms", "-o", out, "--force")
            without_v = events_by_name(out)
        finally:
            lg.kill()
            lg.communicate()
        # Without -v the machine's scheduling gives both; with it only the kept ones.
        assert without_v.get("sched_switch", 0) > 0 and without_v.get("sched_waking", 0) > 0
        assert names.get("sched_switch", 0) > 0, names
        assert not [n for n in names if n.startswith("sched_w") or n.startswith("sched_stat")], \
            names
        # A created session keeps it: save writes it back as the session file's key.
        d.ctl("create", "v", "-e", "sched", "-v", "-e", "sched:sched_switch")
        saved = d.ctl("save", "v").stdout
        assert "exclude-event = sched:sched_switch" in saved, saved
        d.ctl("destroy", "v")
        # What -v cannot mean is refused.
        r = d.ctl("record", "-e", "sched", "-v", "-e", "sched_switch", "-f", "prev_pid == 0",
                  "-o", out, "--force", check=False)
        assert r.returncode == 2 and "-v excludes it" in r.stderr, r.stderr
        r = d.ctl("record", "-e", "sched", "-v", "-e", "nosuch_event_here", "-o", out,
                  "--force", check=False)
        assert r.returncode == 1 and "unknown event 'nosuch_event_here' after -v" in r.stderr, \
            r.stderr
        r = d.ctl("record", "-e", "sched:sched_switch", "-v", "-e", "sched", "-o", out,
                  "--force", check=False)
        assert r.returncode == 1 and "nothing is left to record" in r.stderr, r.stderr
        r = d.ctl("record", "-v", "-e", "sched", "-o", out, "--force", check=False)
        assert r.returncode != 0, r.stderr
        assert d.ctl_json("list") == []


def test_R_sets_the_trigger_of_the_event_before():
    """-R TRIGGER: the trigger of the -e just before, in the session's own instance
    (stacktrace: a stack in the file with each of its events; traceoff with a filter: in the
    instance's trigger file); the top level's trigger file is left alone; what the kernel
    rejects (this host has no hist triggers) is refused with its words."""
    top = os.path.join(TRACING, "events/sched/sched_switch/trigger")
    with open(top) as f:
        top_before = f.read()
    with daemon() as d:
        out = os.path.join(d.dir, "r.dat")
        d.ctl("record", "-q", "-e", "sched:sched_switch", "-R", "stacktrace", "-e",
              "sched:sched_waking", "--duration", "300ms", "-o", out)
        names = events_by_name(out)
        assert names.get("kernel_stack", 0) > 0 and names.get("sched_switch", 0) > 0, names
        # One stack for each sched_switch (the trigger's event), none for sched_waking.
        assert names["kernel_stack"] == names["sched_switch"], names
        d.ctl("record", "-q", "-e", "sched:sched_switch", "--duration", "200ms", "-o", out,
              "--force")
        assert events_by_name(out).get("kernel_stack", 0) == 0

        # traceoff with a filter, as the instance's own trigger file shows it.
        rec = d.record_background("-e", "sched:sched_switch", "-R",
                                  "traceoff if prev_pid == 999999999", "-o", out, "--force")
        session = d.wait_running()
        with open(os.path.join(TRACING, "instances", session["instance"],
                               "events/sched/sched_switch/trigger")) as f:
            trigger = f.read()
        assert trigger.startswith("traceoff") and "prev_pid == 999999999" in trigger, trigger
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        d.ctl("create", "tr", "-e", "sched:sched_switch", "-R", "traceoff if prev_pid == 0")
        saved = d.ctl("save", "tr").stdout
        assert "event-trigger = traceoff if prev_pid == 0" in saved, saved
        d.ctl("destroy", "tr")
        r = d.ctl("record", "-e", "sched:sched_switch", "-R", "no_such_trigger", "-o", out,
                  "--force", check=False)
        assert r.returncode == 1 and "rejected by the kernel for sched:sched_switch" in r.stderr, \
            r.stderr
        r = d.ctl("record", "-R", "stacktrace", "-e", "sched", "-o", out, "--force",
                  check=False)
        assert r.returncode == 2 and "there is none" in r.stderr, r.stderr
        assert d.ctl_json("list") == []
    with open(top) as f:
        assert f.read() == top_before


def test_s_bounds_how_long_events_wait_in_the_ring():
    """-s USECS: every CPU is read at least that often, partly filled sub-buffers too. A few
    markers never reach the watermark: a record without -s has read nothing of them while
    one with -s has; both files hold every marker."""
    with daemon() as d:
        slow, fast = os.path.join(d.dir, "slow.dat"), os.path.join(d.dir, "fast.dat")
        rec_slow = d.record_background("-e", "ftrace:print", "-o", slow)
        plain = d.wait_running()
        rec_fast = d.record_background("-s", "100000", "-e", "ftrace:print", "-o", fast)
        wait_until("both records run",
                   lambda: len([x for x in d.ctl_json("list") if x["state"] == "running"]) == 2)
        (with_s,) = [x for x in d.ctl_json("list") if x["name"] != plain["name"]]
        written_slow = markers(plain["instance"], CPUS, 20)
        written_fast = markers(with_s["instance"], CPUS, 20)

        def raw(name):
            return d.ctl_json("status", name)["bytes_raw"]
        wait_until("-s reads the markers", lambda: raw(with_s["name"]) > 0)
        assert raw(plain["name"]) == 0, "the watermark woke the record without -s"
        for name, rec in ((plain["name"], rec_slow), (with_s["name"], rec_fast)):
            d.ctl("stop", name)
            _, stderr = rec.communicate(timeout=60)
            assert rec.returncode == 0, stderr
        assert_complete_sequences(parse_markers(report(slow)), written_slow)
        assert_complete_sequences(parse_markers(report(fast)), written_fast)
        r = d.ctl("record", "-s", "999", "-e", "sched", "-o", fast, "--force", check=False)
        assert r.returncode == 2 and "1000 to 3600000000" in r.stderr, r.stderr


def procmaps(path):
    """The PROCMAPS options trace-cmd dump --options shows: {pid: text}."""
    r = subprocess.run(["trace-cmd", "dump", "--options", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = {}
    for block in r.stdout.split("[Option PROCMAPS")[1:]:
        text = block.split("]", 1)[1].split("\t\t[Option", 1)[0].strip()
        out[int(text.split()[0], 16)] = text
    return out


def test_proc_map_saves_the_maps_of_the_processes_traced():
    """--proc-map: the memory maps of -F's command (held at its exit, after it loaded its
    libraries) and of -P's processes, in the file's PROCMAPS options as trace-cmd writes
    them; without it, none."""
    with daemon() as d:
        out = os.path.join(d.dir, "pm.dat")
        r = d.ctl("record", "-q", "-F", "--proc-map", "-e", "syscalls", "-o", out, "cat",
                  "/etc/hostname")
        maps = procmaps(out)
        assert len(maps) == 1, maps
        ((pid, text),) = maps.items()
        head, *files = text.splitlines()
        assert head.split()[2] == "/usr/bin/cat" and int(head.split()[1], 16) == len(files)
        # libc comes with the dynamic loader's work, after exec: read at the exit.
        assert any(re.search(r"^[0-9a-f]+ [0-9a-f]+ /\S*libc\.so", f) for f in files), files
        assert events_by_name(out), "no events"
        sleeper = subprocess.Popen(["sleep", "1000"])
        try:
            d.ctl("record", "-q", "-P", str(sleeper.pid), "--proc-map", "-e", "sched",
                  "--duration", "200ms", "-o", out, "--force")
        finally:
            sleeper.kill()
            sleeper.wait()
        maps = procmaps(out)
        assert list(maps) == [sleeper.pid] and "/usr/bin/sleep" in maps[sleeper.pid], maps
        d.ctl("record", "-q", "-P", "1", "-e", "sched", "--duration", "100ms", "-o", out,
              "--force")
        assert procmaps(out) == {}
        r = d.ctl("record", "--proc-map", "-e", "sched", "-o", out, "--force", "true",
                  check=False)
        assert r.returncode == 2 and "give them with -P PID, or a command with -F" in r.stderr
        assert d.ctl_json("list") == []


KEEP_KB = 64


def kept_record(d, out, compression, count):
    """record -m KEEP_KB while COUNT numbered markers go to every CPU, many more than it
    keeps; the live status says what was dropped before the stop. Returns what was
    written per CPU and the record's summary."""
    rec = d.record_background("-m", str(KEEP_KB), "--compression", compression,
                              "-b", "16384", "-e", "ftrace:print", "-o", out)
    s = d.wait_running()
    written = markers(s["instance"], CPUS, count)
    wait_until("status says older data was dropped",
               lambda: d.ctl_json("status", s["name"]).get("evicted_raw_bytes", 0) > 0)
    st = d.ctl_json("status", s["name"])
    assert st["keep_kb"] == KEEP_KB and st["lost_events"] == 0, st
    d.ctl("stop", s["name"])
    stdout, stderr = rec.communicate(timeout=120)
    assert rec.returncode == 0, stderr
    return written, stdout


def test_m_keeps_the_most_recent_size_per_cpu():
    """-m SIZE, as trace-cmd's: the file holds at most SIZE KiB of trace data per CPU
    (compressed with zstd, raw with --compression none), the most recent: on every CPU an
    unbroken run of markers ending at the last one written, fewer than were written. The
    summary, the live status and the file's CPU statistics say how much older data was
    dropped."""
    with daemon() as d:
        for compression in ("zstd", "none"):
            out = os.path.join(d.dir, "kept-%s.dat" % compression)
            written, summary = kept_record(d, out, compression, 100000)
            check_events(out)
            seen = parse_markers(report(out))
            for cpu, n in written.items():
                got = seen.get(cpu, [])
                assert 0 < len(got) < n, (compression, cpu, len(got), n)
                assert got == list(range(n - len(got), n)), \
                    (compression, cpu, got[:3], got[-3:], n)
            info = json.loads(d.ctl("--json", "info", out).stdout)
            for c in info["cpus"]:
                assert 0 < c["bytes"] <= KEEP_KB * 1024, (compression, c)
                assert c["older_data_dropped"] and c["evicted_raw_bytes"] > 0, (compression, c)
            m = re.search(r"at most %d KiB per CPU \(-m\); (\S+ \S+) older was dropped"
                          % KEEP_KB, summary)
            assert m and m.group(1) != "0 B", summary
            assert "No events lost.\n" not in summary, summary
            stat = "\n".join(report(out, "--stat"))
            evicted = re.findall(r"ftraced-evicted-bytes: (\d+)", stat)
            assert len(evicted) == len(CPUS) and all(int(n) > 0 for n in evicted), stat


def test_m_refuses_a_bad_size():
    """-m SIZE that is no size, or less than one sub-buffer, is refused with the least it
    takes, and nothing is recorded; create has no -m (a flight recorder keeps the most
    recent)."""
    with daemon() as d:
        out = os.path.join(d.dir, "bad.dat")
        for size in ("0", "junk", "-5", "64k", "99999999999999"):
            r = d.ctl("record", "-m", size, "-e", "sched", "-o", out, check=False)
            assert r.returncode == 2 and "invalid -m SIZE '%s'" % size in r.stderr, \
                (size, r.returncode, r.stderr)
        # A sub-buffer is a page at least: 1 KiB is less on every kernel. Only the daemon
        # knows its size, and refuses as it refuses other requests (status 1).
        r = d.ctl("record", "-m", "1", "-e", "sched", "-o", out, check=False)
        m = re.search(r"-m 1 is less than one sub-buffer.*use -m (\d+) or more", r.stderr)
        assert r.returncode == 1 and m, (r.returncode, r.stderr)
        least = int(m.group(1))
        assert least >= 4 and least & (least - 1) == 0, r.stderr
        r = d.ctl("create", "kept", "-m", "64", "-e", "sched", check=False)
        assert r.returncode == 2 and "--mode flight --flight-size" in r.stderr, r.stderr
        assert not os.path.exists(out) and d.ctl_json("list") == []


if __name__ == "__main__":
    sys.exit(run())
