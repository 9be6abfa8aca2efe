#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Side-by-side benchmark: the same marker workload recorded by
`trace-cmd record --file-version 7 --compression zstd` and by ftraced
(`ftracectl record`), alternating, several runs per rate, medians and
ratios. Needs root, tracefs, trace-cmd and a built tree (build/).

Per run and recorder it measures:
  generated   markers the load generator wrote (one generator per CPU)
  found       distinct markers in the file (bench/ftraced-count)
  lost        generated - found, plus writes the kernel refused (buffer full)
  cpu_s       recorder CPU seconds, user+sys, all threads and children
              (wait4 rusage; ftraced: daemon + ftracectl)
  rss_mib     peak resident memory of the recorder, summed over its processes
              (sampled every 20 ms)
  out_mib     size of the finished file (each recorder sees its own workload, whose
              compressibility varies by several percent from run to run: for the
              output ratio on the same events, use same-load.py)
  written_mib bytes the recorder wrote into files: its temp files or spools
              (largest size seen) plus the finished file
  stop_s      time from the stop request (SIGINT to the recorder, as Ctrl-C) to its
              exit with the complete file

The floor (--recorders ...,physical) gets its instance made, sized and
removed by this script, whose CPU for that the report gives separately,
with ftraced's ratio to the floor and its instance together.

With --warm, ftraced is one daemon started before the first run (and warmed
by one short capture), as on a server where it runs all the time: its
cpu_s is then what the daemon spent from the record request until it is
idle again, the session's instance removed and the next one prepared
(its ftraced_cpu_seconds_total metric, to the microsecond; /proc/PID/stat's
10 ms ticks from a daemon without it), plus ftracectl's. Its files share
its copy of the kernel's symbols, read again when a session starts with a
copy past its validity or captures within 10 s of that (a minute after the
symbols changed, twice as long after each read that found them unchanged,
up to 8 minutes);
its debug log says which runs did (about 50 ms of CPU each, see
bench/symbols.py), and the report counts them and gives the others'
median. Without it, every run starts a fresh daemon and counts all of its
CPU, start-up and a cold symbol read included.

trace-cmd 3.1.6 on this kernel needs -k and an instance (-B), -p nop for a
markers-only capture, and a private mount namespace in which
/proc/sys/kernel/ftrace_enabled is a bind-mounted file holding 1 (writing
the real one is refused here and makes it exit).
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("FTRACED_BUILD", os.path.join(ROOT, "build"))
FTRACED = os.path.join(BUILD, "daemon", "ftraced")
FTRACECTL = os.path.join(BUILD, "client", "ftracectl")
LOADGEN = os.path.join(BUILD, "bench", "ftraced-loadgen")
COUNTER = os.path.join(BUILD, "bench", "ftraced-count")
PHYSICAL = os.path.join(BUILD, "bench", "ftraced-physical")
TRACING = "/sys/kernel/tracing"
CPUS = list(range(os.cpu_count()))


def children_of(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                kids.append(int(entry))
        except OSError:
            pass
    return kids


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Peak RSS of a process tree, and the largest size seen of files in a directory."""

    def __init__(self, pid, directory, final_name):
        super().__init__(daemon=True)
        self.pid, self.directory, self.final_name = pid, directory, final_name
        self.peak_kib = 0
        self.file_max = {}
        self.stop_flag = threading.Event()

    def run(self):
        while not self.stop_flag.is_set():
            pids = [self.pid]
            for p in list(pids):
                pids += children_of(p)
            self.peak_kib = max(self.peak_kib, sum(rss_kib(p) for p in pids))
            for root, _, files in os.walk(self.directory):
                for name in files:
                    if name == self.final_name:
                        continue
                    path = os.path.join(root, name)
                    try:
                        size = os.path.getsize(path)
                    except OSError:
                        continue
                    self.file_max[path] = max(self.file_max.get(path, 0), size)
            time.sleep(0.02)

    def finish(self):
        self.stop_flag.set()
        self.join()


def run_generators(instance, rate_total, seconds):
    per_cpu = rate_total / len(CPUS) if rate_total else 0
    count = int(per_cpu * seconds) if per_cpu else 10 ** 12
    procs = [subprocess.Popen([LOADGEN, "--instance", instance, "--cpu", str(cpu),
                               "--count", str(count), "--rate", str(per_cpu),
                               "--seconds", str(seconds), "--tag", "b"],
                              stdout=subprocess.PIPE, text=True) for cpu in CPUS]
    written = failed = 0
    for p in procs:
        out, _ = p.communicate()
        fields = dict(kv.split("=") for kv in out.split())
        written += int(fields["written"])
        failed += int(fields["failed"])
    return written, failed


def count_markers(path):
    out = subprocess.run([COUNTER, "-t", "b", path], capture_output=True, text=True, check=True)
    info = json.loads(out.stdout)
    distinct = sum(g["distinct"] for g in info["generators"].values())
    return distinct, info


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise RuntimeError("timed out waiting for " + what)


def rusage_seconds(ru):
    return ru.ru_utime + ru.ru_stime


def start_tracecmd(tmp, buffer_kb, rt=0):
    """`trace-cmd record` of markers into TMP/tc/trace.dat on an instance of its own;
    returns the process, the instance and the file. wait_tracecmd() waits for it."""
    instance = "ftraced-bench-tc-%d" % os.getpid()
    out_dir = os.path.join(tmp, "tc")
    os.makedirs(out_dir)
    out = os.path.join(out_dir, "trace.dat")
    fake = os.path.join(tmp, "ftrace_enabled")
    with open(fake, "w") as f:
        f.write("1\n")
    # trace-cmd 3.1.6 has no sub-buffer size or zstd level option: those are ftraced's alone.
    script = ("mount --bind %s /proc/sys/kernel/ftrace_enabled && cd %s && exec trace-cmd "
              "record %s--file-version 7 --compression zstd -k -B %s -p nop -b %d -o %s"
              % (fake, out_dir, "-r %d " % rt if rt else "", instance, buffer_kb, out))
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc, instance, out


def wait_tracecmd(instance):
    """Until trace-cmd records on INSTANCE."""
    on = os.path.join(TRACING, "instances", instance, "tracing_on")
    wait_for(lambda: os.path.exists(on) and open(on).read().strip() == "1", 20,
             "trace-cmd to start")
    time.sleep(0.5)  # its per-CPU recorders are forked after tracing is on


def remove_instance(instance):
    """trace-cmd -k leaves its instance behind."""
    try:
        os.rmdir(os.path.join(TRACING, "instances", instance))
    except OSError:
        pass


def wait_exit(proc):
    """Waits for a child to exit; its CPU seconds (it and its waited-for children)."""
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return rusage_seconds(ru)


def run_tracecmd(tmp, rate, seconds, buffer_kb, rt=0, subbuf_kb=0, level=3):
    proc, instance, out = start_tracecmd(tmp, buffer_kb, rt)
    sampler = Sampler(proc.pid, os.path.dirname(out), "trace.dat")
    sampler.start()
    try:
        wait_tracecmd(instance)
        written, failed = run_generators(instance, rate, seconds)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        cpu_s = wait_exit(proc)
        stop_s = time.monotonic() - t0
        stderr = proc.stderr.read().decode(errors="replace")
    finally:
        sampler.finish()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        remove_instance(instance)
    if not os.path.exists(out):
        raise RuntimeError("trace-cmd wrote no file: " + stderr[-2000:])
    found, _ = count_markers(out)
    size = os.path.getsize(out)
    return dict(generated=written, refused=failed, found=found, cpu_s=cpu_s,
                rss_mib=sampler.peak_kib / 1024, out_mib=size / 2 ** 20,
                written_mib=(size + sum(sampler.file_max.values())) / 2 ** 20, stop_s=stop_s)


WARM = None  # (daemon, env) of the one long-running daemon with --warm
WARM_LOG = None  # its debug log, where it says when it reads the kernel's symbols
SYMBOL_READ_LINE = "Reading the kernel's symbols"


def symbol_reads_since(offset):
    """How many times the warm daemon began reading /proc/kallsyms since OFFSET of its log."""
    with open(WARM_LOG) as f:
        f.seek(offset)
        return f.read().count(SYMBOL_READ_LINE)


def ftraced_subbuf_kb(buffer_kb):
    """The sub-buffer size ftraced picks for a ring when none is asked for
    (session-config.c: 32 KiB, halved until the ring holds 32 of them)."""
    kb = 32
    while kb > 4 and kb * 32 > buffer_kb:
        kb //= 2
    return kb


def ftraced_wake_percent(buffer_kb):
    """buffer_percent as ftraced sets it: a 512 KiB batch, rounded up, 1-50."""
    return min(50, max(1, -(-512 * 100 // buffer_kb)))


def run_physical(tmp, rate, seconds, buffer_kb, rt=0, subbuf_kb=0, level=3):
    """The floor: bench/ftraced-physical (splice, zstd at LEVEL, write) on an
    instance set up as ftraced sets its own. No file format: found = the
    events the kernel handed to it. RT is not used: the floor runs unprioritised."""
    instance = "ftraced-bench-phys-%d" % os.getpid()
    path = os.path.join(TRACING, "instances", instance)
    out_dir = os.path.join(tmp, "phys")
    os.makedirs(out_dir)
    # What making, sizing and removing the instance costs (the kernel works in
    # this thread's context): ftraced pays it, the floor's cpu_s does not.
    instance_cpu_s = -time.thread_time()
    os.mkdir(path)
    proc = sampler = None
    try:
        settings = [("buffer_subbuf_size_kb", subbuf_kb or ftraced_subbuf_kb(buffer_kb)),
                    ("buffer_size_kb", buffer_kb),
                    ("buffer_percent", ftraced_wake_percent(buffer_kb))]
        for name, value in settings:
            if name == "buffer_subbuf_size_kb" and not os.path.exists(os.path.join(path, name)):
                continue
            with open(os.path.join(path, name), "w") as f:
                f.write("%d\n" % value)
        instance_cpu_s += time.thread_time()
        proc = subprocess.Popen([PHYSICAL, path, str(level), os.path.join(out_dir, "raw")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError("ftraced-physical failed: " + proc.stderr.read())
        sampler = Sampler(proc.pid, out_dir, None)
        sampler.start()
        written, failed = run_generators(instance, rate, seconds)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        cpu_s = wait_exit(proc)
        stop_s = time.monotonic() - t0
        sampler.finish()
        if proc.returncode != 0:
            raise RuntimeError("ftraced-physical failed: " + proc.stderr.read())
        fields = dict(kv.split("=") for kv in proc.stdout.read().split())
    finally:
        if sampler and sampler.is_alive():
            sampler.finish()
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        rmdir_cpu_s = -time.thread_time()
        os.rmdir(path)
        rmdir_cpu_s += time.thread_time()
    out = int(fields["out"]) / 2 ** 20
    return dict(generated=written, refused=failed, found=int(fields["events"]), cpu_s=cpu_s,
                rss_mib=sampler.peak_kib / 1024, out_mib=out, written_mib=out, stop_s=stop_s,
                instance_cpu_s=instance_cpu_s + rmdir_cpu_s)


def daemon_cpu_s(pid):
    """CPU seconds (user+sys) a live process has used so far, all threads, dead ones too,
    in 10 ms clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ftraced_cpu_s(daemon, env):
    """The daemon's CPU seconds to the microsecond (its ftraced_cpu_seconds_total
    metric); /proc's clock ticks from a daemon too old to report it."""
    out = subprocess.run([FTRACECTL, "metrics"], env=env, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("ftraced_cpu_seconds_total "):
            return float(line.split()[1])
    return daemon_cpu_s(daemon.pid)


def wait_idle(pid):
    """Until a process has used no CPU for 300 ms (at most 10 s)."""
    deadline, last, quiet_since = time.monotonic() + 10, daemon_cpu_s(pid), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < 0.3:
        time.sleep(0.05)
        now = daemon_cpu_s(pid)
        if now != last:
            last, quiet_since = now, time.monotonic()


def start_daemon(tmp, rt=0, log=None, daemon_env=None):
    """A private ftraced with its socket and state in TMP, ready for requests; returns
    the process and the environment that points ftracectl at it. LOG: a file that gets
    its debug log (else it logs nowhere); DAEMON_ENV: more of its environment."""
    sock = os.path.join(tmp, "control")
    env = dict(os.environ, FTRACED_SOCKET=sock)
    conf = os.path.join(tmp, "ftraced.conf")
    with open(conf, "w") as f:
        # The machine's saved_cmdlines_size is left alone, as trace-cmd leaves it.
        f.write("saved-cmdlines = 0\nrt-priority-max = %d\n" % rt)
    daemon = subprocess.Popen([FTRACED, "--socket", sock, "--state-dir",
                               os.path.join(tmp, "state"), "--group", "", "--config", conf] +
                              (["--log-level", "debug"] if log else []),
                              stdout=log or subprocess.DEVNULL, stderr=log or subprocess.DEVNULL,
                              env=dict(os.environ, **(daemon_env or {})))
    try:
        wait_for(lambda: subprocess.run([FTRACECTL, "list"], env=env,
                                        capture_output=True).returncode == 0, 20, "ftraced")
    except BaseException:
        daemon.kill()
        daemon.wait()
        raise
    return daemon, env


def start_record(env, out, buffer_kb, level, rt=0, subbuf_kb=0):
    """`ftracectl --json record` of markers into OUT, once its session runs; returns the
    client and the session as `list` shows it. LEVEL None: uncompressed (-C none)."""
    options = (["--level", str(level)] if level is not None else ["--compression", "none"]) + \
        (["-r", str(rt)] if rt else []) + (["--subbuf-kb", str(subbuf_kb)] if subbuf_kb else [])
    client = subprocess.Popen([FTRACECTL, "--json", "record", "--quiet", "-e", "ftrace:print",
                               "-b", str(buffer_kb), "-o", out] + options, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session = {}

    def running():
        listing = json.loads(subprocess.run([FTRACECTL, "--json", "list"], env=env,
                                            capture_output=True, text=True).stdout)
        session.update(listing[0] if listing else {})
        return session.get("state") == "running"
    wait_for(running, 20, "the session to start")
    return client, session


def wait_session_gone(daemon, env):
    """Until the daemon has no session and has been idle a while."""
    wait_for(lambda: json.loads(subprocess.run(
        [FTRACECTL, "--json", "list"], env=env, capture_output=True,
        text=True).stdout) == [], 20, "the session to go")
    wait_idle(daemon.pid)


def run_ftraced(tmp, rate, seconds, buffer_kb, rt=0, subbuf_kb=0, level=3):
    out_dir = os.path.join(tmp, "out")
    os.makedirs(out_dir)
    out = os.path.join(out_dir, "trace.dat")
    daemon, env = WARM or start_daemon(tmp, rt)
    cpu_before = ftraced_cpu_s(daemon, env) if WARM else 0
    log_before = os.path.getsize(WARM_LOG) if WARM and WARM_LOG else None
    sampler = None
    try:
        sampler = Sampler(daemon.pid, tmp, "trace.dat")
        sampler.start()
        client, session = start_record(env, out, buffer_kb, level, rt, subbuf_kb)
        written, failed = run_generators(session["instance"], rate, seconds)
        # Ctrl-C, as trace-cmd is stopped: the client asks the daemon to stop.
        t0 = time.monotonic()
        client.send_signal(signal.SIGINT)
        client_s = wait_exit(client)
        stop_s = time.monotonic() - t0
        summary = json.loads(client.stdout.read())
        if client.returncode != 0:
            raise RuntimeError("ftracectl record failed: " + client.stderr.read())
        sampler.finish()
        if WARM:
            # The session's instance goes after the answer, and the next one is
            # prepared: count that too.
            wait_session_gone(daemon, env)
            daemon_s = ftraced_cpu_s(daemon, env) - cpu_before
        else:
            daemon.send_signal(signal.SIGTERM)
            daemon_s = wait_exit(daemon)
    finally:
        if sampler and sampler.is_alive():
            sampler.finish()
        if not WARM and daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    found, _ = count_markers(out)
    size = os.path.getsize(out)
    spooled = sum(c["bytes_stored"] for c in summary["cpus"])
    return dict(generated=written, refused=failed, found=found,
                cpu_s=daemon_s + client_s,
                rss_mib=sampler.peak_kib / 1024, out_mib=size / 2 ** 20,
                written_mib=(size + spooled) / 2 ** 20, stop_s=stop_s,
                kernel_lost=summary["lost_events"],
                symbol_reads=None if log_before is None else symbol_reads_since(log_before))


RECORDERS = {"trace-cmd": run_tracecmd, "ftraced": run_ftraced, "physical": run_physical}
METRICS = ["generated", "found", "lost", "cpu_s", "cpu_ns_per_event", "rss_mib", "out_mib",
           "written_mib", "stop_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="200000,1000000,2000000,3500000,0",
                    help="total marker rates per second across CPUs, 0 = flat out")
    ap.add_argument("--seconds", type=float, default=3.0, help="load per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buffer-kb", type=int, default=4096, help="ring buffer per CPU")
    ap.add_argument("--rt", type=int, default=0, metavar="PRIO",
                    help="both recorders SCHED_FIFO at PRIO (-r)")
    ap.add_argument("--level", type=int, default=3,
                    help="ftraced's zstd level (default 3, what trace-cmd 3.1.6 always uses)")
    ap.add_argument("--subbuf-kb", type=int, default=0,
                    help="ftraced's sub-buffer size (trace-cmd 3.1.6 has no such option)")
    ap.add_argument("--warm", action="store_true",
                    help="one ftraced daemon for all runs, as it runs on a server (see above)")
    ap.add_argument("--recorders", default="trace-cmd,ftraced",
                    help="which recorders run: trace-cmd, ftraced, physical (the floor: "
                         "bench/ftraced-physical, splice and zstd at --level only)")
    ap.add_argument("--json", help="also write all raw results here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/compare.py needs root")
    args.recorders = args.recorders.split(",")
    if not set(args.recorders) <= set(RECORDERS) or "ftraced" not in args.recorders:
        sys.exit("--recorders: ftraced and any of %s" % ", ".join(RECORDERS))
    for path in (FTRACED, FTRACECTL, LOADGEN, COUNTER) + \
            ((PHYSICAL,) if "physical" in args.recorders else ()):
        if not os.path.exists(path):
            sys.exit("missing %s: build first (meson setup build && ninja -C build)" % path)

    global WARM, WARM_LOG
    warm_dir = None
    if args.warm:
        warm_dir = tempfile.TemporaryDirectory(prefix="ftraced-bench-warm-", dir="/var/tmp")
        WARM_LOG = os.path.join(warm_dir.name, "daemon.log")
        with open(WARM_LOG, "w") as log:
            WARM = start_daemon(warm_dir.name, args.rt, log=log)
        with tempfile.TemporaryDirectory(prefix="ftraced-bench-", dir="/var/tmp") as tmp:
            run_ftraced(tmp, 1000, 0.5, args.buffer_kb, args.rt, args.subbuf_kb, args.level)
    try:
        results = run_all(args)
    finally:
        if WARM:
            WARM[0].terminate()
            WARM[0].wait()
            warm_dir.cleanup()
    report(args, results)


def run_all(args):
    results = []
    rates = [int(r) for r in args.rates.split(",")]
    for rate in rates:
        for run in range(args.runs):
            order = args.recorders if run % 2 == 0 else list(reversed(args.recorders))
            for name in order:
                with tempfile.TemporaryDirectory(prefix="ftraced-bench-", dir="/var/tmp") as tmp:
                    r = RECORDERS[name](tmp, rate, args.seconds, args.buffer_kb, args.rt,
                                        args.subbuf_kb, args.level)
                r["lost"] = r["generated"] + r["refused"] - r["found"]
                r["cpu_ns_per_event"] = r["cpu_s"] * 1e9 / max(r["found"], 1)
                r.update(recorder=name, rate=rate, run=run)
                results.append(r)
                print("rate %-9s run %d %-9s generated %9d found %9d lost %8d cpu %6.3f s "
                      "rss %6.1f MiB out %7.1f MiB written %7.1f MiB stop %6.3f s%s"
                      % (rate or "max", run, name, r["generated"], r["found"], r["lost"],
                         r["cpu_s"], r["rss_mib"], r["out_mib"], r["written_mib"], r["stop_s"],
                         "" if r.get("symbol_reads") is None else
                         " symbol reads %d" % r["symbol_reads"]),
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


def report(args, results):
    rates = [int(r) for r in args.rates.split(",")]

    print("\nMedians over %d runs, %.1f s of load each, %d KiB ring buffer per CPU, %d CPUs "
          "generating%s%s, ftraced at zstd level %d%s.\n"
          "cpu_ns_per_event = recorder CPU nanoseconds per event found.\n"
          % (args.runs, args.seconds, args.buffer_kb, len(CPUS),
             ", SCHED_FIFO %d (-r)" % args.rt if args.rt else "",
             ", ftraced sub-buffers %d KiB" % args.subbuf_kb if args.subbuf_kb else "",
             args.level, ", one long-running ftraced (--warm)" if args.warm else ""))
    header = "| rate/s | recorder | " + " | ".join(METRICS) + " |"
    print(header)
    print("|" + "---|" * (len(METRICS) + 2))
    for rate in rates:
        med = {}
        for name in args.recorders:
            rows = [r for r in results if r["rate"] == rate and r["recorder"] == name]
            med[name] = {m: statistics.median(r[m] for r in rows) for m in METRICS}
            cells = []
            for m in METRICS:
                v = med[name][m]
                cells.append("%d" % v if m in ("generated", "found", "lost") else "%.3f" % v)
            print("| %s | %s | %s |" % (rate or "flat out", name, " | ".join(cells)))
        for a_name, b_name in (("ftraced", "trace-cmd"), ("ftraced", "physical"),
                               ("physical", "trace-cmd")):
            if a_name not in med or b_name not in med:
                continue
            ratio = []
            for m in METRICS:
                a, b = med[a_name][m], med[b_name][m]
                ratio.append("%.2f" % (a / b) if b and m not in ("generated", "found", "lost")
                             else "")
            print("| %s | %s/%s | %s |" % (rate or "flat out", a_name, b_name, " | ".join(ratio)))
    report_symbol_reads(results, rates)
    report_floor_instance(results, rates)


def report_floor_instance(results, rates):
    """What the floor's instance cost this harness, outside the floor's cpu_s."""
    lines = []
    for rate in rates:
        rows = [r for r in results if r["rate"] == rate and r["recorder"] == "physical"]
        if not rows:
            continue
        instance = statistics.median(r["instance_cpu_s"] for r in rows)
        floor = statistics.median(r["cpu_s"] for r in rows)
        ftraced = statistics.median(r["cpu_s"] for r in results
                                    if r["rate"] == rate and r["recorder"] == "ftraced")
        lines.append("- %s: %.1f ms; ftraced / (floor + its instance) %.2f" % (
            rate or "flat out", instance * 1000, ftraced / (floor + instance)))
    if lines:
        print("\nThe floor's instance, made, sized and removed by this harness (not in its "
              "cpu_s; ftraced's includes its own):")
        print("\n".join(lines))


def report_symbol_reads(results, rates):
    """With --warm: which ftraced runs read the kernel's symbols (about 50 ms of CPU
    each, bench/symbols.py), and the medians without them."""
    lines = []
    for rate in rates:
        rows = [r for r in results if r["rate"] == rate and r["recorder"] == "ftraced"]
        reading = [r for r in rows if r.get("symbol_reads")]
        if any(r.get("symbol_reads") is None for r in rows) or not reading:
            continue
        line = "- %s: %d of %d ftraced runs read the kernel's symbols" % (
            rate or "flat out", len(reading), len(rows))
        rest = [r for r in rows if not r["symbol_reads"]]
        if rest:
            cpu = statistics.median(r["cpu_s"] for r in rest)
            line += "; the others' median cpu_s %.3f" % cpu
            floor = [r["cpu_s"] for r in results if r["rate"] == rate and
                     r["recorder"] == "physical"]
            if floor:
                line += " (%.2f× the floor)" % (cpu / statistics.median(floor))
        lines.append(line)
    if lines:
        print("\nSymbol reads (the warm daemon's debug log; each costs about 50 ms of CPU):")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
