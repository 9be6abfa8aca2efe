#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The daemon's memory against the CPU count: Debian 12's 6.1 booted under
qemu (tests/vm/vm.py) with 2, 16 and 64 vCPUs, a record of markers written
on every CPU (or on the first, middle and last: --spread 3), the daemon's peak RSS (VmHWM) and threads while it runs, and
its RSS once the record is done. A least-squares line through the peaks
gives what each CPU costs. TCG is for correctness, not timing: these are
memory figures only.

    sudo bench/cpus-rss.py [--cpus 2,16,64] [--build build] [--events ftrace:print]
                           [--spread all|3]"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "vm"))
import vm  # noqa: E402

SCRIPT = r"""
set -e
pid=$(pidof ftraced)
echo "idle $(grep VmRSS /proc/$pid/status | awk '{print $2}')" > /tmp/rss
ftracectl record --quiet -e %(events)s -o /tmp/cpus.dat &
rec=$!
i=0
while ! ftracectl --json list | grep -q '"running"'; do
    i=$((i + 1)); [ $i -lt 600 ] || exit 1; sleep 0.1
done
inst=$(ftracectl --json list | sed -n 's/.*"instance": "\([^"]*\)".*/\1/p')
gens=""
for cpu in %(gen_cpus)s; do
    ftraced-loadgen --instance $inst --cpu $cpu --count 20000 --tag m > /dev/null &
    gens="$gens $!"
done
for p in $gens; do wait $p; done
echo "threads $(ls /proc/$pid/task | wc -l)" >> /tmp/rss
echo "peak $(grep VmHWM /proc/$pid/status | awk '{print $2}')" >> /tmp/rss
kill -TERM $rec
wait $rec
echo "after $(grep VmRSS /proc/$pid/status | awk '{print $2}')" >> /tmp/rss
emit rss /tmp/rss
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpus", default="2,16,64")
    ap.add_argument("--build", default="build")
    ap.add_argument("--events", default="ftrace:print")
    ap.add_argument("--spread", default="all", help="CPUs writing markers: all, or 3")
    args = ap.parse_args()
    reason = vm.skip_reason("6.1")
    if reason:
        sys.exit("cannot boot 6.1: " + reason)
    binaries = {os.path.join(args.build, "daemon/ftraced"): "/usr/bin/ftraced",
                os.path.join(args.build, "client/ftracectl"): "/usr/bin/ftracectl",
                os.path.join(args.build, "bench/ftraced-loadgen"): "/usr/bin/ftraced-loadgen"}
    rows = []
    print("| vCPUs | daemon threads | RSS idle | peak RSS while recording | RSS after |")
    print("|---|---|---|---|---|")
    for n in [int(c) for c in args.cpus.split(",")]:
        # One host thread for every vCPU (see tests/vm/test_vm.py's boot()).
        gen = range(n) if args.spread == "all" else sorted({0, n // 2, n - 1})
        r = vm.run(SCRIPT % {"gen_cpus": " ".join(map(str, gen)), "events": args.events},
                   binaries, smp=n,
                   memory_mb=2048, timeout=900, tcg_thread="single")
        text = r.files.get("rss", b"").decode()
        if r.exit != 0 or not text:
            sys.exit("the %d-vCPU guest failed:\n%s" % (n, r.console[-3000:]))
        v = {k: int(x) for k, x in re.findall(r"(\w+) (\d+)", text)}
        rows.append((n, v["peak"]))
        print("| %d | %d | %.1f MB | %.1f MB | %.1f MB |" % (
            n, v["threads"], v["idle"] / 1000, v["peak"] / 1000, v["after"] / 1000), flush=True)
    if len(rows) >= 2:
        xs, ys = [n for n, _ in rows], [p for _, p in rows]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / \
            sum((x - mx) ** 2 for x in xs)
        print("\neach CPU costs %.0f KB of peak RSS (least squares; %.1f MB at 0 CPUs)" % (
            slope, (my - slope * mx) / 1000))


if __name__ == "__main__":
    main()
