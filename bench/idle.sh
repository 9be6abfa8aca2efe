#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Wake-ups of an idle ftraced: context switches of all its threads over 10 s,
# with no session, with a running session whose event never fires, and with a
# `ftracectl record` of such an event waiting for its end (the client too).
# Usage (root, tracefs): bench/idle.sh [build/daemon/ftraced [build/client/ftracectl]]
set -eu
daemon=${1:-build/daemon/ftraced}
ctl=${2:-build/client/ftracectl}
dir=$(mktemp -d)
client=
trap 'kill $client $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
# The machine's saved_cmdlines_size is left as it is (the default config raises it).
echo "saved-cmdlines = 0" > "$dir/ftraced.conf"
"$daemon" --socket "$dir/s" --state-dir "$dir/state" --group "" --config "$dir/ftraced.conf" \
    >/dev/null 2>&1 &
pid=$!
while [ ! -S "$dir/s" ]; do sleep 0.05; done
switches() {
    cat /proc/${1:-$pid}/task/*/status | awk '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print s}'
}
measure() {
    # Settle past the last request's connection and its client.
    sleep 2
    local a b ca cb
    a=$(switches); ca=${client:+$(switches $client)}
    sleep 10
    b=$(switches); cb=${client:+$(switches $client)}
    echo "$1: $((b - a)) context switches in 10 s ($(ls /proc/$pid/task | wc -l) threads)${client:+;\
 the client: $((cb - ca))}"
}
measure "no session"
FTRACED_SOCKET=$dir/s "$ctl" create quiet -e syscalls:sys_enter_swapoff >/dev/null
FTRACED_SOCKET=$dir/s "$ctl" start quiet >/dev/null
measure "a running session whose event never fires"
FTRACED_SOCKET=$dir/s "$ctl" destroy quiet >/dev/null
FTRACED_SOCKET=$dir/s "$ctl" record --quiet -e syscalls:sys_enter_swapoff -o "$dir/r.dat" \
    >/dev/null 2>&1 &
client=$!
until FTRACED_SOCKET=$dir/s "$ctl" list 2>/dev/null | grep -q running; do sleep 0.05; done
measure "a record whose event never fires, its client waiting"
kill -INT $client
wait $client
client=
