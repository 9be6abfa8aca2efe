#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Stop -> file for continuous sessions: how long `ftracectl stop` takes to
return, which is when the last segment is complete, fsynced and renamed
into the session's directory, against how much that segment holds.

A continuous session of one large segment (--segment-size, or --segment-time
for a session that closes segments by time alone) records markers
on every CPU for a while, then is stopped. The builds given (--builds, each
a build directory) run alternately, so an A/B between two commits is one
command: build the other commit in a second directory and name both. The
state directory is in /var/tmp, the disk the segments would live on.

Per run it prints the stop time, the last segment's size, the daemon's CPU
time (user+sys, the whole run), and the markers found in all segments
against those written (bench/ftraced-count).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def use_build(build):
    """Points compare's helpers at the binaries of BUILD."""
    compare.FTRACED = os.path.join(build, "daemon", "ftraced")
    compare.FTRACECTL = os.path.join(build, "client", "ftracectl")


def run_one(tmp, rate, seconds, buffer_kb, limit):
    daemon, env = compare.start_daemon(tmp)
    ctl = compare.FTRACECTL
    try:
        subprocess.run([ctl, "create", "seg", "-e", "ftrace:print", "-b", str(buffer_kb),
                        *limit], env=env, check=True)
        subprocess.run([ctl, "start", "seg"], env=env, check=True)
        status = subprocess.run([ctl, "--json", "status", "seg"], env=env, check=True,
                                capture_output=True, text=True).stdout
        instance = compare.json.loads(status)["instance"]
        written, failed = compare.run_generators(instance, rate, seconds)
        t0 = time.monotonic()
        subprocess.run([ctl, "stop", "seg"], env=env, check=True)
        stop_s = time.monotonic() - t0
        subprocess.run([ctl, "destroy", "seg"], env=env, check=True)
    finally:
        daemon.terminate()
        _, _, usage = os.wait4(daemon.pid, 0)
        daemon.returncode = 0
    directory = os.path.join(tmp, "state", "sessions", "seg")
    files = sorted(os.path.join(directory, f) for f in os.listdir(directory)
                   if f.endswith(".dat"))
    found = sum(compare.count_markers(f)[0] for f in files)
    return dict(stop_s=stop_s, last_mib=os.path.getsize(files[-1]) / 2 ** 20,
                cpu_s=compare.rusage_seconds(usage),
                files=len(files), generated=written + failed, found=found)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builds", default=compare.BUILD,
                    help="comma-separated build directories, run alternately")
    ap.add_argument("--rate", type=int, default=0, help="total markers per second, 0 = flat out")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buffer-kb", type=int, default=4096)
    ap.add_argument("--segment-size", default="2G", help="large enough for one segment")
    ap.add_argument("--segment-time", help="instead of a size: long enough for one segment")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/segment-stop.py needs root")
    builds = args.builds.split(",")
    results = {b: [] for b in builds}
    for run in range(args.runs):
        for build in builds if run % 2 == 0 else reversed(builds):
            use_build(build)
            with tempfile.TemporaryDirectory(prefix="ftraced-bench-", dir="/var/tmp") as tmp:
                limit = (["--segment-time", args.segment_time] if args.segment_time else
                         ["--segment-size", args.segment_size])
                r = run_one(tmp, args.rate, args.seconds, args.buffer_kb, limit)
            results[build].append(r)
            print("run %d %-20s stop %.3f s, last segment %.1f MiB of %d file(s), cpu %.2f s "
                  "(%.0f ns/event), markers %d of %d"
                  % (run, build, r["stop_s"], r["last_mib"], r["files"], r["cpu_s"],
                     r["cpu_s"] * 1e9 / max(r["found"], 1), r["found"], r["generated"]),
                  flush=True)
    print("\n| build | stop -> file | last segment | daemon CPU per event |")
    print("|---|---|---|---|")
    for build in builds:
        rows = results[build]
        print("| %s | %.3f s | %.1f MiB | %.0f ns |" % (
            build, statistics.median(r["stop_s"] for r in rows),
            statistics.median(r["last_mib"] for r in rows),
            statistics.median(r["cpu_s"] * 1e9 / max(r["found"], 1) for r in rows)))
    print("(medians of %d runs)" % args.runs)


if __name__ == "__main__":
    main()
