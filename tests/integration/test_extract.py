#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ftracectl extract: one file for a wall-clock window of a continuous
session's segments, offline. What it holds is checked against the segments
themselves, read by trace-cmd with their own wall-clock anchors: exactly the
events inside the window, none outside."""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, Daemon, FTRACECTL, TRACING, TimedMarkers, check_events,  # noqa: E402
                     count_markers, daemon, report, run, start_markers, wait_until)


def segments(d, name):
    directory = os.path.join(d.state, "sessions", name)
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if f.endswith(".dat") and not f.startswith(".")]


def utc(seconds_ns):
    """ns since the epoch as ftracectl's UTC form, to the microsecond."""
    s, ns = divmod(seconds_ns, 10**9)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + ".%06dZ" % (ns // 1000)


def timed_events(paths, *extra):
    """(wall-clock ns, CPU, text) of every event: trace-cmd adds each file's anchor
    (with --nodate: trace-clock ns)."""
    out = []
    for path in paths:
        for line in report(path, "-t", *extra):
            parts = line.split()
            if len(parts) < 5 or not parts[1].startswith("[") or not parts[2].endswith(":"):
                continue
            sec, frac = parts[2].rstrip(":").split(".")
            out.append((int(sec) * 10**9 + int(frac.ljust(9, "0")), int(parts[1][1:-1]),
                        line.split(":", 3)[-1].strip()))
    return out


def file_info(path):
    return json.loads(subprocess.run([FTRACECTL, "--json", "info", path], check=True,
                                     capture_output=True, text=True).stdout)


def extract(*args, check=True, env=None):
    r = subprocess.run([FTRACECTL] + list(args), capture_output=True, text=True,
                       env=env or os.environ)
    assert not check or r.returncode == 0, "extract failed (%d): %s" % (r.returncode, r.stderr)
    return r


def test_window_of_a_continuous_session():
    """Six segments and more of numbered markers, a text line at a known time: a
    2-second window around it holds exactly the markers the segments time inside
    it, from at least two segments, and trace-cmd and the counter read it."""
    with daemon() as d:
        d.ctl("create", "inc", "-e", "ftrace:print", "--segment-time", "300ms")
        d.ctl("start", "inc")
        instance = d.ctl_json("status", "inc")["instance"]
        finish = start_markers(instance, CPUS, 8000, 2000, tag="t")
        # The incident, once the session has rotated a few times, and markers go on after.
        wait_until("3 segments", lambda: len(segments(d, "inc")) >= 3)
        with open(os.path.join(TRACING, "instances", instance, "trace_marker"), "w") as f:
            f.write("INCIDENT-LINE")
        moment = time.time_ns()
        wait_until("6 segments", lambda: len(segments(d, "inc")) >= 6)
        finish()
        d.ctl("stop", "inc")
        files = segments(d, "inc")
        assert len(files) >= 6, files
        events = timed_events(files)
        incident = [t for t, _, text in events if "INCIDENT-LINE" in text]
        assert len(incident) == 1, "the line is not in the segments once"
        # A window of 2 s around the line, on the microsecond (what UTC times carry).
        since = (incident[0] - 10**9) // 1000 * 1000
        until = (incident[0] + 10**9) // 1000 * 1000
        out = os.path.join(d.dir, "window.dat")
        r = extract("--json", "extract", "--state-dir", d.state, "inc", "--since", utc(since),
                    "--until", utc(until), "-o", out)
        reply = json.loads(r.stdout)
        assert len(reply["files"]) >= 2 and reply["gaps"] == [], reply
        check_events(out)
        want = sorted((cpu, text) for t, cpu, text in events if since <= t <= until)
        got = sorted((cpu, text) for _, cpu, text in timed_events([out]))
        assert got == want, "window: %d events expected, %d extracted" % (len(want), len(got))
        assert reply["events"] == len(got) and any("INCIDENT-LINE" in t for _, t in got)
        # Every marker inside, each once, a contiguous run per generator.
        c = count_markers(out, "t")
        for g in c["generators"].values():
            assert g["duplicates"] == 0 and g["distinct"] == g["max"] - g["min"] + 1, c
        assert abs(moment - incident[0]) < 60 * 10**9  # the file's clock is the wall clock
        # Named as files, the same window gives the same events.
        out2 = os.path.join(d.dir, "window2.dat")
        extract("extract", *files, "--since", utc(since), "--until", utc(until), "-o", out2)
        assert sorted((cpu, text) for _, cpu, text in timed_events([out2])) == want
        # A window in trace-clock seconds, as report --nodate prints them.
        raw = timed_events(files, "--nodate")
        line = [t for t, _, text in raw if "INCIDENT-LINE" in text][0]
        lo, hi = (line - 5 * 10**8) // 1000 * 1000, (line + 5 * 10**8) // 1000 * 1000
        out3 = os.path.join(d.dir, "window3.dat")
        extract("extract", *files, "--since", "%d.%06d" % divmod(lo // 1000, 10**6),
                "--until", "%d.%06d" % divmod(hi // 1000, 10**6), "-o", out3)
        want3 = sorted((cpu, text) for t, cpu, text in raw if lo <= t <= hi)
        assert sorted((c, t) for _, c, t in timed_events([out3], "--nodate")) == want3
        assert 0 < len(want3) < len(want)
        # No window: every segment whole, each chunk copied as it was (not compressed
        # again): the same events, the same compressed bytes per CPU.
        out4 = os.path.join(d.dir, "all.dat")
        reply = json.loads(extract("--json", "extract", *files, "-o", out4).stdout)
        assert reply["events"] == len(events) and reply["chunks_copied"] > 0, reply
        per_cpu = {}  # each CPU's region: a u32 chunk count, then the chunks
        for f in files:
            for c in file_info(f)["cpus"]:
                per_cpu[c["cpu"]] = per_cpu.get(c["cpu"], 0) + c["bytes"] - 4
        whole = {c["cpu"]: c["bytes"] - 4 for c in file_info(out4)["cpus"]}
        assert whole == per_cpu, (whole, per_cpu)
        assert reply["chunks_copied"] == sum(c["chunks"] for c in file_info(out4)["cpus"])
        # It exists now: refused without --force, the file untouched.
        r = extract("extract", *files, "--since", utc(since), "-o", out2, check=False)
        assert r.returncode != 0 and "exists" in r.stderr, r.stderr
        # Bad input: a clear error, nothing written.
        r = extract("extract", "--state-dir", d.state, "inc", "--since", "yesterday", "-o",
                    os.path.join(d.dir, "x.dat"), check=False)
        assert r.returncode == 2 and "invalid --since 'yesterday'" in r.stderr, r.stderr
        r = extract("extract", "--state-dir", d.state, "nosuch", "-o",
                    os.path.join(d.dir, "x.dat"), check=False)
        assert r.returncode == 1 and "session 'nosuch' has no files" in r.stderr, r.stderr
        r = extract("extract", files[0], "--since", "2001-01-01T00:00:00Z", "--until",
                    "2001-01-01T00:00:01Z", "-o", os.path.join(d.dir, "x.dat"), check=False)
        assert r.returncode == 1 and "no event in the window" in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(d.dir, "x.dat"))
        # Another session's file numbers other events: refused, naming it.
        d.ctl("create", "other", "-e", "sched:sched_switch")
        d.ctl("start", "other")
        d.ctl("stop", "other")
        other = segments(d, "other")
        r = extract("extract", files[0], other[0], "-o", os.path.join(d.dir, "x.dat"),
                    check=False)
        assert r.returncode == 1 and other[0] in r.stderr and \
            "event formats differ from the first file's" in r.stderr, r.stderr
        assert not os.path.exists(os.path.join(d.dir, "x.dat"))
        d.ctl("destroy", "other")
        d.ctl("destroy", "inc")


def moved_anchor(src, dst, seconds):
    """A copy of the uncompressed file @src whose wall-clock anchor (the DATE option,
    "0x" and the µs from trace time 0 to the epoch's, in hex) is @seconds later, as if
    another boot had recorded it."""
    data = open(src, "rb").read()
    found = re.findall(rb"\x000x([0-9a-f]{12,14})\x00", data)
    assert len(found) == 1, found
    old = found[0]
    new = b"%x" % (int(old, 16) + seconds * 10**6)
    assert len(new) == len(old)
    open(dst, "wb").write(data.replace(b"\x000x" + old + b"\x00", b"\x000x" + new + b"\x00"))


def test_files_of_a_later_boot_move_onto_the_first_ones_clock():
    """A file whose trace clock started an hour after the first file's (another boot)
    joins the output with its times moved an hour on; given before the earlier one,
    it is refused, as the CPUs' times would go back."""
    with daemon() as d:
        d.ctl("create", "bt", "-e", "ftrace:print", "--compression", "none")
        d.ctl("start", "bt")
        instance = d.ctl_json("status", "bt")["instance"]
        start_markers(instance, CPUS, 500, 0, tag="t")()
        d.ctl("stop", "bt")
        (first,) = segments(d, "bt")
        later = os.path.join(d.dir, "later.dat")
        moved_anchor(first, later, 3600)
        out = os.path.join(d.dir, "both.dat")
        reply = json.loads(extract("--json", "extract", first, later, "-o", out).stdout)
        times = timed_events([out])
        own = timed_events([first])
        assert reply["events"] == 2 * len(own) == len(times), (reply, len(own))
        shifted = sorted(t for t, _, _ in times)[len(own):]
        assert [t - 3600 * 10**9 for t in shifted] == sorted(t for t, _, _ in own)
        r = extract("extract", later, first, "-o", os.path.join(d.dir, "x.dat"), check=False)
        assert r.returncode == 1 and "give the files in time order" in r.stderr, r.stderr
        d.ctl("destroy", "bt")


def test_window_across_a_restart_reports_the_gap():
    """The daemon stopped and started again while the session was on: extract over
    the whole time says the gap, in its output and in the file's CPU statistics."""
    first = Daemon()
    second = None
    try:
        first.start()
        first.ctl("create", "gp", "-e", "ftrace:print", "--segment-time", "300ms")
        first.ctl("start", "gp")
        written_a = start_markers(first.ctl_json("status", "gp")["instance"], CPUS, 2000,
                                  4000, tag="a")()
        first.stop()
        second = Daemon(state=first.state)
        second.start()
        st = second.wait_state("gp")
        written_b = start_markers(st["instance"], CPUS, 2000, 4000, tag="b")()
        second.ctl("stop", "gp")
        out = os.path.join(second.dir, "all.dat")
        r = extract("extract", "--state-dir", second.state, "gp", "-o", out)
        assert "gap: " in r.stdout and "the daemon was stopped" in r.stdout, r.stdout
        dump = subprocess.run(["trace-cmd", "dump", "--options", out], capture_output=True,
                              text=True).stdout
        assert "ftraced-gap: " in dump, dump[-2000:]
        for tag, written in (("a", written_a), ("b", written_b)):
            gens = count_markers(out, tag)["generators"]
            for cpu, n in written.items():
                assert gens[str(cpu)]["distinct"] == n, (tag, gens)
        second.ctl("destroy", "gp")
        second.stop()
    finally:
        if second:
            second.cleanup()
        first.cleanup()


def daemon_env(d):
    """The environment of a user of D's daemon: its socket, no state directory given."""
    env = d.env()
    env.pop("FTRACED_STATE_DIR", None)
    return env


def test_live_extract_of_a_running_session():
    """extract of a running session (64 MiB segments: the open one would not close for
    minutes) holds its events up to at most 1 s before the request: the timed markers
    0..N, each once, the last written less than a second before, and every CPU's markers
    up to the cut. The session runs on; a second extract reaches later still, from both
    rotated segments, and after the stop every marker is in the segments once."""
    with daemon() as d:
        d.ctl("create", "live", "-e", "ftrace:print", "--segment-size", "64M")
        d.ctl("start", "live")
        instance = d.ctl_json("status", "live")["instance"]
        with TimedMarkers(instance) as tm:
            finish = start_markers(instance, CPUS, 6000, 2000, tag="t")
            wait_until("50 timed markers", lambda: len(tm.times) >= 50)
            out = os.path.join(d.dir, "live.dat")
            asked = tm.request_time()
            reply = json.loads(extract("--json", "extract", "live", "-o", out,
                                       env=daemon_env(d)).stdout)
            assert reply["files"] == segments(d, "live"), (reply["files"], segments(d, "live"))
            check_events(out)
            n = tm.assert_window(out, asked)
            for cpu, g in count_markers(out, "t")["generators"].items():
                assert (g["min"], g["duplicates"], g["distinct"]) == (0, 0, g["max"] + 1), \
                    (cpu, g)
            assert d.ctl_json("status", "live")["state"] == "running"
            wait_until("50 more timed markers", lambda: len(tm.times) >= n + 50)
            out2 = os.path.join(d.dir, "live2.dat")
            asked = tm.request_time()
            reply = json.loads(extract("--json", "extract", "live", "-o", out2,
                                       env=daemon_env(d)).stdout)
            assert len(reply["files"]) == 2, reply
            assert tm.assert_window(out2, asked) > n
            written = finish()
        d.ctl("stop", "live")
        c = count_markers(segments(d, "live"), "t")
        for cpu, n in written.items():
            g = c["generators"][str(cpu)]
            assert (g["distinct"], g["duplicates"]) == (n, 0), (cpu, g)
        assert tm.seen(segments(d, "live")) == list(range(len(tm.times)))
        d.ctl("destroy", "live")


def test_extract_finds_the_daemons_files():
    """extract SESSION asks the daemon where the session's files are: a daemon with a
    private --state-dir (every test daemon has one) is found through its socket, for a
    stopped continuous session and a flight recorder's snapshots. A session the daemon
    does not know, or no daemon, is read offline: in the state directory given, else the
    default one, which the error names."""
    with daemon() as d:
        env = daemon_env(d)
        d.ctl("create", "bg", "-e", "ftrace:print")
        d.ctl("start", "bg")
        written_bg = start_markers(d.ctl_json("status", "bg")["instance"], CPUS, 500)()
        d.ctl("stop", "bg")
        out = os.path.join(d.dir, "bg.dat")
        reply = json.loads(extract("--json", "extract", "bg", "-o", out, env=env).stdout)
        assert reply["files"] == segments(d, "bg"), reply
        gens = count_markers(out, "t")["generators"]
        assert {int(c): g["distinct"] for c, g in gens.items()} == written_bg, gens
        d.ctl("create", "fl", "--mode", "flight", "--flight-size", "4M", "-e", "ftrace:print")
        d.ctl("start", "fl")
        written = start_markers(d.ctl_json("status", "fl")["instance"], CPUS, 500)()
        snap = d.ctl("snapshot", "fl").stdout.strip()
        out = os.path.join(d.dir, "fl.dat")
        reply = json.loads(extract("--json", "extract", "fl", "-o", out, env=env).stdout)
        assert reply["files"] == [snap], (reply, snap)
        gens = count_markers(out, "t")["generators"]
        assert {int(c): g["distinct"] for c, g in gens.items()} == written, gens
        # Destroyed, the daemon no longer knows it: its files are read offline.
        d.ctl("destroy", "bg")
        r = extract("extract", "bg", "-o", os.path.join(d.dir, "x.dat"), env=env, check=False)
        assert r.returncode == 1 and "no files in /var/lib/ftraced/sessions/bg" in r.stderr, \
            r.stderr
        out = os.path.join(d.dir, "offline.dat")
        extract("extract", "--state-dir", d.state, "bg", "-o", out, env=env)
        gens = count_markers(out, "t")["generators"]
        assert {int(c): g["distinct"] for c, g in gens.items()} == written_bg, gens
        # No daemon on the socket: offline too, and quietly so.
        r = extract("extract", "bg", "-o", os.path.join(d.dir, "x.dat"), check=False,
                    env=dict(env, FTRACED_SOCKET=os.path.join(d.dir, "none")))
        assert r.returncode == 1 and r.stderr.startswith(
            "ftracectl extract: session 'bg' has no files in /var/lib/ftraced/sessions/bg") \
            and r.stderr.count("\n") == 1, r.stderr
        d.ctl("destroy", "fl")


if __name__ == "__main__":
    sys.exit(run())
