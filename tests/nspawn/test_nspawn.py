#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ftraced under a real systemd: a minimal Debian 12 root (mmdebstrap) with
the project's Debian package (built with dpkg-buildpackage, installed with
dpkg -i, which enables ftraced.socket), booted with systemd-nspawn and
the host's tracefs bound in. checks.sh runs inside (socket activation,
readiness, a capture under the hardened unit, a watchdog restart through
the test hook, the metrics file and ftraced-ship@.path shipping segments to
a WebDAV server, `systemctl stop` during a capture); this script verifies its
files here with trace-cmd.

The base root is built once per package list and kept in
/var/tmp/ftraced-nspawn/; every run boots a fresh copy of it."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from harness import (assert_complete_sequences, assert_real_kallsyms,  # noqa: E402
                     check_events, count_markers, event_lines,
                     our_instances, own_state_dir, remove_instances_since, parse_markers, report, SKIP,
                     TRACING)

LOADGEN = os.environ["LOADGEN"]
PACKAGES = ["systemd", "systemd-sysv", "dbus", "libtracefs1", "libtraceevent1", "libzstd1",
            "libcap2", "libelf1", "libjansson4", "rclone", "libbabeltrace2-0"]
CACHE = "/var/tmp/ftraced-nspawn"
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
CAP_SYSLOG = 34
BOOT_TIMEOUT = 600


def skip_unless_possible():
    if os.geteuid() != 0:
        print("SKIP: needs root")
        sys.exit(SKIP)
    if not os.path.isdir(os.path.join(TRACING, "instances")):
        print("SKIP: tracefs is not mounted")
        sys.exit(SKIP)
    for tool in ("systemd-nspawn", "mmdebstrap", "trace-cmd", "dpkg-buildpackage"):
        if not shutil.which(tool):
            print("SKIP: %s is not installed (scripts/test.sh installs it)" % tool)
            sys.exit(SKIP)


def base_root():
    """The bootstrapped root for PACKAGES, built on first use."""
    key = hashlib.sha256(" ".join(PACKAGES).encode()).hexdigest()[:12]
    root = os.path.join(CACHE, "base-" + key)
    if os.path.isdir(root):
        return root
    os.makedirs(CACHE, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="building-", dir=CACHE)
    print("bootstrapping a Debian 12 root (once)", flush=True)
    subprocess.run(["mmdebstrap", "--quiet", "--variant=minbase",
                    "--include=" + ",".join(PACKAGES), "bookworm", tmp + "/root"], check=True,
                   timeout=900)
    os.rename(tmp + "/root", root)
    os.rmdir(tmp)
    return root


def copy_tree(dest):
    """The tracked files of the checkout (what a fresh clone has), else the whole tree."""
    files = subprocess.run(["git", "-C", SOURCE, "ls-files", "-z"], capture_output=True)
    if files.returncode != 0:
        shutil.copytree(SOURCE, dest, ignore=shutil.ignore_patterns("build*", ".git"))
        return
    for rel in files.stdout.decode().split("\0"):
        if not rel or not os.path.exists(os.path.join(SOURCE, rel)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(os.path.join(SOURCE, rel), os.path.join(dest, rel), follow_symlinks=False)


def build_deb(work):
    """The project's Debian package, built as an admin would: dpkg-buildpackage -b
    in a copy of the tracked tree. Returns the .deb's path."""
    src = os.path.join(work, "src", "ftraced")
    copy_tree(src)
    p = subprocess.run(["dpkg-buildpackage", "-b", "-uc", "-us"], cwd=src,
                       capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, "dpkg-buildpackage failed:\n" + (p.stdout + p.stderr)[-6000:]
    debs = [n for n in os.listdir(os.path.dirname(src))
            if re.fullmatch(r"ftraced_[^_]+_[a-z0-9]+\.deb", n)]
    assert len(debs) == 1, os.listdir(os.path.dirname(src))
    deb = os.path.join(os.path.dirname(src), debs[0])
    # The babeltrace2 plugin ships in the package, where babeltrace2 looks for plugins.
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True,
                           check=True).stdout
    assert re.search(r"/babeltrace2/plugins/babeltrace-plugin-ftraced\.so$", files, re.M), files
    return deb


def install(root, deb):
    """The package installed with dpkg, as on a server; its maintainer scripts
    create the group, the state directory and enable ftraced.socket."""
    shutil.copy(deb, os.path.join(root, "tmp", "ftraced.deb"))
    p = subprocess.run(["chroot", root, "dpkg", "-i", "/tmp/ftraced.deb"], capture_output=True,
                       text=True)
    assert p.returncode == 0, "dpkg -i failed:\n" + p.stdout + p.stderr
    assert os.path.islink(os.path.join(root, "etc/systemd/system/sockets.target.wants/"
                                       "ftraced.socket")), "the package did not enable the socket"
    assert not os.path.exists(os.path.join(root, "etc/systemd/system/multi-user.target.wants/"
                                           "ftraced.service")), "the service is enabled itself"
    for path in ("usr/sbin/ftraced", "usr/bin/ftracectl", "usr/share/man/man8/ftraced.8.gz",
                 "usr/share/bash-completion/completions/ftracectl",
                 "usr/lib/sysusers.d/ftraced.conf", "usr/lib/tmpfiles.d/ftraced.conf"):
        assert os.path.exists(os.path.join(root, path)), path
    with open(os.path.join(root, "etc/group")) as f:
        assert any(line.startswith("tracing:") for line in f), "no tracing group"
    os.makedirs(os.path.join(root, "usr/local/bin"), exist_ok=True)
    shutil.copy(LOADGEN, os.path.join(root, "usr/local/bin/ftraced-loadgen"))
    shutil.copy(os.path.join(HERE, "checks.sh"), os.path.join(root, "usr/local/bin/checks.sh"))
    # The test hook and a short watchdog, so a stuck worker is noticed within seconds.
    dropin = os.path.join(root, "etc/systemd/system/ftraced.service.d")
    os.makedirs(dropin)
    with open(os.path.join(dropin, "test.conf"), "w") as f:
        f.write("[Service]\nWatchdogSec=3s\nEnvironment=FTRACED_TEST_HOOKS=1\n")
    with open(os.path.join(root, "etc/systemd/system/ftraced-checks.service"), "w") as f:
        f.write("[Unit]\nAfter=multi-user.target\n[Service]\nType=exec\n"
                "ExecStart=/usr/local/bin/checks.sh\n")
    with open(os.path.join(root, "etc/hostname"), "w") as f:
        f.write("ftraced-ci\n")
    # The host's tracefs is bound in: its saved_cmdlines_size stays as it was.
    os.makedirs(os.path.join(root, "etc/ftraced"), exist_ok=True)
    with open(os.path.join(root, "etc/ftraced/ftraced.conf"), "w") as f:
        f.write("saved-cmdlines = 0\n"
                "metrics-directory = /var/lib/prometheus/node-exporter\nmetrics-interval = 1s\n")
    # node_exporter's textfile directory, as its package makes it.
    os.makedirs(os.path.join(root, "var/lib/prometheus/node-exporter"))


# systemd-nspawn's exit status when the container asked to be rebooted.
REBOOTED = 133


def boot(root, results):
    """Boots the root until checks.sh calls `systemctl exit`; its status. A reboot the
    container asks for (checks.sh reboots once, to test what outlives one) boots it
    again, as a machine's firmware would."""
    for _ in range(3):
        with open(os.path.join(results, "console.log"), "ab") as console:
            p = subprocess.run(
                ["systemd-nspawn", "--quiet", "--boot", "--directory=" + root,
                 "--register=no", "--keep-unit", "--console=pipe", "--capability=CAP_SYSLOG",
                 "--bind=/sys/kernel/tracing", "--bind=%s:/results" % results,
                 "--", "systemd.wants=ftraced-checks.service"],
                stdin=subprocess.DEVNULL, stdout=console, stderr=console, timeout=BOOT_TIMEOUT)
        if p.returncode != REBOOTED:
            break
    return p.returncode


def written_counts(results, prefix):
    """{CPU: markers written}, from the loadgen reports PREFIX-CPU.txt."""
    written = {}
    for name in os.listdir(results):
        m = re.match(re.escape(prefix) + r"-(\d+)\.txt$", name)
        if m:
            with open(os.path.join(results, name)) as f:
                written[int(m.group(1))] = int(re.search(r"written=(\d+)", f.read()).group(1))
    return written


def assert_every_marker(results, prefix, tags, count, files):
    """Each tag's markers (@count a CPU, as the loadgen reports PREFIX-TAG-CPU.txt say)
    are in @files once each, in order."""
    for tag in tags:
        written = written_counts(results, prefix + "-" + tag)
        assert written and all(n == count for n in written.values()), (tag, written)
        got = count_markers(files, tag=tag)["generators"]
        for cpu, n in written.items():
            g = got[str(cpu)]
            assert (g["distinct"], g["duplicates"], g["in_order"]) == (n, 0, True), (tag, cpu, g)


def verify(results):
    """The host's view of the files checks.sh left."""
    written = written_counts(results, "written")
    assert written and all(n == 20000 for n in written.values()), written
    markers = os.path.join(results, "markers.dat")
    check_events(markers)
    assert_complete_sequences(parse_markers(report(markers)), written)
    print("PASS markers.dat: %d markers, gap-free on %d CPUs" % (sum(written.values()),
                                                                 len(written)))

    status = {}
    with open(os.path.join(results, "daemon-status.txt")) as f:
        for line in f:
            key, _, value = line.partition(":")
            status[key] = value.strip()
    for key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(status[key], 16) == 0, "%s = %s" % (key, status[key])
    assert int(status["CapBnd"], 16) & ~(1 << CAP_SYSLOG) == 0, status["CapBnd"]
    assert status["NoNewPrivs"] == "1", status
    assert_real_kallsyms(markers)
    print("PASS no capabilities in the unit, yet real kallsyms addresses")

    stop = os.path.join(results, "stop.dat")
    check_events(stop)
    assert event_lines(report(stop)), "stop.dat holds no events"
    recovered = [n for n in os.listdir(results) if n.endswith("-recovered.dat")]
    assert len(recovered) == 1, os.listdir(results)
    check_events(os.path.join(results, recovered[0]))
    assert event_lines(report(os.path.join(results, recovered[0]))), "nothing was recovered"

    print("PASS stop.dat and the recovered %s are complete files" % recovered[0])

    shipped_dir = os.path.join(results, "shipped", "traces", "ftraced-ci", "ship")
    shipped = sorted(os.path.join(shipped_dir, n) for n in os.listdir(shipped_dir))
    for path in shipped:
        check_events(path)
    ship_written = written_counts(results, "ship-written")
    assert ship_written and all(n == 20000 for n in ship_written.values()), ship_written
    merged = {}  # segments in name (time) order, so each CPU's numbers in order
    for path in shipped:
        for key, seqs in parse_markers(report(path), tag="ship").items():
            merged.setdefault(key, []).extend(seqs)
    assert_complete_sequences(merged, ship_written)
    print("PASS %d shipped segments hold all %d markers, gap-free" % (
        len(shipped), sum(ship_written.values())))

    keep_dir = os.path.join(results, "keep")
    keep = sorted(os.path.join(keep_dir, n) for n in os.listdir(keep_dir))
    gaps = []
    assert_every_marker(results, "keep", ("k1", "k2", "k3", "k4"), 5000, keep)
    for path in keep:
        dump = subprocess.run(["trace-cmd", "dump", "--options", path], capture_output=True,
                              text=True).stdout
        gaps += [(os.path.basename(path), line) for line in
                 sorted(set(re.findall(r"ftraced-gap: (.*)", dump)))]
    # restart, kill -9, the flight recorder's restart and kill -9 (checks.sh), reboot
    assert len(gaps) == 5, "files that say a gap, expected 5 (restart, kill -9, restart, " \
        "kill -9, reboot): %s; " \
        "all: %s" % (gaps, [os.path.basename(p) for p in keep])
    print("PASS the created session outlived a restart, a kill -9 and a reboot: every "
          "marker in its %d files, 5 gaps said" % len(keep))

    fl = os.path.join(results, "fl.dat")
    check_events(fl)
    assert_every_marker(results, "fl", ("f1", "f2"), 20000, [fl])
    dump = subprocess.run(["trace-cmd", "dump", "--options", fl], capture_output=True,
                          text=True).stdout
    assert re.search(r"ftraced-gap: .*after a crash", dump), dump[-2000:]
    print("PASS the memory flight recorder's history outlived systemctl restart and a "
          "kill -9: one snapshot holds every marker, the gap said")


def main():
    skip_unless_possible()
    before = set(our_instances())
    work = tempfile.mkdtemp(prefix="ftraced-nspawn-", dir="/var/tmp")
    results = os.path.join(work, "results")
    root = os.path.join(work, "root")
    # The container's daemon keeps its tag in its own /var/lib/ftraced.
    own_state_dir(os.path.join(root, "var", "lib", "ftraced"))
    os.mkdir(results)
    try:
        deb = build_deb(work)
        print("PASS dpkg-buildpackage -b built %s" % os.path.basename(deb), flush=True)
        base = base_root()
        subprocess.run(["cp", "-a", "--reflink=auto", base, root], check=True)
        install(root, deb)
        print("PASS dpkg -i installed it: socket enabled, group and files in place", flush=True)
        rc = boot(root, results)
        log_path = os.path.join(results, "checks.log")
        log = open(log_path).read() if os.path.exists(log_path) else "(no checks.log)"
        print(log)
        if rc != 0 or "FAIL" in log or "PASS" not in log:
            for name in ("console.log", "journal-boot1.txt", "journal.txt"):
                path = os.path.join(results, name)
                if os.path.exists(path):
                    print("==== %s (last 150 lines)" % name)
                    print("\n".join(open(path, errors="replace").read().splitlines()[-150:]))
            print("FAIL: the container exited with %d" % rc)
            return 1
        verify(results)
        return 0
    finally:
        remove_instances_since(before)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
