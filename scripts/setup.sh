#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Set-up steps shared by demo.sh and test.sh, for a fresh Debian 12 machine
# run as root: Debian packages, a mounted tracefs, a meson build.

BUILD_PACKAGES=(meson ninja-build pkg-config gcc libc6-dev libtracefs-dev libtraceevent-dev libzstd-dev libjansson-dev
                libsystemd-dev libcap-dev libelf-dev scdoc)
RUNTIME_PACKAGES=(trace-cmd util-linux)
TEST_PACKAGES=(libtracecmd-dev python3 valgrind bindfs tmux)
# The fleet suite: a real Prometheus, node_exporter and rclone on loopback.
FLEET_PACKAGES=(prometheus prometheus-node-exporter rclone)
# The systemd suite boots a Debian 12 root; the fuzzers need clang's libFuzzer.
NSPAWN_PACKAGES=(systemd-container mmdebstrap debhelper dpkg-dev)
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
# The vm suite boots Debian 12's own kernel (6.1) under qemu with a busybox initramfs.
VM_PACKAGES=(qemu-system-x86 linux-image-cloud-amd64 busybox-static cpio)

die() {
    echo "error: $*" >&2
    exit 1
}

need_root() {
    [ "$(id -u)" = 0 ] || die "run this as root (it installs packages and uses tracefs)"
}

# Installs only what is missing, so a prepared machine does not touch the network.
install_packages() {
    local missing=()
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "== installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        die "apt-get install ${missing[*]} failed"
}

ensure_tracefs() {
    if [ ! -d /sys/kernel/tracing/instances ]; then
        echo "== mounting tracefs on /sys/kernel/tracing"
        mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs"
    fi
}

# build DIR [meson options...]: configure once, then (re)build.
build() {
    local dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        local log
        log=$(mktemp)
        meson setup "$dir" "$@" >"$log" 2>&1 || { cat "$log"; rm -f "$log"; die "meson setup $dir failed"; }
        rm -f "$log"
    fi
    ninja -C "$dir" >/dev/null || { ninja -C "$dir"; die "build in $dir failed"; }
}
