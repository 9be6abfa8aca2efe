#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Sessions outlive the daemon and the daemon reloads: a session made with
`ftracectl create` comes back in the state it was in after a clean stop and
after a kill -9, with the time it did not capture reported in status and in
its next file; SIGHUP and `ftracectl reload` read sessions.d again (new,
changed and removed files) without touching a running session, and change
nothing when a file has an error; a terminal closing on a foreground
daemon loses nothing; `ftracectl save` prints a session file that makes the
same session. Markers are counted across every file."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, FTRACED, FTRACECTL, Daemon, count_markers, daemon,  # noqa: E402
                     our_instances, print_log_tail, run, start_markers, wait_until)


def session_files(d, name):
    directory = os.path.join(d.state, "sessions", name)
    return sorted(os.path.join(directory, f) for f in os.listdir(directory)
                  if f.endswith(".dat") and not f.startswith("."))


def assert_all_markers(files, tag, written):
    got = count_markers(files, tag=tag)["generators"]
    for cpu, n in written.items():
        g = got.get(str(cpu), {"distinct": 0, "duplicates": 0, "max": -1, "in_order": True})
        assert (g["distinct"], g["duplicates"], g["max"] + 1, g["in_order"]) == \
            (n, 0, n, True), "tag %s CPU %d: %s, written %d" % (tag, cpu, g, n)


def lost_per_cpu(files):
    """The loss the files' CPU statistics report, summed per CPU (ftracectl info)."""
    lost = {cpu: 0 for cpu in CPUS}
    for f in files:
        out = subprocess.run([FTRACECTL, "--json", "info", f], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        for c in json.loads(out.stdout)["cpus"]:
            lost[c["cpu"]] = lost.get(c["cpu"], 0) + c["lost_events"]
    return lost


def gap_lines(files):
    """The ftraced-gap lines in the files' CPU statistics, per file."""
    out = []
    for f in files:
        dump = subprocess.run(["trace-cmd", "dump", "--options", f], capture_output=True,
                              text=True).stdout
        out.append(sorted(set(re.findall(r"ftraced-gap: (.*)", dump))))
    return out


def test_created_sessions_outlive_restart_and_crash():
    first = Daemon()
    state = first.state
    daemons = [first]
    try:
        d = first.start()
        d.ctl("create", "bg", "-e", "ftrace:print", "--segment-time", "300ms")
        d.ctl("start", "bg")
        # One file an hour: the file open when the daemon is killed is recovered.
        d.ctl("create", "hourly", "-e", "sched:sched_switch", "--segment-time", "1h")
        d.ctl("start", "hourly")
        d.ctl("create", "idle", "-e", "sched")
        d.ctl("create", "gone", "-e", "sched")
        d.ctl("destroy", "gone")
        written_a = start_markers(d.ctl_json("status", "bg")["instance"], CPUS, 3000, 6000,
                                  tag="a")()
        d.stop()  # SIGTERM: a clean stop

        d = Daemon(state=state)
        daemons.append(d)
        d.start()
        st = d.wait_state("bg")
        assert "no capture from" in st["gap"] and "the daemon was stopped" in st["gap"], st
        d.wait_state("hourly")
        sessions = {s["name"]: s["state"] for s in d.ctl_json("list")}
        assert sessions == {"bg": "running", "hourly": "running", "idle": "created"}, sessions
        written_b = start_markers(st["instance"], CPUS, 3000, 6000, tag="b")()
        d.kill()  # a crash: the next start recovers the open segment, and restores bg

        d = Daemon(state=state)
        daemons.append(d)
        d.start()
        st = d.wait_state("bg")
        assert "the daemon crashed" in st["gap"], st
        written_c = start_markers(st["instance"], CPUS, 3000, 6000, tag="c")()
        d.ctl("stop", "bg")
        files = session_files(d, "bg")
        assert_all_markers(files, "a", written_a)
        assert_all_markers(files, "c", written_c)
        # Killed: all of b, but what the daemon had read and not stored (rare), which the
        # files count exactly, also when a closed segment was still being written.
        got = count_markers(files, tag="b")["generators"]
        lost = lost_per_cpu(files)
        for cpu, n in written_b.items():
            g = got.get(str(cpu), {"distinct": 0, "duplicates": 0, "in_order": True})
            assert g["duplicates"] == 0 and g["in_order"] and n - g["distinct"] == lost[cpu], \
                "tag b CPU %d: %s, written %d, the files say %d lost" % (cpu, g, n, lost[cpu])
        # Each restart said once, in the first file after it, on every CPU.
        gaps = [g for g in gap_lines(files) if g]
        assert len(gaps) == 2 and "was stopped" in gaps[0][0] and "crashed" in gaps[1][0], gaps
        # The file the kill interrupted was recovered and still says the gap before it.
        d.wait_state("hourly")
        d.ctl("stop", "hourly")
        hourly = session_files(d, "hourly")
        gaps = gap_lines(hourly)
        assert len(hourly) == 3 and gaps[0] == [] and "was stopped" in gaps[1][0] and \
            "crashed" in gaps[2][0], (hourly, gaps)
        d.ctl("destroy", "hourly")
        # A stopped session comes back not capturing (created, ready to start); destroyed
        # ones do not come back.
        d.stop()
        d = Daemon(state=state)
        daemons.append(d)
        d.start()
        wait_until("bg and idle created", lambda: {
            s["name"]: s["state"] for s in d.ctl_json("list")} == {"bg": "created",
                                                                  "idle": "created"})
        d.ctl("destroy", "bg")
        d.ctl("destroy", "idle")
        d.stop()
        d = Daemon(state=state)
        daemons.append(d)
        d.start()
        assert d.ctl_json("list") == []
        d.stop()
    except BaseException:
        for x in daemons:  # the crash, the recovery and the restart: each one's last words
            print_log_tail(x, 12)
        raise
    finally:
        for x in daemons:
            x.cleanup()


def test_save_prints_the_same_session():
    with daemon() as d:
        d.ctl("create", "keep", "-e", "sched:sched_switch", "-f", "prev_pid != 0", "-e",
              "irq", "-O", "record-tgid", "--segment-size", "64M", "--max-age", "2d",
              "--keep-free", "10%")
        text = d.ctl("save", "keep").stdout
        assert "event-filter = prev_pid != 0" in text and "max-age = 2d" in text, text
        d.ctl("destroy", "keep")
        conf = os.path.join(d.dir, "sessions.d")
        os.makedirs(conf)
        with open(os.path.join(conf, "keep.conf"), "w") as f:
            f.write(text)
        d.stop()
        d2 = Daemon(state=d.state)
        d2.extra_args = ["--group", "", "--sessions-dir", conf]
        try:
            d2.start()
            d2.wait_state("keep")
            assert d2.ctl("save", "keep").stdout.split("\n", 1)[1] == text.split("\n", 1)[1]
            r = d2.ctl("save", "nosuch", check=False)
            assert r.returncode == 1 and "no session 'nosuch'" in r.stderr
            d2.stop()
        finally:
            d2.cleanup()


def test_sighup_reloads_sessions_d():
    """A new file starts its session, a changed one restarts with its new settings, a
    removed one goes; a session the reload does not concern records every marker."""
    d = Daemon().with_session_files({
        "steady.conf": "events = ftrace:print\nsegment-time = 200ms\n",
        "changing.conf": "events = sched:sched_switch\n",
        "leaving.conf": "events = sched:sched_switch\n",
    })
    conf = os.path.join(d.dir, "sessions.d")
    try:
        d.start()
        steady = d.wait_state("steady")
        d.wait_state("changing")
        d.wait_state("leaving")
        finish = start_markers(steady["instance"], CPUS, 20000, 4000, tag="s")
        with open(os.path.join(conf, "added.conf"), "w") as f:
            f.write("events = sched:sched_switch\n")
        with open(os.path.join(conf, "changing.conf"), "w") as f:
            f.write("events = sched:sched_switch\nmode = continuous\nsegment-time = 1s\n")
        os.unlink(os.path.join(conf, "leaving.conf"))
        d.proc.send_signal(signal.SIGHUP)
        wait_until("the reload", lambda: sorted(s["name"] for s in d.ctl_json("list")) ==
                   ["added", "changing", "steady"])
        d.wait_state("added")
        wait_until("changing restarted with its new settings",
                   lambda: d.ctl_json("status", "changing").get("segment_time_ms") == 1000)
        written = finish()
        assert d.ctl_json("status", "steady")["instance"] == steady["instance"]
        d.ctl("stop", "steady")
        assert_all_markers(session_files(d, "steady"), "s", written)
        log = d.log()
        assert "changing.conf changed" in log and "leaving.conf is gone" in log, log
        assert d.proc.poll() is None
        d.stop()
    finally:
        d.cleanup()


def reload(d, expect):
    """`ftracectl reload`, which must exit @expect; its output."""
    r = d.ctl("reload", check=False)
    assert r.returncode == expect, "reload exited %d, not %d:\n%s%s\n%s" % (
        r.returncode, expect, r.stdout, r.stderr, d.log()[-3000:])
    return r


def test_reload_with_an_error_changes_nothing():
    """A typo in a running session's file: `ftracectl reload` fails naming the file, its
    line and the key, SIGHUP says the same in the log, and nothing changes (the session
    records on, every marker in its files; a new file beside the bad one does not start).
    A session file that parses but asks for an event this kernel lacks is refused too.
    The valid change that follows applies."""
    steady_text = "events = ftrace:print\nmode = continuous\nsegment-time = 300ms\n"
    d = Daemon().with_session_files({"steady.conf": steady_text})
    conf = os.path.join(d.dir, "sessions.d")
    path = os.path.join(conf, "steady.conf")
    try:
        d.start()
        steady = d.wait_state("steady")
        finish = start_markers(steady["instance"], CPUS, 20000, 4000, tag="k")
        with open(path, "a") as f:
            f.write("bogus-key = 1\n")
        with open(os.path.join(conf, "added.conf"), "w") as f:
            f.write("events = sched:sched_switch\n")
        r = reload(d, 1)
        assert "steady.conf:4" in r.stderr and "bogus-key" in r.stderr and \
            "nothing changed" in r.stderr, r.stderr
        d.proc.send_signal(signal.SIGHUP)
        wait_until("the SIGHUP's refusal in the log",
                   lambda: d.log().count("Reload refused, nothing changed: steady.conf:4") >= 2)
        with open(path, "w") as f:
            f.write(steady_text + "events = nosuchsystem:nosuchevent\n")
        r = reload(d, 1)
        assert "steady.conf" in r.stderr and "nosuchsystem:nosuchevent" in r.stderr, r.stderr
        written = finish()
        assert [s["name"] for s in d.ctl_json("list")] == ["steady"]
        st = d.ctl_json("status", "steady")
        assert (st["state"], st["instance"]) == ("running", steady["instance"]), st
        assert "steady.conf is gone" not in d.log() and "steady.conf changed" not in d.log()
        # Fixed, with a change: it applies, and the file added meanwhile starts.
        with open(path, "w") as f:
            f.write(steady_text.replace("300ms", "1s"))
        r = reload(d, 0)
        assert r.stdout.startswith("reloaded: ") and r.stdout.count("\n") == 1, r.stdout
        assert "1 started (added)" in r.stdout and "1 restarted (steady)" in r.stdout, r.stdout
        wait_until("steady restarted with its new settings",
                   lambda: d.ctl_json("status", "steady").get("segment_time_ms") == 1000)
        d.wait_state("added")
        d.ctl("stop", "steady")
        assert_all_markers(session_files(d, "steady"), "k", written)
        assert d.proc.poll() is None
        d.stop()
    finally:
        d.cleanup()


def test_reload_follows_a_renamed_file():
    """A file renamed with the session it names: the session runs on (same text) or
    starts again from the new file (changed); another file naming it is refused."""
    text = "name = web\nevents = sched:sched_switch\n"
    d = Daemon().with_session_files({"web.conf": text})
    conf = os.path.join(d.dir, "sessions.d")
    try:
        d.start()
        web = d.wait_state("web")
        os.rename(os.path.join(conf, "web.conf"), os.path.join(conf, "10-web.conf"))
        r = reload(d, 0)
        assert "0 started, 0 restarted, 0 stopped, 1 unchanged" in r.stdout, r.stdout
        assert d.ctl_json("status", "web")["instance"] == web["instance"]
        with open(os.path.join(conf, "20-web.conf"), "w") as f:
            f.write(text)
        r = reload(d, 1)
        assert "10-web.conf and 20-web.conf both name the session 'web'" in r.stderr, r.stderr
        os.unlink(os.path.join(conf, "10-web.conf"))
        with open(os.path.join(conf, "20-web.conf"), "w") as f:
            f.write(text + "segment-time = 1s\n")
        r = reload(d, 0)
        assert "1 restarted (web)" in r.stdout and "0 stopped" in r.stdout, r.stdout
        wait_until("web restarted from 20-web.conf",
                   lambda: d.ctl_json("status", "web").get("segment_time_ms") == 1000)
        d.wait_state("web")
        d.stop()
    finally:
        d.cleanup()


def test_reload_with_a_bad_ftraced_conf_keeps_the_settings():
    """ftraced.conf with an error: reload fails naming its line and key, the settings
    stay as they were (memory-limit still refuses a large ring); fixed, they apply."""
    d = Daemon()
    conf = os.path.join(d.dir, "daemon.conf")
    with open(conf, "w") as f:
        f.write("saved-cmdlines = 0\nmemory-limit = 1M\n")
    d.extra_args = ["--group", "", "--config", conf]
    big = ["create", "big", "--mode", "flight", "--flight-size", "1M", "-e", "sched:sched_switch",
           "-b", "1024"]
    try:
        d.start()
        r = d.ctl(*big, check=False)
        assert r.returncode == 1 and "memory-limit" in r.stderr, r.stderr
        with open(conf, "w") as f:
            f.write("saved-cmdlines = 0\nmemory-limit = 90%\nmemory-limitt = 2G\n")
        r = reload(d, 1)
        assert conf + ":3" in r.stderr and "memory-limitt" in r.stderr, r.stderr
        r = d.ctl(*big, check=False)
        assert r.returncode == 1 and "memory-limit" in r.stderr, r.stderr
        with open(conf, "w") as f:
            f.write("saved-cmdlines = 0\nmemory-limit = 90%\n")
        r = reload(d, 0)
        assert "ftraced.conf: memory-limit applied" in r.stdout, r.stdout
        d.ctl(*big)
        d.ctl("destroy", "big")
        d.stop()
    finally:
        d.cleanup()


def test_reload_is_root_only():
    """A member of the daemon's group may list sessions, not reload: as SIGHUP, root only."""
    import grp
    nogroup = grp.getgrnam("nogroup").gr_gid
    d = Daemon(extra_args=["--group", "nogroup"]).start()
    try:
        os.chmod(d.dir, 0o755)
        r = d.ctl("list", check=False, user=65534, gid=nogroup)
        assert r.returncode == 0, r.stderr
        r = d.ctl("reload", check=False, user=65534, gid=nogroup)
        assert r.returncode == 4 and "permission denied" in r.stderr and \
            "only root" in r.stderr, r.stderr
        assert "Reload" not in d.log()
        r = reload(d, 0)
        assert "ftraced.conf: unchanged" in r.stdout, r.stdout
        d.stop()
    finally:
        d.cleanup()


def daemon_pid(socket):
    """The ftraced process serving @socket: not the shell tmux runs it through, whose
    command line names the socket too."""
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        if argv[0] == FTRACED.encode() and socket.encode() in argv:
            return int(entry)
    raise AssertionError("no ftraced process for %s" % socket)


def test_terminal_closing_loses_nothing():
    """`ftraced &` in a terminal that closes: the daemon gets SIGHUP, keeps running (its
    log has nowhere to go), and a record started before finishes with every marker."""
    if not shutil.which("tmux"):
        print("SKIP: tmux is not installed")
        return
    d = Daemon()
    name = "ftraced-test-hup-%d" % os.getpid()
    try:
        d.instances_before = set(our_instances())
        conf = os.path.join(d.dir, "ftraced.conf")
        with open(conf, "w") as f:
            f.write("saved-cmdlines = 0\n")
        cmd = "%s --socket %s --state-dir %s --group '' --config %s" % (
            FTRACED, d.socket, d.state, conf)
        subprocess.run(["tmux", "new-session", "-d", "-s", name, cmd], check=True)
        wait_until("the daemon in the terminal", lambda: os.path.exists(d.socket) and
                   d.ctl("list", check=False).returncode == 0)
        pid = daemon_pid(d.socket)
        out = os.path.join(d.dir, "hup.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        finish = start_markers(session["instance"], CPUS, 4000, 4000, tag="h")
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        written = finish()
        assert os.path.exists("/proc/%d" % pid), "the daemon died with its terminal"
        d.ctl("stop", session["name"])
        stdout, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        assert_all_markers([out], "h", written)
        os.kill(pid, signal.SIGTERM)
        wait_until("the daemon's exit", lambda: not os.path.exists("/proc/%d" % pid))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
