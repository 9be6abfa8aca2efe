#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sets up a fresh Debian 12 machine (as root), builds ftraced, starts it on a
# private socket, records 5 seconds of sched and irq events into demo.dat
# with ftracectl record, stops the daemon and summarises the file with
# trace-cmd report.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh

need_root
install_packages "${BUILD_PACKAGES[@]}" "${RUNTIME_PACKAGES[@]}"
ensure_tracefs
build build

run_dir=$(mktemp -d /tmp/ftraced-demo.XXXXXX)
# The daemon's state directory; FTRACED_DEMO_STATE_DIR keeps it after the demo (a test
# reads the daemon's instance tag there, to remove only its instances if it failed).
state_dir=${FTRACED_DEMO_STATE_DIR:-$run_dir/state}
export FTRACED_SOCKET=$run_dir/control
daemon_pid=
cleanup() {
    if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill -TERM "$daemon_pid"
        wait "$daemon_pid"
    fi
    rm -rf "$run_dir"
}
trap cleanup EXIT

echo "== starting ftraced (socket $FTRACED_SOCKET, log $run_dir/ftraced.log)"
build/daemon/ftraced --socket "$FTRACED_SOCKET" --state-dir "$state_dir" \
    2>"$run_dir/ftraced.log" &
daemon_pid=$!
for _ in $(seq 100); do
    build/client/ftracectl list >/dev/null 2>&1 && break
    kill -0 "$daemon_pid" 2>/dev/null || { cat "$run_dir/ftraced.log"; die "ftraced exited"; }
    sleep 0.05
done

echo "== ftracectl record -e sched -e irq --duration 5s -o demo.dat"
build/client/ftracectl record -e sched -e irq --duration 5s --force -o demo.dat ||
    die "recording failed"

echo "== stopping ftraced"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || die "ftraced did not exit cleanly"
daemon_pid=

echo "== trace-cmd report demo.dat"
trace-cmd report demo.dat 2>/dev/null >"$run_dir/report.txt" || die "trace-cmd report failed"
events=$(($(wc -l <"$run_dir/report.txt") - 1))
echo "events:   $events"
echo "size:     $(stat -c %s demo.dat) bytes"
echo "by type:"
awk -F': ' 'NR > 1 { split($2, a, " "); n[a[1]]++ } END { for (e in n) printf "%9d  %s\n", n[e], e }' \
    "$run_dir/report.txt" | sort -rn | head -10
echo "first events:"
sed -n '2,6p' "$run_dir/report.txt"
