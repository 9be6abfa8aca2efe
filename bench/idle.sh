#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Wake-ups of an idle ftraced: context switches of all its threads over 10 s,
# with no session, then with a running session whose event never fires.
# Usage (root, tracefs): bench/idle.sh [build/daemon/ftraced [build/client/ftracectl]]
set -eu
daemon=${1:-build/daemon/ftraced}
ctl=${2:-build/client/ftracectl}
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
# The machine's saved_cmdlines_size is left as it is (the default config raises it).
echo "saved-cmdlines = 0" > "$dir/ftraced.conf"
"$daemon" --socket "$dir/s" --state-dir "$dir/state" --group "" --config "$dir/ftraced.conf" \
    >/dev/null 2>&1 &
pid=$!
while [ ! -S "$dir/s" ]; do sleep 0.05; done
switches() {
    cat /proc/$pid/task/*/status | awk '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print s}'
}
measure() {
    # The control server's sweep (CTL_SWEEP_USEC, 1 s) runs once more after the last
    # request's connection: settle past it.
    sleep 2
    local a b
    a=$(switches); sleep 10; b=$(switches)
    echo "$1: $((b - a)) context switches in 10 s ($(ls /proc/$pid/task | wc -l) threads)"
}
measure "no session"
FTRACED_SOCKET=$dir/s "$ctl" create quiet -e syscalls:sys_enter_swapoff >/dev/null
FTRACED_SOCKET=$dir/s "$ctl" start quiet >/dev/null
measure "a running session whose event never fires"
FTRACED_SOCKET=$dir/s "$ctl" destroy quiet >/dev/null
