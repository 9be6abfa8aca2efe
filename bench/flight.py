#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Flight recorder benchmark, side by side with the kernel-ring approach
(`trace-cmd extract` of an overwrite-mode instance of the same RAM):

  history   raw trace held per MiB of RAM: ftraced's memory backend
            (compressed ring, from `ftracectl status`) against a kernel
            ring, which holds 1 MiB per MiB; for numbered markers and for a
            busy system (sched, syscalls, irq, kmem while tar reads /usr)
  latency   command to closed file for a snapshot of a full 64 MiB history
            (ftracectl snapshot -o) against `trace-cmd extract` of a 64 MiB
            kernel ring (32 MiB per CPU on 2 CPUs)
  cpu       daemon CPU per million events: memory backend (drains and
            compresses all the time) against the kernel backend (idle until
            a snapshot), markers at a fixed rate

Needs root, tracefs, trace-cmd and a built tree (FTRACED_BUILD, default
build/). Prints a table and writes JSON with --json FILE.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("FTRACED_BUILD", os.path.join(ROOT, "build"))
FTRACED = os.path.join(BUILD, "daemon", "ftraced")
FTRACECTL = os.path.join(BUILD, "client", "ftracectl")
LOADGEN = os.path.join(BUILD, "bench", "ftraced-loadgen")
TRACING = "/sys/kernel/tracing"
CPUS = list(range(os.cpu_count()))
SYSTEM_EVENTS = ["sched:sched_switch", "sched:sched_wakeup", "raw_syscalls", "irq",
                 "kmem:kmalloc", "kmem:kfree"]
MIB = 1 << 20


class Daemon:
    def __init__(self, tmp):
        self.socket = os.path.join(tmp, "control")
        conf = os.path.join(tmp, "ftraced.conf")
        with open(conf, "w") as f:
            # The machine's saved_cmdlines_size is left alone, as in compare.py.
            f.write("saved-cmdlines = 0\n")
        self.proc = subprocess.Popen(
            [FTRACED, "--socket", self.socket, "--state-dir", os.path.join(tmp, "state"),
             "--sessions-dir", os.path.join(tmp, "none"), "--group", "", "--config", conf],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
        for _ in range(100):
            if os.path.exists(self.socket) and self.ctl("list", check=False).returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("ftraced did not start")

    def ctl(self, *args, check=True):
        r = subprocess.run([FTRACECTL, "--socket", self.socket] + list(args),
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError("ftracectl %s: %s" % (" ".join(args), r.stderr))
        return r

    def status(self, name):
        return json.loads(self.ctl("--json", "status", name).stdout)

    def cpu_seconds(self):
        """User + system time of the daemon, all threads."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def markers(instance, count, rate=0, tag="b"):
    procs = [subprocess.Popen([LOADGEN, "--instance", instance, "--cpu", str(cpu), "--count",
                               str(count), "--rate", str(rate), "--tag", tag],
                              stdout=subprocess.PIPE, text=True) for cpu in CPUS]
    written = 0
    for p in procs:
        out, _ = p.communicate()
        written += int(out.split("written=")[1].split()[0])
    return written


def busy_system(seconds):
    """Real activity: tar reads /usr into nothing, for a while."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        p = subprocess.Popen("tar cf - /usr 2>/dev/null | cat > /dev/null", shell=True,
                             start_new_session=True, stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def fill(d, name, workload, seconds_max):
    """Runs the workload until the history evicted something (it is full)."""
    instance = d.status(name)["instance"]
    end = time.monotonic() + seconds_max
    while time.monotonic() < end:
        if workload == "markers":
            markers(instance, 500000)
        else:
            busy_system(2)
        if d.status(name)["evicted_raw_bytes"] > 0:
            return d.status(name)
    raise RuntimeError("history of '%s' never filled" % name)


def bench_history(tmp, size_mib):
    rows = []
    d = Daemon(tmp)
    try:
        for workload, events in (("markers", ["ftrace:print"]), ("system", SYSTEM_EVENTS)):
            name = "h" + workload
            args = ["create", name, "--mode", "flight", "--flight-size", "%dM" % size_mib]
            for e in events:
                args += ["-e", e]
            d.ctl(*args)
            d.ctl("start", name)
            st = fill(d, name, workload, 120)
            rows.append({"workload": workload, "ram_mib": st["history_bytes"] / MIB,
                         "raw_mib": st["history_raw_bytes"] / MIB,
                         "history_s": st.get("history_ms", 0) / 1000,
                         "raw_per_ram": st["history_raw_bytes"] / st["history_bytes"]})
            d.ctl("destroy", name)
    finally:
        d.stop()
    return rows


def bench_latency(tmp, runs):
    """Full 64 MiB histories: ftraced snapshot against trace-cmd extract."""
    ours, theirs, sizes = [], [], {}
    d = Daemon(tmp)
    try:
        d.ctl("create", "lat", "--mode", "flight", "--flight-size", "64M",
              *sum((["-e", e] for e in SYSTEM_EVENTS), []))
        d.ctl("start", "lat")
        st = fill(d, "lat", "system", 300)
        sizes["ftraced_history_raw_mib"] = st["history_raw_bytes"] / MIB
        for i in range(runs):
            out = os.path.join(tmp, "snap%d.dat" % i)
            t0 = time.monotonic()
            d.ctl("snapshot", "lat", "-o", out)
            ours.append(time.monotonic() - t0)
            sizes["ftraced_file_mib"] = os.path.getsize(out) / MIB
            os.unlink(out)
        d.ctl("destroy", "lat")
    finally:
        d.stop()
    per_cpu_kb = 64 * 1024 // len(CPUS)
    for i in range(runs):
        inst = "ftraced-bench-extract"
        path = os.path.join(TRACING, "instances", inst)
        os.mkdir(path)
        try:
            with open(os.path.join(path, "buffer_size_kb"), "w") as f:
                f.write(str(per_cpu_kb))
            for e in SYSTEM_EVENTS:
                target = os.path.join(path, "events", *e.split(":"), "enable")
                with open(target, "w") as f:
                    f.write("1")
            busy_system(8)  # a 64 MiB raw ring fills in a few seconds of this
            out = os.path.join(tmp, "extract%d.dat" % i)
            t0 = time.monotonic()
            subprocess.run(["trace-cmd", "extract", "-B", inst, "-o", out],
                           capture_output=True, check=True)
            theirs.append(time.monotonic() - t0)
            sizes["tracecmd_file_mib"] = os.path.getsize(out) / MIB
            os.unlink(out)
        finally:
            if os.path.isdir(path):
                with open(os.path.join(path, "tracing_on"), "w") as f:
                    f.write("0")
                for e in SYSTEM_EVENTS:
                    with open(os.path.join(path, "events", *e.split(":"), "enable"), "w") as f:
                        f.write("0")
                os.rmdir(path)
    return {"ftraced_s": statistics.median(ours), "tracecmd_extract_s": statistics.median(theirs),
            "ftraced_runs": ours, "tracecmd_runs": theirs, **sizes}


def bench_cpu(tmp, rate, seconds):
    rows = {}
    for backend in ("memory", "kernel"):
        d = Daemon(tmp)
        try:
            d.ctl("create", "c", "--mode", "flight", "--flight-backend", backend, "-e",
                  "ftrace:print")
            d.ctl("start", "c")
            instance = d.status("c")["instance"]
            before = d.cpu_seconds()
            written = markers(instance, rate * seconds // len(CPUS), rate // len(CPUS))
            idle = d.cpu_seconds() - before
            t0 = time.monotonic()
            d.ctl("snapshot", "c", "-o", os.path.join(tmp, "cpu-%s.dat" % backend))
            snap_s = time.monotonic() - t0
            rows[backend] = {"events": written,
                             "cpu_s_per_m_events": idle / (written / 1e6),
                             "snapshot_s": snap_s,
                             "snapshot_cpu_s": d.cpu_seconds() - before - idle}
            d.ctl("destroy", "c")
        finally:
            d.stop()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--history-mib", type=int, default=16)
    ap.add_argument("--rate", type=int, default=1000000, help="markers/s for the cpu part")
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--parts", default="history,latency,cpu",
                    help="comma-separated parts to run (default: all three)")
    ap.add_argument("--json", help="write the results here too")
    a = ap.parse_args()
    parts = a.parts.split(",")
    if os.geteuid() != 0:
        sys.exit("needs root")
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-") as tmp:
        res = {}
        if "history" in parts:
            res["history"] = bench_history(tmp, a.history_mib)
        if "latency" in parts:
            res["latency"] = bench_latency(tmp, a.runs)
        if "cpu" in parts:
            res["cpu"] = bench_cpu(tmp, a.rate, a.seconds)
    if "history" in res:
        print_history(res["history"])
    if "latency" in res:
        print_latency(res["latency"], a.runs)
    if "cpu" in res:
        print_cpu(res["cpu"], a.rate)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)


def print_history(rows):
    print("History per MiB of RAM (kernel ring: 1.0 by construction)")
    print("  %-8s %9s %10s %9s %8s" % ("workload", "RAM MiB", "raw MiB", "span s", "raw/RAM"))
    for r in rows:
        print("  %-8s %9.1f %10.1f %9.2f %8.1f" % (r["workload"], r["ram_mib"], r["raw_mib"],
                                                  r["history_s"], r["raw_per_ram"]))


def print_latency(lat, runs):
    print("Snapshot of a full 64 MiB history, command to closed file (median of %d)" % runs)
    print("  ftraced snapshot: %.3f s (%.0f MiB raw history, file %.1f MiB)" % (
        lat["ftraced_s"], lat["ftraced_history_raw_mib"], lat["ftraced_file_mib"]))
    print("  trace-cmd extract of a 64 MiB kernel ring: %.3f s (file %.1f MiB); ratio %.2f" % (
        lat["tracecmd_extract_s"], lat["tracecmd_file_mib"],
        lat["ftraced_s"] / lat["tracecmd_extract_s"]))
    print("  ftraced runs: %s" % " ".join("%.3f" % t for t in lat["ftraced_runs"]))


def print_cpu(rows, rate):
    print("Daemon CPU per million events at %d events/s" % rate)
    for backend, r in rows.items():
        print("  %-7s %.3f s/M events while recording; snapshot %.3f s (%.3f s CPU)" % (
            backend, r["cpu_s_per_m_events"], r["snapshot_s"], r["snapshot_cpu_s"]))


if __name__ == "__main__":
    main()
