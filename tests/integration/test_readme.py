#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every command of the README's usage block, run as it is written against
the real daemon (on a private socket: `ftraced &` is this test's daemon),
in order, in a directory of its own; then the files they made are read
back with trace-cmd and their events counted. A README example that stops
working fails this test.

Paths that name the machine's own daemon are pointed at the test's: the
state directory given to `recover` is one made for it, `$(pidof ftraced)`
is the test daemon's pid. An example the kernel refuses (the function
tracer where lockdown forbids it) must be refused saying why, as `list
--kernel` predicts."""

import gzip
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import FTRACECTL, daemon, event_lines, report, run  # noqa: E402

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def usage_commands():
    """The commands of the README's "Using it" block: continuation lines joined,
    comments cut (outside quotes)."""
    with open(README) as f:
        text = f.read()
    block = text.split("## Using it", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands, pending = [], ""
    for line in block.splitlines():
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        line, pending = pending + line, ""
        quote, cut = None, len(line)
        for i, ch in enumerate(line):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "#" and (i == 0 or line[i - 1].isspace()):
                cut = i
                break
        line = line[:cut].strip()
        if line:
            commands.append(line)
    return commands


def function_tracer_allowed(d):
    caps = d.ctl_json("list", "--kernel")["kernel"]
    return caps.get("function-in-instance") == "yes"


def count_events(path, name=None):
    return sum(1 for _, n, _ in event_lines(report(path)) if name is None or n == name)


def test_every_usage_example_runs():
    commands = usage_commands()
    assert len(commands) >= 30 and commands[0] == "ftraced &", commands[:3]
    with daemon() as d:
        work = os.path.join(d.dir, "work")
        recover_dir = os.path.join(d.dir, "recover-state")
        os.makedirs(work)
        os.makedirs(os.path.join(recover_dir, "spool"))
        with open(os.path.join(work, "Makefile"), "w") as f:
            f.write("all: a b\na:\n\t@cat /etc/hostname > /dev/null\nb:\n\t@true\n")
        # extract asks the test daemon where a session's files are, as a user's would.
        env = dict(d.env(), PATH=os.path.dirname(os.path.abspath(FTRACECTL)) + ":" +
                   os.environ["PATH"])
        env.pop("FTRACED_STATE_DIR", None)
        functions = function_tracer_allowed(d)
        outputs = {}
        for cmd in commands[1:]:
            shell = cmd.replace("/var/lib/ftraced", recover_dir)
            shell = shell.replace("$(pidof ftraced)", str(d.proc.pid))
            shell = re.sub(r"\bftracectl\b", os.path.abspath(FTRACECTL), shell)
            timeout = 120
            if cmd.startswith("babeltrace2") and os.environ.get("BABELTRACE_PRELOAD"):
                # An ASan build's plugin: its runtime first into babeltrace2.
                shell = "LD_PRELOAD=%s %s" % (os.environ["BABELTRACE_PRELOAD"], shell)
            if "--watch" in cmd:
                # A live view: one line a second when not on a terminal, until stopped.
                shell = "timeout -s INT 3 " + shell
            # errors="replace": babeltrace2 prints char arrays as they are, bytes and all.
            r = subprocess.run(["bash", "-c", shell], cwd=work, env=env, capture_output=True,
                               text=True, errors="replace", timeout=timeout)
            outputs[cmd] = r
            if "--watch" in cmd:
                assert r.stdout.count("\n") >= 1, (cmd, r.stdout, r.stderr)
            elif "-p function" in cmd and not functions:
                assert r.returncode == 5 and "not permitted on this system" in r.stderr, \
                    (cmd, r.returncode, r.stderr)
            else:
                assert r.returncode == 0, "README example failed (%d): %s\n%s" % (
                    r.returncode, cmd, r.stderr)
        # What the examples made, read back.
        assert count_events(os.path.join(work, "trace.dat"), "sched_switch") > 0
        assert count_events(os.path.join(work, "sleep.dat"), "sched_switch") > 0
        assert count_events(os.path.join(work, "raw.dat"), "sched_switch") > 0
        assert count_events(os.path.join(work, "id.dat")) > 0
        user_cmd = next(c for c in commands if "--user nobody" in c)
        # The command's output, then the summary.
        assert outputs[user_cmd].stdout.splitlines()[0] == "nobody", outputs[user_cmd].stdout
        assert count_events(os.path.join(work, "f.dat")) > 0
        assert count_events(os.path.join(work, "make.dat")) > 0
        assert count_events(os.path.join(work, "u.dat"), "opens") >= 1
        assert len({n for _, n, _ in event_lines(report(os.path.join(work, "all.dat")))}) >= 10
        with gzip.open(os.path.join(work, "sched.dat.gz")) as src, \
                open(os.path.join(work, "sched.dat"), "wb") as dst:
            dst.write(src.read())
        assert count_events(os.path.join(work, "sched.dat")) > 0
        assert count_events(os.path.join(work, "incident.dat")) > 0
        assert count_events(os.path.join(work, "last30s.dat")) > 0
        assert count_events(os.path.join(work, "window.dat"), "sched_switch") > 0
        rotated = outputs["ftracectl rotate bg"].stdout.strip()
        assert os.path.dirname(rotated) == os.path.join(d.state, "sessions", "bg"), rotated
        assert count_events(rotated, "sched_switch") > 0
        # The live extract rotated once more: its last file is the segment after that one.
        live = outputs["ftracectl extract bg --since -1m -o live.dat"].stdout
        assert count_events(os.path.join(work, "live.dat"), "sched_switch") > 0
        assert "from " + rotated in live and live.count("  from ") >= 2, live
        with open(os.path.join(work, "bg.conf")) as f:
            assert "max-total = 2G" in f.read()
        assert "sched:sched_switch" in outputs["ftracectl list -e 'sched_sw'"].stdout
        assert "snapshot-buffer" in outputs["ftracectl list --kernel"].stdout
        snapshot = outputs["ftracectl snapshot fr"].stdout.strip()
        assert os.path.exists(snapshot) and count_events(snapshot) > 0, snapshot
        # babeltrace2 (the build tree's plugin: BABELTRACE_PLUGIN_PATH) prints every event,
        # its CTF conversion reads back without the plugin, and merges with another file.
        events = count_events(os.path.join(work, "trace.dat"))
        printed = outputs["babeltrace2 trace.dat"].stdout
        assert printed.count("\n") == events and "sched:sched_switch" in printed, events
        env.pop("BABELTRACE_PLUGIN_PATH", None)
        back = subprocess.run(["babeltrace2", os.path.join(work, "ctf")], env=env,
                              capture_output=True, text=True, timeout=600)
        assert back.returncode == 0 and back.stdout.count("\n") == events, back.stderr[-2000:]
        merged = outputs["babeltrace2 mono.dat ctf"].stdout.count("\n")
        assert merged == events + count_events(os.path.join(work, "mono.dat")), merged
        assert d.proc.poll() is None, "the reload ended the daemon"
        assert d.ctl_json("list") == [], d.ctl_json("list")


if __name__ == "__main__":
    sys.exit(run())
