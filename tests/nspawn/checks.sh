#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs inside the booted container as ftraced-checks.service, with the
# project installed by `meson install`. Prints PASS/FAIL lines and leaves
# files in /results for the host to verify with trace-cmd; its exit status
# (through `systemctl exit`) is the container's.
exec >>/results/checks.log 2>&1
export PATH=/usr/local/bin:/usr/local/sbin:$PATH
fail=$(cat /results/fail 2>/dev/null || echo 0)
check() {
    if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi
}
# field NAME: a string field of the first session in `ftracectl --json list`
field() {
    ftracectl --json list | grep -o "\"$1\": *\"[^\"]*\"" | head -1 | sed 's/.*: *"\(.*\)"/\1/'
}
wait_running() {
    for _ in $(seq 100); do
        ftracectl --json list | grep -q '"state": *"running"' && return 0
        sleep 0.1
    done
    return 1
}
service() { systemctl show -P "$1" ftraced.service; }
# keep_markers TAG: numbered markers into the session "keep", every CPU.
keep_markers() {
    local inst
    inst=$(ftracectl --json status keep | grep -o '"instance": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/')
    for cpu in $(seq 0 $(($(nproc --all) - 1))); do
        ftraced-loadgen --instance "$inst" --cpu "$cpu" --count 5000 --tag "$1" \
            >"/results/keep-$1-$cpu.txt"
    done
}
wait_session_running() {
    for _ in $(seq 300); do
        ftracectl --json status "$1" 2>/dev/null | grep -q '"state": *"running"' && return 0
        sleep 0.1
    done
    return 1
}
wait_keep_running() { wait_session_running keep; }
# kill -9 of the daemon, and the unit's automatic restart waited for.
kill9_and_wait_restart() {
    local restarts
    restarts=$(service NRestarts)
    kill -9 "$(service MainPID)"
    for _ in $(seq 150); do
        [ "$(service NRestarts)" -gt "$restarts" ] && [ "$(service SubState)" = running ] &&
            return 0
        sleep 0.1
    done
    return 1
}
wait_session_gone() {
    for _ in $(seq 300); do
        ftracectl status "$1" >/dev/null 2>&1 || return 0
        sleep 0.1
    done
    return 1
}
# session_instance NAME: the tracefs instance of session NAME
session_instance() {
    ftracectl --json status "$1" | grep -o '"instance": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/'
}
# The end: the unit's refusals of settings it must not have, the journal, the exit status.
finish() {
    systemctl stop ftraced.service
    dropins=/etc/systemd/system/ftraced.service.d
    printf '[Service]\nProtectKernelTunables=yes\n' >$dropins/negative.conf
    systemctl daemon-reload
    check "ProtectKernelTunables=yes: the daemon refuses to start" '! systemctl start ftraced.service'
    check "... and says why" \
        'journalctl -b -u ftraced.service | grep -q "tracefs is read-only here: a unit with ProtectKernelTunables=yes"'
    printf '[Service]\nProtectKernelLogs=yes\n' >$dropins/negative.conf
    systemctl daemon-reload
    systemctl reset-failed ftraced.service
    check "ProtectKernelLogs=yes: the daemon runs" 'systemctl start ftraced.service'
    check "... and warns that symbols are lost" \
        'journalctl -b -u ftraced.service | grep -q "/proc/kallsyms shows no addresses"'
    systemctl stop ftraced.service
    rm $dropins/negative.conf
    systemctl daemon-reload
    journalctl -b --no-pager >/results/journal.txt
    systemctl exit $fail
}

echo "system: $(timeout 60 systemctl is-system-running --wait)"

if [ "$(cat /results/phase 2>/dev/null)" = rebooted ]; then
    # The second boot: the session made before comes back by itself.
    check "after a reboot, the created session runs again" wait_keep_running
    check "... and says what it did not capture" \
        'ftracectl --json status keep | grep -q "\"gap\": *\"no capture from"'
    keep_markers k4
    ftracectl stop keep >/dev/null
    mkdir -p /results/keep
    cp /var/lib/ftraced/sessions/keep/*.dat /results/keep/
    ftracectl destroy keep >/dev/null
    ftracectl destroy bg >/dev/null 2>&1
    finish
fi

check "tracing group made by sysusers" 'getent group tracing >/dev/null'
check "socket listening, daemon not started yet" \
    'systemctl is-active -q ftraced.socket && [ "$(service ActiveState)" = inactive ]'
check "socket is 0660 root:tracing" '[ "$(stat -c %a:%U:%G /run/ftraced/control)" = 660:root:tracing ]'
check "first ftracectl call activates the daemon" 'ftracectl list >/dev/null'
check "daemon ready (Type=notify) with a status line" \
    '[ "$(service SubState)" = running ] && service StatusText | grep -q "0 session(s)"'
check "state directory" '[ "$(stat -c %a:%U /var/lib/ftraced)" = 700:root ]'
pid=$(service MainPID)
grep -E '^(Cap|NoNewPrivs)' "/proc/$pid/status" >/results/daemon-status.txt
# The unit's Nice= is the capture workers' (one per CPU); the main thread went back to 0.
nice_of() { awk '{ print $19 }' "$1/stat"; }
check "capture workers at nice -5, the main thread at 0" \
    '[ "$(nice_of /proc/$pid/task/$pid)" = 0 ] &&
     [ "$(for t in /proc/$pid/task/*; do nice_of $t; done | grep -cx -- -5)" = "$(nproc --all)" ]'

# A capture under the hardened unit: numbered markers on every CPU.
ftracectl record --quiet -e ftrace:print -o /results/markers.dat &
rec=$!
check "record running" wait_running
instance=$(field instance)
name=$(field name)
for cpu in $(seq 0 $(($(nproc --all) - 1))); do
    ftraced-loadgen --instance "$instance" --cpu "$cpu" --count 20000 >"/results/written-$cpu.txt"
done
ftracectl stop "$name"
wait $rec
rc=$?
check "record finished" '[ $rc = 0 ] && [ -s /results/markers.dat ]'

# A capture worker that stops making progress: the watchdog restarts the
# daemon, the socket stays, the interrupted continuous session is recovered.
ftracectl create bg -e sched:sched_switch --segment-size 64M >/dev/null
ftracectl start bg >/dev/null
sleep 0.5
kill -USR2 "$pid"
restarted=0
for _ in $(seq 150); do
    if [ "$(service NRestarts)" = 1 ] && [ "$(service SubState)" = running ]; then
        restarted=1
        break
    fi
    sleep 0.1
done
check "watchdog restarted the stuck daemon" '[ $restarted = 1 ] && [ "$(service MainPID)" != "$pid" ]'
check "watchdog was the reason" 'journalctl -b -u ftraced.service | grep -q "Watchdog timeout"'
check "socket works after the restart" 'ftracectl list >/dev/null'
check "interrupted session recovered" \
    'journalctl -b -u ftraced.service | grep -q "Recovered 1 interrupted capture"'
cp /var/lib/ftraced/sessions/bg/*-recovered.dat /results/ 2>/dev/null

# Fleet: the metrics file under the hardened unit (ftraced.conf names node_exporter's
# textfile directory), and ftraced-ship@.path shipping a continuous session's segments
# to a WebDAV server (rclone serve, on loopback) as soon as each one closes.
port=$((20000 + RANDOM % 20000))
mkdir -p /results/shipped
rclone serve webdav /results/shipped --addr "127.0.0.1:$port" >/results/webdav.log 2>&1 &
webdav=$!
printf '[fleet]\ntype = webdav\nurl = http://127.0.0.1:%d\n' "$port" >/etc/ftraced/rclone.conf
echo FTRACED_SHIP_REMOTE=fleet:traces >/etc/ftraced/ship.conf
check "ftraced-ship@ship.path enabled" 'systemctl enable --now ftraced-ship@ship.path'
ftracectl create ship -e ftrace:print --segment-time 500ms >/dev/null
ftracectl start ship >/dev/null
instance=$(ftracectl --json status ship | grep -o '"instance": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/')
prom=/var/lib/prometheus/node-exporter/ftraced.prom
metrics=0
for _ in $(seq 100); do
    grep -q '^ftraced_session_info{session="ship",mode="continuous",state="running"} 1' $prom 2>/dev/null &&
        metrics=1 && break
    sleep 0.1
done
check "metrics file written by the hardened unit" '[ $metrics = 1 ]'
for cpu in $(seq 0 $(($(nproc --all) - 1))); do
    ftraced-loadgen --instance "$instance" --cpu "$cpu" --count 20000 --rate 20000 \
        --tag ship >"/results/ship-written-$cpu.txt" &
done
wait_loadgens() { for p in $(jobs -p); do [ "$p" = $webdav ] || wait "$p"; done; }
wait_loadgens
ftracectl stop ship >/dev/null
local_files() { ls /var/lib/ftraced/sessions/ship/*.dat | wc -l; }
remote_files() { ls /results/shipped/traces/ftraced-ci/ship/*.dat 2>/dev/null | wc -l; }
shipped=0
for _ in $(seq 600); do
    if [ "$(remote_files)" -ge 2 ] && [ "$(remote_files)" = "$(local_files)" ] &&
        (cd /var/lib/ftraced/sessions/ship && for f in *.dat; do
            cmp -s "$f" "/results/shipped/traces/ftraced-ci/ship/$f" || exit 1; done); then
        shipped=1
        break
    fi
    sleep 0.1
done
check "every closed segment shipped, byte for byte ($(local_files) files)" '[ $shipped = 1 ]'
check "the ship service ran under its unit" \
    'journalctl -b -u ftraced-ship@ship.service | grep -q "Finished\|Deactivated successfully"'
journalctl -b -u ftraced-ship@ship.service --no-pager >/results/ship-journal.txt
systemctl disable --now ftraced-ship@ship.path
ftracectl destroy ship >/dev/null
kill $webdav

# systemctl stop while a record runs: the file is finished, the stop is clean.
ftracectl record --quiet -e sched:sched_switch -o /results/stop.dat &
rec=$!
check "second record running" wait_running
sleep 0.5
systemctl stop ftraced.service
wait $rec
rc=$?
check "systemctl stop finished the record" '[ $rc = 0 ] && [ -s /results/stop.dat ]'
check "service stopped cleanly" '[ "$(service Result)" = success ]'

# Sessions made with `ftracectl create` outlive the daemon: systemctl restart, a
# kill -9 (the unit restarts it), and a reboot of the container. Markers before and
# after each are counted on the host across every file.
systemctl start ftraced.service
ftracectl create keep -e ftrace:print --segment-time 500ms >/dev/null
ftracectl start keep >/dev/null
keep_markers k1
systemctl restart ftraced.service
check "after systemctl restart, the created session runs again" wait_keep_running
keep_markers k2
kill9_and_wait_restart
check "after a kill -9 and the unit's restart, it runs again" wait_keep_running
keep_markers k3
check "the journal's SESSION= field names it" \
    'journalctl -b -u ftraced.service SESSION=keep | grep -q "keep"'
pid=$(service MainPID)
check "systemctl reload: the same daemon goes on" \
    'systemctl reload ftraced.service && [ "$(service MainPID)" = "$pid" ] && wait_keep_running'
check "... and says it reloaded" 'journalctl -b -u ftraced.service | grep -q "Reloaded: "'
# ExecReload is `ftracectl reload`: a typo in a running session's file fails
# `systemctl reload`, changes nothing, and the session runs on as it was. (Not
# "bg": a session made with `ftracectl create` above has that name.)
mkdir -p /etc/ftraced/sessions.d
printf 'events = sched:sched_switch\n' >/etc/ftraced/sessions.d/fromfile.conf
check "systemctl reload starts a new sessions.d file's session" \
    'systemctl reload ftraced.service && wait_session_running fromfile'
ff_instance=$(session_instance fromfile)
printf 'bogus-key = 1\n' >>/etc/ftraced/sessions.d/fromfile.conf
check "systemctl reload with a typo in fromfile.conf fails" '! systemctl reload ftraced.service'
check "... the journal names the file, line and key" \
    'journalctl -b -u ftraced.service | grep -q "Reload refused, nothing changed: fromfile.conf:2: unknown key .bogus-key."'
check "... the daemon runs on, its session in the same instance" \
    '[ "$(service ActiveState)" = active ] && [ "$(service MainPID)" = "$pid" ] &&
     wait_session_running fromfile && [ "$(session_instance fromfile)" = "$ff_instance" ]'
rm /etc/ftraced/sessions.d/fromfile.conf
check "... without the file, systemctl reload succeeds and its session goes" \
    'systemctl reload ftraced.service && wait_session_gone fromfile'
check "TasksMax= is a share of the machine's task limit" '[ "$(service TasksMax)" -gt 64 ]'

# A memory flight recorder's history outlives the daemon: systemctl restart (the
# unit keeps its runtime directory) and a kill -9 (the unit restarts it). The host
# counts every marker in one snapshot taken after both.
fl_markers() {
    local inst
    inst=$(session_instance fl)
    for cpu in $(seq 0 $(($(nproc --all) - 1))); do
        ftraced-loadgen --instance "$inst" --cpu "$cpu" --count 20000 --tag "$1" \
            >"/results/fl-$1-$cpu.txt"
    done
}
ftracectl create fl --mode flight -e ftrace:print --flight-size 8M >/dev/null
ftracectl start fl >/dev/null
fl_markers f1
systemctl restart ftraced.service
check "after systemctl restart, the flight recorder runs again" 'wait_session_running fl'
check "... and took up its history" \
    'journalctl -b -u ftraced.service | grep -q "Session .fl.: took up the history"'
kill9_and_wait_restart
check "after a kill -9 and the unit's restart, the flight recorder runs again" \
    'wait_session_running fl'
fl_markers f2
check "a snapshot after both" 'ftracectl snapshot fl -o /results/fl.dat >/dev/null'
check "the kept history is in the runtime directory" \
    'ls -d /run/ftraced-hold/ftraced-hold-*/flight-fl >/dev/null'
ftracectl destroy fl >/dev/null
check "destroy removes it" '! ls -d /run/ftraced-hold/ftraced-hold-*/flight-fl 2>/dev/null'
echo $fail >/results/fail
journalctl -b --no-pager >/results/journal-boot1.txt
echo rebooted >/results/phase
systemctl reboot
