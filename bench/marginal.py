#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""CPU per event and CPU per session, told apart (target 2 at low rates).

compare.py's cpu_s is what a whole run costs: what a session costs once
(its instance made, sized and removed, the control requests, the file's
metadata written and fsynced) plus what its events cost. At 1-10 k markers/s
the floor spends 12-80 ms in a minute, so a session's ~10 ms fixed cost
decides the ratio to it, however little each event costs. This benchmark
records the same rate for two lengths (--short and --long seconds),
alternating, and fits a line through each recorder's runs, CPU seconds
against markers found:
  - the slope is what one more event costs, wake-ups and compression included
    (the "CPU per event" of target 2);
  - the intercept is what one session costs with no events at all.
The floor (bench/ftraced-physical) gets its instance from this script, whose
CPU for that compare.py measures; it is added to the floor's intercept.

ftraced is one warm daemon whose copy of the kernel's symbols is held fresh
for the whole benchmark by test hooks (a lifetime of an hour, no growth), so
no run reads /proc/kallsyms: what a read costs is bench/symbols.py's figure,
and how often a capturing session reads (at 50 s, 160 s, 390 s, then every
470 s while the symbols do not change) is in bench/README.md. The benchmark
fails if a run read them anyway or lost a marker.

Needs root, tracefs and a built tree (FTRACED_BUILD, default build/):
  sudo bench/marginal.py [--rates 1000,10000] [--short 10] [--long 40] [--rounds 3]
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

RECORDERS = {"ftraced": compare.run_ftraced, "physical": compare.run_physical}
SYMBOLS_HELD_MS = 3600 * 1000


def fit(runs):
    """Least squares of cpu_s on found: (seconds per event, seconds per session)."""
    slope, intercept = statistics.linear_regression([r["found"] for r in runs],
                                                    [r["cpu_s"] for r in runs])
    return slope, intercept


def record(args, tmp, name, rate, seconds):
    r = RECORDERS[name](tmp, rate, seconds, args.buffer_kb, level=args.level)
    lost = r["generated"] + r["refused"] - r["found"]
    reads = r.get("symbol_reads") or 0
    print("rate %-7d %-8s %4.0f s  found %8d  cpu %.4f s%s" %
          (rate, name, seconds, r["found"], r["cpu_s"],
           "  floor's instance %.4f s" % r["instance_cpu_s"] if "instance_cpu_s" in r else ""),
          flush=True)
    if lost or reads:
        sys.exit("%s at %d/s for %.0f s: %d markers lost, %d symbol reads" %
                 (name, rate, seconds, lost, reads))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="1000,10000",
                    help="total marker rates per second across CPUs")
    ap.add_argument("--short", type=float, default=10.0, help="load of the short runs, seconds")
    ap.add_argument("--long", type=float, default=40.0, help="load of the long runs, seconds")
    ap.add_argument("--rounds", type=int, default=3,
                    help="each round runs both recorders at both lengths, per rate")
    ap.add_argument("--level", type=int, default=1, help="zstd level (ftraced's default 1)")
    ap.add_argument("--buffer-kb", type=int, default=4096, help="ring buffer per CPU")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/marginal.py needs root")
    if not 0 < args.short < args.long:
        sys.exit("--short must be above 0 and below --long")
    for path in (compare.FTRACED, compare.FTRACECTL, compare.LOADGEN, compare.COUNTER,
                 compare.PHYSICAL):
        if not os.path.exists(path):
            sys.exit("missing %s: build first (meson setup build && ninja -C build)" % path)
    rates = [int(r) for r in args.rates.split(",")]
    if not all(r > 0 for r in rates):
        sys.exit("--rates: positive rates only (flat out has no fixed length of load)")

    runs = {(rate, name): [] for rate in rates for name in RECORDERS}
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-marginal-", dir="/var/tmp") as tmp:
        compare.WARM_LOG = os.path.join(tmp, "daemon.log")
        with open(compare.WARM_LOG, "w") as log:
            compare.WARM = compare.start_daemon(tmp, log=log, daemon_env={
                "FTRACED_TEST_HOOKS": "1",
                "FTRACED_TEST_SYMBOLS_LIFETIME_MS": str(SYMBOLS_HELD_MS),
                "FTRACED_TEST_SYMBOLS_GROWTH_MAX": "1"})
        daemon = compare.WARM[0]
        try:
            # The first capture reads the symbols; every later one finds them fresh.
            compare.run_ftraced(os.path.join(tmp, "warm"), 1000, 0.5, args.buffer_kb,
                                level=args.level)
            for k in range(args.rounds):
                for rate in rates:
                    lengths = (args.short, args.long) if k % 2 == 0 else (args.long, args.short)
                    for name in (RECORDERS if k % 2 == 0 else reversed(list(RECORDERS))):
                        for seconds in lengths:
                            run_dir = os.path.join(tmp, "%s-%d-%d-%.0f" % (name, rate, k, seconds))
                            runs[rate, name].append(record(args, run_dir, name, rate, seconds))
        finally:
            daemon.terminate()
            daemon.wait()

    print("\n%d rounds of %.0f s and %.0f s per rate, zstd level %d, %d KiB ring per CPU, "
          "one warm ftraced (no symbol reads).\nLeast squares of CPU seconds on markers found; "
          "the floor's session includes its instance.\n" %
          (args.rounds, args.short, args.long, args.level, args.buffer_kb))
    print("| rate | ftraced ns/event | floor ns/event | ratio | ftraced ms/session | "
          "floor ms/session |")
    print("|---|---|---|---|---|---|")
    for rate in rates:
        f_slope, f_session = fit(runs[rate, "ftraced"])
        p_slope, p_session = fit(runs[rate, "physical"])
        instance = statistics.median(r["instance_cpu_s"] for r in runs[rate, "physical"])
        print("| %d/s | %.0f | %.0f | %.2f | %.1f | %.1f |" %
              (rate, f_slope * 1e9, p_slope * 1e9, f_slope / p_slope, f_session * 1e3,
               (p_session + instance) * 1e3))


if __name__ == "__main__":
    main()
