#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sets up a fresh Debian 12 machine (as root) and runs every test suite:
# unit and integration (real kernel) on a warning-free gcc build, the units
# under a real systemd in a booted container, the daemon on Debian 12's own
# 6.1 kernel and Debian 13's 6.12 under qemu, the same suites under
# ASan+UBSan, the unit suite under valgrind, and each libFuzzer target
# for a short while (clang). All of it beside two neighbours that share
# tracefs and must come through untouched (tests/neighbours.py): a foreign
# ftraced with a continuous session, and trace-cmd record -B.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh

need_root
install_packages "${BUILD_PACKAGES[@]}" "${RUNTIME_PACKAGES[@]}" "${TEST_PACKAGES[@]}" \
    "${FLEET_PACKAGES[@]}" "${NSPAWN_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}" "${VM_PACKAGES[@]}"
ensure_tracefs
fetch_kernel_6_12

passed=0
failed=0

# run_suite NAME -- meson test args: counts meson's own Ok/Fail lines.
run_suite() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    echo "== $name"
    meson test --print-errorlogs "$@" >"$log" 2>&1
    local rc=$?
    grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):' "$log"
    local ok fail timeout
    # The last summary is meson's: a failed test's own log (printed above it)
    # may hold another meson run's, as the nspawn suite's does.
    ok=$(awk '/^Ok:/ {n = $2} END {print n}' "$log")
    fail=$(awk '/^Fail:/ {n = $2} END {print n}' "$log")
    timeout=$(awk '/^Timeout:/ {n = $2} END {print n}' "$log")
    passed=$((passed + ${ok:-0}))
    failed=$((failed + ${fail:-0} + ${timeout:-0}))
    if [ $rc -ne 0 ]; then
        cat "$log"
        [ "${fail:-0}${timeout:-0}" = "00" ] && failed=$((failed + 1))
    fi
    rm -f "$log"
}

build build-test --buildtype=debugoptimized -Dwerror=true

# The neighbours start once the first build is there and run until the last suite is done;
# the check of them counts as one test. An interrupted run stops them too.
neighbours=$(mktemp -d /tmp/ftraced-neighbours.XXXXXX)
trap 'python3 tests/neighbours.py stop "$neighbours"' EXIT
echo "== neighbours"
python3 tests/neighbours.py start "$neighbours" build-test/daemon/ftraced \
    build-test/client/ftracectl || echo "neighbours: not running; their check will fail"

run_suite "unit (gcc, -Werror)" -C build-test
run_suite "integration (gcc)" -C build-test --suite integration
run_suite "systemd in a booted container (gcc)" -C build-test --suite nspawn
run_suite "Debian's kernels (6.1, 6.12) under qemu (gcc)" -C build-test --suite vm

build build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_suite "unit (ASan+UBSan)" -C build-asan
run_suite "integration (ASan+UBSan)" -C build-asan --suite integration
unset ASAN_OPTIONS UBSAN_OPTIONS

run_suite "unit (valgrind)" -C build-test --setup valgrind

# libFuzzer: each target from its corpus (copied: libFuzzer adds what it finds).
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
CC=clang build build-fuzz --buildtype=debug -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dman=disabled
echo "== libFuzzer, ${FUZZ_SECONDS} s per target"
for corpus in tests/fuzz/corpus/*/; do
    name=$(basename "$corpus")
    work=$(mktemp -d)
    cp -r "$corpus" "$work/corpus"
    if build-fuzz/tests/fuzz-"$name" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
        "$work/corpus" >"$work/log" 2>&1; then
        echo "  fuzz-$name OK ($(awk '/stat::number_of_executed_units/ {print $2}' "$work/log") runs)"
        passed=$((passed + 1))
    else
        echo "  fuzz-$name FAIL"
        tail -50 "$work/log"
        failed=$((failed + 1))
    fi
    rm -rf "$work"
done

echo "== neighbours, after every suite"
if python3 tests/neighbours.py check "$neighbours"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi
rm -rf "$neighbours"

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
