# SPDX-License-Identifier: GPL-2.0-or-later
"""More kernels for tests: Debian 12's own 6.1 (linux-image-cloud-amd64), and
Debian 13's 6.12 series from Debian 12's bookworm-backports (unpacked by
scripts/setup.sh into KERNEL_6_12_DIR), booted under qemu with the built ftraced and ftracectl in a busybox
initramfs. A test gives a shell script; the guest runs it as root with
tracefs mounted and a daemon listening, and every file the script hands to
`emit NAME PATH` comes back to the host (base64 over the serial console),
to be read there with trace-cmd and the project's counter.

TCG only (nested KVM hangs at boot on the machines this runs on): 10-50x
slower than native, so guest tests check what only this kernel can show,
never timing."""

import base64
import glob
import os
import re
import shutil
import subprocess
import tempfile

BUSYBOX = "/bin/busybox"

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tracefs nodev /sys/kernel/tracing
# Only emergencies on the console: kernel messages would land inside the files sent back.
echo 1 > /proc/sys/kernel/printk
export PATH=/bin:/usr/bin:/sbin FTRACED_SOCKET=/run/control
emit() {
    echo "=== FILE $1"
    base64 "$2"
    echo "=== END"
}
echo "=== KERNEL $(uname -r)"
# A disk (a guest that reboots): the state directory lives there, as on a server, and
# BOOT counts the boots it has seen. Each boot's daemon log is kept on it too.
STATE=/tmp/state BOOT=1
if [ -f /lib/virtio_blk.ko ] && insmod /lib/virtio_blk.ko && mkdir -p /var/lib/ftraced &&
        i=0 && while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done &&
        mount -t ext4 /dev/vda /var/lib/ftraced; then
    STATE=/var/lib/ftraced/state
    BOOT=$(( $(cat /var/lib/ftraced/boots 2>/dev/null || echo 0) + 1 ))
    echo $BOOT > /var/lib/ftraced/boots
    sync
fi
export STATE BOOT
echo "=== BOOT $BOOT"
/usr/bin/ftraced --socket /run/control --state-dir $STATE --group '' \
    --log-level debug > /tmp/ftraced.log 2>&1 &
i=0
while [ ! -S /run/control ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
. /test.sh
echo "=== EXIT $?"
kill -TERM %1 2>/dev/null
wait
echo "=== DAEMON LOG"
cat /tmp/ftraced.log
echo "=== DONE"
poweroff -f
"""


KERNEL_6_12_DIR = os.environ.get("FTRACED_KERNEL_6_12_DIR", "/var/cache/ftraced-test/linux-6.12")
KERNELS = {
    "6.1": ("/boot/vmlinuz-6.1.*-cloud-amd64", "apt-get install linux-image-cloud-amd64"),
    "6.12": (os.path.join(KERNEL_6_12_DIR, "boot/vmlinuz-6.12.*"),
             "scripts/test.sh fetches it: fetch_kernel_6_12 in scripts/setup.sh"),
}


def kernel(series="6.1"):
    """The newest Debian cloud kernel of @series ("6.1" or "6.12"), or None."""
    found = sorted(glob.glob(KERNELS[series][0]))
    return found[-1] if found else None


def skip_reason(series="6.1"):
    if os.geteuid() != 0:
        return "needs root"
    if not kernel(series):
        return "no %s (%s)" % KERNELS[series]
    if not shutil.which("qemu-system-x86_64"):
        return "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
    if not os.path.exists(BUSYBOX) or not shutil.which("cpio"):
        return "no static busybox or cpio (apt-get install busybox-static cpio)"
    return None


def libraries(binary):
    """Every shared library ldd names for @binary, the loader included."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = set()
    for line in out.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.add(m.group(1))
    return libs


def copy_into(root, path, dest=None):
    dest = os.path.join(root, (dest or path).lstrip("/"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copy2(path, dest)


def build_initramfs(work, binaries, script, module=None, files=None):
    """A gzip'd cpio: busybox, @binaries (host path -> guest path) with their
    libraries, @files (host path -> guest path) as they are, /init, /test.sh =
    @script, and @module as /lib/virtio_blk.ko."""
    root = os.path.join(work, "root")
    for d in ("bin", "usr/bin", "proc", "sys", "dev", "tmp", "run", "etc", "lib"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    if module:
        copy_into(root, module, "/lib/virtio_blk.ko")
    for host, guest in (files or {}).items():
        copy_into(root, host, guest)
    copy_into(root, BUSYBOX, "/bin/busybox")
    libs = set()
    for host, guest in binaries.items():
        copy_into(root, host, guest)
        libs |= libraries(host)
    for lib in libs:
        copy_into(root, lib)
        # Libraries are found through /lib64 and /usr/lib on Debian alike.
        real = os.path.realpath(lib)
        if real != lib:
            copy_into(root, real)
    with open(os.path.join(root, "etc/passwd"), "w") as f:
        f.write("root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n")
    with open(os.path.join(root, "etc/group"), "w") as f:
        f.write("root:x:0:\nnogroup:x:65534:\n")
    for name, text in (("init", INIT), ("test.sh", script)):
        path = os.path.join(root, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    image = os.path.join(work, "initramfs.gz")
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
    cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files,
                          capture_output=True, check=True).stdout
    with open(image, "wb") as f:
        f.write(subprocess.run(["gzip", "-1"], input=cpio, capture_output=True,
                               check=True).stdout)
    return image


class GuestRun:
    """What a guest run left: its console, the files it emitted, its exit code."""

    def __init__(self, console):
        self.console = console.replace("\r", "")
        self.files = {}
        self.exit = None
        name, chunks = None, []
        for line in self.console.splitlines():
            if name is not None:
                if line == "=== END":
                    self.files[name] = base64.b64decode("".join(chunks))
                    name = None
                elif not line.startswith("["):
                    # A kernel message printed in the middle is not part of the file.
                    chunks.append(line.strip())
            elif line.startswith("=== FILE "):
                name, chunks = line[len("=== FILE "):].strip(), []
            elif line.startswith("=== EXIT "):
                self.exit = int(line.split()[2])
        m = re.search(r"=== KERNEL (\S+)", self.console)
        self.kernel = m.group(1) if m else None
        self.boots = [int(n) for n in re.findall(r"=== BOOT (\d+)", self.console)]
        log = self.console.split("=== DAEMON LOG\n", 1)
        self.daemon_log = log[1].split("=== DONE")[0] if len(log) == 2 else ""

    def save(self, name, directory):
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(self.files[name])
        return path


def virtio_blk(series):
    """The virtio_blk module scripts/setup.sh keeps beside the 6.12 kernel, or None."""
    path = os.path.join(KERNEL_6_12_DIR, "modules", "virtio_blk.ko")
    return path if series == "6.12" and os.path.exists(path) else None


def run(script, binaries, smp=2, memory_mb=1536, timeout=300, tcg_thread="multi", series="6.1",
        cpu="max", cmdline="", reboot=False, files=None):
    """Boots the @series kernel with @binaries and runs @script; returns a GuestRun.
    @tcg_thread "single" runs every vCPU on one host thread: slower, but the
    kernel's text patching (each event enabled patches code that all CPUs
    run) cannot livelock a vCPU in its int3 handler, as it did under
    thread=multi with 64 vCPUs. @cmdline is added to the kernel's command line.
    @reboot (6.12): the guest has an ext4 disk for its state directory, and a
    panic or a reset boots it again (RAM kept, as a warm reset keeps it) until
    a boot's script powers it off; $BOOT in the script counts the boots."""
    with tempfile.TemporaryDirectory(prefix="ftraced-vm-") as work:
        module = virtio_blk(series) if reboot else None
        if reboot and not module:
            raise AssertionError("no virtio_blk module beside the 6.12 kernel: " +
                                 KERNELS["6.12"][1])
        image = build_initramfs(work, binaries, script, module, files)
        cmd = ["qemu-system-x86_64", "-accel", "tcg,thread=" + tcg_thread, "-cpu", cpu,
               "-smp", str(smp), "-m", str(memory_mb), "-kernel", kernel(series), "-initrd", image,
               "-append", ("console=ttyS0 quiet panic=%d %s" % (1 if reboot else -1,
                                                                cmdline)).strip(),
               "-nographic"]
        if reboot:
            disk = os.path.join(work, "state.img")
            subprocess.run(["truncate", "-s", "256M", disk], check=True)
            subprocess.run(["mkfs.ext4", "-q", "-F", disk], check=True)
            cmd += ["-drive", "file=%s,format=raw,if=virtio" % disk]
        else:
            cmd.append("-no-reboot")
        console = os.path.join(work, "console")
        with open(console, "wb") as out:
            try:
                subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
                               stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                pass  # what the console shows says where it stuck
        with open(console, "rb") as f:
            result = GuestRun(f.read().decode(errors="replace"))
        if result.exit is None:
            raise AssertionError("the guest did not finish its script:\n" + result.console[-6000:])
        return result
