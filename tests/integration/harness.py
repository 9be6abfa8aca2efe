# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the integration tests: the built daemon on a private
socket and state directory, ftracectl, the load generator, trace-cmd report
parsing, and a tiny runner that prints 'N passed, M failed'.

Every test uses its own ftraced-* instances (through the daemon) and must
leave none behind; the top-level tracing buffer is never touched. tracefs is
shared: another ftraced or trace-cmd may run beside the suite, so a test counts
and removes only the instances of the daemons it started (by their tag)."""

import calendar
import contextlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

FTRACED = os.environ.get("FTRACED", "build/daemon/ftraced")
FTRACECTL = os.environ.get("FTRACECTL", "build/client/ftracectl")
LOADGEN = os.environ.get("LOADGEN", "build/bench/ftraced-loadgen")
COUNTER = os.environ.get("COUNTER", "build/bench/ftraced-count")
# Beside the daemon's build: tests/ftraced-spool-events (tests/tools/spool-events.c).
SPOOL_EVENTS = os.environ.get("SPOOL_EVENTS", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(FTRACED))), "tests", "ftraced-spool-events"))
TRACING = "/sys/kernel/tracing"
SKIP = 77
CPUS = list(range(os.cpu_count()))
PROTO_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                       "ftraced", "proto.h")
# `ftracectl recover` runs the daemon's recovery step: the daemon under test.
os.environ.setdefault("FTRACED_BINARY", os.path.abspath(FTRACED))


def skip_unless_possible():
    if os.geteuid() != 0:
        print("SKIP: integration tests need root")
        sys.exit(SKIP)
    if not os.path.exists(os.path.join(TRACING, "instances")):
        print("SKIP: tracefs is not mounted on " + TRACING)
        sys.exit(SKIP)
    try:
        found = b"trace-cmd version" in subprocess.run(
            ["trace-cmd", "--version"], capture_output=True).stdout
    except FileNotFoundError:
        found = False
    if not found:
        print("SKIP: trace-cmd is not installed")
        sys.exit(SKIP)


# The state directories of the daemons this process started. Their instance-tag files name
# the only instances a test may count or remove: every other one belongs to someone else.
# A tag once read is kept: the state directory may be gone by the time its leftovers are
# looked for.
STATE_DIR_TAGS = {}
INSTANCE_TAG_FILE = "instance-tag"


def own_state_dir(path):
    """Counts the instances of the daemon whose state directory is @path as this test's."""
    STATE_DIR_TAGS.setdefault(os.path.abspath(path), None)


def instance_tag(state_dir):
    """The tag a daemon keeps in its state directory (hex), or None before its first start."""
    try:
        with open(os.path.join(state_dir, INSTANCE_TAG_FILE)) as f:
            return f.read().strip() or None
    except OSError:
        return None


# The logs of this process's daemons that raised saved_cmdlines_size (the machine's setting:
# a test daemon must run with saved-cmdlines = 0). Read from their logs, not from tracefs:
# another daemon beside the suite may raise it.
RAISED_CMDLINES = []
CMDLINES_RAISED_LINE = "(saved_cmdlines_size)"


def note_raised_cmdlines(log_path):
    """After a daemon of ours ran: did it raise saved_cmdlines_size?"""
    try:
        with open(log_path, errors="replace") as f:
            if CMDLINES_RAISED_LINE in f.read():
                RAISED_CMDLINES.append(log_path)
    except OSError:
        pass


def instances_of_tags(tags):
    """The instances in tracefs of the daemons whose tags are @tags (hex), none else."""
    prefixes = tuple("ftraced-%s-" % t for t in tags if t)
    if not prefixes:
        return []
    return sorted(n for n in os.listdir(os.path.join(TRACING, "instances"))
                  if n.startswith(prefixes))


def our_instances():
    """The instances of the daemons this process started."""
    for path, tag in STATE_DIR_TAGS.items():
        if tag is None:
            STATE_DIR_TAGS[path] = instance_tag(path)
    return instances_of_tags(STATE_DIR_TAGS.values())


def remove_holds(state):
    """What a daemon keeps beyond its life (holds, flight histories) is in memory outside
    its state directory, which names it (the "hold" link): removed with the state
    directory, once no daemon of it runs."""
    holds = os.path.join(state, "hold")
    if os.path.islink(holds) and os.path.basename(os.readlink(holds)).startswith("ftraced-hold-"):
        shutil.rmtree(os.readlink(holds), ignore_errors=True)


def remove_instances_since(before):
    """Removes our instances that were not there in @before (after a failure)."""
    for name in set(our_instances()) - set(before):
        try:
            os.rmdir(os.path.join(TRACING, "instances", name))
        except OSError:
            pass


class Daemon:
    def __init__(self, extra_args=(), state=None):
        self.tmp = tempfile.TemporaryDirectory(prefix="ftraced-test-")
        self.dir = self.tmp.name
        self.socket = os.path.join(self.dir, "control")
        self.state = state or os.path.join(self.dir, "state")
        self.log_path = os.path.join(self.dir, "ftraced.log")
        self.extra_args = list(extra_args)
        self.wrapper = []  # a command that execs the daemon, e.g. prlimit's
        self.daemon_env = None  # the daemon's environment, if not ours
        self.proc = None

    def with_session_files(self, files):
        """sessions.d holding @files ({name: text}), read when the daemon starts."""
        conf = os.path.join(self.dir, "sessions.d")
        os.makedirs(conf)
        for name, text in files.items():
            with open(os.path.join(conf, name), "w") as f:
                f.write(text)
        self.extra_args = ["--group", "", "--sessions-dir", conf]
        return self

    def start(self):
        self.launch()
        return self.wait_listening()

    def launch(self):
        """Runs the daemon without waiting for it: start-up (recovery) under way."""
        self.instances_before = set(our_instances())
        own_state_dir(self.state)
        log = open(self.log_path, "ab")
        args = self.extra_args or ["--group", ""]
        if "--config" not in args:
            # saved_cmdlines_size is the machine's: tests leave it as they found it.
            conf = os.path.join(self.dir, "ftraced.conf")
            with open(conf, "w") as f:
                f.write("saved-cmdlines = 0\n")
            args = args + ["--config", conf]
        self.proc = subprocess.Popen(
            self.wrapper + [FTRACED, "--socket", self.socket, "--state-dir", self.state,
             "--log-level", "debug"] + args, stdout=log, stderr=log, env=self.daemon_env)
        return self

    def wait_listening(self):
        # A start recovers what a crash left first (drains, compresses, writes files):
        # under ASan on a busy machine that takes seconds. The daemon's exit ends it sooner.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("ftraced exited at start:\n" + self.log())
            if os.path.exists(self.socket) and self.ctl("list", check=False).returncode == 0:
                return self
            time.sleep(0.05)
        raise AssertionError("ftraced did not start listening:\n" + self.log())

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def env(self):
        return dict(os.environ, FTRACED_SOCKET=self.socket)

    def ctl(self, *args, check=True, timeout=120, user=None, gid=None, groups=None):
        """ftracectl; with user=UID, as that uid (primary gid GID, supplementary GROUPS)."""
        cmd = [FTRACECTL] + list(args)
        if user is not None:
            cmd = ["setpriv", "--reuid", str(user), "--regid", str(user if gid is None else gid)]\
                + (["--groups", ",".join(map(str, groups))] if groups else ["--clear-groups"])\
                + cmd
        r = subprocess.run(cmd, capture_output=True, text=True, env=self.env(), timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError("ftracectl %s failed (%d):\n%s%s" % (
                " ".join(args), r.returncode, r.stdout, r.stderr))
        return r

    def ctl_json(self, *args):
        return json.loads(self.ctl("--json", *args).stdout)

    def record_background(self, *args):
        return subprocess.Popen([FTRACECTL, "record"] + list(args),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self.env())

    def wait_running(self, timeout=120):
        """The one running session, once it is running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sessions = [s for s in self.ctl_json("list") if s["state"] == "running"]
            if sessions:
                return sessions[0]
            time.sleep(0.02)
        raise AssertionError("no session started:\n" + self.log())

    def wait_state(self, name, state="running", timeout=120):
        """Status of session @name once it is in @state (a new session's ring is
        allocated on a thread: it starts "allocating")."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.ctl_json("status", name)
            if st["state"] == state or time.monotonic() > deadline:
                return st
            time.sleep(0.02)

    def mount_tmpfs_state(self, size):
        """A small file system of its own for the state directory (cleanup unmounts it)."""
        os.makedirs(self.state, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0700" % size, "tmpfs",
                        self.state], check=True)
        return self

    def kill(self):
        """SIGKILL, as a crash would."""
        self.proc.kill()
        self.proc.wait()
        self.proc = None

    def stop(self, spool_empty=True):
        """SIGTERM; exit 0 required, and (unless told otherwise) no spool left."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self.proc = None
        assert rc == 0, "ftraced exited with %d:\n%s" % (rc, self.log())
        spool = os.path.join(self.state, "spool")
        if spool_empty and os.path.isdir(spool):
            assert os.listdir(spool) == [], "spool files left: %s" % os.listdir(spool)

    def cleanup(self):
        """After a failed test too: stop the daemon, remove what it left in tracefs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        stop_loadgens()
        note_raised_cmdlines(self.log_path)
        remove_instances_since(getattr(self, "instances_before", set()))
        if self.state.startswith(self.dir + "/"):
            remove_holds(self.state)
        subprocess.run(["umount", "-q", self.state], capture_output=True)
        self.tmp.cleanup()


@contextlib.contextmanager
def daemon(d=None):
    """A fresh daemon for one test (or D, set up but not started); stopped cleanly (exit 0,
    no spool left) at the end."""
    d = d or Daemon()
    d.start()
    try:
        yield d
        d.stop()
    except BaseException:
        print_log_tail(d)
        raise
    finally:
        d.cleanup()


def print_log_tail(d, lines=25):
    """CI shows a short excerpt of a failed suite: a failing test's daemon's last words go
    to stdout, ahead of the traceback that stderr carries."""
    try:
        print("daemon log, last lines:\n" + "".join(d.log().splitlines(True)[-lines:]),
              flush=True)
    except OSError:
        pass


# Load generators still running when a test ends (it failed half-way) hold their
# instance's trace_marker open, and tracefs will not remove a busy instance:
# Daemon.cleanup() stops them first.
_loadgens = []


def loadgen(*args, wait=False):
    p = subprocess.Popen([LOADGEN] + list(args) + (["--wait"] if wait else []),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    _loadgens.append(p)
    return p


def stop_loadgens():
    while _loadgens:
        p = _loadgens.pop()
        if p.poll() is None:
            p.kill()
            p.communicate()


def loadgen_result(proc, timeout=120):
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, "loadgen failed: " + out
    m = re.search(r"written=(\d+) failed=(\d+) seconds=([\d.]+)", out)
    assert m, "loadgen printed: " + out
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


def start_markers(instance, cpus, count, rate=0, tag="t"):
    """Starts writing COUNT numbered markers on each CPU in the background; returns a
    function that waits for them and gives the written counts per CPU."""
    procs = {cpu: loadgen("--instance", instance, "--cpu", str(cpu), "--count", str(count),
                          "--rate", str(rate), "--tag", tag) for cpu in cpus}

    def finish():
        written = {}
        for cpu, p in procs.items():
            w, failed, _ = loadgen_result(p)
            assert failed == 0, "CPU %d: %d marker writes failed (ring buffer full)" % (
                cpu, failed)
            written[cpu] = w
        return written
    return finish


def wait_cpus_have_events(instance, cpus, timeout=60):
    """Waits until the kernel has taken an event on each of CPUS in INSTANCE (its per-CPU
    stats count entries or reads): a generator has really started there."""
    deadline = time.monotonic() + timeout
    pending = set(cpus)
    while pending:
        for cpu in list(pending):
            path = os.path.join(TRACING, "instances", instance, "per_cpu", "cpu%d" % cpu,
                                "stats")
            with open(path) as f:
                stats = dict(line.split(":", 1) for line in f if ":" in line)
            if int(stats["entries"]) + int(stats["read events"]) > 0:
                pending.discard(cpu)
        assert not pending or time.monotonic() < deadline, \
            "no event on CPUs %s of %s" % (sorted(pending), instance)
        time.sleep(0.01)


def read_events(instance, cpu):
    """The kernel's count of events the readers of INSTANCE took on CPU."""
    with open(os.path.join(TRACING, "instances", instance, "per_cpu", "cpu%d" % cpu,
                           "stats")) as f:
        return int(re.search(r"^read events: (\d+)", f.read(), re.M).group(1))


def spool_events(spool_dir):
    """Per CPU, what a live spool holds as recovery reads it: {cpu: (events, the kernel's
    read events when it began)}."""
    out = subprocess.run([SPOOL_EVENTS, spool_dir], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return {c["cpu"]: (c["events"], c["start_read"]) for c in json.loads(out.stdout)["cpus"]}


def spool_holds_all_read(state, instance):
    """Everything the daemon took from INSTANCE's ring is in its one spool (under STATE):
    on each CPU, the kernel's read events since the spool began are the spool's events."""
    spool = os.path.join(state, "spool")
    names = os.listdir(spool)
    if len(names) != 1 or not os.path.exists(os.path.join(spool, names[0], "recipe")):
        return False
    held = spool_events(os.path.join(spool, names[0]))
    return all(start >= 0 and read_events(instance, cpu) - start == events
               for cpu, (events, start) in held.items() if cpu in CPUS)


def markers(instance, cpus, count, rate=0, tag="t"):
    """Writes COUNT numbered markers on each CPU; returns written counts per CPU."""
    return start_markers(instance, cpus, count, rate, tag)()


class TimedMarkers:
    """Numbered markers "tm:N" written into INSTANCE's trace_marker every PERIOD seconds
    by a thread of this process, the wall-clock time of each write noted: a window
    that should end at a known time can be checked against them. Use as a context
    manager; .times[N] is when marker N was written."""

    TEXT = re.compile(r"\btm:(\d+)\b")

    def __init__(self, instance, period=0.01):
        import threading
        self.path = os.path.join(TRACING, "instances", instance, "trace_marker")
        self.period = period
        self.times = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._write, daemon=True)

    def _write(self):
        fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            while not self.stopping.is_set():
                before = time.time()
                os.write(fd, b"tm:%d" % len(self.times))
                self.times.append(before)
                self.stopping.wait(self.period)
        finally:
            os.close(fd)

    def __enter__(self):
        self.thread.start()
        wait_until("the first timed marker", lambda: len(self.times) > 0)
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join()

    def request_time(self):
        """A time taken just before a request, returned once a marker written after it is
        in the kernel: a window that ends at most 1 s before the request must hold it,
        however late this thread runs on a busy machine."""
        asked = time.time()
        n = len(self.times)
        # Marker n may have been timed before ASKED (the thread was writing it); n + 1 not.
        wait_until("a timed marker after the request time", lambda: len(self.times) >= n + 2)
        return asked

    def seen(self, paths):
        """The marker numbers trace-cmd reports in PATHS, in file order."""
        if isinstance(paths, str):
            paths = [paths]
        out = []
        for path in paths:
            for line in report(path):
                m = self.TEXT.search(line)
                if m:
                    out.append(int(m.group(1)))
        return out

    def assert_window(self, paths, asked):
        """PATHS hold markers 0..N, each once, in order, with no gap, and the last of them
        was written at most 1 s before ASKED (request_time(), just before a request): a
        window that ends at most 1 s before the request, with every marker of it."""
        got = self.seen(paths)
        assert got == list(range(len(got))), "timed markers not 0..N once each: %s" % (
            got[:10] if len(got) < 20 else "%d markers, first gap at %d" % (
                len(got), next(i for i, n in enumerate(got) if n != i)))
        assert got, "no timed marker in %s" % paths
        last = got[-1]
        assert self.times[last] >= asked - 1.0, \
            "the window ends %.3f s before the request: marker %d of %d" % (
                asked - self.times[last], last, len(self.times))
        return len(got)


def report(path, *extra):
    r = subprocess.run(["trace-cmd", "report"] + list(extra) + ["-i", path],
                       capture_output=True, text=True, errors="replace", timeout=600)
    assert r.returncode == 0, "trace-cmd report failed (%d): %s" % (r.returncode, r.stderr)
    return r.stdout.splitlines()


def check_events(path):
    """trace-cmd's own check, and ours (ftracectl verify), both on every file we make."""
    r = subprocess.run(["trace-cmd", "report", "--check-events", "-i", path],
                       capture_output=True, text=True)
    assert r.returncode == 0, "trace-cmd report --check-events: %d %s" % (r.returncode, r.stderr)
    r = subprocess.run([FTRACECTL, "verify", path], capture_output=True, text=True)
    assert r.returncode == 0 and "valid:" in r.stdout, "ftracectl verify: " + r.stderr


LINE = re.compile(r"\[(\d+)\]\s+[\d.]+:\s+(\S+):")
MARKER = re.compile(r"ftseq=(\w+):(\d+):(\d+)")


def event_lines(lines):
    """(cpu, event name, line) for every event line of a report."""
    out = []
    for line in lines:
        m = LINE.search(line)
        if m:
            out.append((int(m.group(1)), m.group(2), line))
    return out


def parse_markers(lines, tag="t"):
    """{cpu written on: [numbers in file order]}, checking the CPU column agrees."""
    seen = {}
    for cpu, _, line in event_lines(lines):
        m = MARKER.search(line)
        if not m or m.group(1) != tag:
            continue
        gen_cpu = int(m.group(2))
        assert gen_cpu == cpu, "marker from CPU %d recorded on CPU %d" % (gen_cpu, cpu)
        seen.setdefault(gen_cpu, []).append(int(m.group(3)))
    return seen


def assert_complete_sequences(seen, written):
    for cpu, n in written.items():
        got = seen.get(cpu, [])
        if got != list(range(n)):
            missing = sorted(set(range(n)) - set(got))
            dups = len(got) - len(set(got))
            raise AssertionError("CPU %d: %d of %d markers, %d missing (first %s), %d duplicated"
                                 ", in order: %s" % (cpu, len(got), n, len(missing),
                                                     missing[:5], dups, got == sorted(got)))


def daemon_fds(d):
    """The daemon's open fds: {fd path under /proc: what it points at}."""
    fds = {}
    for fd in os.listdir("/proc/%d/fd" % d.proc.pid):
        path = "/proc/%d/fd/%s" % (d.proc.pid, fd)
        try:
            fds[path] = os.readlink(path)
        except FileNotFoundError:
            pass  # closed meanwhile
    return fds


def is_symbol_cache(d, link):
    """Is LINK the daemon's cached symbols: an unlinked file of its state directory, or a
    memfd (a new one can take over while a file is being written)?"""
    return bool(re.search(r"^%s/#\d+ \(deleted\)$|^/memfd:ftraced-kallsyms \(deleted\)$"
                          % re.escape(os.path.realpath(d.state)), link))


def kallsyms_addresses(path):
    """The addresses of the symbols in a file's kallsyms section."""
    dump = subprocess.run(["trace-cmd", "dump", "--kallsyms", path], capture_output=True,
                          text=True).stdout.splitlines()
    return [int(line.split()[0], 16) for line in dump
            if len(line.split()) >= 3 and len(line.split()[0]) == 16]


# bpf(2)'s number, by machine.
BPF_SYSCALL = {"x86_64": 321, "aarch64": 280}
BPF_PROG_LOAD = 5
BPF_PROG_TYPE_SOCKET_FILTER = 1


def load_bpf_program(name):
    """Loads a do-nothing socket filter called NAME (at most 15 characters): the kernel
    JITs it and lists it in /proc/kallsyms as bpf_prog_<tag>_<NAME> for as long as the
    returned fd is open. The kernel's symbols change without /proc/modules changing."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # r0 = 0; exit
    insns = ctypes.create_string_buffer(struct.pack("<BBhiBBhi", 0xb7, 0, 0, 0, 0x95, 0, 0, 0))
    license_ = ctypes.create_string_buffer(b"GPL")
    attr = bytearray(128)
    # prog_type, insn_cnt, insns, license; prog_name at 48 (union bpf_attr, BPF_PROG_LOAD)
    struct.pack_into("<IIQQ", attr, 0, BPF_PROG_TYPE_SOCKET_FILTER, 2,
                     ctypes.addressof(insns), ctypes.addressof(license_))
    attr[48:48 + len(name)] = name.encode()
    fd = libc.syscall(BPF_SYSCALL[os.uname().machine], BPF_PROG_LOAD,
                      (ctypes.c_char * len(attr)).from_buffer(attr), len(attr))
    assert fd >= 0, "cannot load a BPF program: " + os.strerror(ctypes.get_errno())
    return fd


def assert_real_kallsyms(path):
    """The file's kallsyms: thousands of symbols, most at non-zero addresses (CAP_SYSLOG
    was held when the daemon opened /proc/kallsyms)."""
    addresses = kallsyms_addresses(path)
    assert len(addresses) > 1000, "kallsyms missing in " + path
    assert sum(1 for a in addresses if a) > len(addresses) // 2, "kallsyms are zeros in " + path


FIFO_READER = """
import sys, time
fifo, out, gate, block, pause = sys.argv[1], sys.argv[2], sys.argv[3] == "1", \\
    int(sys.argv[4]), float(sys.argv[5])
f = open(fifo, "rb")
if gate:
    sys.stdin.readline()
with open(out, "wb") as o:
    while True:
        b = f.read(block)
        if not b:
            break
        o.write(b)
        time.sleep(pause)
"""


def fifo_reader(fifo, out, gate=False, block=65536, pause=0.0):
    """A process that opens FIFO at once and copies it into OUT, BLOCK bytes at a time with
    PAUSE seconds between reads; with GATE, it reads nothing until a line on its stdin."""
    return subprocess.Popen([sys.executable, "-c", FIFO_READER, fifo, out, "1" if gate else "0",
                             str(block), str(pause)], stdin=subprocess.PIPE, text=True)


def proto_constants():
    """The wire protocol's constants as include/ftraced/proto.h defines them: its #defines
    with a number, and every enum member (counting on from the last explicit value).
    Names lose their FTRACED_ prefix: MSG_STATUS, ATTR_SESSION, PROTO_MAGIC, ..."""
    text = open(PROTO_H).read()
    out = {}
    for name, value in re.findall(r"^#define FTRACED_(\w+)[ \t]+([^/\n]+)", text, re.M):
        # Numbers and products of numbers: (64u * 1024u), UINT32_C(0x43525446).
        expr = re.sub(r"UINT(?:32|64)_C\(([^)]*)\)", r"\1", value.strip())
        expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)u\b", r"\1", expr)
        if re.fullmatch(r"[\s()*0-9a-fA-Fx]+", expr):
            out[name] = eval(expr, {"__builtins__": {}})  # only digits, x, *, ()
    for body in re.findall(r"enum \w+ \{(.*?)\};", text, re.S):
        value = -1
        for m in re.finditer(r"^\s*(_?FTRACED_\w+)(?:\s*=\s*(\d+))?,", body, re.M):
            value = int(m.group(2)) if m.group(2) else value + 1
            out[m.group(1).lstrip("_").replace("FTRACED_", "", 1)] = value
    return out


V7_SECTION_BUFFER = 3  # the flyrecord section's id


def first_section_id(path):
    """The id of the section right after a v7 file's header."""
    with open(path, "rb") as f:
        head = f.read(256)
    assert head.startswith(b"\x17\x08\x44tracing"), path
    pos = head.index(b"\0", 10) + 1 + 2 + 4        # version, endianness, long size, page size
    pos = head.index(b"\0", head.index(b"\0", pos) + 1) + 1  # compression name, version
    return struct.unpack_from("<H", head, pos + 8)[0]  # after the first OPTIONS offset


def wait_until(what, cond, timeout=120):
    """Polls @cond until it holds; fails naming @what after @timeout seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting: " + what
        time.sleep(0.05)


def count_markers(files, tag="t"):
    """ftraced-count's JSON for FILES read as one capture: per generator CPU, the numbered
    markers (tag TAG) that arrived, were duplicated or are missing."""
    if isinstance(files, str):
        files = [files]
    out = subprocess.run([COUNTER, "-t", tag] + list(files), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def wall_seconds(text):
    """"2026-11-25T13:02:00.123456789Z" (ftracectl's UTC times) as seconds since the epoch."""
    whole, frac = text.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + int(frac) / 1e9


def failure_reason():
    """The last lines of the exception being handled; when cleanup raised while handling
    another (a chain), the first one's too: it is the cause, the rest its aftermath."""
    exc = sys.exc_info()[1]
    first = exc
    while first.__context__ is not None and first.__context__ is not first:
        first = first.__context__
    lines = traceback.format_exc().rstrip().splitlines()[-6:]
    if first is not exc:
        cause = traceback.format_exception(type(first), first, first.__traceback__, chain=False)
        lines = ["first:"] + "".join(cause).rstrip().splitlines()[-4:] + ["then:"] + lines[-3:]
    return lines


def run(tests=None):
    """Runs TESTS, or every test_* function of the calling script in the order they are
    defined; prints 'N passed, M failed'."""
    if tests is None:
        main = sys.modules["__main__"]
        tests = sorted((f for name, f in vars(main).items()
                        if name.startswith("test_") and callable(f)
                        and getattr(f, "__module__", None) == "__main__"),
                       key=lambda f: f.__code__.co_firstlineno)
    skip_unless_possible()
    before = our_instances()
    cmdlines = os.path.join(TRACING, "saved_cmdlines_size")
    with open(cmdlines) as f:
        cmdlines_before = f.read().strip()
    passed = failed = 0
    for test in tests:
        name = test.__name__
        start = time.monotonic()
        try:
            test()
            leftover = [i for i in our_instances() if i not in before]
            assert not leftover, "instances left behind: %s" % leftover
            if RAISED_CMDLINES:
                with open(cmdlines, "w") as f:  # put back, so the next test starts clean
                    f.write(cmdlines_before)
                raised = RAISED_CMDLINES[:]
                del RAISED_CMDLINES[:]
                raise AssertionError("a daemon of this test raised saved_cmdlines_size (started "
                                     "without saved-cmdlines = 0): %s" % raised)
            passed += 1
            print("PASS %s (%.1f s)" % (name, time.monotonic() - start), flush=True)
        except Exception:
            failed += 1
            print("FAIL %s: %s" % (name, "\n    ".join(failure_reason())[:2000]), flush=True)
            traceback.print_exc()
            sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
