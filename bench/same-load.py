#!/usr/bin/env python3
"""Output size side by side on the same events: `trace-cmd record --file-version 7
--compression zstd` and `ftracectl record` capture at the same time, each on its own
instance, while one generator per CPU writes every marker into both instances.

Why: in compare.py the two recorders take turns, so each file holds a workload of its
own, and how well marker pages compress moves by several percent from run to run (the
same build's output ratio at 1 M/s ranged 0.88-0.96). Here both files hold the same
markers with the same timing, so the ratio of their sizes is the recorders' own.

Per run: the size of each file, split into its flyrecord data (the BUFFER sections)
and everything else (headers, formats, symbols, strings, options), every marker
counted in both (bench/ftraced-count), and the ratios ftraced / trace-cmd. Also each
recorder's CPU on those same bytes: trace-cmd's process tree (wait4), and for ftraced
one daemon running for all runs (warmed by one short capture first, as compare.py
--warm) from the record request until it is idle again, plus ftracectl. The two
share the CPUs while they record, so both pay for the other's cache misses; the
ratio is comparable with compare.py's, the absolute times are not.
Needs root, tracefs, trace-cmd and a built tree (FTRACED_BUILD, default build/).
"""
import argparse
import json
import os
import signal
import statistics
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the same paths, daemon start-up and marker counting)

V7_SECTION_HEADER = struct.Struct("<HHIQ")  # id, flags, description, size
V7_SECTION_BUFFER = 3


def split_v7(path):
    """(data bytes, other bytes) of a little-endian trace-cmd v7 file."""
    with open(path, "rb") as f:
        blob = f.read()
    if not blob.startswith(b"\x17\x08\x44tracing7\0"):
        raise RuntimeError("%s is not a trace-cmd v7 file" % path)
    pos = blob.index(b"\0", blob.index(b"\0", 18) + 1) + 1  # after the compression name, version
    pos += 8  # the first options section's offset
    data = 0
    while pos + V7_SECTION_HEADER.size <= len(blob):
        sid, _, _, size = V7_SECTION_HEADER.unpack_from(blob, pos)
        if sid == V7_SECTION_BUFFER:
            data += V7_SECTION_HEADER.size + size
        pos += V7_SECTION_HEADER.size + size
    if pos != len(blob):
        raise RuntimeError("%s: the sections end at %d, the file at %d" % (path, pos, len(blob)))
    return data, len(blob) - data


def generate(first, second, rate_total, seconds):
    per_cpu = rate_total / len(compare.CPUS) if rate_total else 0
    count = int(per_cpu * seconds) if per_cpu else 10 ** 12
    procs = [subprocess.Popen([compare.LOADGEN, "--instance", first, "--also-instance", second,
                               "--cpu", str(cpu), "--count", str(count), "--rate", str(per_cpu),
                               "--seconds", str(seconds), "--tag", "b"],
                              stdout=subprocess.PIPE, text=True) for cpu in compare.CPUS]
    written = 0
    for p in procs:
        out, _ = p.communicate()
        written += int(dict(kv.split("=") for kv in out.split())["written"])
    return written


def one_run(daemon, env, rate, seconds, args):
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-", dir="/var/tmp") as tmp:
        tc = ft = None
        tc_instance = None
        try:
            tc, tc_instance, tc_out = compare.start_tracecmd(tmp, args.buffer_kb)
            compare.wait_tracecmd(tc_instance)
            daemon_before = compare.ftraced_cpu_s(daemon, env)
            ft_out = os.path.join(tmp, "ft.dat")
            ft, session = compare.start_record(env, ft_out, args.buffer_kb, args.level,
                                               subbuf_kb=args.subbuf_kb)
            written = generate(tc_instance, session["instance"], rate, seconds)
            for proc in (tc, ft):
                proc.send_signal(signal.SIGINT)
            tc_cpu, ft_cpu = compare.wait_exit(tc), compare.wait_exit(ft)
            if ft.returncode != 0:
                raise RuntimeError("ftracectl record failed: " + ft.stderr.read())
            compare.wait_session_gone(daemon, env)
            ft_cpu += compare.ftraced_cpu_s(daemon, env) - daemon_before
        finally:
            for proc in (tc, ft):
                if proc and proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if tc_instance:
                compare.remove_instance(tc_instance)
        row = dict(rate=rate, written=written)
        for name, path, cpu in (("trace-cmd", tc_out, tc_cpu), ("ftraced", ft_out, ft_cpu)):
            row[name] = dict(found=compare.count_markers(path)[0], cpu_s=cpu)
            row[name]["data"], row[name]["other"] = split_v7(path)
            row[name]["size"] = row[name]["data"] + row[name]["other"]
        return row


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="200000,1000000,0",
                    help="total marker rates per second across CPUs, 0 = flat out")
    ap.add_argument("--seconds", type=float, default=3.0, help="load per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buffer-kb", type=int, default=4096, help="ring buffer per CPU, both")
    ap.add_argument("--level", type=int, default=3,
                    help="ftraced's zstd level (default 3, what trace-cmd 3.1.6 always uses)")
    ap.add_argument("--subbuf-kb", type=int, default=0,
                    help="ftraced's sub-buffer size (trace-cmd 3.1.6 has no such option)")
    ap.add_argument("--json", help="also write all raw results here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/same-load.py needs root")
    for path in (compare.FTRACED, compare.FTRACECTL, compare.LOADGEN, compare.COUNTER):
        if not os.path.exists(path):
            sys.exit("missing %s: build first (meson setup build && ninja -C build)" % path)

    results = []
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-daemon-", dir="/var/tmp") as home:
        daemon, env = compare.start_daemon(home)
        try:
            one_run(daemon, env, 1000, 0.5, args)  # warms the daemon: its symbols are read
            for rate in [int(r) for r in args.rates.split(",")]:
                for run in range(args.runs):
                    row = one_run(daemon, env, rate, args.seconds, args)
                    results.append(row)
                    tc, ft = row["trace-cmd"], row["ftraced"]
                    print("rate %-8s run %d written %9d found %9d / %9d  size %9d / %9d "
                          "(%.3f)  data %.3f  other %.3f  cpu %.3f / %.3f s (%.2f)"
                          % (rate or "max", run, row["written"], ft["found"], tc["found"],
                             ft["size"], tc["size"], ft["size"] / tc["size"],
                             ft["data"] / tc["data"], ft["other"] / tc["other"],
                             ft["cpu_s"], tc["cpu_s"], ft["cpu_s"] / tc["cpu_s"]), flush=True)
        finally:
            daemon.terminate()
            daemon.wait()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)

    print("\nftraced / trace-cmd on the same markers, medians of the per-run ratios over %d "
          "runs of %.1f s, %d KiB ring per CPU, ftraced at zstd level %d (trace-cmd 3)%s.\n"
          % (args.runs, args.seconds, args.buffer_kb, args.level,
             ", ftraced sub-buffers %d KiB" % args.subbuf_kb if args.subbuf_kb else ""))
    print("| rate/s | events | ftraced bytes | trace-cmd bytes | output | data | other | CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for rate in [int(r) for r in args.rates.split(",")]:
        rows = [r for r in results if r["rate"] == rate]

        def med(f):
            return statistics.median(f(r) for r in rows)
        print("| %s | %d | %d | %d | %.3f | %.3f | %.3f | %.2f |"
              % (rate or "flat out", med(lambda r: r["ftraced"]["found"]),
                 med(lambda r: r["ftraced"]["size"]), med(lambda r: r["trace-cmd"]["size"]),
                 med(lambda r: r["ftraced"]["size"] / r["trace-cmd"]["size"]),
                 med(lambda r: r["ftraced"]["data"] / r["trace-cmd"]["data"]),
                 med(lambda r: r["ftraced"]["other"] / r["trace-cmd"]["other"]),
                 med(lambda r: r["ftraced"]["cpu_s"] / r["trace-cmd"]["cpu_s"])))


if __name__ == "__main__":
    main()
