#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Set-up steps shared by demo.sh and test.sh, for a fresh Debian 12 machine
# run as root: Debian packages, a mounted tracefs, a meson build.

BUILD_PACKAGES=(meson ninja-build pkg-config gcc libc6-dev libtracefs-dev libtraceevent-dev libzstd-dev libjansson-dev
                libsystemd-dev libcap-dev libelf-dev scdoc libbabeltrace2-dev)
RUNTIME_PACKAGES=(trace-cmd util-linux babeltrace2)
TEST_PACKAGES=(libtracecmd-dev python3 valgrind bindfs tmux)
# The fleet suite: a real Prometheus, node_exporter and rclone on loopback.
FLEET_PACKAGES=(prometheus prometheus-node-exporter rclone)
# The systemd suite boots a Debian 12 root; the fuzzers need clang's libFuzzer.
NSPAWN_PACKAGES=(systemd-container mmdebstrap debhelper dpkg-dev)
FUZZ_PACKAGES=(clang libclang-rt-14-dev)
# The vm suite boots Debian 12's own kernel (6.1) under qemu with a busybox initramfs; a
# guest that reboots keeps its state directory on an ext4 disk image (mkfs.ext4).
VM_PACKAGES=(qemu-system-x86 linux-image-cloud-amd64 busybox-static cpio xz-utils e2fsprogs)

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

# The vm suite's third kernel: Debian 13's 6.12 series, from Debian 12's own
# bookworm-backports, unpacked rather than installed (no bootloader hooks;
# /boot keeps the machine's 6.1). tests/vm/vm.py looks for it here.
KERNEL_6_12_DIR=${FTRACED_KERNEL_6_12_DIR:-/var/cache/ftraced-test/linux-6.12}
fetch_kernel_6_12() {
    # The kernel, and virtio_blk for the guests that keep a state directory across a reboot.
    compgen -G "$KERNEL_6_12_DIR/boot/vmlinuz-6.12.*" >/dev/null &&
        [ -f "$KERNEL_6_12_DIR/modules/virtio_blk.ko" ] && return 0
    echo "== fetching Debian's 6.12 cloud kernel from bookworm-backports"
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        # The same archive as the main suite.
        local uri
        uri=$(awk '/^URIs:/ && !/security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources \
              2>/dev/null)
        printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: %s\n' \
            "${uri:-http://deb.debian.org/debian}" /usr/share/keyrings/debian-archive-keyring.gpg \
            > /etc/apt/sources.list.d/bookworm-backports.sources
    fi
    apt-get update -qq || die "apt-get update failed"
    local pkg work
    pkg=$(apt-cache depends -t bookworm-backports linux-image-cloud-amd64 2>/dev/null |
          awk '$1 == "Depends:" && $2 ~ /^linux-image-6\.12/ {print $2; exit}')
    [ -n "$pkg" ] || die "bookworm-backports offers no 6.12 linux-image-cloud-amd64"
    work=$(mktemp -d)
    chmod 755 "$work" # apt downloads as _apt
    (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root "$pkg" >/dev/null) || die "apt-get download $pkg failed"
    dpkg-deb -x "$work"/*.deb "$work/root" || die "cannot unpack $pkg"
    mkdir -p "$KERNEL_6_12_DIR/modules"
    cp -r "$work/root/boot" "$KERNEL_6_12_DIR/"
    local module
    module=$(find "$work/root/lib/modules" -name 'virtio_blk.ko*' | head -n 1)
    [ -n "$module" ] || die "$pkg has no virtio_blk module"
    case $module in
        *.xz) xz -dc "$module" > "$KERNEL_6_12_DIR/modules/virtio_blk.ko" ;;
        *) cp "$module" "$KERNEL_6_12_DIR/modules/virtio_blk.ko" ;;
    esac
    rm -rf "$work"
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
