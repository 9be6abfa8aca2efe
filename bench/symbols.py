#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the kernel's symbols cost a warm daemon's capture.

Every file carries /proc/kallsyms, and the kernel takes tens of milliseconds
of CPU to generate it. ftraced keeps a copy for a minute after the symbols
changed (twice as long after each read that found them unchanged, up to 8
minutes) and, while a session captures, reads the text again ten seconds
before the copy expires (compared with the copy, compressed again only if it
changed), so a stop never waits for it. Whether a run pays for such a read
depends on how long ago the last one was: in compare.py --warm some runs do,
some do not. This benchmark makes it deterministic: one daemon (debug log
on, its copy's lifetime held at a minute by a test hook), and rounds of
  - an ftraced run right after the previous one (the copy is fresh),
  - an ftraced run after --pause seconds (the copy is then due for a refresh),
  - the floor (bench/ftraced-physical: splice and zstd, no metadata at all),
each run recording --rate markers per second for --seconds at zstd --level.
The daemon's log says how many symbol reads each run made. Also measured:
the CPU this process spends reading /proc/kallsyms once (the kernel's share).

Needs root, tracefs and a built tree (FTRACED_BUILD, default build/):
  sudo bench/symbols.py [--rate 200000] [--seconds 10] [--rounds 3] [--pause 52]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


def kallsyms_read_cpu_s():
    """CPU seconds one whole read of /proc/kallsyms costs (the kernel generates it)."""
    with open("/proc/kallsyms", "rb", buffering=0) as f:
        t = time.process_time()
        while f.read(1 << 20):
            pass
        return time.process_time() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=int, default=200000, help="markers per second, all CPUs")
    ap.add_argument("--seconds", type=float, default=10.0, help="load per run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pause", type=float, default=52.0,
                    help="seconds before the second ftraced run of a round (default 52: "
                         "past the 50 s at which a capture refreshes the 60 s copy)")
    ap.add_argument("--level", type=int, default=1, help="zstd level (ftraced's default 1)")
    ap.add_argument("--buffer-kb", type=int, default=4096, help="ring buffer per CPU")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/symbols.py needs root")
    for path in (compare.FTRACED, compare.FTRACECTL, compare.LOADGEN, compare.COUNTER,
                 compare.PHYSICAL):
        if not os.path.exists(path):
            sys.exit("missing %s: build first (meson setup build && ninja -C build)" % path)

    runs = {"ftraced, no symbol read": [], "ftraced, one symbol read": [], "physical": []}
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-symbols-", dir="/var/tmp") as tmp:
        compare.WARM_LOG = os.path.join(tmp, "daemon.log")
        with open(compare.WARM_LOG, "w") as log:
            compare.WARM = compare.start_daemon(tmp, log=log, daemon_env={
                "FTRACED_TEST_HOOKS": "1", "FTRACED_TEST_SYMBOLS_GROWTH_MAX": "1"})
        daemon = compare.WARM[0]
        try:
            compare.run_ftraced(os.path.join(tmp, "warm"), 1000, 0.5, args.buffer_kb,
                                level=args.level)
            for k in range(args.rounds):
                for pause in (0, args.pause):
                    time.sleep(pause)
                    r = compare.run_ftraced(os.path.join(tmp, "f%d-%d" % (k, pause)), args.rate,
                                            args.seconds, args.buffer_kb, level=args.level)
                    reads = r["symbol_reads"]
                    if reads > 1 or r["found"] != r["generated"]:
                        sys.exit("round %d: %d symbol reads, %d of %d markers found" %
                                 (k, reads, r["found"], r["generated"]))
                    runs["ftraced, %s symbol read" % ("one" if reads else "no")].append(r)
                    print("round %d pause %4.0f s  ftraced   cpu %.3f s  symbol reads %d" %
                          (k, pause, r["cpu_s"], reads), flush=True)
                    p = compare.run_physical(os.path.join(tmp, "p%d-%d" % (k, pause)),
                                             args.rate, args.seconds, args.buffer_kb,
                                             level=args.level)
                    runs["physical"].append(p)
                    print("round %d              physical  cpu %.3f s" % (k, p["cpu_s"]),
                          flush=True)
        finally:
            daemon.terminate()
            daemon.wait()
    one_read = statistics.median(kallsyms_read_cpu_s() for _ in range(5))

    print("\n%d rounds, %.0f markers/s for %.1f s, zstd level %d, %d KiB ring per CPU, "
          "one warm ftraced.\nOne read of /proc/kallsyms by this process: %.1f ms CPU.\n" %
          (args.rounds, args.rate, args.seconds, args.level, args.buffer_kb, one_read * 1000))
    print("| runs | n | cpu_s (median) | ns per event | vs physical |")
    print("|---|---|---|---|---|")
    floor = statistics.median(r["cpu_s"] for r in runs["physical"])
    for name, rs in runs.items():
        if not rs:
            continue
        cpu = statistics.median(r["cpu_s"] for r in rs)
        events = statistics.median(r["found"] for r in rs)
        print("| %s | %d | %.3f | %.1f | %.2f |" % (name, len(rs), cpu, cpu * 1e9 / events,
                                                   cpu / floor))


if __name__ == "__main__":
    main()
