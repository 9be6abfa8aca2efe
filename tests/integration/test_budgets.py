#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Disk budgets of continuous sessions through the real daemon on the real
kernel: a --max-total that cannot hold one segment with this kernel's
metadata is refused with the minimum named; a retention that cannot count
its files says so in status and in the metrics; files retention deleted
show in status beside the kernel's loss."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Daemon, daemon, check_events, event_lines, our_instances, report, run,  # noqa: E402
                     wait_until)


def segments(d, name):
    directory = os.path.join(d.state, "sessions", name)
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if f.endswith(".dat") and not f.startswith(".")]


def refused_minimum(d, *args):
    """create with @args is refused for its --max-total: the minimum it names, in KiB."""
    before = our_instances()
    r = d.ctl("create", "tight", "-e", "sched:sched_switch", *args, check=False)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    m = re.search(r"--max-total must be at least (\d+) KiB", r.stderr)
    assert m and "cannot hold one segment" in r.stderr, r.stderr
    assert d.ctl_json("list") == [], "a refused session was created"
    # The session's instance, made before the budget could be weighed, went with it; what may
    # stay is the daemon's clock anchor (id 0), made once for every session.
    left = [n for n in set(our_instances()) - set(before) if not n.endswith("-0")]
    assert not left, "a refused session left its instance: %s" % left
    return int(m.group(1))


def test_max_total_holds_one_segment_with_its_metadata():
    """1M segments and --max-total 1M: every file would be deleted as it closed (a segment
    carries this kernel's metadata on top of its data). Refused, naming the minimum; that
    minimum, computed from this kernel's metadata, keeps the files it lets through."""
    with daemon() as d:
        plain = refused_minimum(d, "--compression", "none", "--segment-size", "1M",
                                "--max-total", "1M")
        packed = refused_minimum(d, "--segment-size", "1M", "--max-total", "1M")
        # The symbols, compressed in both, weigh well over a hundred KiB.
        assert min(plain, packed) > 1024 + 100, (plain, packed)

        limits = ["--compression", "none", "--segment-size", "64K"]
        d.ctl("create", "fits", "-e", "sched:sched_switch", *limits, "--max-total",
              "%dK" % refused_minimum(d, *limits, "--max-total", "1M"))
        d.ctl("start", "fits")
        wait_until("three segments closed",
                   lambda: d.ctl_json("status", "fits")["files_written"] >= 3)
        d.ctl("stop", "fits")
        st = d.ctl_json("status", "fits")
        files = segments(d, "fits")
        assert st["segments_kept"] >= 1 and len(files) == st["segments_kept"], (st, files)
        assert sum(os.stat(f).st_blocks * 512 for f in files) <= st["max_total"]
        for f in files:
            check_events(f)
        assert sum(len(event_lines(report(f))) for f in files) > 0, files
        d.ctl("destroy", "fits")


def test_session_file_budget_refused():
    """A sessions.d file whose max-total cannot hold one segment with its metadata is skipped,
    and the log says why and names the minimum; its neighbour with room starts."""
    d = Daemon().with_session_files({
        "tight.conf": "events = sched:sched_switch\ncompression = none\n"
                      "segment-size = 1M\nmax-total = 1M\n",
        "roomy.conf": "events = sched:sched_switch\ncompression = none\n"
                      "segment-size = 1M\nmax-total = 64M\n"})
    try:
        d.start()
        wait_until("roomy running", lambda: [s["state"] for s in d.ctl_json("list")
                                             if s["name"] == "roomy"] == ["running"])
        assert [s["name"] for s in d.ctl_json("list")] == ["roomy"]
        assert re.search(r"tight\.conf: --max-total 1024 KiB cannot hold one segment.*"
                         r"must be at least \d+ KiB; skipping this session", d.log()), d.log()
        d.ctl("destroy", "roomy")
        d.stop()
    finally:
        d.cleanup()


def metrics_daemon():
    """A daemon writing its metrics file into d.textfile every second while a session runs."""
    d = Daemon()
    d.textfile = os.path.join(d.dir, "textfile")
    os.mkdir(d.textfile)
    conf = os.path.join(d.dir, "ftraced.conf")
    with open(conf, "w") as f:
        f.write("saved-cmdlines = 0\nmetrics-directory = %s\nmetrics-interval = 1s\n"
                % d.textfile)
    d.extra_args = ["--group", "", "--config", conf]
    return d


def metric(d, name, session):
    """A session's sample in the metrics file the daemon wrote, or None."""
    try:
        with open(os.path.join(d.textfile, "ftraced.prom")) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    m = re.search(r'^%s\{session="%s"\} (\S+)$' % (name, session), text, re.M)
    return float(m.group(1)) if m else None


def test_linked_manifest_is_a_warning():
    """Another name hard-linked to the session's .ftraced-files turns retention off (it must
    not delete what another file lists): status says so, human and --json, and so do the
    metrics the daemon writes; the files stay, every one of them readable."""
    d = metrics_daemon()
    try:
        d.start()
        d.ctl("create", "linked", "-e", "sched:sched_switch", "--segment-time", "150ms",
              "--max-files", "2")
        directory = os.path.join(d.state, "sessions", "linked")
        manifest = os.path.join(directory, ".ftraced-files")
        open(manifest, "w").close()
        os.link(manifest, os.path.join(d.dir, "elsewhere"))
        d.ctl("start", "linked")
        wait_until("four segments closed",
                   lambda: d.ctl_json("status", "linked")["files_written"] >= 4)
        st = d.ctl_json("status", "linked")
        assert "retention cannot count its files" in st.get("warning", ""), st
        assert ".ftraced-files is not the daemon's own file" in st["warning"], st
        assert st["retention_failures"] >= 1 and st["files_deleted"] == 0, st
        text = d.ctl("status", "linked").stdout
        assert re.search(r"^  warning: .*retention cannot count its files", text, re.M), text
        wait_until("the metrics file says so",
                   lambda: metric(d, "ftraced_session_warning", "linked") == 1 and
                   (metric(d, "ftraced_retention_failures_total", "linked") or 0) >= 1)
        d.ctl("stop", "linked")
        files = segments(d, "linked")
        assert len(files) >= 4, "retention deleted files with a linked manifest: %s" % files
        for f in files:
            check_events(f)
        d.ctl("destroy", "linked")
        d.stop()
    finally:
        d.cleanup()


def test_status_says_what_retention_deleted():
    """The kernel lost nothing, but retention deleted files and their events: status says
    how many files and bytes, human and --json, and the metrics count the bytes."""
    d = metrics_daemon()
    try:
        d.start()
        d.ctl("create", "few", "-e", "sched:sched_switch", "--segment-time", "150ms",
              "--max-files", "2")
        d.ctl("start", "few")
        wait_until("two segments deleted",
                   lambda: d.ctl_json("status", "few")["files_deleted"] >= 2)
        d.ctl("stop", "few")
        st = d.ctl_json("status", "few")
        assert st["bytes_deleted"] > 0 and st["retention_failures"] == 0, st
        assert "warning" not in st, st
        text = d.ctl("status", "few").stdout
        m = re.search(r"^  deleted: +(\d+) files \((.+)\) by retention, with their events$",
                      text, re.M)
        assert m and int(m.group(1)) == st["files_deleted"], text
        wait_until("the metrics file counts the bytes",
                   lambda: metric(d, "ftraced_deleted_bytes_total", "few") ==
                   st["bytes_deleted"])
        assert metric(d, "ftraced_session_warning", "few") == 0
        d.ctl("destroy", "few")
        d.stop()
    finally:
        d.cleanup()


if __name__ == "__main__":
    sys.exit(run())
