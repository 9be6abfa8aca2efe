#!/usr/bin/env python3
"""File size side by side with `trace-cmd record --file-version 7`: the same events,
recorded at the same time for the same duration, each on an instance of its own.

What the sizes are made of, per file: the flyrecord data (BUFFER sections) and
everything else, split into the kallsyms section (the symbols every file repeats)
and the rest (headers, formats, printk formats, cmdlines, options). Small captures
(a few seconds of `-e sched -e irq` on a quiet machine) are mostly metadata; large
ones (the same with every syscall event under a syscall load) mostly data.

Captures, each run `--runs` times:
  small        -e sched -e irq, zstd (trace-cmd: --compression zstd)
  small-none   the same uncompressed (both without compression)
  large        -e sched -e irq -e syscalls while bench/ftraced-loadgen --syscall runs
               on every CPU, zstd
Prints one line per run and a table of medians, ftraced / trace-cmd.
Needs root, tracefs, trace-cmd and a built tree (FTRACED_BUILD, default build/).
"""
import argparse
import os
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the same paths and daemon start-up)

V7_SECTION_HEADER = struct.Struct("<HHIQ")  # id, flags, description, size
V7_SECTION_BUFFER = 3
V7_SECTION_KALLSYMS = 19

CAPTURES = {
    "small": (["-e", "sched", "-e", "irq"], True, False),
    "small-none": (["-e", "sched", "-e", "irq"], False, False),
    "large": (["-e", "sched", "-e", "irq", "-e", "syscalls"], True, True),
}


def split_v7(path):
    """{data, kallsyms, other} bytes of a little-endian trace-cmd v7 file."""
    with open(path, "rb") as f:
        blob = f.read()
    if not blob.startswith(b"\x17\x08\x44tracing7\0"):
        raise RuntimeError("%s is not a trace-cmd v7 file" % path)
    pos = blob.index(b"\0", blob.index(b"\0", 18) + 1) + 1  # after the compression name, version
    pos += 8  # the first options section's offset
    parts = dict(data=0, kallsyms=0, other=0)
    while pos + V7_SECTION_HEADER.size <= len(blob):
        sid, _, _, size = V7_SECTION_HEADER.unpack_from(blob, pos)
        key = {V7_SECTION_BUFFER: "data", V7_SECTION_KALLSYMS: "kallsyms"}.get(sid, "other")
        parts[key] += V7_SECTION_HEADER.size + size
        pos += V7_SECTION_HEADER.size + size
    if pos != len(blob):
        raise RuntimeError("%s: the sections end at %d, the file at %d" % (path, pos, len(blob)))
    parts["other"] += len(blob) - sum(parts.values())  # the header before the first section
    parts["size"] = len(blob)
    return parts


def start_tracecmd(tmp, events, zstd, buffer_kb):
    """trace-cmd record of EVENTS on an instance of its own (ftrace_enabled bound to a
    private file, as compare.py does); returns the process, the instance and the file."""
    instance = "ftraced-bench-size-%d" % os.getpid()
    out_dir = os.path.join(tmp, "tc")
    os.makedirs(out_dir)
    out = os.path.join(out_dir, "trace.dat")
    fake = os.path.join(tmp, "ftrace_enabled")
    with open(fake, "w") as f:
        f.write("1\n")
    script = ("mount --bind %s /proc/sys/kernel/ftrace_enabled && cd %s && exec trace-cmd "
              "record --file-version 7 %s-k -B %s %s -b %d -o %s"
              % (fake, out_dir, "--compression zstd " if zstd else "--compression none ", instance,
                 " ".join(events), buffer_kb, out))
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return proc, instance, out


def one_run(env, name, args):
    events, zstd, load = CAPTURES[name]
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-", dir="/var/tmp") as tmp:
        tc = ft = None
        tc_instance = None
        gens = []
        try:
            tc, tc_instance, tc_out = start_tracecmd(tmp, events, zstd, args.buffer_kb)
            compare.wait_tracecmd(tc_instance)
            ft_out = os.path.join(tmp, "ft.dat")
            ft = subprocess.Popen([compare.FTRACECTL, "record", "--quiet", "-b",
                                   str(args.buffer_kb), "-o", ft_out] + events +
                                  ([] if zstd else ["--compression", "none"]), env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            compare.wait_for(lambda: '"running"' in subprocess.run(
                [compare.FTRACECTL, "--json", "list"], env=env, capture_output=True,
                text=True).stdout, 20, "the session to start")
            if load:
                gens = [subprocess.Popen([compare.LOADGEN, "--syscall", "--cpu", str(cpu),
                                          "--count", str(10 ** 12), "--seconds",
                                          str(args.seconds)], stdout=subprocess.DEVNULL)
                        for cpu in compare.CPUS]
                for g in gens:
                    g.wait()
            else:
                time.sleep(args.seconds)  # the machine's own activity is the load
            for proc in (tc, ft):
                proc.send_signal(signal.SIGINT)
            compare.wait_exit(tc)
            compare.wait_exit(ft)
            if ft.returncode != 0:
                raise RuntimeError("ftracectl record failed: " + ft.stderr.read())
            if tc.returncode != 0:
                raise RuntimeError("trace-cmd record failed: " + tc.stderr.read().decode())
        finally:
            for proc in [tc, ft] + gens:
                if proc and proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if tc_instance:
                compare.remove_instance(tc_instance)
        return {"trace-cmd": split_v7(tc_out), "ftraced": split_v7(ft_out)}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captures", default=",".join(CAPTURES),
                    help="which of: " + ", ".join(CAPTURES))
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of each capture")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buffer-kb", type=int, default=4096, help="ring buffer per CPU, both")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/file-size.py needs root")
    for path in (compare.FTRACED, compare.FTRACECTL, compare.LOADGEN):
        if not os.path.exists(path):
            sys.exit("missing %s: build first (meson setup build && ninja -C build)" % path)

    results = {}
    with tempfile.TemporaryDirectory(prefix="ftraced-bench-daemon-", dir="/var/tmp") as home:
        daemon, env = compare.start_daemon(home)
        try:
            for name in args.captures.split(","):
                for run in range(args.runs):
                    row = one_run(env, name, args)
                    results.setdefault(name, []).append(row)
                    tc, ft = row["trace-cmd"], row["ftraced"]
                    print("%-10s run %d  size %9d / %9d (%.2f)  data %9d / %9d  kallsyms "
                          "%8d / %8d  other %8d / %8d"
                          % (name, run, ft["size"], tc["size"], ft["size"] / tc["size"],
                             ft["data"], tc["data"], ft["kallsyms"], tc["kallsyms"],
                             ft["other"], tc["other"]), flush=True)
        finally:
            daemon.terminate()
            daemon.wait()

    print("\nftraced / trace-cmd, same events at the same time, medians of %d runs of "
          "%.0f s, %d KiB ring per CPU.\n" % (args.runs, args.seconds, args.buffer_kb))
    print("| capture | ftraced bytes | trace-cmd bytes | ratio | data | kallsyms | other |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in results.items():
        def med(who, key):
            return statistics.median(r[who][key] for r in rows)
        print("| %s | %d | %d | %.2f | %d / %d | %d / %d | %d / %d |"
              % (name, med("ftraced", "size"), med("trace-cmd", "size"),
                 statistics.median(r["ftraced"]["size"] / r["trace-cmd"]["size"] for r in rows),
                 med("ftraced", "data"), med("trace-cmd", "data"),
                 med("ftraced", "kallsyms"), med("trace-cmd", "kallsyms"),
                 med("ftraced", "other"), med("trace-cmd", "other")))


if __name__ == "__main__":
    main()
