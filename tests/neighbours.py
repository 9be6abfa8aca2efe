#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Neighbours for a test run: the suites share tracefs with other tracers on a
real machine, so scripts/test.sh runs them beside two that must come through
untouched.

- a foreign ftraced, built from this tree, with its own --state-dir and
  --socket, running a continuous session;
- `trace-cmd record -B INSTANCE` recording into an instance of its own
  (nothing before -B, so trace-cmd leaves the top-level buffer alone).

  neighbours.py start DIR FTRACED FTRACECTL   start both, note where they stand
  neighbours.py check DIR                     are both untouched and still recording?
                                              then stop them; exit 0 if so, 1 if not
  neighbours.py stop DIR                      stop whatever still runs (idempotent)

"Untouched and still recording": each instance exists, its tracing_on is 1,
its set_event is what it was, and its event count grew (exec events made
here, counted in the instance's per-CPU stats); the foreign daemon answers
`ftracectl list` with its session running; once stopped, each one's files
hold events as trace-cmd report reads them. Everything lives in DIR.

trace-cmd 3.1.6 exits when it may not write /proc/sys/kernel/ftrace_enabled
(refused on some hosts, this one included), and sets kptr_restrict while it
reads the symbols at its end: it runs in a mount namespace of its own where
both are private copies, so it changes no global setting either. Its reset
of the instance at the end dies where set_ftrace_pid may not be read (as
here), so it keeps the instance (-k), and stop removes it.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

TRACING = "/sys/kernel/tracing"
SESSION = "neighbour"
EVENTS = ("sched:sched_process_exec", "sched:sched_process_fork")
WAIT_SECONDS = 60
EXECS = 50  # exec events made to see counts grow, far above any instance's noise floor


def instance_path(name, *parts):
    return os.path.join(TRACING, "instances", name, *parts)


def read(path):
    with open(path) as f:
        return f.read()


def event_count(instance):
    """Events the kernel wrote into @instance: in its ring, read from it, or overwritten."""
    total = 0
    per_cpu = instance_path(instance, "per_cpu")
    for cpu in os.listdir(per_cpu):
        for line in read(os.path.join(per_cpu, cpu, "stats")).splitlines():
            key, _, value = line.partition(":")
            if key in ("entries", "overrun", "read events", "dropped events"):
                total += int(value)
    return total


def make_events():
    for _ in range(EXECS):
        subprocess.run(["/bin/true"], check=True)


def wait_for(what, cond):
    deadline = time.monotonic() + WAIT_SECONDS
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting: " + what)
        time.sleep(0.1)


def ctl(state, *args):
    r = subprocess.run([state["ftracectl"], "--socket", state["socket"]] + list(args),
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("ftracectl %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def session_running(state):
    sessions = json.loads(ctl(state, "--json", "list"))
    return [s["state"] for s in sessions if s["name"] == SESSION] == ["running"]


def save(directory, state):
    with open(os.path.join(directory, "state.json"), "w") as f:
        json.dump(state, f)


def load(directory):
    try:
        with open(os.path.join(directory, "state.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_ftraced(directory, state):
    conf = os.path.join(directory, "ftraced.conf")
    with open(conf, "w") as f:
        f.write("saved-cmdlines = 0\n")  # the machine's saved_cmdlines_size stays as found
    log = open(os.path.join(directory, "ftraced.log"), "ab")
    proc = subprocess.Popen([state["ftraced"], "--socket", state["socket"], "--state-dir",
                             state["state_dir"], "--group", "", "--config", conf],
                            stdout=log, stderr=log, start_new_session=True)
    state["ftraced_pid"] = proc.pid
    wait_for("the foreign ftraced listening", lambda: os.path.exists(state["socket"]))
    args = ["create", SESSION, "--segment-time", "60s", "--max-total", "256M"]
    for e in EVENTS:
        args += ["-e", e]
    ctl(state, *args)
    ctl(state, "start", SESSION)
    status = json.loads(ctl(state, "--json", "status", SESSION))
    state["ftraced_instance"] = status["instance"]
    state["ftraced_tag"] = read(os.path.join(state["state_dir"], "instance-tag")).strip()


def start_tracecmd(directory, state):
    """trace-cmd record -B: its instance only, with private ftrace_enabled and kptr_restrict."""
    for name in ("ftrace_enabled", "kptr_restrict"):
        with open(os.path.join(directory, name), "w") as f:
            f.write(read("/proc/sys/kernel/" + name))
    script = ('mount --bind "$1/ftrace_enabled" /proc/sys/kernel/ftrace_enabled && '
              'mount --bind "$1/kptr_restrict" /proc/sys/kernel/kptr_restrict && shift && '
              'exec trace-cmd record -k -B "$@"')
    args = [state["tracecmd_instance"]]
    for e in EVENTS:
        args += ["-e", e]
    args += ["-o", state["tracecmd_file"]]
    log = open(os.path.join(directory, "trace-cmd.log"), "ab")
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script,
                             "sh", directory] + args, cwd=directory, stdout=log, stderr=log,
                            start_new_session=True)
    state["tracecmd_pid"] = proc.pid  # unshare and sh exec: this is trace-cmd's pid
    on = instance_path(state["tracecmd_instance"], "tracing_on")
    wait_for("trace-cmd recording",
             lambda: os.path.exists(on) and read(on).strip() == "1" or
             proc.poll() is not None)
    if proc.poll() is not None:
        raise AssertionError("trace-cmd record exited (%d): %s" % (
            proc.returncode, read(os.path.join(directory, "trace-cmd.log"))))


def instances(state):
    return (state["ftraced_instance"], state["tracecmd_instance"])


def start(directory, ftraced, ftracectl):
    directory = os.path.abspath(directory)
    state = {
        "ftraced": os.path.abspath(ftraced),
        "ftracectl": os.path.abspath(ftracectl),
        "socket": os.path.join(directory, "control"),
        "state_dir": os.path.join(directory, "state"),
        "tracecmd_instance": "neighbour-trace-cmd-%d" % os.getpid(),
        "tracecmd_file": os.path.join(directory, "trace-cmd.dat"),
    }
    save(directory, state)  # stop can clean up even if starting fails half way
    start_ftraced(directory, state)
    save(directory, state)
    start_tracecmd(directory, state)
    save(directory, state)
    # Where each stands: counts to grow from, and the events that must stay enabled.
    make_events()
    for name in instances(state):
        wait_for("events in " + name, lambda: event_count(name) > 0)
    state["counts"] = {name: event_count(name) for name in instances(state)}
    state["set_event"] = {name: read(instance_path(name, "set_event"))
                          for name in instances(state)}
    save(directory, state)
    print("neighbours: ftraced (instance %s) and trace-cmd record -B %s recording" %
          instances(state))


def check_recording(state):
    """Both instances as they were left, tracing, and counting new events."""
    for name in instances(state):
        if not os.path.isdir(instance_path(name)):
            raise AssertionError("instance %s is gone" % name)
        if read(instance_path(name, "tracing_on")).strip() != "1":
            raise AssertionError("instance %s: tracing_on is not 1" % name)
        if read(instance_path(name, "set_event")) != state["set_event"][name]:
            raise AssertionError("instance %s: its events changed" % name)
    if not alive(state["tracecmd_pid"]):
        raise AssertionError("trace-cmd record is no longer running")
    if not session_running(state):
        raise AssertionError("the foreign ftraced's session is not running")
    make_events()
    for name in instances(state):
        wait_for("new events in " + name,
                 lambda: event_count(name) > state["counts"][name])


def file_events(paths):
    """Events in @paths as trace-cmd report reads them (it exits 0 on broken files: counted)."""
    n = 0
    for path in paths:
        r = subprocess.run(["trace-cmd", "report", "-i", path], capture_output=True, text=True,
                           errors="replace", timeout=600)
        if r.returncode != 0:
            raise AssertionError("trace-cmd report %s: %s" % (path, r.stderr.strip()))
        n += len(re.findall(r"\bsched_process_(exec|fork):", r.stdout))
    return n


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_exit(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + WAIT_SECONDS
    while alive(pid) and time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass  # not ours (started by an earlier call): poll until it is gone
        time.sleep(0.1)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


def remove_instances(match):
    """Removes the instances @match accepts: a neighbour's, left when it could not."""
    for name in os.listdir(os.path.join(TRACING, "instances")):
        if not match(name):
            continue
        try:
            os.rmdir(instance_path(name))
        except OSError as e:
            print("neighbours: cannot remove instance %s: %s" % (name, e))


def stop(directory):
    """Stops both neighbours and removes what instances they left: trace-cmd's always
    (-k), the foreign ftraced's if it died (its tag names them all, the clock anchor's too)."""
    state = load(os.path.abspath(directory))
    if not state:
        return
    if state.get("ftraced_pid") and alive(state["ftraced_pid"]):
        try:
            ctl(state, "stop", SESSION)
        except (AssertionError, subprocess.TimeoutExpired):
            pass  # the check says what went wrong; SIGTERM finishes the segment anyway
        wait_exit(state["ftraced_pid"], signal.SIGTERM)
    if state.get("ftraced_tag"):
        prefix = "ftraced-%s-" % state["ftraced_tag"]
        remove_instances(lambda name: name.startswith(prefix))
    if state.get("tracecmd_pid"):
        wait_exit(state["tracecmd_pid"], signal.SIGINT)
        # Its per-CPU recorders outlive a trace-cmd that died, and ignore SIGINT then.
        try:
            os.killpg(state["tracecmd_pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
        wait_for("trace-cmd's recorders gone", lambda: not group_alive(state["tracecmd_pid"]))
    # trace-cmd leaves the instance it recorded into; it is ours to remove.
    remove_instances(lambda name: name == state["tracecmd_instance"])
    state["ftraced_pid"] = state["tracecmd_pid"] = None
    save(os.path.abspath(directory), state)


def check(directory):
    state = load(os.path.abspath(directory))
    try:
        if not state or "counts" not in state:
            raise AssertionError("the neighbours were not started")
        check_recording(state)
        stop(directory)
        sessions = os.path.join(state["state_dir"], "sessions", SESSION)
        segments = [os.path.join(sessions, f) for f in sorted(os.listdir(sessions))
                    if f.endswith(".dat") and not f.startswith(".")]
        if file_events(segments) == 0:
            raise AssertionError("the foreign ftraced's segments hold no event")
        if file_events([state["tracecmd_file"]]) == 0:
            raise AssertionError("trace-cmd's file holds no event")
    except (AssertionError, OSError, subprocess.SubprocessError) as e:
        stop(directory)
        print("neighbours: FAIL: %s" % e)
        return 1
    print("neighbours: OK: the foreign ftraced and trace-cmd record -B recorded throughout")
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "start":
        try:
            start(argv[2], argv[3], argv[4])
        except (AssertionError, OSError, subprocess.SubprocessError) as e:
            print("neighbours: cannot start: %s" % e)
            stop(argv[2])
            return 1
        return 0
    if len(argv) == 3 and argv[1] == "check":
        return check(argv[2])
    if len(argv) == 3 and argv[1] == "stop":
        stop(argv[2])
        return 0
    print(__doc__.split("\n\n")[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
