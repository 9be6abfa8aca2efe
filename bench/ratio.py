#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How far can the flight recorder's history be compressed? The ceiling for
raw trace held per MiB of RAM, whatever ftraced does around zstd.

Records the busy mix of bench/flight.py (sched_switch/wakeup, raw_syscalls,
irq, kmalloc/kfree while tar reads /usr) uncompressed with `ftracectl
record -C none`, takes every CPU's raw ring-buffer pages out of the file
(offsets from `trace-cmd dump --flyrecord`), and has `zstd -b` compress them
in independent blocks of each size (as the ring's chunks are: a snapshot
must be able to drop the oldest) at each level. Prints ratio and speed.

Needs root, tracefs, trace-cmd, zstd and a built tree (FTRACED_BUILD):
  sudo bench/ratio.py [--seconds 6] [--levels 1,3,6,9,12,19] [--blocks 128K,512K,2M]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import FTRACECTL, start_daemon  # noqa: E402
from flight import SYSTEM_EVENTS, busy_system  # noqa: E402


def record_busy(tmp, seconds):
    daemon, env = start_daemon(tmp)
    try:
        out = os.path.join(tmp, "busy.dat")
        args = [FTRACECTL, "record", "--quiet", "-C", "none", "-d", "%ds" % seconds, "-o", out]
        for e in SYSTEM_EVENTS:
            args += ["-e", e]
        rec = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
        busy_system(seconds)
        if rec.wait() != 0:
            raise RuntimeError("ftracectl record failed")
    finally:
        daemon.terminate()
        daemon.wait()
    return out


def raw_pages(path, dest):
    dump = subprocess.run(["trace-cmd", "dump", "--flyrecord", path], capture_output=True,
                          text=True, check=True).stdout
    regions = [(int(o), int(n)) for o, n in re.findall(r"^\s*\d+ (\d+)\s+(\d+)\s+\[id, data",
                                                        dump, re.M)]
    total = 0
    with open(path, "rb") as src, open(dest, "wb") as out:
        for offset, size in regions:
            src.seek(offset)
            out.write(src.read(size))
            total += size
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--levels", default="1,3,6,9,12,19")
    ap.add_argument("--blocks", default="128K,512K,2M")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/ratio.py needs root")
    with tempfile.TemporaryDirectory(prefix="ftraced-ratio-", dir="/var/tmp") as tmp:
        raw = os.path.join(tmp, "pages.raw")
        n = raw_pages(record_busy(tmp, args.seconds), raw)
        print("%.1f MiB of raw ring-buffer pages (busy mix, %d s)\n" % (n / 2 ** 20,
                                                                         args.seconds))
        print("| block | level | ratio (raw per MiB) | compression MB/s |")
        print("|---|---|---|---|")
        for block in args.blocks.split(","):
            for level in args.levels.split(","):
                r = subprocess.run(["zstd", "-b" + level, "-B" + block, "-i1", raw],
                                   capture_output=True, text=True)
                out = r.stdout + r.stderr
                m = re.findall(r"\(x?([\d.]+)\),\s+([\d.]+) MB/s", out.replace("\r", "\n"))
                if not m:
                    raise RuntimeError("zstd -b printed: " + out[-500:])
                ratio, speed = m[-1]
                print("| %s | %s | %s | %s |" % (block, level, ratio, speed), flush=True)


if __name__ == "__main__":
    main()
