#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Running on many hosts, with the tools fleets already run: Debian's Prometheus and
node_exporter scrape the daemon's metrics file, and rclone ships closed segments to a
real WebDAV server on loopback (scripts/ftraced-ship)."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Daemon, count_markers, loadgen, loadgen_result, run,  # noqa: E402
                     wait_until)

PROMETHEUS = shutil.which("prometheus")
NODE_EXPORTER = shutil.which("prometheus-node-exporter")
RCLONE = shutil.which("rclone")
SHIP = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                     "ship", "ftraced-ship"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            assert time.monotonic() < deadline, "nothing answers at " + url
            time.sleep(0.1)


def metrics_daemon(interval="1s"):
    """A daemon writing its metrics into the directory d.textfile, every INTERVAL."""
    d = Daemon()
    d.textfile = os.path.join(d.dir, "textfile")
    os.mkdir(d.textfile)
    conf = os.path.join(d.dir, "ftraced.conf")
    with open(conf, "w") as f:
        f.write("saved-cmdlines = 0\nmetrics-directory = %s\nmetrics-interval = %s\n"
                % (d.textfile, interval))
    d.extra_args = ["--group", "", "--config", conf]
    return d


class Prometheus:
    """node_exporter reading DIRECTORY's *.prom files, and Prometheus scraping it every
    second; both on loopback, stopped by close()."""

    def __init__(self, workdir, directory):
        self.procs = []
        exporter = "127.0.0.1:%d" % free_port()
        self.url = "http://127.0.0.1:%d" % free_port()
        log = open(os.path.join(workdir, "prometheus.log"), "ab")
        self.procs.append(subprocess.Popen(
            [NODE_EXPORTER, "--web.listen-address=" + exporter, "--collector.disable-defaults",
             "--collector.textfile", "--collector.textfile.directory=" + directory],
            stdout=log, stderr=log))
        config = os.path.join(workdir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: node\n    static_configs:\n"
                    "      - targets: ['%s']\n" % exporter)
        self.procs.append(subprocess.Popen(
            [PROMETHEUS, "--config.file=" + config,
             "--storage.tsdb.path=" + os.path.join(workdir, "tsdb"),
             "--web.listen-address=" + self.url[len("http://"):]],
            stdout=log, stderr=log))
        wait_http("http://%s/metrics" % exporter)
        wait_http(self.url + "/-/ready")

    def query(self, expr):
        """The instant vector EXPR as {frozenset(labels): value}."""
        url = self.url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return {frozenset((k, v) for k, v in s["metric"].items()
                          if k not in ("instance", "job")): float(s["value"][1])
                for s in body["data"]["result"]}

    def wait_value(self, expr, want, timeout=60):
        """Waits until EXPR (one series, no labels left) is WANT in Prometheus."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.query(expr)
            if list(got.values()) == [want]:
                return
            assert time.monotonic() < deadline, "%s: want %s, Prometheus has %s" % (
                expr, want, got)
            time.sleep(0.2)

    def close(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(timeout=30)


def test_prometheus_scrapes_a_known_loss():
    if not PROMETHEUS or not NODE_EXPORTER:
        print("SKIP: prometheus or prometheus-node-exporter is not installed")
        return
    d = None
    prom = None
    try:
        d = metrics_daemon().start()
        metrics = os.path.join(d.textfile, "ftraced.prom")
        assert not os.path.exists(metrics), "written while no session runs"
        prom = Prometheus(d.dir, d.textfile)

        # A 4 KiB ring per CPU and markers flat out on one CPU: the kernel overwrites
        # what ftraced could not read in time. The loss is known from the files: every
        # marker is numbered, and what is not in them was lost.
        d.ctl("create", "fleet", "-e", "ftrace:print", "-b", "4", "--segment-time", "500ms")
        d.ctl("start", "fleet")
        instance = d.ctl_json("status", "fleet")["instance"]
        written, runs = 0, 0
        while runs < 20:
            w, f, _ = loadgen_result(loadgen("--instance", instance, "--cpu", "0",
                                             "--count", "1000000", "--tag", "m%d" % runs))
            assert f == 0, "marker writes failed: the ring overwrites, it never refuses"
            written += w
            runs += 1
            if sum(c["overrun"] + c["dropped"] for c in d.ctl_json("status", "fleet")["cpus"]):
                break
        # While it runs the file is rewritten every interval.
        first = os.stat(metrics).st_mtime_ns
        deadline = time.monotonic() + 30
        while os.stat(metrics).st_mtime_ns == first:
            assert time.monotonic() < deadline, "the metrics file is not rewritten"
            time.sleep(0.1)
        assert os.stat(metrics).st_mode & 0o777 == 0o644  # node_exporter runs as its own user
        d.ctl("stop", "fleet")

        st = d.ctl_json("status", "fleet")
        directory = os.path.join(d.state, "sessions", "fleet")
        segments = sorted(os.path.join(directory, n) for n in os.listdir(directory)
                          if n.endswith(".dat") and not n.startswith("."))
        kept = sum(count_markers(segments, tag="m%d" % k)["generators"]
                   .get("0", {"distinct": 0})["distinct"] for k in range(runs))
        lost = sum(c["overrun"] + c["dropped"] for c in st["cpus"])
        assert lost > 0 and kept + lost == written, (kept, lost, written, st)

        # Prometheus has what the daemon counted, exactly.
        sel = '{session="fleet"}'
        prom.wait_value("sum(ftraced_events_lost_total%s)" % sel, float(lost))
        prom.wait_value("sum(ftraced_events_read_total%s)" % sel,
                        float(sum(c["read"] for c in st["cpus"])))
        prom.wait_value('ftraced_session_info{session="fleet",state="stopped"}', 1.0)
        prom.wait_value("ftraced_files_written_total%s" % sel, float(len(segments)))
        prom.wait_value("ftraced_disk_files%s" % sel, float(len(segments)))
        prom.wait_value("ftraced_disk_used_bytes%s" % sel,
                        float(sum(os.stat(s).st_blocks * 512 for s in segments)))
        prom.wait_value("ftraced_sessions_started_total", 1.0)
        text = d.ctl("metrics").stdout
        assert 'ftraced_events_lost_total{session="fleet",cpu="0"} %d\n' % lost in text, text

        # Nothing runs: the final counts stay, and the file is not rewritten.
        final = os.stat(metrics).st_mtime_ns
        time.sleep(2.5)
        assert os.stat(metrics).st_mtime_ns == final, "rewritten while idle"
        d.ctl("destroy", "fleet")
        d.stop()
        assert not os.path.exists(metrics), "left behind at exit"
    finally:
        if prom:
            prom.close()
        if d:
            d.cleanup()


class WebDav:
    """rclone serving DIRECTORY over WebDAV on a loopback port that stays the same across
    stop() and start(), as a remote that goes down and comes back."""

    def __init__(self, workdir, directory):
        self.directory = directory
        self.port = free_port()
        self.log = open(os.path.join(workdir, "webdav.log"), "ab")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [RCLONE, "serve", "webdav", self.directory, "--addr", "127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=self.log)
        wait_http("http://127.0.0.1:%d/" % self.port)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None

    def remote(self):
        return ':webdav,url="http://127.0.0.1:%d":' % self.port


def dat_files(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if n.endswith(".dat") and n[0] != ".")


def test_segments_reach_a_webdav_remote_through_an_outage():
    if not RCLONE:
        print("SKIP: rclone is not installed")
        return
    d = Daemon().start()
    server = None
    try:
        served = os.path.join(d.dir, "remote")
        os.mkdir(served)
        server = WebDav(d.dir, served)
        server.start()
        local = os.path.join(d.state, "sessions", "ship")
        remote = os.path.join(served, os.uname().nodename, "ship")
        # Retention alone bounds the disk: a file it deletes before a run gets through is
        # never shipped. 60 files of 400 ms keep each for 24 s, longer than the outage below
        # lasts on a busy machine: the upload in flight when the server dies holds the
        # session's lock through rclone's retries (6 s), and runs queue behind it.
        max_files = 60
        d.ctl("create", "ship", "-e", "ftrace:print", "--segment-time", "400ms",
              "--max-files", str(max_files),
              "--on-segment", "%s --remote '%s'" % (SHIP, server.remote()))
        d.ctl("start", "ship")
        instance = d.ctl_json("status", "ship")["instance"]
        # Numbered markers for 15 s: segments keep closing through every phase below.
        gen = loadgen("--instance", instance, "--cpu", "0", "--count", "30000",
                      "--rate", "2000", "--tag", "s")
        seen = set()  # every segment ever closed here

        def track():
            names = dat_files(local)
            # A new file is renamed into place, then retention deletes the oldest: between
            # the two there is one more.
            assert len(names) <= max_files + 1, "retention let %d files pile up" % len(names)
            seen.update(names)
            return names

        wait_until("two segments shipped", lambda: track() and len(dat_files(remote)) >= 2)

        # The remote goes away: uploads fail, capture goes on, files stay here.
        server.stop()
        down = set(track())
        wait_until("three segments closed while the remote is down",
                   lambda: len(set(track()) - down) >= 3)
        stranded = set(track()) - set(dat_files(remote))
        assert stranded, "every file reached a stopped server?"
        # A run against the stopped server fails only after rclone's retries (seconds).
        wait_until("a hook run failed while the remote is down",
                   lambda: "ftraced_hook_failures_total 0\n" not in d.ctl("metrics").stdout)

        # It comes back: the next run copies everything that was missed.
        server.start()
        wait_until("the stranded files shipped",
                   lambda: track() and stranded <= set(dat_files(remote)))
        # Long enough for retention to delete files that were shipped.
        wait_until("retention at work", lambda: len(track()) and len(seen) > max_files + 3)
        written = loadgen_result(gen)[0]
        d.ctl("stop", "ship")
        track()
        wait_until("every segment shipped", lambda: seen <= set(dat_files(remote)))

        # Remote files are the local ones, byte for byte; together they hold every marker.
        for name in dat_files(local):
            with open(os.path.join(local, name), "rb") as a, \
                    open(os.path.join(remote, name), "rb") as b:
                assert a.read() == b.read(), name
        assert len(dat_files(local)) <= max_files
        got = count_markers([os.path.join(remote, n) for n in dat_files(remote)], tag="s")
        st = d.ctl_json("status", "ship")
        assert got["generators"]["0"]["distinct"] + st["lost_events"] == written, (got, st)
        assert st["files_deleted"] > 0, st
        d.ctl("destroy", "ship")
        d.stop()
    finally:
        if server:
            server.stop()
        d.cleanup()


EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "sessions.d")


def test_fleet_session_files_start_on_this_kernel():
    """The README's sessions.d examples, written once for every host: both start here,
    and an event this kernel lacks is skipped and named, not fatal."""
    files = {}
    for name in sorted(os.listdir(EXAMPLES)):
        with open(os.path.join(EXAMPLES, name)) as f:
            files[name] = f.read()
    assert set(files) == {"always-on.conf", "flight.conf"}, files
    d = Daemon().with_session_files(files).start()
    try:
        for name in ("always-on", "flight"):
            d.wait_state(name, "running")
        events = set()
        for line in files["always-on.conf"].splitlines():
            if line.startswith("events ="):
                events.update(e.strip() for e in line.split("=", 1)[1].split(","))
        st = d.ctl_json("status", "always-on")
        missing = {e for e in events if "*" not in e and not os.path.isdir(
            os.path.join("/sys/kernel/tracing/events", *e.split(":")))}
        assert set(st.get("skipped_events", [])) == missing, (st, missing)
        flight = d.ctl_json("status", "flight")
        assert len(flight["triggers"]) == 3, flight
        d.ctl("destroy", "always-on")
        d.ctl("destroy", "flight")
        d.stop()
    finally:
        d.cleanup()


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no %s in:\n%s" % (name, text))


def proc_cpu_s(pid):
    """A process's user + system CPU from /proc, in clock ticks: every thread, ended ones too."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_metrics_count_the_daemons_own_cpu():
    """ftraced_cpu_seconds_total is the daemon's CPU to the microsecond: it grows
    with a capture, and agrees with /proc's tick-grained figure read around it."""
    tick = 1 / os.sysconf("SC_CLK_TCK")
    d = Daemon()
    try:
        d.start()
        pid = d.proc.pid
        before = metric(d.ctl("metrics").stdout, "ftraced_cpu_seconds_total")
        d.ctl("create", "cpu", "-e", "ftrace:print")
        d.ctl("start", "cpu")
        instance = d.ctl_json("status", "cpu")["instance"]
        written, failed, _ = loadgen_result(loadgen("--instance", instance, "--cpu", "0",
                                                    "--count", "300000", "--tag", "c"))
        assert written == 300000 and failed == 0
        d.ctl("stop", "cpu")
        d.ctl("destroy", "cpu")
        low = proc_cpu_s(pid)
        after = metric(d.ctl("metrics").stdout, "ftraced_cpu_seconds_total")
        high = proc_cpu_s(pid)
        assert after > before, (before, after)
        # /proc truncates user and system time to whole ticks each; the metric
        # falls between the two reads.
        assert low <= after <= high + 2 * tick, (low, after, high)
        # Finer than ticks: answering one request (about 0.1 ms) shows in the next.
        first = metric(d.ctl("metrics").stdout, "ftraced_cpu_seconds_total")
        second = metric(d.ctl("metrics").stdout, "ftraced_cpu_seconds_total")
        assert second > first, (first, second)
        d.stop()
    finally:
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
