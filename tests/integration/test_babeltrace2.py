#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The babeltrace2 plugin (source.ftraced.tracecmd) reads what ftraced and
trace-cmd record: `babeltrace2 FILE` prints every event trace-cmd report
shows, per event type, with the same field values at the same times; the
CTF trace babeltrace2 writes from it reads back with the same events,
without the plugin; losses come out as discarded events; and a file
recorded with -C mono merges in time order with a CTF trace.

BABELTRACE_PLUGIN_PATH names the build tree's plugin (meson sets it)."""

import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, FTRACECTL, TRACING, daemon, event_lines, markers, report,  # noqa: E402
                     run, wait_until)

PLUGIN_PATH = os.environ.get("BABELTRACE_PLUGIN_PATH", "")
# An ASan build's plugin: the sanitizer's runtime, loaded first into babeltrace2.
PRELOAD = os.environ.get("BABELTRACE_PRELOAD")
# "[1795721675.087872421] (+0.000001) host sched:sched_switch: { cpu_id = 0 }, { pid = .. }, { .. }"
BT_LINE = re.compile(r"^\[(\d+)\.(\d{9})\] \([^)]*\) \S+ (\w+):(\w+): \{ cpu_id = (\d+) \}, "
                     r"\{ pid = (-?\d+), comm = \"(.*?)\" \}(?:, \{ (.*) \})?$")
# trace-cmd report -t -R: "comm-pid [cpu] 1795721675.087872421: name: field=value ..."
TC_LINE = re.compile(r"\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\S+):\s+(.*)$")
DISCARDED = re.compile(r"WARNING: Tracer (?:may have )?discarded (?:(\d+) )?events between "
                       r".*within stream \"(?:.*/)?(cpu\d+)\"")


def bt_env(plugin=True):
    """The environment babeltrace2 runs in: with @plugin, it finds the build tree's."""
    env = dict(os.environ)
    env.pop("BABELTRACE_PLUGIN_PATH", None)
    if plugin:
        env["BABELTRACE_PLUGIN_PATH"] = PLUGIN_PATH
        if PRELOAD:
            env["LD_PRELOAD"] = PRELOAD
    return env


def babeltrace2(*args, plugin=True):
    """babeltrace2 ARGS; with @plugin False, without the build tree's plugin."""
    env = bt_env(plugin)
    r = subprocess.run(["babeltrace2"] + list(args), capture_output=True, text=True,
                       errors="replace", env=env, timeout=600)
    assert r.returncode == 0, "babeltrace2 %s failed (%d): %s" % (
        " ".join(args), r.returncode, r.stderr[-3000:])
    return r


def bt_events(path, plugin=True, *extra):
    """[(ns, cpu, event, {field: text})] of babeltrace2's text output, in its order
    (--clock-seconds: times as trace-cmd report -t shows them with a DATE)."""
    out = []
    for line in babeltrace2("--clock-seconds", *extra, path, plugin=plugin).stdout.splitlines():
        m = BT_LINE.match(line)
        assert m, "babeltrace2 printed: " + line
        # A string is quoted, its quotes and backslashes escaped, and may hold ", ".
        fields = dict(re.findall(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,{}]+)', m.group(8) or ""))
        # Strings as their text: a marker's trailing newline (shown "\n") is not part of it.
        fields = {k: re.sub(r"\\n$", "", v.strip().strip('"')) for k, v in fields.items()}
        out.append((int(m.group(1)) * 10**9 + int(m.group(2)), int(m.group(5)), m.group(4),
                    fields))
    return out


def tc_events(path):
    """[(ns, cpu, event, raw fields text)] of trace-cmd report -t -R."""
    out = []
    for line in report(path, "-t", "-R"):
        m = TC_LINE.search(line)
        if m:
            out.append((int(m.group(2)) * 10**9 + int(m.group(3)), int(m.group(1)),
                        m.group(4), m.group(5)))
    return out


def discarded(stderr):
    """{stream (cpuN): count, or None where babeltrace2 says "may have"}."""
    seen = {}
    for m in DISCARDED.finditer(stderr):
        n = int(m.group(1)) if m.group(1) else None
        seen[m.group(2)] = None if n is None or seen.get(m.group(2), 0) is None \
            else seen.get(m.group(2), 0) + n
    return seen


def assert_same_events(path, tmp):
    """babeltrace2 and trace-cmd report agree on @path: per event type, and on sampled
    fields at the same times; its CTF conversion reads back the same without the plugin."""
    theirs = tc_events(path)
    ours = bt_events(path)
    assert ours, "babeltrace2 printed no event of " + path
    tc_types = collections.Counter(name for _, _, name, _ in theirs)
    bt_types = collections.Counter(name for _, _, name, _ in ours)
    assert bt_types == tc_types, (bt_types, tc_types)
    # Fields at the same times, on the same CPUs: sched_switch's pids and comms, markers' text.
    tc_switch = sorted((ts, cpu, re.search(r"prev_pid=(-?\d+)", f).group(1),
                        re.search(r"next_comm=(.*?) next_pid=", f).group(1))
                       for ts, cpu, name, f in theirs if name == "sched_switch")
    bt_switch = sorted((ts, cpu, f["prev_pid"], f["next_comm"])
                       for ts, cpu, name, f in ours if name == "sched_switch")
    assert bt_switch == tc_switch, [x for x in zip(bt_switch, tc_switch) if x[0] != x[1]][:3]
    tc_print = sorted((ts, cpu, re.search(r"buf=(.*)$", f).group(1).rstrip())
                      for ts, cpu, name, f in theirs if name == "print")
    bt_print = sorted((ts, cpu, f["buf"].rstrip())
                      for ts, cpu, name, f in ours if name == "print")
    assert bt_print == tc_print, [x for x in zip(bt_print, tc_print) if x[0] != x[1]][:3]
    # CTF, read back by babeltrace2's own src.ctf.fs: the same events, fields and times.
    ctf = os.path.join(tmp, "ctf-" + os.path.basename(path))
    babeltrace2(path, "--output-format=ctf", "--output", ctf)
    back = bt_events(ctf, False)
    assert sorted(back, key=repr) == sorted(ours, key=repr), \
        "the CTF trace reads back differently: %d events, %d before" % (len(back), len(ours))
    return ours


def test_recorded_file_reads_as_trace_cmd_shows_it():
    with daemon() as d:
        out = os.path.join(d.dir, "trace.dat")
        rec = d.record_background("-e", "sched:sched_switch", "-e", "sched:sched_wakeup",
                                  "-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        instance = d.ctl_json("status", session["name"])["instance"]
        markers(instance, CPUS, 2000, tag="t")
        d.ctl("stop", session["name"])
        rec.communicate(timeout=60)
        ours = assert_same_events(out, d.dir)
        assert sum(1 for e in ours if e[2] == "print") >= 2000 * len(CPUS)
        # Typed fields: integers stay integers, comms strings, per the file's formats.
        switch = next(f for _, _, name, f in ours if name == "sched_switch")
        assert re.fullmatch(r"-?\d+", switch["prev_pid"]) and "prev_comm" in switch, switch
        # flt.utils.trimmer cuts a window (it seeks the source: from its beginning, reading on).
        times = sorted(ts for ts, _, _, _ in ours)
        begin, end = times[len(times) // 3], times[2 * len(times) // 3]
        window = bt_events(out, True, "--begin=%d.%09d" % divmod(begin, 10**9),
                           "--end=%d.%09d" % divmod(end, 10**9))
        assert len(window) == sum(1 for t in times if begin <= t <= end), (len(window), begin, end)


def support_weight(path, kind="file"):
    """What the plugin answers babeltrace2's support-info query for @path."""
    r = babeltrace2("query", "source.ftraced.tracecmd", "babeltrace.support-info", "-p",
                    'input="%s",type="%s"' % (path, kind))
    return float(r.stdout.strip())


def test_support_info_and_damaged_files():
    """A plain `babeltrace2 FILE` picks the plugin for a v7 file only; a damaged file is an
    error naming the problem, not a crash."""
    with daemon() as d:
        out = os.path.join(d.dir, "s.dat")
        d.ctl("record", "-e", "sched:sched_switch", "--duration", "1s", "-o", out)
        text = os.path.join(d.dir, "notes.txt")
        with open(text, "w") as f:
            f.write("not a trace\n")
        ctf = os.path.join(d.dir, "ctf-s.dat")
        bt_events(out)
        babeltrace2(out, "--output-format=ctf", "--output", ctf)
        assert support_weight(out) == 1.0
        assert support_weight(text) == 0.0
        assert support_weight(os.path.join(ctf, "s.dat", "metadata")) == 0.0
        assert support_weight(d.dir, "directory") == 0.0
        with open(out, "rb") as f:
            data = f.read()
        for name, damaged in (("truncated", data[:len(data) // 2]),
                              ("zeroed", data[:4096] + bytes(len(data) - 4096))):
            path = os.path.join(d.dir, name + ".dat")
            with open(path, "wb") as f:
                f.write(damaged)
            r = subprocess.run(["babeltrace2", path], capture_output=True, text=True,
                               errors="replace", env=bt_env())
            assert r.returncode == 1 and "source.ftraced.tracecmd" in r.stderr, (name, r)
            assert "trace-cmd v7 file" in r.stderr or "CPU" in r.stderr, r.stderr[-2000:]


def test_uncompressed_file():
    with daemon() as d:
        out = os.path.join(d.dir, "raw.dat")
        rec = d.record_background("-e", "ftrace:print", "-e", "sched:sched_switch",
                                  "--compression", "none", "-o", out)
        session = d.wait_running()
        instance = d.ctl_json("status", session["name"])["instance"]
        markers(instance, CPUS, 3000, tag="t")
        d.ctl("stop", session["name"])
        rec.communicate(timeout=60)
        assert "uncompressed" in d.ctl("info", out).stdout
        assert_same_events(out, d.dir)


def tracecmd_record(tmp, instance, args):
    """trace-cmd record into instance @instance (never the top level), -k, in a private
    mount namespace where ftrace_enabled reads 1 (as test_capture.py runs it)."""
    fake = os.path.join(tmp, "ftrace_enabled")
    with open(fake, "w") as f:
        f.write("1\n")
    script = ('mount --bind "$1" /proc/sys/kernel/ftrace_enabled && shift && '
              'exec trace-cmd record --file-version 7 -k -B "$@"')
    return subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                             "sh", fake, instance] + args, cwd=tmp,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_trace_cmd_files_zstd_and_uncompressed():
    if not shutil.which("unshare"):
        print("  (no unshare)")
        return
    with daemon() as d:
        for compression in ("zstd", "none"):
            instance = "ftraced-test-bt2-%d" % os.getpid()
            out = os.path.join(d.dir, "tc-%s.dat" % compression)
            # Markers need no event enabled: what is written to the instance's trace_marker.
            # A ring that holds all the markers (8 MiB per CPU): trace-cmd reads after them.
            tc = tracecmd_record(d.dir, instance, ["-e", "sched:sched_switch", "-b", "8192",
                                                   "--compression", compression, "-o", out])
            try:
                on = os.path.join(TRACING, "instances", instance, "tracing_on")
                wait_until("trace-cmd records", lambda: tc.poll() is not None or (
                    os.path.exists(on) and open(on).read().strip() == "1"))
                assert tc.poll() is None, tc.stderr.read()
                markers(instance, CPUS, 2000, tag="t")
                tc.send_signal(signal.SIGINT)
                _, err = tc.communicate(timeout=120)
                assert tc.returncode == 0, err
            finally:
                if tc.poll() is None:
                    tc.kill()
                    tc.wait()
                try:
                    os.rmdir(os.path.join(TRACING, "instances", instance))
                except OSError:
                    pass
            fmt = d.ctl("info", out).stdout
            assert ("uncompressed" in fmt) == (compression == "none"), fmt
            ours = assert_same_events(out, d.dir)
            assert sum(1 for e in ours if e[2] == "print") == 2000 * len(CPUS)


def test_flight_snapshot_losses_are_discarded_events():
    with daemon() as d:
        d.ctl("create", "kf", "--mode", "flight", "--flight-backend", "kernel",
              "-e", "ftrace:print", "-b", "512")
        d.ctl("start", "kf")
        instance = d.ctl_json("status", "kf")["instance"]
        markers(instance, CPUS, 200000, tag="t")
        out = os.path.join(d.dir, "kf.dat")
        d.ctl("snapshot", "kf", "-o", out)
        d.ctl("destroy", "kf")
        lost = {"cpu%d" % c["cpu"]: c["lost_events"] for c in d.ctl_json("info", out)["cpus"]}
        assert all(n > 0 for n in lost.values()), lost
        assert_same_events(out, d.dir)
        # Every CPU's losses, counted as ftracectl info counts them.
        assert discarded(babeltrace2(out).stderr) == lost, (babeltrace2(out).stderr, lost)
        # CTF keeps where they were (its packets carry the counts).
        ctf = os.path.join(d.dir, "ctf-kf.dat")
        back = discarded(babeltrace2(ctf, plugin=False).stderr)
        assert sorted(back) == sorted(lost), back


def test_mono_file_merges_with_a_ctf_trace_in_time_order():
    """Two sessions on -C mono, markers written to one and the other in turn; one file
    made a CTF trace (as LTTng's would be): babeltrace2 merges them in the order written."""
    with daemon() as d:
        recs, instances = [], []
        for name in ("a", "b"):
            recs.append(d.record_background("-C", "mono", "-e", "ftrace:print", "-o",
                                             os.path.join(d.dir, name + ".dat")))
            wait_until("session %s runs" % name, lambda: len(
                [s for s in d.ctl_json("list") if s["state"] == "running"]) == len(recs))
        sessions = sorted(s["name"] for s in d.ctl_json("list"))
        for s in sessions:
            instances.append(d.ctl_json("status", s)["instance"])
        n = 200
        for i in range(n):
            with open(os.path.join(TRACING, "instances", instances[i % 2], "trace_marker"),
                      "w") as f:
                f.write("merge-%d" % i)
            # Apart by more than the two files' wall-clock anchors may differ.
            time.sleep(0.002)
        for s in sessions:
            d.ctl("stop", s)
        for r in recs:
            r.communicate(timeout=60)
        files = {}
        for name in ("a", "b"):
            path = os.path.join(d.dir, name + ".dat")
            assert "mono" in d.ctl("info", path).stdout
            texts = [f["buf"] for _, _, e, f in bt_events(path) if e == "print"]
            files[name] = path
            assert len(texts) == n // 2, texts
        # Which file got the even markers is the sessions' order: b's becomes the CTF trace.
        ctf = os.path.join(d.dir, "lttng-like")
        babeltrace2(files["b"], "--output-format=ctf", "--output", ctf)
        merged = [f["buf"] for _, _, e, f in bt_events(files["a"], True, ctf) if e == "print"]
        assert merged == ["merge-%d" % i for i in range(n)], merged[:10]


if __name__ == "__main__":
    sys.exit(run())
