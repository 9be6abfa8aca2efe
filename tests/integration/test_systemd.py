#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The service-manager protocol without a service manager: the daemon is
started by systemd-socket-activate --seqpacket (the socket is passed in, as
ftraced.socket does) with a NOTIFY_SOCKET listener of our own. Checked:
READY=1 only once requests are answered, STATUS= lines, WATCHDOG=1 while
the capture workers make progress and none once one is stuck (test hook),
STOPPING=1 and EXTEND_TIMEOUT_USEC= while files are still being written.
The real systemd is exercised by the nspawn suite."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (FTRACED, FTRACECTL, assert_complete_sequences,  # noqa: E402
                     check_events, event_lines, fifo_reader, markers, our_instances,
                     note_raised_cmdlines, own_state_dir, parse_markers, remove_holds,
                     remove_instances_since,
                     report, run)

WATCHDOG_USEC = 1000000
STALL_SECONDS = 2.0


class Notified:
    """A NOTIFY_SOCKET: every datagram the daemon sends, with the time it arrived. A
    thread reads them as they come, as systemd does (sd_notify() blocks on a full queue)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages = []
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                return
            with self.lock:
                for line in data.decode().splitlines():
                    self.messages.append((time.monotonic(), line))

    def poll(self, timeout):
        time.sleep(timeout)

    def wait_for(self, prefix, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.lines(prefix)
            if found:
                return found[0]
            self.poll(0.1)
        raise AssertionError("no %s in %s" % (prefix, [m for _, m in self.messages]))

    def lines(self, prefix, since=0.0):
        with self.lock:
            return [(t, m) for t, m in self.messages if m.startswith(prefix) and t >= since]

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


class Activated:
    """ftraced behind systemd-socket-activate, on a private socket and state directory."""

    def __init__(self, test_hooks=False):
        self.tmp = tempfile.TemporaryDirectory(prefix="ftraced-sd-")
        self.dir = self.tmp.name
        self.socket = os.path.join(self.dir, "control")
        self.notify = Notified(os.path.join(self.dir, "notify"))
        self.log_path = os.path.join(self.dir, "ftraced.log")
        self.before = set(our_instances())
        own_state_dir(os.path.join(self.dir, "state"))
        env = ["-E", "NOTIFY_SOCKET=" + os.path.join(self.dir, "notify"),
               "-E", "WATCHDOG_USEC=%d" % WATCHDOG_USEC]
        if test_hooks:
            env += ["-E", "FTRACED_TEST_HOOKS=1"]
        log = open(self.log_path, "wb")
        conf = os.path.join(self.dir, "ftraced.conf")
        with open(conf, "w") as f:
            f.write("saved-cmdlines = 0\n")  # the machine's setting: left alone
        self.proc = subprocess.Popen(
            ["systemd-socket-activate", "--seqpacket", "-l", self.socket] + env +
            [FTRACED, "--socket", self.socket, "--state-dir", os.path.join(self.dir, "state"),
             "--group", "", "--log-level", "debug", "--config", conf], stdout=log, stderr=log)
        deadline = time.monotonic() + 120
        while not os.path.exists(self.socket):
            assert time.monotonic() < deadline, "no socket"
            time.sleep(0.02)

    def ctl(self, *args, check=True):
        r = subprocess.run([FTRACECTL, "--socket", self.socket] + list(args),
                           capture_output=True, text=True, timeout=120)
        assert not check or r.returncode == 0, "ftracectl %s: %s" % (args, r.stderr)
        return r

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        note_raised_cmdlines(self.log_path)
        remove_instances_since(self.before)
        remove_holds(os.path.join(self.dir, "state"))
        self.notify.close()
        self.tmp.cleanup()


def test_activation_readiness_and_status():
    a = Activated()
    try:
        time.sleep(0.3)
        assert not a.notify.lines("READY=1"), "READY=1 before anyone asked for the daemon"
        # The first request starts the daemon (it is exec'd on the first connection).
        r = a.ctl("list")
        assert r.returncode == 0
        t_ready, _ = a.notify.wait_for("READY=1")
        assert "Using the control socket passed by the service manager" in a.log()
        # Capabilities are gone before READY=1 (the drop is logged before).
        log = a.log()
        assert log.index("Capabilities dropped") < log.index("ftraced ready"), log
        a.notify.wait_for("STATUS=0 session(s)")
        a.ctl("create", "bg", "-e", "sched:sched_switch")
        a.notify.poll(0.3)
        assert a.notify.lines("STATUS=1 session(s)"), a.notify.messages
        a.ctl("start", "bg")
        a.ctl("destroy", "bg")
        a.notify.poll(0.3)
        assert a.notify.lines("STATUS=0 session(s)", since=t_ready + 0.001)
        out = os.path.join(a.dir, "act.dat")
        a.ctl("record", "-e", "sched:sched_switch", "--duration", "200ms", "-o", out)
        check_events(out)
        assert len(event_lines(report(out))) > 0
        a.proc.send_signal(signal.SIGTERM)
        assert a.proc.wait(timeout=30) == 0, a.log()
        a.notify.poll(0.2)
        assert a.notify.lines("STOPPING=1"), a.notify.messages
    finally:
        a.cleanup()


def test_watchdog_only_while_workers_progress():
    a = Activated(test_hooks=True)
    try:
        a.ctl("list")
        a.notify.wait_for("READY=1")
        a.notify.poll(2.0)
        pings = a.notify.lines("WATCHDOG=1")
        # Every WATCHDOG_USEC / 4, give or take.
        assert len(pings) >= 5, "only %d pings in 2 s" % len(pings)
        gaps = [b[0] - a_[0] for a_, b in zip(pings, pings[1:])]
        assert max(gaps) < WATCHDOG_USEC / 1e6 / 2, "gap of %.2f s" % max(gaps)
        # An idle daemon with a session whose CPU sees nothing still pings.
        a.ctl("create", "idle", "-e", "sched:sched_process_hang")
        a.ctl("start", "idle")
        t0 = time.monotonic()
        a.notify.poll(1.5)
        assert len(a.notify.lines("WATCHDOG=1", since=t0)) >= 4
        # Worker of CPU 0 stuck: the pings stop, the log says why, requests still work.
        # A worker counts as stuck after 2 s without a turn (or half the period, if longer).
        os.kill(a.proc.pid, signal.SIGUSR2)
        t_stall = time.monotonic()
        a.notify.poll(4.0)
        assert a.notify.lines("WATCHDOG=1", since=t_stall + 1.0), "stopped pinging too early"
        late = a.notify.lines("WATCHDOG=1", since=t_stall + STALL_SECONDS + 0.4)
        assert not late, "still pinging %.2f s after the stall" % (late[0][0] - t_stall)
        assert "capture worker of CPU 0 has made no progress" in a.log(), a.log()
        assert a.ctl("list").returncode == 0
    finally:
        a.cleanup()


def test_stop_asks_for_time_while_writing():
    """SIGTERM with a record streaming into a slow FIFO reader: STOPPING=1 and
    EXTEND_TIMEOUT_USEC= for as long as bytes move, then a complete file."""
    a = Activated()
    try:
        a.ctl("list")
        a.notify.wait_for("READY=1")
        fifo = os.path.join(a.dir, "stream")
        os.mkfifo(fifo)
        out = os.path.join(a.dir, "slow.dat")
        # About 80 KiB/s: the file (its symbols alone about half a MiB) takes seconds.
        reader = fifo_reader(fifo, out, block=8192, pause=0.1)
        rec = subprocess.Popen([FTRACECTL, "--socket", a.socket, "record", "--quiet",
                                "-e", "ftrace:print", "-o", fifo],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while "Session 'record-" not in a.log():
            assert time.monotonic() < deadline, a.log()
            time.sleep(0.05)
        instance = json.loads(a.ctl("--json", "list").stdout)[0]["instance"]
        written = markers(instance, list(range(os.cpu_count())), 2000)
        t_term = time.monotonic()
        a.proc.send_signal(signal.SIGTERM)
        assert a.proc.wait(timeout=120) == 0, a.log()
        took = time.monotonic() - t_term
        a.notify.poll(0.2)
        assert a.notify.lines("STOPPING=1"), a.notify.messages
        extends = a.notify.lines("EXTEND_TIMEOUT_USEC=", since=t_term)
        assert took > 2.5, "the stop took only %.1f s: the test proves nothing" % took
        # One at SIGTERM, then one every 2 s while the reader keeps taking bytes.
        assert len(extends) >= int(took / 2), "%d extensions in %.1f s" % (len(extends), took)
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        reader.wait(timeout=60)
        print("  stop took %.1f s for %d bytes, %d extensions" % (took, os.path.getsize(out),
                                                                 len(extends)))
        check_events(out)
        assert_complete_sequences(parse_markers(report(out)), written)
    finally:
        a.cleanup()


if __name__ == "__main__":
    if subprocess.run(["which", "systemd-socket-activate"], capture_output=True).returncode:
        print("SKIP: systemd-socket-activate is not installed")
        sys.exit(77)
    sys.exit(run())
