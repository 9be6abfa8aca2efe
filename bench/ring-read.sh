#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The reader's cost of taking a ring buffer's data: splice (what ftraced
# does) against read() of trace_pipe_raw and the kernel's mmap interface
# (>= 6.10), markers on CPU 1, the reader on CPU 0, 4 MiB ring woken at
# 512 KiB (as ftraced sets it).
# Usage (root, tracefs): [SUBBUF_KB="4 64"] [HOW="splice read mmap"]
#   bench/ring-read.sh [BUILD_DIR [SECONDS]]
set -eu
build=${1:-build}
secs=${2:-4}
tracing=/sys/kernel/tracing
inst=$tracing/instances/ftraced-ringread
trap 'echo 0 > "$inst/tracing_on" 2>/dev/null; rmdir "$inst" 2>/dev/null || true' EXIT
mkdir "$inst"
for subbuf_kb in ${SUBBUF_KB:-4 64}; do
    for rate in 200000 0; do
        for how in ${HOW:-splice read mmap}; do
            echo "$subbuf_kb" > "$inst/buffer_subbuf_size_kb"
            echo 4096 > "$inst/buffer_size_kb"
            echo 12 > "$inst/buffer_percent"
            echo > "$inst/trace"
            echo 1 > "$inst/tracing_on"
            "$build/bench/ftraced-loadgen" --cpu 1 --count 1000000000 --rate "$rate" \
                --seconds "$secs" --instance ftraced-ringread >/dev/null &
            load=$!
            if [ "$rate" = 0 ]; then what="flat out"; else what="$rate ev/s"; fi
            printf "sub-buffer %2s KiB, %s, " "$subbuf_kb" "$what"
            "$build/bench/ftraced-ring-read" "$how" "$inst/per_cpu/cpu1/trace_pipe_raw" "$secs" 0
            wait $load
            echo 0 > "$inst/tracing_on"
            awk '/^overrun:/ && $2 > 0 {print "  (overrun: " $2 " events lost)"}' \
                "$inst/per_cpu/cpu1/stats"
        done
    done
done
