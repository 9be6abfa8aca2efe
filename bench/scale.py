#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Several sessions on the same CPUs: does the cost per event grow?

One ftraced, N record sessions (`ftracectl record -e ftrace:print`), each
on its own instance, all capturing at once; the same total marker rate is
spread over the sessions' instances (one generator per CPU per session).
The daemon's capture workers are one per CPU whatever N is, so every
session's stream of a CPU is read by the same thread. For each N:

  found         distinct markers in all the files together
  lost          generated + refused - found
  cpu_s         daemon + ftracectl CPU seconds (wait4 rusage)
  ns_per_event  cpu_s per event found
  vs_1          ns_per_event relative to one session at the same rate

Needs root, tracefs and a built tree (FTRACED_BUILD, default build/):
  sudo bench/scale.py [--sessions 1,4] [--rates 200000,1000000] [--runs 3]
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import (CPUS, FTRACECTL, LOADGEN, count_markers, rusage_seconds,  # noqa: E402
                     start_daemon, wait_for)


def run(tmp, sessions, rate, seconds, buffer_kb):
    daemon, env = start_daemon(tmp)
    clients = []
    try:
        outs = [os.path.join(tmp, "s%d.dat" % i) for i in range(sessions)]
        for out in outs:
            clients.append(subprocess.Popen(
                [FTRACECTL, "--json", "record", "--quiet", "-e", "ftrace:print", "-b",
                 str(buffer_kb), "-o", out], env=env, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True))
        listing = []

        def all_running():
            listing[:] = json.loads(subprocess.run([FTRACECTL, "--json", "list"], env=env,
                                                   capture_output=True, text=True).stdout)
            return len(listing) == sessions and all(s["state"] == "running" for s in listing)
        wait_for(all_running, 20, "the sessions to start")
        per_gen = rate / len(CPUS) / sessions
        gens = [subprocess.Popen([LOADGEN, "--instance", s["instance"], "--cpu", str(cpu),
                                  "--count", str(int(per_gen * seconds)), "--rate",
                                  str(per_gen), "--seconds", str(seconds), "--tag", "b"],
                                 stdout=subprocess.PIPE, text=True)
                for s in listing for cpu in CPUS]
        written = refused = 0
        for g in gens:
            fields = dict(kv.split("=") for kv in g.communicate()[0].split())
            written += int(fields["written"])
            refused += int(fields["failed"])
        for s in listing:
            subprocess.run([FTRACECTL, "stop", s["name"]], env=env, check=True,
                           capture_output=True)
        cpu_s = 0.0
        for c in clients:
            _, status, ru = os.wait4(c.pid, 0)
            c.returncode = os.waitstatus_to_exitcode(status)
            if c.returncode != 0:
                raise RuntimeError("ftracectl record failed: " + c.stderr.read())
            cpu_s += rusage_seconds(ru)
        daemon.send_signal(signal.SIGTERM)
        _, status, ru = os.wait4(daemon.pid, 0)
        daemon.returncode = os.waitstatus_to_exitcode(status)
        cpu_s += rusage_seconds(ru)
    finally:
        for p in clients + [daemon]:
            if p.poll() is None:
                p.kill()
                p.wait()
    found = sum(count_markers(out)[0] for out in outs)
    return dict(sessions=sessions, rate=rate, generated=written, refused=refused, found=found,
                lost=written + refused - found, cpu_s=cpu_s,
                ns_per_event=cpu_s * 1e9 / max(found, 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", default="1,4", help="session counts to compare")
    ap.add_argument("--rates", default="200000,1000000", help="total markers per second")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buffer-kb", type=int, default=4096)
    ap.add_argument("--json", help="also write all raw results here")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/scale.py needs root")
    counts = [int(n) for n in args.sessions.split(",")]
    rates = [int(r) for r in args.rates.split(",")]
    results = []
    for rate in rates:
        for run_no in range(args.runs):
            order = counts if run_no % 2 == 0 else list(reversed(counts))
            for n in order:
                with tempfile.TemporaryDirectory(prefix="ftraced-scale-", dir="/var/tmp") as tmp:
                    r = run(tmp, n, rate, args.seconds, args.buffer_kb)
                results.append(r)
                print("rate %d run %d sessions %d: found %d lost %d cpu %.3f s %.1f ns/event"
                      % (rate, run_no, n, r["found"], r["lost"], r["cpu_s"], r["ns_per_event"]),
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print("\nMedians of %d runs of %.1f s, %d KiB ring per CPU per session, %d CPUs.\n"
          % (args.runs, args.seconds, args.buffer_kb, len(CPUS)))
    print("| rate/s | sessions | found | lost | cpu_s | ns_per_event | vs_1 |")
    print("|---|---|---|---|---|---|---|")
    for rate in rates:
        base = None
        for n in counts:
            rows = [r for r in results if r["rate"] == rate and r["sessions"] == n]
            med = {k: statistics.median(r[k] for r in rows)
                   for k in ("found", "lost", "cpu_s", "ns_per_event")}
            base = base or med["ns_per_event"]
            print("| %d | %d | %d | %d | %.3f | %.1f | %.2f |"
                  % (rate, n, med["found"], med["lost"], med["cpu_s"], med["ns_per_event"],
                     med["ns_per_event"] / base))


if __name__ == "__main__":
    main()
