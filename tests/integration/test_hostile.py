#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hostile clients against the real daemon: idle and silent connections,
clients that never read their replies, malformed packets and abusive
output descriptors. Each gets its specific error, a legitimate STATUS keeps
answering within 100 ms, and the daemon's descriptor count returns to what
it was before."""

import array
import fcntl
import grp
import os
import re
import socket
import stat
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (CPUS, Daemon, assert_complete_sequences, check_events,  # noqa: E402
                     daemon_fds, fifo_reader, is_symbol_cache, markers, parse_markers,
                     proto_constants, report, run, TRACING)


# The wire format as include/ftraced/proto.h defines it, so the two cannot drift apart.
PROTO = proto_constants()
MAGIC, VERSION = PROTO["PROTO_MAGIC"], PROTO["PROTO_VERSION"]
MSG_RECORD, MSG_STOP, MSG_LIST, MSG_STATUS, MSG_OK, MSG_ERROR = (
    PROTO["MSG_" + n] for n in ("RECORD", "STOP", "LIST", "STATUS", "OK", "ERROR"))
MSG_SESSIONS, MSG_SNAPSHOT = PROTO["MSG_SESSIONS"], PROTO["MSG_SNAPSHOT"]
ATTR_EVENT, ATTR_SESSION, ATTR_ERRNO, ATTR_MESSAGE = (
    PROTO["ATTR_" + n] for n in ("EVENT", "SESSION", "ERRNO", "MESSAGE"))
MSG_SIZE_MAX = PROTO["MSG_SIZE_MAX"]
STATUS_DEADLINE = 0.1
NOGROUP = grp.getgrnam("nogroup").gr_gid


def attr(kind, value):
    if isinstance(value, str):
        value = value.encode()
    return struct.pack("<HH", kind, len(value)) + value


def packet(kind, payload=b"", magic=MAGIC, version=VERSION, flags=0, n_payload=None):
    n = len(payload) if n_payload is None else n_payload
    return struct.pack("<IHHII", magic, version, kind, flags, n) + payload


def parse_reply(data):
    """(type, errno, message) of one reply packet."""
    assert len(data) >= 16, "short reply %r" % data
    magic, version, kind, _, n = struct.unpack_from("<IHHII", data)
    assert magic == MAGIC and version == VERSION and n == len(data) - 16, "bad reply header"
    err, message, off = 0, "", 16
    while off < len(data):
        a, length = struct.unpack_from("<HH", data, off)
        value = data[off + 4:off + 4 + length]
        if a == ATTR_ERRNO:
            err = struct.unpack("<I", value)[0]
        elif a == ATTR_MESSAGE:
            message = value.decode()
        off += 4 + length
    return kind, err, message


def connect(d):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(d.socket)
    return s


def request(d, data, fds=(), timeout=5):
    """Sends one packet (with FDS) on a new connection; the parsed reply."""
    with connect(d) as s:
        s.settimeout(timeout)
        if fds:
            s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        else:
            s.send(data)
        return parse_reply(s.recv(MSG_SIZE_MAX + 1))


def expect_error(d, data, err, text, fds=()):
    kind, e, message = request(d, data, fds)
    assert kind == MSG_ERROR and e == err and text in message, \
        "expected errno %d '%s', got type %d errno %d '%s'" % (err, text, kind, e, message)


def status_seconds(d):
    """Wall time of one STATUS from connect to reply, which must list sessions."""
    start = time.monotonic()
    kind, _, message = request(d, packet(MSG_STATUS))
    elapsed = time.monotonic() - start
    assert kind == MSG_SESSIONS, "status answered %d: %s" % (kind, message)
    return elapsed


def rss_kib(d):
    with open("/proc/%d/status" % d.proc.pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def sanitized(d):
    """ASan's shadow memory makes RSS meaningless."""
    with open("/proc/%d/maps" % d.proc.pid) as f:
        return "libasan" in f.read()


def is_anchor_lock(link):
    """The daemon's clock-anchor instance's directory, locked for its life from the first
    session on a marker clock (it marks the tag as taken in tracefs)."""
    return bool(re.search(r"^%s/instances/ftraced-[0-9a-f]{8}-0$" % re.escape(TRACING), link))


def fd_count(d):
    """The daemon's fds, but for its symbol cache and its clock anchor's lock (made by the
    first session, and kept)."""
    return sum(not is_symbol_cache(d, link) and not is_anchor_lock(link)
               for link in daemon_fds(d).values())


def wait_fd_count(d, baseline, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fd_count(d) == baseline:
            return
        time.sleep(0.1)
    raise AssertionError("daemon holds %d fds, %d before:\n%s" % (
        fd_count(d), baseline, "\n".join(daemon_fds(d).values())))


HOLDER = r"""
import socket, sys, time
conns = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    conns.append(s)
print("ready", flush=True)
sys.stdin.read()
"""


def hold_connections(d, n, uid):
    """A process of UID (group nogroup) holding N silent connections until its stdin closes."""
    p = subprocess.Popen(["setpriv", "--reuid", str(uid), "--regid", str(NOGROUP),
                          "--clear-groups", sys.executable, "-c", HOLDER, d.socket, str(n)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", "holder of uid %d failed" % uid
    return p


def hostile_daemon():
    d = Daemon(extra_args=["--group", "nogroup"]).start()
    os.chmod(d.dir, 0o755)
    return d


def test_idle_connections_and_slow_loris():
    """1000 idle connections of five users, a silent client and one that floods requests
    without reading: a STATUS still answers within 100 ms, every time."""
    d = hostile_daemon()
    try:
        time.sleep(0.2)
        baseline = fd_count(d)
        # A capture runs through all of it, undisturbed.
        out = os.path.join(d.dir, "during.dat")
        rec = d.record_background("-e", "ftrace:print", "-o", out)
        session = d.wait_running()
        mine = [connect(d) for _ in range(200)]
        holders = [hold_connections(d, 200, uid) for uid in (65534, 65533, 65532, 65531)]
        # Slow loris: connected, says nothing. Flood: asks and asks, reads nothing.
        loris = connect(d)
        flood = connect(d)
        flood.setblocking(False)
        sent = 0
        try:
            for _ in range(100000):
                flood.send(packet(MSG_STATUS))
                sent += 1
        except (BlockingIOError, BrokenPipeError, ConnectionResetError):
            pass
        assert sent > 10, "the flood could not even start"
        worst = max(status_seconds(d) for _ in range(50))
        assert worst < STATUS_DEADLINE, "a status took %.1f ms" % (worst * 1000)
        print("  slowest of 50 status requests: %.2f ms" % (worst * 1000))
        r = d.ctl("status")
        assert r.returncode == 0
        assert fd_count(d) < baseline + 64 + 32, "%d fds" % fd_count(d)
        rss = rss_kib(d)
        assert sanitized(d) or rss < 64 * 1024, "RSS %d KiB" % rss
        written = markers(session["instance"], CPUS, 5000)
        d.ctl("stop", session["name"])
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        check_events(out)
        assert_complete_sequences(parse_markers(report(out)), written)
        # The oldest idle connections made room: most of mine were closed with a reason.
        closed = 0
        for s in mine:
            s.settimeout(0.5)
            try:
                data = s.recv(MSG_SIZE_MAX)
            except (socket.timeout, ConnectionResetError):
                continue
            if data:
                kind, err, message = parse_reply(data)
                assert kind == MSG_ERROR and "idle" in message, message
            closed += 1
        assert closed >= 180, "only %d of 200 idle connections were closed" % closed
        # The silent client is cut off once its time to send a request is over.
        loris.settimeout(10)
        kind, err, message = parse_reply(loris.recv(MSG_SIZE_MAX))
        assert kind == MSG_ERROR and "no request within" in message, message
        for p in holders:
            p.stdin.close()
            p.wait(timeout=10)
        for s in mine + [loris, flood]:
            s.close()
        wait_fd_count(d, baseline)
        d.stop()
    finally:
        d.cleanup()


def test_malformed_packets():
    """Every malformed packet gets its error reply; the daemon lives and leaks nothing."""
    d = hostile_daemon()
    try:
        time.sleep(0.2)
        baseline = fd_count(d)
        with connect(d) as s:
            s.send(b"x" * (MSG_SIZE_MAX + 1))
            kind, err, message = parse_reply(s.recv(MSG_SIZE_MAX))
            assert kind == MSG_ERROR and "message too large" in message, message
            assert s.recv(MSG_SIZE_MAX) == b"", "an oversized packet must close the connection"
        expect_error(d, packet(MSG_STATUS)[:7], 74, "malformed request")          # EBADMSG
        expect_error(d, packet(MSG_STATUS, magic=0x12345678), 74, "malformed request")
        expect_error(d, packet(MSG_STATUS, version=2), 93, "protocol version not supported")
        expect_error(d, packet(99), 95, "unknown request type")
        expect_error(d, packet(MSG_OK), 95, "unknown request type")  # a reply type
        expect_error(d, packet(MSG_STATUS, flags=1), 74, "malformed request")
        expect_error(d, packet(MSG_STATUS, n_payload=100), 74, "malformed request")
        expect_error(d, packet(MSG_STATUS, struct.pack("<HH", ATTR_SESSION, 200) + b"abc"),
                     74, "malformed request")
        expect_error(d, packet(MSG_STOP, attr(ATTR_SESSION, "a\x01b")), 74,
                     "malformed request")
        expect_error(d, packet(MSG_STOP, attr(ATTR_SESSION, "x" * 65)), 74, "malformed request")
        expect_error(d, packet(MSG_STOP), 74, "malformed request")  # no session named
        expect_error(d, packet(PROTO["MSG_ROTATE"]), 74, "malformed request")  # nor here
        expect_error(d, packet(PROTO["MSG_ROTATE"], attr(ATTR_SESSION, "bg") +
                               attr(ATTR_EVENT, "sched")), 74, "malformed request")
        expect_error(d, packet(PROTO["MSG_ROTATE"], attr(ATTR_SESSION, "bg")), 2,
                     "no session 'bg'")
        # Descriptors where none belong, or too many: closed, and said so.
        r, w = os.pipe()
        try:
            expect_error(d, packet(MSG_LIST), 74, "takes no file descriptor", fds=[w])
            expect_error(d, packet(MSG_STATUS), 109, "too many file descriptors", fds=[w, r])
            # More than the control buffer holds: cut off by the kernel, all closed anyway.
            expect_error(d, packet(MSG_STATUS), 90, "too many file descriptors",
                         fds=[w, r, w, r])
        finally:
            os.close(r)
            os.close(w)
        assert status_seconds(d) < 1
        wait_fd_count(d, baseline)
        d.stop()
    finally:
        d.cleanup()


def record_packet(event="sched:sched_switch"):
    return packet(MSG_RECORD, attr(ATTR_EVENT, event))


def test_output_fd_abuse():
    """Directories, sockets, terminals, FUSE, read-only and O_APPEND outputs are refused,
    each with its reason, and every passed descriptor is closed."""
    d = hostile_daemon()
    fuse_dir = None
    try:
        time.sleep(0.2)
        baseline = fd_count(d)
        cases = []
        cases.append(("directory", os.open(d.dir, os.O_RDONLY | os.O_DIRECTORY),
                      21, "is a directory"))
        a, b = socket.socketpair()
        cases.append(("socket", a.detach(), 95, "is a socket"))
        b.close()
        master, slave = os.openpty()
        cases.append(("tty", slave, 25, "is a terminal"))
        cases.append(("char device", os.open("/dev/null", os.O_WRONLY), 9,
                      "regular file or a FIFO"))
        path = os.path.join(d.dir, "ro.dat")
        open(path, "w").close()
        cases.append(("read-only", os.open(path, os.O_RDONLY), 9, "not open for writing"))
        cases.append(("append", os.open(path, os.O_WRONLY | os.O_APPEND), 9, "O_APPEND"))
        sealed = os.memfd_create("sealed", os.MFD_ALLOW_SEALING)
        fcntl.fcntl(sealed, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE)
        cases.append(("sealed memfd", sealed, 1, "sealed against writing"))
        # FUSE: a bindfs view of a directory of ours.
        src = os.path.join(d.dir, "fuse-src")
        fuse_dir = os.path.join(d.dir, "fuse")
        os.mkdir(src)
        os.mkdir(fuse_dir)
        subprocess.run(["bindfs", src, fuse_dir], check=True)
        cases.append(("fuse", os.open(os.path.join(fuse_dir, "x.dat"),
                                      os.O_WRONLY | os.O_CREAT, 0o600), 18, "FUSE"))
        for name, fd, err, text in cases:
            try:
                expect_error(d, record_packet(), err, text, fds=[fd])
                expect_error(d, packet(MSG_SNAPSHOT, attr(ATTR_SESSION, "none")), err, text,
                             fds=[fd])
            except AssertionError as e:
                raise AssertionError("%s: %s" % (name, e))
            finally:
                os.close(fd)
        os.close(master)
        expect_error(d, record_packet(), 9, "record needs the output file descriptor")
        assert os.listdir(src) == ["x.dat"] and os.path.getsize(os.path.join(src, "x.dat")) == 0
        assert not [n for n in os.listdir(d.dir) if n.endswith(".partial")]
        wait_fd_count(d, baseline)
        assert status_seconds(d) < 1
        d.stop()
    finally:
        if fuse_dir:
            subprocess.run(["umount", fuse_dir], capture_output=True)
        d.cleanup()


def test_fifo_reader_that_stalls():
    """A record streamed into a FIFO: while the reader sleeps the daemon keeps answering,
    and once it reads again the stream is a complete file with every marker."""
    d = hostile_daemon()
    try:
        fifo = os.path.join(d.dir, "stream")
        os.mkfifo(fifo)
        out = os.path.join(d.dir, "from-fifo.dat")
        reader = fifo_reader(fifo, out, gate=True)
        rec = d.record_background("-e", "ftrace:print", "-o", fifo)
        session = d.wait_running()
        written = markers(session["instance"], CPUS, 20000)
        d.ctl("stop", session["name"])
        # The file does not fit into the pipe: the writer waits for the reader, the loop does not.
        deadline = time.monotonic() + 5
        while d.ctl_json("list") and time.monotonic() < deadline:
            assert status_seconds(d) < STATUS_DEADLINE
            time.sleep(0.1)
        assert d.ctl_json("list"), "the file fitted into the pipe: the test proves nothing"
        reader.stdin.write("go\n")
        reader.stdin.close()
        reader.wait(timeout=60)
        _, stderr = rec.communicate(timeout=60)
        assert rec.returncode == 0, stderr
        assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced"
        check_events(out)
        assert_complete_sequences(parse_markers(report(out)), written)
        d.stop()
    finally:
        d.cleanup()


def sealed_memfd(data, seals=None):
    fd = os.memfd_create("list", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.write(fd, data)
    if seals is None:
        seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


def test_event_list_descriptor_checked():
    """A long event list comes as a sealed memfd (ATTR_EVENT_LIST): no descriptor, a
    pipe, a memfd its sender could still change, a range beyond it or anything but
    events in it is refused, naming the list; the right one creates the session."""
    event_list, mode = PROTO["ATTR_EVENT_LIST"], PROTO["ATTR_MODE"]
    create = PROTO["MSG_CREATE"]
    events = attr(ATTR_EVENT, "sched:sched_switch") + attr(ATTR_EVENT, "irq")

    def message(offset, size):
        return packet(create, attr(ATTR_SESSION, "listed") +
                      attr(mode, struct.pack("<I", PROTO["MODE_CONTINUOUS"])) +
                      attr(event_list, struct.pack("<QQ", offset, size)))

    d = Daemon().start()
    try:
        baseline = fd_count(d)
        expect_error(d, message(0, len(events)), 74, "malformed request: bad event list")
        r, w = os.pipe()
        unsealed = sealed_memfd(events, seals=0)
        sealed = sealed_memfd(events)
        other = sealed_memfd(attr(ATTR_SESSION, "x"))
        try:
            expect_error(d, message(0, len(events)), 74, "not a sealed memfd", fds=[r])
            expect_error(d, message(0, len(events)), 74, "not a sealed memfd", fds=[unsealed])
            expect_error(d, message(1, len(events)), 74, "bad event list", fds=[sealed])
            expect_error(d, message(0, 9), 74, "malformed request", fds=[other])
            kind, err, text = request(d, message(0, len(events)), fds=[sealed])
            assert kind == MSG_OK, (kind, err, text)
        finally:
            for fd in (r, w, unsealed, sealed, other):
                os.close(fd)
        st = d.ctl_json("status", "listed")
        assert st["events"] == ["sched:sched_switch", "irq"], st
        d.ctl("destroy", "listed")
        wait_fd_count(d, baseline)
        d.stop()
    finally:
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
