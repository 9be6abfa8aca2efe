#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How far can ring-buffer pages be compressed, and at what speed? The ceiling
for raw trace held per MiB of RAM (the flight recorder), and the effect of
zstd's window and tables on the files' chunks, whatever ftraced does around
zstd.

Records a workload uncompressed with `ftracectl record --compression none`: the busy
mix of bench/flight.py (sched_switch/wakeup, raw_syscalls, irq,
kmalloc/kfree while tar reads /usr), or numbered markers at --rate as in
compare.py. Takes every CPU's raw ring-buffer pages out of the file
(offsets from `trace-cmd dump --flyrecord`), and has `zstd -b` compress them
in independent blocks of each size (as chunks are: each one its own frame)
at each level, with each set of advanced parameters (`--zstd=` strings;
"" is zstd's own choice for the block). Prints size, ratio and speed.

Needs root, tracefs, trace-cmd, zstd and a built tree (FTRACED_BUILD):
  sudo bench/ratio.py [--workload busy|markers] [--rate 1000000] [--seconds 6]
                      [--levels 1,3,6,9,12,19] [--blocks 128K,512K,2M]
                      [--params ';wlog=19,hlog=15,clog=14,slog=2,mml=4,strat=2']
The parameters ftraced's chunks use at level L are zstd's for a 16 KiB
input (lib/compress.c: compressor_for_chunks()) with wlog=19.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import FTRACECTL, run_generators, start_daemon, start_record  # noqa: E402
from flight import SYSTEM_EVENTS, busy_system  # noqa: E402


def record_busy(tmp, seconds):
    daemon, env = start_daemon(tmp)
    try:
        out = os.path.join(tmp, "busy.dat")
        args = [FTRACECTL, "record", "--quiet", "--compression", "none", "--duration", "%ds" % seconds, "-o", out]
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


def record_markers(tmp, seconds, rate):
    daemon, env = start_daemon(tmp)
    try:
        out = os.path.join(tmp, "markers.dat")
        client, session = start_record(env, out, 4096, None)
        run_generators(session["instance"], rate, seconds)
        subprocess.run([FTRACECTL, "stop", session["name"]], env=env, check=True)
        _, err = client.communicate(timeout=120)
        if client.returncode != 0:
            raise RuntimeError("ftracectl record failed: " + err)
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
    ap.add_argument("--workload", choices=("busy", "markers"), default="busy")
    ap.add_argument("--rate", type=int, default=1000000, help="markers per second, all CPUs")
    ap.add_argument("--levels", default="1,3,6,9,12,19")
    ap.add_argument("--blocks", default="128K,512K,2M")
    ap.add_argument("--params", default="", help="';'-separated zstd --zstd= strings")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/ratio.py needs root")
    with tempfile.TemporaryDirectory(prefix="ftraced-ratio-", dir="/var/tmp") as tmp:
        raw = os.path.join(tmp, "pages.raw")
        recorded = record_busy(tmp, args.seconds) if args.workload == "busy" else \
            record_markers(tmp, args.seconds, args.rate)
        n = raw_pages(recorded, raw)
        print("%.1f MiB of raw ring-buffer pages (%s, %d s)\n" % (n / 2 ** 20, args.workload,
                                                                   args.seconds))
        print("| block | level | parameters | bytes | ratio (raw per MiB) | compression MB/s |")
        print("|---|---|---|---|---|---|")
        for block in args.blocks.split(","):
            for level in args.levels.split(","):
                for params in args.params.split(";"):
                    cmd = ["zstd", "-b" + level, "-B" + block, "-i1"] + \
                        (["--zstd=" + params] if params else []) + [raw]
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    out = r.stdout + r.stderr
                    m = re.findall(r"-> +(\d+) \(x?([\d.]+)\),\s+([\d.]+) MB/s",
                                   out.replace("\r", "\n"))
                    if not m:
                        raise RuntimeError("zstd -b printed: " + out[-500:])
                    size, ratio, speed = m[-1]
                    print("| %s | %s | %s | %s | %s | %s |" % (block, level, params or "zstd's",
                                                            size, ratio, speed), flush=True)


if __name__ == "__main__":
    main()
