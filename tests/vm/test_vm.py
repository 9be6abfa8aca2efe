#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The real daemon on Debian 12's own kernel (6.1) and on Debian 13's 6.12,
booted under qemu (vm.py): what this host's kernel cannot show. Each test
runs on both kernels unless it needs one of them (test_*_on_6_1 and _on_6_12
call the same check with the series). Files come back to the host
and are read there with trace-cmd and the project's counter."""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import vm  # noqa: E402
from harness import assert_real_kallsyms, count_markers, event_lines, report, run  # noqa: E402

FTRACED = os.environ.get("FTRACED", "build/daemon/ftraced")
FTRACECTL = os.environ.get("FTRACECTL", "build/client/ftracectl")
LOADGEN = os.environ.get("LOADGEN", "build/bench/ftraced-loadgen")
BINARIES = {FTRACED: "/usr/bin/ftraced", FTRACECTL: "/usr/bin/ftracectl",
            LOADGEN: "/usr/bin/ftraced-loadgen"}

# Helpers for guest scripts. markers INSTANCE TAG N: N numbered markers on each
# CPU, written by the project's load generator pinned there (as on the host).
HELPERS = r"""
markers() {
    ftraced-loadgen --instance "$1" --cpu 0 --count "$3" --tag "$2" > /tmp/lg0 &
    lg=$!
    ftraced-loadgen --instance "$1" --cpu 1 --count "$3" --tag "$2" > /tmp/lg1
    wait $lg  # not a bare wait: the daemon and a record run in the background too
}
instance_of() {
    ftracectl --json status "$1" | sed -n 's/.*"instance": "\([^"]*\)".*/\1/p'
}
left_instances() {
    # what is left once removals (on the daemon's threads) are done, but its clock anchor
    i=0
    while ls /sys/kernel/tracing/instances | grep -v -- '-0$' | grep -q . && [ $i -lt 100 ]; do
        i=$((i + 1)); sleep 0.1
    done
    ls /sys/kernel/tracing/instances > /tmp/left
}
record_markers() {
    # record_markers FILE TAG N: markers and sched_switch recorded into FILE until stopped
    ftracectl record --quiet -e ftrace:print -e sched:sched_switch -o "$1" &
    rec=$!
    wait_running
    markers "$(ftracectl --json list | sed -n 's/.*"instance": "\([^"]*\)".*/\1/p')" "$2" "$3"
    kill -TERM $rec
    wait $rec
}
daemon_up() {
    # a daemon answering (one restarted by the script, or by init after a reboot)
    i=0
    until ftracectl list > /dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 600 ] || return 1; sleep 0.1
    done
}
wait_running() {
    i=0
    while ! ftracectl --json list | grep -q '"running"'; do
        i=$((i + 1)); [ $i -lt 600 ] || return 1; sleep 0.1
    done
}
"""


def sessions_left(r):
    """Instances the guest listed at the end, but the daemon's own clock anchor (-0)."""
    return [name for name in r.files["left"].split() if not name.endswith(b"-0")]


def assert_every_marker(path, tag, n):
    """Markers 0..@n-1 of @tag from both CPUs' generators, each once."""
    c = count_markers(path, tag)
    for cpu in ("0", "1"):
        g = c["generators"][cpu]
        assert g["distinct"] == n and g["min"] == 0 and g["max"] == n - 1, c


def boot(script, series="6.1", binaries=BINARIES, **kwargs):
    reason = vm.skip_reason(series)
    assert reason is None, "cannot boot %s: %s" % (series, reason)
    if series == "6.12":
        # Debian 12's qemu (7.2) corrupts EFLAGS in TCG's cmpxchg16b, which 6.12's SLUB
        # runs on every allocation: a double fault in kmem_cache_alloc_noprof in about
        # one boot in two, with -cpu max or qemu64, one host thread or many. Without
        # CX16 the kernel takes its other path: 12 boots of 12 here.
        kwargs.setdefault("cpu", "max,-cx16")
    # One host thread for every vCPU: with a thread each, a vCPU runs code another has
    # just patched (each event enabled patches kernel text). Seen: an int3 oops at boot
    # (6.12, 4 vCPUs), a soft lockup of the daemon's thread for minutes (6.1, 2 vCPUs),
    # livelocks at 64 vCPUs.
    kwargs.setdefault("tcg_thread", "single")
    result = vm.run(HELPERS + script, binaries, series=series, **kwargs)
    assert result.kernel and result.kernel.startswith(series + "."), result.kernel
    assert result.exit == 0, "guest script failed (%s):\n%s" % (result.exit,
                                                                 result.console[-4000:])
    return result


def record_and_kernel_flight_snapshot(series):
    """A record, and a kernel-backend flight snapshot, read back on the host.
    /proc/kallsyms starts with per-CPU symbols at address 0 on 6.1: the
    daemon must still see it has real addresses."""
    r = boot(r"""
set -e
record_markers /tmp/rec.dat t 300
emit rec.dat /tmp/rec.dat

ftracectl create kf --mode flight --flight-backend kernel -e ftrace:print -b 64
ftracectl start kf
inst=$(instance_of kf)
markers $inst t 3000
ftracectl --json snapshot kf -o /tmp/snap.dat > /tmp/snap.json
emit snap.json /tmp/snap.json
emit snap.dat /tmp/snap.dat
markers $inst u 500
ftracectl snapshot kf -o /tmp/snap2.dat
emit snap2.dat /tmp/snap2.dat
ftracectl --json status kf > /tmp/status.json
emit status.json /tmp/status.json
ftracectl destroy kf
left_instances
emit left /tmp/left
""", series=series)
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        rec = r.save("rec.dat", d)
        with open(rec, "rb") as f:
            head = f.read(18)
        # 6.1 cannot change the sub-buffer size: the 32 KiB preferred falls back to a page.
        subbuf = 4096 if series == "6.1" else 32768
        assert int.from_bytes(head[14:18], "little") == subbuf, head
        assert_every_marker(rec, "t", 300)
        assert any("sched_switch" in line for line in event_lines(report(rec)))
        assert_real_kallsyms(rec)
        snap = r.save("snap.dat", d)
        c = count_markers(snap, "t")
        for cpu in ("0", "1"):
            g = c["generators"][cpu]
            # The kernel ring keeps the newest: a gap-free suffix ending at the last marker.
            assert g["max"] == 2999 and g["distinct"] == g["max"] - g["min"] + 1, c
            assert g["min"] > 0, "the ring did not wrap? %s" % c
        # The second swap's buffer was cleared after the first: exactly what came since.
        c = count_markers(r.save("snap2.dat", d), "u")
        for cpu in ("0", "1"):
            g = c["generators"][cpu]
            assert g["min"] == 0 and g["max"] == 499 and g["distinct"] == 500, c
        assert not count_markers(os.path.join(d, "snap2.dat"), "t")["generators"]
    assert sessions_left(r) == [], r.files["left"]
    assert "shows no addresses" not in r.daemon_log, r.daemon_log
    # Both have the snapshot buffer: a snapshot swaps, tracing never pauses.
    assert b"tracing never pauses" in r.files["status.json"], r.files["status.json"]
    assert "snapshot by swap" in r.daemon_log and "paused" not in r.daemon_log, r.daemon_log


def test_record_and_kernel_flight_snapshot_on_6_1():
    record_and_kernel_flight_snapshot("6.1")


def test_record_and_kernel_flight_snapshot_on_6_12():
    record_and_kernel_flight_snapshot("6.12")


def function_tracer_kprobe_and_refusals(series):
    """Both run the function tracer in an instance, and have kprobes: -l
    limits the functions, --func-stack adds stacks, a kprobe fetches its
    argument and is gone afterwards. -g needs the top level on both (6.1 runs
    function_graph only there, 6.12's instances have no set_graph_function):
    refused, naming --top-level, which leases it. So is the persistent flight
    backend on a kernel booted without a reservation (6.1 cannot have one). On 6.1,
    --module limits the function tracer to a module's functions (nls_cp437, Debian's own
    module for that kernel, loaded first; crc7, tried before, has no traceable function
    in Debian's build: no __mcount_loc), and a module none of whose functions can be
    traced is refused."""
    module = glob.glob("/lib/modules/%s*/kernel/fs/nls/nls_cp437.ko" % series) \
        if series == "6.1" else []
    r = boot(r"""
set -e
if [ -f /lib/nls_cp437.ko ]; then
    insmod /lib/nls_cp437.ko
    : > /tmp/modfilter
    # The session's instance, not the clock anchor's (ftraced-TAG-0, no function tracer).
    ftracectl record --quiet -p function --module nls_cp437 -o /tmp/mod.dat -- \
        sh -c 'for f in /sys/kernel/tracing/instances/ftraced-*-[1-9]*/set_ftrace_filter; do
                   cat "$f"; done > /tmp/modfilter'
    emit modfilter /tmp/modfilter
    ftracectl record --quiet -p function --module no_such_module -o /tmp/nomod.dat -- true \
        2> /tmp/nomod.err || true
    emit nomod.err /tmp/nomod.err
fi
ftracectl record --quiet -p function -l 'vfs_*' -o /tmp/fn.dat -- cat /proc/version
emit fn.dat /tmp/fn.dat
ftracectl record --quiet -p function -l 'vfs_read' --func-stack -o /tmp/stack.dat -- \
    cat /proc/version
emit stack.dat /tmp/stack.dat
ftracectl record --quiet -F --probe 'p:opened do_sys_openat2 dfd=%di:s32' \
    -e syscalls:sys_enter_openat -o /tmp/kp.dat -- cat /proc/version
emit kp.dat /tmp/kp.dat
cat /sys/kernel/tracing/kprobe_events > /tmp/left_probes
emit left_probes /tmp/left_probes
ftracectl record -p function_graph -g do_sys_openat2 -o /tmp/fg.dat -- true 2> /tmp/fg.err || true
emit fg.err /tmp/fg.err
# A second glob that matches nothing, after one that did: refused, and the filter file
# libtracefs held open between them is closed (else the instance could not go).
ftracectl record -p function -l vfs_read -l no_such_function_here -o /tmp/nf.dat -- true \
    2> /tmp/nf.err || true
emit nf.err /tmp/nf.err
# Booted without a reservation: the persistent backend says what the command line needs.
ftracectl create pm --mode flight --flight-backend persistent -e ftrace:print 2> /tmp/pm.err \
    || true
emit pm.err /tmp/pm.err
ftracectl list > /dev/null
left_instances
emit left /tmp/left
cat /sys/kernel/tracing/saved_cmdlines_size > /tmp/cmdlines
emit cmdlines /tmp/cmdlines
""", series=series, files={module[0]: "/lib/nls_cp437.ko"} if module else None)
    if module:
        # Only the module's functions: set_ftrace_filter lists each as "NAME [nls_cp437]".
        filt = r.files["modfilter"].decode().split()
        assert "uni2char" in filt and "char2uni" in filt, filt[:20]
        assert filt.count("[nls_cp437]") == len(filt) // 2, filt[:20]
        # A module with no function to trace: refused, not run with an empty filter
        # (which traces every function).
        err = r.files["nomod.err"].decode()
        assert "matches no function" in err and "no_such_module" in err, err
    # 6.1 keeps 128 task names by default; the daemon raised it at start (saved-cmdlines;
    # the kernel rounds up to fill the pages it allocates).
    assert int(r.files["cmdlines"]) >= 8192, r.files["cmdlines"]
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        lines = event_lines(report(r.save("fn.dat", d)))
        functions = [line.split("function:")[1].split()[0] for _, name, line in lines
                     if name == "function"]
        assert functions and all(f.startswith("vfs_") for f in functions), functions[:20]
        assert "vfs_read" in functions, sorted(set(functions))
        lines = report(r.save("stack.dat", d))
        assert any("function:" in line and "vfs_read" in line for line in lines), lines[:20]
        assert any("kernel_stack:" in line for line in lines), lines[:20]
        lines = event_lines(report(r.save("kp.dat", d)))
        opened = [line for _, name, line in lines if name == "opened"]
        enters = [line for _, name, line in lines if name == "sys_enter_openat"]
        # cat opens its libraries and the file: each openat passes the kprobe once.
        assert opened and len(opened) == len(enters), (len(opened), len(enters))
        assert all("dfd=-100" in line for line in opened), opened[:5]  # AT_FDCWD
    assert b"ftraced_" not in r.files["left_probes"], r.files["left_probes"]
    refusal = (b"runs the function_graph tracer only in the top-level buffer" if series == "6.1"
               else b"no set_graph_function in instances: -g cannot be applied")
    assert refusal in r.files["fg.err"] and b"add --top-level" in r.files["fg.err"], \
        r.files["fg.err"]
    assert b"-l 'no_such_function_here' matches no function" in r.files["nf.err"], \
        r.files["nf.err"]
    assert re.search(rb"needs Linux 6\.12 or later .*add 'reserve_mem=64M:4096:trace "
                     rb"trace_instance=boot_map\^traceoff@trace' to GRUB_CMDLINE_LINUX",
                     r.files["pm.err"]), r.files["pm.err"]
    assert sessions_left(r) == [], r.files["left"]


def test_function_tracer_kprobe_and_refusals_on_6_1():
    function_tracer_kprobe_and_refusals("6.1")


def test_function_tracer_kprobe_and_refusals_on_6_12():
    function_tracer_kprobe_and_refusals("6.12")


def cpu_hotplug_during_a_capture(series):
    """A CPU taken offline and back during a capture, in a 4-vCPU guest:
    nothing captured is lost, and the CPU's events before and after are in
    the file."""
    r = boot(r"""
set -e
ftracectl record --quiet -e ftrace:print -o /tmp/hp.dat &
rec=$!
wait_running
inst=$(ftracectl --json list | sed -n 's/.*"instance": "\([^"]*\)".*/\1/p')
ftraced-loadgen --instance $inst --cpu 3 --count 200 --tag a > /dev/null
echo 0 > /sys/devices/system/cpu/cpu3/online
ftraced-loadgen --instance $inst --cpu 2 --count 200 --tag b > /dev/null
echo 1 > /sys/devices/system/cpu/cpu3/online
ftraced-loadgen --instance $inst --cpu 3 --count 200 --tag c > /dev/null
kill -TERM $rec
wait $rec
emit hp.dat /tmp/hp.dat
""", smp=4, series=series)
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        path = r.save("hp.dat", d)
        for tag, cpu in (("a", "3"), ("b", "2"), ("c", "3")):
            g = count_markers(path, tag)["generators"][cpu]
            assert g["distinct"] == 200 and g["min"] == 0 and g["max"] == 199, (tag, g)
    assert "error" not in r.daemon_log.lower(), r.daemon_log


def test_cpu_hotplug_during_a_capture_on_6_1():
    cpu_hotplug_during_a_capture("6.1")


def test_cpu_hotplug_during_a_capture_on_6_12():
    cpu_hotplug_during_a_capture("6.12")


CPUS_64 = int(os.environ.get("FTRACED_VM_CPUS", "64"))


def unit_tasks_max():
    """TasksMax= of the shipped unit, as written there."""
    path = os.path.join(HERE, "..", "..", "systemd", "ftraced.service.in")
    with open(path) as f:
        values = [line.split("=", 1)[1].strip() for line in f if line.startswith("TasksMax=")]
    assert len(values) == 1, values
    return values[0]


def test_64_cpus_under_the_units_task_limit():
    """A 64-vCPU guest: the daemon runs in a cgroup v2 whose pids.max is the unit's
    TasksMax= (a percentage taken of the smaller of kernel.threads-max and pid_max, as
    systemd computes it), starts a worker per CPU, and a record of every event (-e all)
    holds 64 CPUs, with every marker written on the first, a middle and the last CPU.

    One host thread for all 64 vCPUs (boot()'s default): enabling a tracepoint patches
    kernel text, and with a thread per vCPU the guest livelocked in the int3 handler of
    that patching (measured: soft lockups, a vCPU looping in asm_exc_int3). With one,
    the whole guest run took about 70 s here. 6.1 only: 6.12 oopsed at boot with 32
    vCPUs under TCG (before the cmpxchg16b workaround; untried since)."""
    tasks_max = unit_tasks_max()
    last = CPUS_64 - 1
    r = boot(r"""
kill $(pidof ftraced)
while pidof ftraced > /dev/null; do sleep 0.1; done
mount -t cgroup2 none /sys/fs/cgroup || echo "no cgroup2" >> /tmp/limits
echo +pids > /sys/fs/cgroup/cgroup.subtree_control || echo "no pids controller" >> /tmp/limits
mkdir /sys/fs/cgroup/ftraced
limit=%(limit)s
threads=$(cat /proc/sys/kernel/threads-max)
pids=$(($(cat /proc/sys/kernel/pid_max) - 1))
system=$threads; [ $pids -lt $system ] && system=$pids
case $limit in
infinity) max=max ;;
*%%) max=$((system * ${limit%%?} / 100)) ;;
*) max=$limit ;;
esac
echo $max > /sys/fs/cgroup/ftraced/pids.max
echo "pids.max $max (TasksMax=$limit, system $system)" > /tmp/limits
rm -f /run/control
sh -c 'echo $$ > /sys/fs/cgroup/ftraced/cgroup.procs; exec ftraced --socket /run/control \
    --state-dir /tmp/state2 --group "" --log-level info' > /tmp/ftraced2.log 2>&1 &
i=0
while [ ! -S /run/control ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(pidof ftraced)
ftracectl record --quiet -e all -o /tmp/cpus.dat &
rec=$!
wait_running
inst=$(ftracectl --json list | sed -n 's/.*"instance": "\([^"]*\)".*/\1/p')
for cpu in 0 %(middle)d %(last)d; do
    ftraced-loadgen --instance $inst --cpu $cpu --count 300 --tag c > /dev/null
done
echo "threads $(ls /proc/$pid/task | wc -l) peak $(grep VmHWM /proc/$pid/status)" >> /tmp/limits
echo "pids.current $(cat /sys/fs/cgroup/ftraced/pids.current)" >> /tmp/limits
kill -TERM $rec
wait $rec || echo "record failed" >> /tmp/limits
kill $pid
while [ -d /proc/$pid ]; do sleep 0.1; done
emit limits /tmp/limits
emit cpus.dat /tmp/cpus.dat
emit log /tmp/ftraced2.log
""" % {"limit": tasks_max, "middle": CPUS_64 // 2, "last": last},
             smp=CPUS_64, memory_mb=2048, timeout=900)
    limits = r.files["limits"].decode()
    print("  " + limits.replace("\n", "; "))
    assert "failed" not in limits and "no " not in limits, limits
    threads = int(re.search(r"threads (\d+)", limits).group(1))
    assert threads >= CPUS_64 + 1, limits  # a worker per CPU, and the main thread
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        path = r.save("cpus.dat", d)
        lines = report(path)
        assert lines[0].strip() == "cpus=%d" % CPUS_64, lines[0]
        names = {name for _, name, _ in event_lines(lines)}
        assert len(names) >= 10 and "sched_switch" in names, sorted(names)
        for cpu in (0, CPUS_64 // 2, last):
            g = count_markers(path, "c")["generators"][str(cpu)]
            assert g["distinct"] == 300 and g["max"] == 299, (cpu, g)
    assert b"Cannot start" not in r.files["log"], r.files["log"]


def every_event(series):
    """-a: every event the kernel lists is enabled (each format is in the file)
    and the file reads back."""
    r = boot(r"""
set -e
ftracectl record --quiet -a --duration 2s -o /tmp/all.dat
grep -c . /sys/kernel/tracing/available_events > /tmp/n_events
emit all.dat /tmp/all.dat
emit n_events /tmp/n_events
""", smp=2, series=series)
    n_kernel = int(r.files["n_events"])
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        path = r.save("all.dat", d)
        names = {name for _, name, _ in event_lines(report(path))}
        assert len(names) >= 10, names
        dump = subprocess.run(["trace-cmd", "dump", "--events", path], capture_output=True,
                              text=True).stdout
        formats = len(re.findall(r"^name: ", dump, re.M))
        assert formats >= n_kernel, (formats, n_kernel)


def test_every_event_on_6_1():
    every_event("6.1")


def test_every_event_on_6_12():
    every_event("6.12")


def test_record_and_function_graph_in_an_instance_on_6_12():
    """Debian 13's 6.12: a record of markers and sched_switch is complete, and
    -p function_graph runs in the session's own instance (6.12 allows it
    there): -l limits the graph to vfs_*, and the top level is left as it was. -g
    needs the top level's set_graph_function: leased (--top-level), and put back."""
    r = boot(r"""
set -e
record_markers /tmp/rec.dat t 300
emit rec.dat /tmp/rec.dat
ftracectl record --quiet -p function_graph -l 'vfs_*' -o /tmp/fg.dat -- cat /proc/version
emit fg.dat /tmp/fg.dat
cat /sys/kernel/tracing/current_tracer > /tmp/top_tracer
# -g needs set_graph_function, which 6.12 has only at the top: leased there.
ftracectl record --quiet -p function_graph -g do_sys_openat2 --top-level -o /tmp/fgl.dat \
    -- cat /proc/version
emit fgl.dat /tmp/fgl.dat
cat /sys/kernel/tracing/current_tracer /sys/kernel/tracing/set_graph_function >> /tmp/top_tracer
emit top_tracer /tmp/top_tracer
left_instances
emit left /tmp/left
""", series="6.12")
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        rec = r.save("rec.dat", d)
        assert_every_marker(rec, "t", 300)
        assert any(name == "sched_switch" for _, name, _ in event_lines(report(rec)))
        assert_real_kallsyms(rec)
        lines = event_lines(report(r.save("fg.dat", d)))
        entries = [line for _, name, line in lines if name == "funcgraph_entry"]
        called = set(re.findall(r"\b([a-z_0-9.]+)\(\)", " ".join(entries)))
        assert entries and called and all(f.startswith("vfs_") for f in called), \
            (len(entries), sorted(called)[:20])
        assert "vfs_read" in called, sorted(called)
        leased = graph_entries(event_lines(report(r.save("fgl.dat", d))))
        assert "do_sys_openat2" in {f for depth, f in leased
                                    if depth == min(x for x, _ in leased)}, leased[:20]
    # Untouched by the instance's record, and put back after the leased one.
    assert r.files["top_tracer"].split(b"\n")[:3] == [b"nop", b"nop",
                                                      b"#### all functions enabled ####"], \
        r.files["top_tracer"]
    assert sessions_left(r) == [], r.files["left"]


# Every top-level setting a lease may change, file by file, into $1.
TOP_LEVEL_SNAPSHOT = r"""
top_level() {
    ( cd /sys/kernel/tracing
      for f in current_tracer max_graph_depth buffer_percent trace_clock tracing_cpumask \
               buffer_size_kb tracing_on set_ftrace_filter set_ftrace_notrace \
               set_graph_function set_graph_notrace set_ftrace_pid set_event_pid \
               set_event_notrace_pid set_event events/sched/sched_switch/filter \
               events/sched/sched_switch/enable options/*; do
          [ -r "$f" ] && printf '%s: %s\n' "$f" "$(head -c 300 "$f" | tr '\n' ' ')"
      done
      printf 'snapshot freed: %s\n' "$(head -c 1000 snapshot | grep -c 'Snapshot is freed')"
    ) > "$1"
}
"""


def graph_entries(lines):
    """funcgraph_entry lines of a report: (depth by indentation, function)."""
    out = []
    for _, name, line in lines:
        m = re.search(r"\|( *)([a-z_0-9.]+)\(\)", line) if name == "funcgraph_entry" else None
        if m:
            out.append((len(m.group(1)), m.group(2)))
    return out


def callees(entries):
    """The functions called right under the graph's root (one level below the top)."""
    top = min(depth for depth, _ in entries)
    below = sorted({depth for depth, _ in entries if depth > top})
    return {f for depth, f in entries if below and depth == below[0]}


def without_timing(entries):
    """@entries less the graphs of interrupts that came in under the root (irq entry
    and exit, and the softirqs they run) and of the task sleeping there (schedule and
    what the switch runs): they differ from one run to the next."""
    out, inside = [], None
    for depth, f in entries:
        if inside is not None and depth > inside:
            continue
        # schedule() and cond_resched() call into __schedule, which is notrace: what the
        # switch runs shows right under them.
        inside = depth if re.search(r"irq|interrupt|sysvec|schedule|cond_resched", f) else None
        if inside is None:
            out.append((depth, f))
    return out


def test_function_graph_in_the_leased_top_level_on_6_1():
    """6.1 runs function_graph only in the top-level buffer: --top-level leases it.
    -g roots the graph, --max-graph-depth limits it, -O sets a graph option, and every
    top-level setting is as before afterwards, file by file. Without --top-level the
    refusal names it;
    a top level in use by hand is refused and left alone; a second lease is
    refused, naming the holder; a kill -9 during a leased record is recovered
    and the next start puts the top level back. trace-cmd, run the same way,
    graphs the same functions under the root."""
    r = boot(TOP_LEVEL_SNAPSHOT + r"""
set -e
top_level /tmp/before
ftracectl record --quiet -p function_graph -g do_sys_openat2 --top-level \
    -e sched:sched_switch -f 'prev_pid != 0' -o /tmp/fg.dat -- cat /proc/version
top_level /tmp/after
emit fg.dat /tmp/fg.dat
ftracectl record --quiet -p function_graph -g do_sys_openat2 --max-graph-depth 2 \
    -O funcgraph-proc --top-level -o /tmp/fg2.dat -- cat /proc/version
emit fg2.dat /tmp/fg2.dat
ftracectl record -p function_graph -g do_sys_openat2 -o /tmp/x.dat -- true \
    2> /tmp/nolease.err || true
emit nolease.err /tmp/nolease.err
echo function > /sys/kernel/tracing/current_tracer
ftracectl record --top-level -e sched:sched_switch -o /tmp/x.dat -- true 2> /tmp/inuse.err \
    || true
cat /sys/kernel/tracing/current_tracer > /tmp/inuse_tracer
echo nop > /sys/kernel/tracing/current_tracer
emit inuse.err /tmp/inuse.err
emit inuse_tracer /tmp/inuse_tracer
ftracectl create holder --top-level -p function_graph -g do_sys_openat2
ftracectl list > /tmp/list
emit list /tmp/list
ftracectl status > /tmp/status_holder
ftracectl --json status holder > /tmp/status_holder_json
emit status_holder /tmp/status_holder
emit status_holder_json /tmp/status_holder_json
ftracectl record --top-level -e sched:sched_switch -o /tmp/x.dat -- true 2> /tmp/second.err \
    || true
emit second.err /tmp/second.err
ftracectl destroy holder
top_level /tmp/after_destroy
# A flight recorder on the top level: its kernel backend swaps the snapshot buffer.
ftracectl create fl --mode flight --flight-backend kernel --top-level -b 512 \
    -p function_graph -g do_sys_openat2
ftracectl start fl
cat /proc/version > /dev/null
ftracectl snapshot fl -o /tmp/fl.dat
emit fl.dat /tmp/fl.dat
ftracectl destroy fl
top_level /tmp/after_flight
# kill -9 of the daemon during a leased record; the next start recovers and puts back.
ftracectl record --quiet --top-level -p function_graph -g do_sys_openat2 -o /tmp/k.dat &
wait_running
for i in 1 2 3 4 5; do cat /proc/version > /dev/null; done
sync
kill -9 $(pidof ftraced)
wait || true
top_level /tmp/during_crash
/usr/bin/ftraced --socket /run/control --state-dir $STATE --group '' \
    --log-level debug > /tmp/ftraced2.log 2>&1 &
daemon_up
top_level /tmp/after_crash
for f in $STATE/recovered/*-recovered.dat; do emit crash.dat "$f"; done
emit log2 /tmp/ftraced2.log
# Side by side, each following only its command (-F).
ftracectl record --quiet -F -p function_graph -g do_sys_openat2 --top-level -o /tmp/ours.dat \
    -- cat /proc/version
emit ours.dat /tmp/ours.dat
trace-cmd record -q -F -p function_graph -g do_sys_openat2 -o /tmp/tc.dat cat /proc/version \
    > /dev/null 2>&1
emit tc.dat /tmp/tc.dat
for f in before after after_destroy after_flight during_crash after_crash; do
    emit $f /tmp/$f
done
left_instances
emit left /tmp/left
""", binaries=dict(BINARIES, **{"/usr/bin/trace-cmd": "/usr/bin/trace-cmd"}))
    before = r.files["before"].decode()
    assert "current_tracer: nop" in before and "set_event: \n" in before, before
    # The boot's ring was never used ("7 (expanded: 1408)"): any tracer expands it for
    # good, and the size a later user gets goes back, as the kernel rounds it (1410).
    expanded = int(re.search(r"buffer_size_kb: \d+ \(expanded: (\d+)\)", before).group(1))
    assert "snapshot freed: 1" in before, before
    for name in ("after", "after_destroy", "after_flight", "after_crash"):
        size = int(re.search(r"buffer_size_kb: (\d+) \n", r.files[name].decode()).group(1))
        assert expanded <= size <= expanded + 8, (name, size, expanded)
        changed = {line for line in set(r.files[name].decode().splitlines()) ^
                   set(before.splitlines()) if not line.startswith("buffer_size_kb: ")}
        assert not changed, (name, sorted(changed))
    # While crashed, the top level was the lease's: the restore had work to do.
    assert "current_tracer: function_graph" in r.files["during_crash"].decode()
    assert b"--top-level" in r.files["nolease.err"], r.files["nolease.err"]
    assert b"in use by another tool: the function tracer is set" in r.files["inuse.err"], \
        r.files["inuse.err"]
    assert r.files["inuse_tracer"].strip() == b"function", r.files["inuse_tracer"]
    assert b"leased by session 'holder'" in r.files["second.err"], r.files["second.err"]
    assert b"top-level" in r.files["list"], r.files["list"]
    assert b"Top-level buffer leased by session holder" in r.files["status_holder"], \
        r.files["status_holder"]
    assert json.loads(r.files["status_holder_json"])["leases_top_level"] is True, \
        r.files["status_holder_json"]
    assert "Put the top-level buffer back" in r.files["log2"].decode(), r.files["log2"]
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        lines = event_lines(report(r.save("fg.dat", d)))
        entries = graph_entries(lines)
        assert len(entries) > 20, entries
        # The root's calls nest under it (an interrupt's graph may start at the top too).
        top = min(depth for depth, _ in entries)
        roots = {f for depth, f in entries if depth == top}
        assert "do_sys_openat2" in roots, sorted(roots)
        assert len([e for e in entries if e[0] > top]) > 20, entries[:40]
        assert len({depth for depth, _ in entries}) > 2, "no nesting? %s" % entries[:20]
        assert any(name == "sched_switch" for _, name, _ in lines)
        deep = graph_entries(event_lines(report(r.save("fg2.dat", d))))
        assert deep and len({depth for depth, _ in deep}) <= 2, deep[:20]
        flight = graph_entries(event_lines(report(r.save("fl.dat", d))))
        assert "do_sys_openat2" in {f for _, f in flight}, flight[:20]
        crash = graph_entries(event_lines(report(r.save("crash.dat", d))))
        assert crash and "do_sys_openat2" in {
            f for depth, f in crash if depth == min(x for x, _ in crash)}, crash[:20]
        ours = without_timing(graph_entries(event_lines(report(r.save("ours.dat", d)))))
        theirs = without_timing(graph_entries(event_lines(report(r.save("tc.dat", d)))))
        # cat opens the same file each time: the root calls the same functions, and the
        # calls under them are the same set but for what a run's timing adds (a contended
        # lock's wake-up, a slab refilled), a few at most.
        steps = {"getname", "get_unused_fd_flags", "do_filp_open", "fd_install", "putname"}
        assert steps <= callees(ours) and steps <= callees(theirs), \
            (callees(ours), callees(theirs))
        ours, theirs = {f for _, f in ours}, {f for _, f in theirs}
        assert {"do_filp_open", "path_openat"} <= ours & theirs, (sorted(ours), sorted(theirs))
        assert len(ours ^ theirs) <= max(5, len(ours | theirs) * 15 // 100), \
            (sorted(ours ^ theirs), len(ours), len(theirs))
    assert sessions_left(r) == [], r.files["left"]


PERSISTENT_CMDLINE = "reserve_mem=8M:4096:trace trace_instance=boot_map^traceoff@trace"
# After the reboot: what the kernel said of each CPU's boot-mapped ring (kept_cpus()).
EMIT_RING_CHECK = r"""
dmesg | grep 'Ring buffer meta' > /tmp/ring_meta || true
emit ring_meta /tmp/ring_meta
"""


def kept_cpus(r):
    """The CPUs whose boot-mapped ring 6.12 found whole after the reboot ("is from
    previous boot!"). It checks each CPU's ring at boot and starts afresh one it finds
    inconsistent: 2 runs of the panic test in 12 had nothing of CPU 0 from before the
    reboot, both with -T. The daemon can only write what the kernel kept."""
    return set(re.findall(r"Ring buffer meta \[(\d+)\] is from previous boot!",
                          r.files["ring_meta"].decode()))


def assert_every_marker_kept(path, tag, n, kept):
    """assert_every_marker() for the CPUs in @kept (kept_cpus()); at least one."""
    c = count_markers(path, tag)
    assert kept, "the kernel kept no CPU's ring"
    for cpu in sorted(kept):
        g = c["generators"].get(cpu)
        assert g and g["distinct"] == n and g["min"] == 0 and g["max"] == n - 1, (cpu, c)


def test_persistent_history_survives_a_daemon_kill_and_a_kernel_panic_on_6_12():
    """Debian 13's 6.12 with an instance mapped at boot onto reserved memory. A
    persistent flight recorder records; a kill -9 of the daemon loses nothing
    (the restart resumes the ring as it is); a kernel panic loses nothing
    either: after the reboot, the daemon started by the guest's init writes the
    previous boot's history by itself, every marker up to the last one written
    before the crash. Then it records again, and a snapshot works while it does."""
    r = boot(r"""
if [ "$BOOT" = 1 ]; then
    set -e
    ftracectl create pr --mode flight --flight-backend persistent \
        -e ftrace:print -e sched:sched_switch -T
    ftracectl start pr
    ftracectl --json status pr > /tmp/status.json
    emit status.json /tmp/status.json
    ftracectl create pr2 --mode flight --flight-backend persistent -e ftrace:print \
        2> /tmp/busy || true
    emit busy /tmp/busy
    markers boot_map t 3000
    kill -9 $(pidof ftraced)
    /usr/bin/ftraced --socket /run/control --state-dir $STATE --group '' \
        --log-level debug > /tmp/ftraced2.log 2>&1 &
    daemon_up
    wait_running
    markers boot_map u 2000
    emit log1 /tmp/ftraced2.log
    sync
    echo c > /proc/sysrq-trigger
fi
set -e
""" + EMIT_RING_CHECK + r"""
daemon_up
wait_running
ls $STATE/sessions/pr/snapshots/ > /tmp/after_panic
emit after_panic /tmp/after_panic
ftracectl --json status pr > /tmp/status2.json
emit status2.json /tmp/status2.json
for f in $STATE/sessions/pr/snapshots/*-recovered.dat; do emit panic.dat "$f"; done
markers boot_map w 1000
ftracectl snapshot pr -o /tmp/live.dat
emit live.dat /tmp/live.dat
ftracectl destroy pr
cat /sys/kernel/tracing/instances/boot_map/tracing_on > /tmp/tracing_on
emit tracing_on /tmp/tracing_on
""", series="6.12", reboot=True, cmdline=PERSISTENT_CMDLINE, timeout=600)
    assert r.boots == [1, 2], r.boots
    assert b"persistent" in r.files["status.json"], r.files["status.json"]
    assert b"holds the history of another session" in r.files["busy"], r.files["busy"]
    assert "resumed" in r.files["log1"].decode(), r.files["log1"].decode()[-3000:]
    names = r.files["after_panic"].decode().split()
    assert len(names) == 1 and "-boot-" in names[0] and \
        names[0].endswith("-history-recovered.dat"), names
    # status names it.
    assert json.loads(r.files["status2.json"])["recovered"].endswith("/" + names[0]), \
        r.files["status2.json"]
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        # Before the daemon's kill and after it, up to the panic: all of it, once.
        panic = r.save("panic.dat", d)
        kept = kept_cpus(r)
        print("CPUs whose ring the kernel kept across the panic: %s" % sorted(kept))
        assert_every_marker_kept(panic, "t", 3000, kept)
        assert_every_marker_kept(panic, "u", 2000, kept)
        text = report(panic)
        assert any(name == "sched_switch" for _, name, _ in event_lines(text))
        # -T: the crashed boot's stacks, in kernel text KASLR put elsewhere than this
        # boot's, resolve to the functions a switch runs through.
        stacks = re.findall(r"<stack trace *>\n((?:\s*=> .*\n)+)", "\n".join(text) + "\n")
        switches = [st for st in stacks if "__schedule" in st]
        assert stacks and len(switches) >= len(stacks) // 2, stacks[:5]
        writer = subprocess.run([FTRACECTL, "info", panic], capture_output=True,
                                text=True, check=True).stdout
        # The ring did not wrap: nothing older was overwritten, and the file says so.
        assert "older data was dropped" not in writer and "complete from\n" in writer, writer
        assert re.search(r"symbols: this boot's, the kernel's moved by [-+]0x[0-9a-f]+ to "
                         r"where KASLR put the crashed boot's|KASLR put the kernel where the "
                         r"crashed boot's was", writer), writer
        # Armed again after the reboot: what came since, and nothing from before.
        live = r.save("live.dat", d)
        assert_every_marker(live, "w", 1000)
        assert not count_markers(live, "u")["generators"], "the old history came back"
    assert "Recovered the flight recorder history of instance 'boot_map'" in r.daemon_log, \
        r.daemon_log
    # Destroyed: its tracing off, the instance (the kernel's) still there.
    assert r.files["tracing_on"].strip() == b"0", r.files["tracing_on"]


def test_persistent_history_survives_a_reset_without_a_panic_on_6_12():
    """A sysrq reset (no panic, as a hardware watchdog's), after the ring (1 MiB
    per CPU here) wrapped: the next boot's daemon writes what it held, a gap-free
    suffix of the markers up to the last one, and the file says per CPU that older
    events were overwritten (the kernel forgets its overrun count at a reboot)."""
    r = boot(r"""
set -e
if [ "$BOOT" = 1 ]; then
    ftracectl create pr --mode flight --flight-backend persistent -e ftrace:print
    ftracectl start pr
    markers boot_map t 40000
    sync
    echo b > /proc/sysrq-trigger
fi
""" + EMIT_RING_CHECK + r"""
daemon_up
wait_running
for f in $STATE/sessions/pr/snapshots/*-recovered.dat; do emit reset.dat "$f"; done
""", series="6.12", reboot=True, timeout=600,
             cmdline=PERSISTENT_CMDLINE.replace("reserve_mem=8M", "reserve_mem=2M"))
    assert r.boots == [1, 2], r.boots
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        path = r.save("reset.dat", d)
        c = count_markers(path, "t")
        kept = kept_cpus(r)
        assert kept, "the kernel kept no CPU's ring"
        for cpu in sorted(kept):
            g = c["generators"][cpu]
            assert g["max"] == 39999 and 0 < g["min"] and g["duplicates"] == 0 and \
                g["distinct"] == g["max"] - g["min"] + 1 and g["in_order"], c
        info = json.loads(subprocess.run([FTRACECTL, "--json", "info", path], check=True,
                                         capture_output=True, text=True).stdout)
        assert all(cpu["older_data_dropped"] for cpu in info["cpus"]
                   if str(cpu["cpu"]) in kept), info["cpus"]


def test_persistent_history_of_another_kernel_is_not_recovered_on_6_12():
    """The history was armed by another kernel (simulated: the identity its recipe
    records is changed before the crash): its event formats may differ, so the next
    boot writes no file, says why in the log, and arms the ring afresh."""
    r = boot(r"""
set -e
if [ "$BOOT" = 1 ]; then
    ftracectl create pr --mode flight --flight-backend persistent -e ftrace:print
    ftracectl start pr
    markers boot_map t 500
    recipe=$(grep -l '^history=persistent' $STATE/spool/*/recipe)
    sed -i 's/^kernel=.*/kernel=6.12.0-older #1 SMP/' $recipe
    sync
    echo c > /proc/sysrq-trigger
fi
daemon_up
wait_running
ls $STATE/sessions/pr/snapshots/ > /tmp/after
emit after /tmp/after
markers boot_map w 300
ftracectl snapshot pr -o /tmp/live.dat
emit live.dat /tmp/live.dat
""", series="6.12", reboot=True, cmdline=PERSISTENT_CMDLINE, timeout=600)
    assert r.boots == [1, 2], r.boots
    assert "recorded by kernel '6.12.0-older #1 SMP'" in r.daemon_log, r.daemon_log
    assert not [n for n in r.files["after"].split() if n.endswith(b"-recovered.dat")], \
        r.files["after"]
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as d:
        live = r.save("live.dat", d)
        assert_every_marker(live, "w", 300)
        assert not count_markers(live, "t")["generators"], "the other kernel's history came back"


if __name__ == "__main__":
    reason = vm.skip_reason()
    if reason:
        print("SKIP: " + reason)
        sys.exit(77)
    sys.exit(run())
