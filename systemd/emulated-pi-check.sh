#!/usr/bin/env bash
# Prove the Raspberry Pi install on a machine without a Pi: a Debian 12 (bookworm) arm64
# root, the base of Raspberry Pi OS Bookworm (same Python 3.11, same glibc), run under
# qemu-user, with the Raspberry Pi-only packages stood in for. Not part of .ci/run: it
# needs root, the Debian archive and PyPI, and takes 30-90 minutes.
#
#   sudo systemd/emulated-pi-check.sh [--work DIR] [--fresh] [--no-tests]
#
#   --work DIR   where the roots live (default /var/tmp/vault-emulated-pi); the
#                debootstrapped base is kept there and reused, each run starts from a copy
#   --fresh      build the base again
#   --no-tests   skip the two test-suite runs (the slowest part)
#   --base-only  build (or check) the base root and stop
#
# What it does:
#   1. registers qemu-aarch64 with binfmt_misc (or says exactly why it cannot),
#   2. debootstraps bookworm arm64 (minbase + python3, python3-venv, systemd) and builds
#      the real lgpio 0.2.2.0 from its PyPI source into the root (as Raspberry Pi OS's
#      python3-lgpio provides it: same C library, same notify pipe in the working
#      directory),
#   3. makes every arm64 process in the run's root a Pi's: qemu with a Pi 5's CPU model
#      (cortex-a76) or a Pi 4's (cortex-a72), through a binfmt_misc wrapper, and a Pi's
#      /proc/cpuinfo (qemu 7.2 shows the host's x86 one, on which ONNX Runtime's import
#      segfaults); stands in for the Pi-only apt packages with small local .debs:
#      python3-picamera2 (imports python3-pywt, a Debian extension built against numpy
#      1.24, the way the real one imports simplejpeg; Picamera2() with no camera raises
#      IndexError, as the real one does), python3-libcamera, python3-lgpio (the real
#      module from step 2) and raspi-config (records `nonint do_spi 0`), and fakes
#      /proc/device-tree/model,
#   4. copies the checkout to /home/pi/vault-companion (owned by user pi) and runs:
#      the README's first command (sim, fed "quit"), `sudo systemd/install.sh` on a
#      "Pi 5" with SPI off, `install.sh --help`, install.sh again on a "Pi 4" with SPI on
#      (idempotence, RPi.GPIO), the image recipe's own scripts (image/stage-vault: its
#      packages, 00-run.sh, 01-run-chroot.sh) on a "Pi 5", systemd/README step 4
#      (`companion check` as the companion user from a directory it cannot write, with
#      the real lgpio; and --simulate), the installed unit's ExecStart as its
#      User/Environment/WorkingDirectory under a notify listener (mock pins, no display,
#      the stand-in camera, the page on loopback, its address and PIN put on the LED and
#      said until a phone pairs), the test suite in a venv made as
#      install.sh makes it (--system-site-packages, pi-constraints.txt: Bookworm's own
#      numpy 1.24) on a "Pi 5" and the README's second command (the test suite in a
#      plain venv) on a "Pi 4" unless --no-tests; the tests that cannot run under
#      qemu-user are named with their reason (EMULATION_DESELECT),
#   5. prints a report (also WORK/report.txt); exit status 0 when every check passed.
set -uo pipefail

REPO="${VAULT_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
# bash reads a script as it runs: run from a private copy, so editing the checkout's
# copy during an hour-long run cannot break it.
if [[ "${VAULT_CHECK_COPY:-}" != 1 ]]; then
    copy="$(mktemp /tmp/emulated-pi-check.XXXXXX)"
    cp "${BASH_SOURCE[0]}" "$copy"
    VAULT_CHECK_COPY=1 VAULT_REPO="$REPO" exec bash "$copy" "$@"
fi
WORK=/var/tmp/vault-emulated-pi
FRESH=0
RUN_TESTS=1
BASE_ONLY=0
usage() { sed -n '/^#   sudo/,/^#   --base-only/p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --work) WORK="${2:?--work needs a directory}"; shift ;;
        --fresh) FRESH=1 ;;
        --no-tests) RUN_TESTS=0 ;;
        --base-only) BASE_ONLY=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "emulated-pi-check: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ $EUID -eq 0 ]] || { echo "emulated-pi-check: run as root" >&2; exit 2; }

BASE="$WORK/base"
ROOT="$WORK/run"
REPORT="$WORK/report.txt"
LOGDIR="$WORK/logs"
mkdir -p "$WORK" "$LOGDIR"
: > "$REPORT"
PASSED=0
FAILED=0
say() { printf '==> %s\n' "$*" >&2; }
note() { printf '%s\n' "$*" | tee -a "$REPORT"; }
pass() { PASSED=$((PASSED + 1)); note "PASS  $*"; }
fail() { FAILED=$((FAILED + 1)); note "FAIL  $*"; }
check() {  # check "what" command...: PASS when the command succeeds
    local what="$1"; shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

# The Debian mirror this machine's apt already uses (the first deb822 or one-line URI).
mirror() {
    local uri
    uri=$(grep -hoE '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null \
          | grep -v security | head -1 | awk '{print $2}')
    [[ -n "$uri" ]] || uri=$(grep -hoE '^deb +[^ ]+' /etc/apt/sources.list 2>/dev/null \
          | head -1 | awk '{print $2}')
    echo "${MIRROR:-$uri}"
}

# ------------------------------------------------------------------ 1. qemu + binfmt
say "host tools"
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[[ -x /usr/bin/qemu-aarch64-static ]] || need+=(qemu-user-static)
command -v update-binfmts >/dev/null || need+=(binfmt-support)
command -v dpkg-scanpackages >/dev/null || need+=(dpkg-dev)
if [[ ${#need[@]} -gt 0 ]]; then
    apt-get update -q && apt-get install -y -q "${need[@]}" >/dev/null
fi

say "binfmt_misc"
BINFMT=binfmt
if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>"$LOGDIR/binfmt.err" || true
fi
if [[ -e /proc/sys/fs/binfmt_misc/register ]]; then
    update-binfmts --enable qemu-aarch64 2>>"$LOGDIR/binfmt.err" || true
fi
if ! grep -qs '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
    BINFMT=none
fi
note "vault-companion emulated Raspberry Pi check, $(date -u '+%Y-%m-%d %H:%M UTC')"
note "host: $(uname -m), $(. /etc/os-release; echo "$PRETTY_NAME"), qemu $(qemu-aarch64-static --version | head -1 | awk '{print $3}')"
if [[ $BINFMT == none ]]; then
    # Without binfmt_misc every exec inside the root (debootstrap's second stage, apt's
    # maintainer scripts, pip's compilers) is an arm64 ELF the kernel cannot run; only a
    # single process started as `chroot ROOT /usr/bin/qemu-aarch64-static PROG` works.
    fail "binfmt_misc: qemu-aarch64 could not be registered ($(tr '\n' ' ' < "$LOGDIR/binfmt.err"))"
    if [[ -x "$BASE/usr/bin/python3" ]]; then
        cp /usr/bin/qemu-aarch64-static "$BASE/usr/bin/"
        if chroot "$BASE" /usr/bin/qemu-aarch64-static /usr/bin/python3 -c \
            'import platform; print(platform.machine(), platform.python_version())' \
            >>"$REPORT" 2>&1; then
            note "      an existing root runs one process with an explicit interpreter," \
                 "but install.sh needs binfmt_misc (mount it, or run on a host that allows it)"
        fi
    fi
    note "blocked: nothing else can run here"
    exit 1
fi
pass "binfmt_misc: qemu-aarch64 registered ($(sed -n 2p /proc/sys/fs/binfmt_misc/qemu-aarch64))"
# a CPU wrapper left registered by a run that was killed (3a) would shadow qemu-aarch64
[[ -e /proc/sys/fs/binfmt_misc/vault-emulated-pi ]] && echo -1 > /proc/sys/fs/binfmt_misc/vault-emulated-pi

# ------------------------------------------------------------------ 2. the base root
unmount_all() {
    local r="$1" m
    for m in $(awk -v r="$r" '$2 ~ "^"r"/" {print $2}' /proc/mounts | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
}
SELF="${BASH_SOURCE[0]}"
trap 'unmount_all "$ROOT"; unmount_all "$BASE"; [[ $SELF == /tmp/emulated-pi-check.* ]] && rm -f "$SELF"' EXIT

in_root() {  # in_root ROOT cmd...: a clean environment, as root
    local r="$1"; shift
    chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
mount_basics() {  # proc, sys, a private /dev (never the host's), resolv.conf
    local r="$1"
    mount -t proc proc "$r/proc"
    mount -t sysfs sys "$r/sys"
    mount -t tmpfs -o mode=0755,size=16m devtmp "$r/dev"
    local n
    for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
        IFS=: read -r name maj min <<<"$n"
        mknod -m 0666 "$r/dev/$name" c "$maj" "$min"
    done
    mkdir -p "$r/dev/pts" "$r/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666 devpts "$r/dev/pts"
    ln -sf pts/ptmx "$r/dev/ptmx"
    mount -t tmpfs -o mode=1777 shm "$r/dev/shm"
    ln -sf /proc/self/fd "$r/dev/fd"
    cp /etc/resolv.conf "$r/etc/resolv.conf"
    grep -qs "$(hostname)" "$r/etc/hosts" || echo "127.0.1.1 $(hostname)" >> "$r/etc/hosts"
    # This host's trust store: where TLS to the package index goes through a proxy that
    # re-signs it, the root's own bundle would refuse the connection.
    local bundle="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"
    if [[ -s "$bundle" ]]; then
        cp "$bundle" "$r/etc/ssl/certs/ca-certificates.crt"
        mkdir -p "$r/usr/local/share/ca-certificates"  # kept by update-ca-certificates
        cp "$bundle" "$r/usr/local/share/ca-certificates/host-trust.crt"
    fi
}

if [[ $FRESH -eq 1 ]]; then
    unmount_all "$BASE"; rm -rf "$BASE"
fi
if [[ ! -e "$BASE/.vault-debootstrap-done" ]]; then
    say "debootstrap bookworm arm64 into $BASE (slow)"
    rm -rf "$BASE"
    if ! debootstrap --arch=arm64 --variant=minbase \
        --include=python3,python3-venv,python3-pip,systemd,ca-certificates,sudo,procps \
        bookworm "$BASE" "$(mirror)" >"$LOGDIR/debootstrap.log" 2>&1; then
        fail "debootstrap (see $LOGDIR/debootstrap.log)"; exit 1
    fi
    touch "$BASE/.vault-debootstrap-done"
fi
if [[ ! -e "$BASE/.vault-base-done" ]]; then
    mount_basics "$BASE"
    say "the real lgpio from its PyPI source, built in the root"
    python3 -m pip download -q --no-deps --no-binary :all: -d "$BASE/tmp" lgpio==0.2.2.0 \
        >"$LOGDIR/lgpio-build.log" 2>&1
    if ! in_root "$BASE" sh -c 'apt-get install -y -q --no-install-recommends swig gcc \
            python3-dev python3-setuptools \
        && cd /tmp && PYPI=1 python3 -m pip install --break-system-packages --no-deps \
            --no-build-isolation lgpio-0.2.2.0.tar.gz' >>"$LOGDIR/lgpio-build.log" 2>&1; then
        fail "building lgpio in the root (see $LOGDIR/lgpio-build.log)"; exit 1
    fi
    in_root "$BASE" apt-get clean
    unmount_all "$BASE"
    touch "$BASE/.vault-base-done"
fi
pass "base root: $(cat "$BASE/etc/debian_version") arm64, $(chroot "$BASE" /usr/bin/python3 -V), glibc $(chroot "$BASE" /usr/bin/ldd --version | head -1 | awk '{print $NF}')"
[[ $BASE_ONLY -eq 1 ]] && exit 0

# ------------------------------------------------------------------ 3. this run's root
say "fresh copy of the base"
unmount_all "$ROOT"; rm -rf "$ROOT"
cp -a "$BASE" "$ROOT"
mount_basics "$ROOT"

# ------------------------------------------------------------------ 3a. a Pi's CPU
# qemu-user's default CPU model ("max") has features no Pi has (SVE, PAC, ...), and
# qemu 7.2 does not make up a /proc/cpuinfo for arm64: a process in the root reads the
# host's (x86) file. ONNX Runtime's import reads it (and /sys/devices/system/cpu) to
# learn the cores, and with an x86 file it dies: "qemu: uncaught target signal 11
# (Segmentation fault)", with any CPU model; with a Pi's file it imports and reads. So
# every arm64 process here runs as on the board being shown: binfmt_misc runs a small
# static wrapper (registered with the F flag, so it need not be in the root) that starts
# the root's copy of qemu with `-cpu` from the root's /etc/vault-qemu-cpu (cortex-a76 for
# a Pi 5, cortex-a72 for a Pi 4), and a Pi's /proc/cpuinfo is bound over the host's.
# qemu's cortex-a72 has the crypto extensions (aes, sha2) a Pi 4's BCM2711 lacks; the
# cpuinfo file says what the Pi's says.
say "a Pi's CPU: qemu -cpu from the root, a Pi's /proc/cpuinfo"
QEMU_IN_ROOT=/usr/libexec/vault-qemu/qemu-aarch64-static
install -D -m 0755 /usr/bin/qemu-aarch64-static "$ROOT$QEMU_IN_ROOT"
cat > "$WORK/qemu-cpu.c" <<EOF
/* binfmt_misc (flags P, F) runs this as: wrapper /path/to/program argv0 args...;
   it runs the root's qemu with the CPU model named in the root's /etc/vault-qemu-cpu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char cpu[64] = "cortex-a76";
    FILE *f = fopen("/etc/vault-qemu-cpu", "r");
    if (f) {
        if (fgets(cpu, sizeof cpu, f)) cpu[strcspn(cpu, "\n")] = 0;
        fclose(f);
    }
    if (argc < 3) { fputs("vault qemu wrapper: run by binfmt_misc only\n", stderr); return 127; }
    char **args = calloc(argc + 5, sizeof *args);
    int n = 0;
    args[n++] = "$QEMU_IN_ROOT";
    args[n++] = "-cpu"; args[n++] = cpu;
    args[n++] = "-0"; args[n++] = argv[2];
    args[n++] = argv[1];
    for (int i = 3; i < argc; i++) args[n++] = argv[i];
    args[n] = NULL;
    execv(args[0], args);
    perror("vault qemu wrapper: $QEMU_IN_ROOT");
    return 127;
}
EOF
BINFMT_NAME=vault-emulated-pi
if ! gcc -static -O2 -o "$WORK/qemu-cpu" "$WORK/qemu-cpu.c" 2>"$LOGDIR/qemu-cpu.log"; then
    apt-get install -y -q gcc libc6-dev >/dev/null 2>&1
    gcc -static -O2 -o "$WORK/qemu-cpu" "$WORK/qemu-cpu.c" 2>"$LOGDIR/qemu-cpu.log" \
        || { fail "building the qemu CPU wrapper (see $LOGDIR/qemu-cpu.log)"; exit 1; }
fi
[[ -e /proc/sys/fs/binfmt_misc/$BINFMT_NAME ]] && echo -1 > "/proc/sys/fs/binfmt_misc/$BINFMT_NAME"
# the same magic and mask as qemu-aarch64's; a newer entry is tried first
magic=$(sed -n 's/^magic //p' /proc/sys/fs/binfmt_misc/qemu-aarch64 | sed 's/../\\x&/g')
mask=$(sed -n 's/^mask //p' /proc/sys/fs/binfmt_misc/qemu-aarch64 | sed 's/../\\x&/g')
printf ':%s:M::%s:%s:%s:PF' "$BINFMT_NAME" "$magic" "$mask" "$WORK/qemu-cpu" \
    > /proc/sys/fs/binfmt_misc/register
trap 'unmount_all "$ROOT"; unmount_all "$BASE"; [[ -e /proc/sys/fs/binfmt_misc/'"$BINFMT_NAME"' ]] && echo -1 > /proc/sys/fs/binfmt_misc/'"$BINFMT_NAME"'; [[ $SELF == /tmp/emulated-pi-check.* ]] && rm -f "$SELF"' EXIT

# A Pi's /proc/cpuinfo (as many cores as this host gives the root: the emulated
# process cannot use more), its revision and model lines as the Pi's kernel writes them.
pi_cpuinfo() {  # pi_cpuinfo 5|4
    local n i features part variant revision model
    n=$(nproc)
    if [[ $1 == 5 ]]; then
        features="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp"
        part=0xd0b; variant=0x4; rev=1; revision=d04170; model="Raspberry Pi 5 Model B Rev 1.0"
    else
        features="fp asimd evtstrm crc32 cpuid"
        part=0xd08; variant=0x0; rev=3; revision=d03115; model="Raspberry Pi 4 Model B Rev 1.5"
    fi
    for ((i = 0; i < n; i++)); do
        printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: %s\nCPU implementer\t: 0x41\n' "$i" "$features"
        printf 'CPU architecture: 8\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: %s\n\n' "$variant" "$part" "$rev"
    done
    printf 'Revision\t: %s\nSerial\t\t: 10000000a1b2c3d4\nModel\t\t: %s\n' "$revision" "$model"
}
# set_model "Raspberry Pi 5 Model B Rev 1.0": the device tree's model (install.sh reads
# /proc/device-tree/model -> /sys/firmware/devicetree/base), /proc/cpuinfo (gpiozero
# reads the revision, ONNX Runtime the cores) and qemu's CPU model, all of that board.
set_model() {
    local dt="$WORK/firmware/devicetree/base" board=5 cpu=cortex-a76
    [[ $1 == "Raspberry Pi 4"* ]] && { board=4; cpu=cortex-a72; }
    mkdir -p "$dt"
    printf '%s\0' "$1" > "$dt/model"
    mountpoint -q "$ROOT/sys/firmware" || mount --bind "$WORK/firmware" "$ROOT/sys/firmware"
    pi_cpuinfo "$board" > "$WORK/cpuinfo.new"
    cat "$WORK/cpuinfo.new" > "$WORK/cpuinfo"  # the same file (inode) the bind shows
    mountpoint -q "$ROOT/proc/cpuinfo" || mount --bind "$WORK/cpuinfo" "$ROOT/proc/cpuinfo"
    echo "$cpu" > "$ROOT/etc/vault-qemu-cpu"
    MODEL_NOW="$1 ($cpu)"
}
# What the emulated CPU tells a program (getauxval(AT_HWCAP)), and /proc/cpuinfo's model.
cpu_seen() {
    in_root "$ROOT" python3 -c 'import ctypes
names = ("fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm "
         "jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc "
         "flagm ssbs sb paca pacg").split()
libc = ctypes.CDLL(None)
libc.getauxval.restype = ctypes.c_ulong
hw = libc.getauxval(16)
model = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("Model")]
print(" ".join(n for i, n in enumerate(names) if hw >> i & 1), "|", *model)' 2>&1 | tail -1
}
set_model "Raspberry Pi 5 Model B Rev 1.0"
seen=$(cpu_seen)
check "qemu as a Pi 5's Cortex-A76: HWCAP $seen" \
    sh -c "echo '$seen' | grep -q 'asimddp' && ! echo '$seen' | grep -qw 'sve' && echo '$seen' | grep -q 'Raspberry Pi 5'"
set_model "Raspberry Pi 4 Model B Rev 1.5"
seen=$(cpu_seen)
check "qemu as a Pi 4's Cortex-A72: HWCAP $seen" \
    sh -c "! echo '$seen' | grep -qw 'atomics' && ! echo '$seen' | grep -qw 'sve' && echo '$seen' | grep -q 'Raspberry Pi 4'"
set_model "Raspberry Pi 5 Model B Rev 1.0"

STANDINS="$WORK/standins"
rm -rf "$STANDINS"; mkdir -p "$STANDINS/repo"
mkdeb() {  # mkdeb NAME DEPENDS DESCRIPTION (files already under $STANDINS/NAME)
    local name="$1" deps="$2" desc="$3" dir="$STANDINS/$1"
    mkdir -p "$dir/DEBIAN"
    {
        echo "Package: $name"
        echo "Version: 99.0-standin"
        echo "Architecture: all"
        echo "Maintainer: vault-companion emulated check <nobody@localhost>"
        [[ -n "$deps" ]] && echo "Depends: $deps"
        echo "Description: $desc"
    } > "$dir/DEBIAN/control"
    dpkg-deb --root-owner-group -b "$dir" "$STANDINS/repo/${name}_99.0-standin_all.deb" >/dev/null
}
PY=usr/lib/python3/dist-packages
mkdir -p "$STANDINS/python3-picamera2/$PY/picamera2"
cat > "$STANDINS/python3-picamera2/$PY/picamera2/__init__.py" <<'EOF'
"""Stand-in for Raspberry Pi OS's python3-picamera2 (emulated check).

Like the real package it imports an extension compiled against the system numpy (the real
one: simplejpeg; here Debian's pywt, built against numpy 1.24), so a numpy 2 in the venv
breaks the import the same way. With no camera attached, Picamera2() raises IndexError,
as the real one does.
"""
import numpy  # noqa: F401
import pywt  # noqa: F401  (a numpy-1.24-ABI extension: fails under numpy 2)


def global_camera_info():
    return []


class Picamera2:
    def __init__(self, camera_num=0):
        self.camera_info = global_camera_info()[camera_num]
EOF
mkdeb python3-picamera2 "python3-numpy, python3-pywt, python3-libcamera" \
    "stand-in for picamera2 (no camera)"
mkdir -p "$STANDINS/python3-libcamera/$PY/libcamera"
echo '"""Stand-in for python3-libcamera (emulated check)."""' \
    > "$STANDINS/python3-libcamera/$PY/libcamera/__init__.py"
mkdeb python3-libcamera "" "stand-in for python3-libcamera"
mkdir -p "$STANDINS/python3-lgpio"
mkdeb python3-lgpio "" "stand-in for python3-lgpio: the real lgpio 0.2.2.0 is built in /usr/local"
mkdir -p "$STANDINS/raspi-config/usr/bin"
cat > "$STANDINS/raspi-config/usr/bin/raspi-config" <<'EOF'
#!/bin/sh
# Stand-in for raspi-config (emulated check): nonint do_spi 0 / get_spi only.
CONFIG=/boot/firmware/config.txt
case "$1 $2" in
    "nonint do_spi")
        mkdir -p /boot/firmware
        grep -qs '^dtparam=spi=on' "$CONFIG" || echo 'dtparam=spi=on' >> "$CONFIG"
        echo "raspi-config $*" >> /var/log/raspi-config-standin.log ;;
    "nonint get_spi")
        if grep -qs '^dtparam=spi=on' "$CONFIG"; then echo 0; else echo 1; fi ;;
    *) echo "raspi-config stand-in: $* not supported" >&2; exit 1 ;;
esac
EOF
chmod 0755 "$STANDINS/raspi-config/usr/bin/raspi-config"
mkdeb raspi-config "" "stand-in for raspi-config (SPI only)"
(cd "$STANDINS/repo" && dpkg-scanpackages --multiversion . /dev/null > Packages 2>/dev/null)
mkdir -p "$ROOT/opt/standins"
cp "$STANDINS/repo/"* "$ROOT/opt/standins/"
echo "deb [trusted=yes] file:/opt/standins ./" > "$ROOT/etc/apt/sources.list.d/standins.list"
in_root "$ROOT" sh -c 'apt-get update -q && apt-get install -y -q raspi-config' \
    >"$LOGDIR/standins.log" 2>&1 || fail "stand-in packages (see $LOGDIR/standins.log)"

say "user pi and the checkout"
in_root "$ROOT" useradd -m -u 1000 -s /bin/bash pi
in_root "$ROOT" sh -c 'echo "pi ALL=(ALL) NOPASSWD: ALL" > /etc/sudoers.d/pi'
CO=/home/pi/vault-companion
mkdir -p "$ROOT$CO"
(cd "$REPO" && git ls-files -co --exclude-standard -z \
    | xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' \
    | tar --null -T - -cf -) | tar -xf - -C "$ROOT$CO"
in_root "$ROOT" chown -R pi:pi "$CO"
as_pi() { in_root "$ROOT" runuser -u pi -- env HOME=/home/pi "$@"; }
README_SIM=$(grep -m2 '^python3 -m venv' "$REPO/README.md" | sed -n 1p)
README_TEST=$(grep -m2 '^python3 -m venv' "$REPO/README.md" | sed -n 2p)

# ------------------------------------------------------------------ 4a. README command 1
say "README command 1 (sim)"
t0=$(date +%s)
if printf 'help\nquit\n' | as_pi sh -c "cd $CO && timeout 1800 sh -c '$README_SIM'" \
        >"$LOGDIR/readme-sim.log" 2>&1; then
    pass "README command 1 ($(( $(date +%s) - t0 )) s): $(grep -c . "$LOGDIR/readme-sim.log") lines of output, exit 0"
else
    fail "README command 1 (see $LOGDIR/readme-sim.log): $(tail -1 "$LOGDIR/readme-sim.log")"
fi

# ------------------------------------------------------------------ 4b. install.sh
say "install.sh --help"
as_pi "$CO/systemd/install.sh" --help >"$LOGDIR/install-help.log" 2>&1
check "install.sh --help prints the usage, not script lines" \
    sh -c "grep -q -- '--no-apt' '$LOGDIR/install-help.log' && ! grep -qE 'set -e|REPO=' '$LOGDIR/install-help.log'"

say "install.sh on a Pi 5 with SPI off (slow)"
set_model "Raspberry Pi 5 Model B Rev 1.0"
t0=$(date +%s)
in_root "$ROOT" sh -c "cd /home/pi && sudo $CO/systemd/install.sh" >"$LOGDIR/install-1.log" 2>&1
rc=$?
check "install.sh (Pi 5, SPI off) exits 0 in $(( $(date +%s) - t0 )) s" test $rc -eq 0
check "install.sh says to reboot after turning SPI on" grep -qi 'reboot now' "$LOGDIR/install-1.log"
check "service enabled" test -L "$ROOT/etc/systemd/system/multi-user.target.wants/companion.service"
check "service not started while SPI waits for a reboot" \
    sh -c "! grep -q '^starting companion' '$LOGDIR/install-1.log'"
check "install.sh reaches its summary" grep -q '^config: ' "$LOGDIR/install-1.log"
check "nothing root-owned left in the checkout" \
    sh -c "test -z \"\$(find '$ROOT$CO' ! -uid 1000 -print -quit)\""
VPY="/opt/vault-companion/venv/bin/python"
numpy_v=$(in_root "$ROOT" "$VPY" -c 'import numpy; print(numpy.__version__, numpy.__file__)' 2>&1)
check "venv numpy below 2: $numpy_v" sh -c "echo '$numpy_v' | grep -qE '^1\\.'"
cv_v=$(in_root "$ROOT" "$VPY" -c 'import cv2; print(cv2.__version__)' 2>&1 | tail -1)
check "venv OpenCV imports: $cv_v" sh -c "echo '$cv_v' | grep -qE '^4\\.'"
pc=$(in_root "$ROOT" "$VPY" -c 'import picamera2, pywt; print("picamera2 stand-in and pywt (numpy-1.24 ABI) import")' 2>&1 | tail -1)
check "picamera2 stack imports in the venv: $pc" sh -c "echo '$pc' | grep -q import"
rg=$(in_root "$ROOT" "$VPY" -c 'from importlib.metadata import version; print(version("RPi.GPIO"))' 2>&1 | tail -1)
check "no RPi.GPIO on a Pi 5 (${rg})" sh -c "echo '$rg' | grep -q PackageNotFoundError"
prof=$(in_root "$ROOT" "$VPY" -c 'from companion.config import load_config
c = load_config("/etc/vault-companion/config.toml")
p = c.camera.profile
import os
print(repr(p), "exists" if (not p or os.path.isdir(p)) else "MISSING")' 2>&1 | tail -1)
check "installed config names no missing calibration profile: $prof" \
    sh -c "echo \"$prof\" | grep -q exists"

say "install.sh again on a Pi 4 with SPI on"
set_model "Raspberry Pi 4 Model B Rev 1.5"
mknod -m 0660 "$ROOT/dev/spidev0.0" c 153 0
t0=$(date +%s)
in_root "$ROOT" sh -c "cd /home/pi && sudo $CO/systemd/install.sh" >"$LOGDIR/install-2.log" 2>&1
rc=$?
check "install.sh again (Pi 4, SPI on) exits 0 in $(( $(date +%s) - t0 )) s" test $rc -eq 0
check "the second run keeps the config" grep -q 'keeping the existing' "$LOGDIR/install-2.log"
# (installed, not imported: RPi.GPIO refuses to import on a machine that is not a Pi)
rg=$(in_root "$ROOT" "$VPY" -c 'from importlib.metadata import version; print("RPi.GPIO", version("RPi.GPIO"))' 2>&1 | tail -1)
check "RPi.GPIO on a Pi 4: $rg" sh -c "echo '$rg' | grep -q '^RPi.GPIO [0-9]'"
numpy_v=$(in_root "$ROOT" "$VPY" -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1)
check "venv numpy still below 2 after the re-run: $numpy_v" sh -c "echo '$numpy_v' | grep -qE '^1\\.'"
rm -f "$ROOT/dev/spidev0.0"

# ------------------------------------------------------------------ 4b'. the image recipe
# pi-gen's steps for image/stage-vault, run here on this root as pi-gen runs them on the
# image's: the stage's packages (Debian has them too), 00-run.sh on the host with
# ROOTFS_DIR, then 01-run-chroot.sh inside the root (through stdin, as pi-gen's
# on_chroot does). On a fresh root, as in an image: the config is set aside first (and
# put back after, for the steps below).
say "the image recipe's own scripts (image/stage-vault) on a Pi 5"
set_model "Raspberry Pi 5 Model B Rev 1.0"
STAGE="$REPO/image/stage-vault/00-vault"
mv "$ROOT/etc/vault-companion/config.toml" "$WORK/config.toml.kept"
sed -i '/^dtparam=spi=on/d' "$ROOT/boot/firmware/config.txt" 2>/dev/null || true
t0=$(date +%s)
{
    in_root "$ROOT" sh -c "apt-get install -y -q --no-install-recommends $(tr '\n' ' ' < "$STAGE/00-packages")" \
    && ROOTFS_DIR="$ROOT" "$STAGE/00-run.sh" \
    && in_root "$ROOT" bash -e < "$STAGE/01-run-chroot.sh"
} >"$LOGDIR/image-recipe.log" 2>&1
rc=$?
check "image recipe: 00-packages, 00-run.sh and 01-run-chroot.sh exit 0 in $(( $(date +%s) - t0 )) s" test $rc -eq 0
BOOTCFG="$ROOT/boot/firmware/config.txt"
check "image recipe: boot config turns on SPI, sound and the camera ($(grep -E '^(dtparam=spi|dtparam=audio|camera_auto_detect)' "$BOOTCFG" 2>/dev/null | tr '\n' ' '))" \
    sh -c "grep -q '^dtparam=spi=on' '$BOOTCFG' && grep -q '^dtparam=audio=on' '$BOOTCFG' && grep -q '^camera_auto_detect=1' '$BOOTCFG'"
check "image recipe: avahi-daemon enabled (the box answers as HOSTNAME.local)" \
    sh -c "ls '$ROOT'/etc/systemd/system/*.wants/ | grep -q '^avahi-daemon.service$'"
check "image recipe: installed by install.sh from /opt/vault-companion/src, service enabled, not started" \
    sh -c "grep -q 'systemd/install.sh' '$LOGDIR/image-recipe.log' && test -L '$ROOT/etc/systemd/system/multi-user.target.wants/companion.service' && ! grep -q '^starting companion' '$LOGDIR/image-recipe.log'"
pg=$(grep -m1 '^page: ' "$LOGDIR/image-recipe.log")
check "image recipe: the config it writes serves the page (${pg:-no page line})" \
    sh -c "echo '$pg' | grep -q 'enabled=True on 0.0.0.0:8080'"
mv "$WORK/config.toml.kept" "$ROOT/etc/vault-companion/config.toml"

if in_root "$ROOT" systemd-analyze verify /etc/systemd/system/companion.service \
        >"$LOGDIR/verify.log" 2>&1; then
    pass "systemd-analyze verify companion.service: clean"
else
    note "INFO  systemd-analyze verify: $(grep -v '^$' "$LOGDIR/verify.log" | head -2 | tr '\n' ' ')"
fi

# ------------------------------------------------------------------ 4c. companion check
say "systemd/README step 4: companion check as the companion user"
# gpiozero asks the board revision before it opens the chip: a Pi 5's, in /proc/cpuinfo.
set_model "Raspberry Pi 5 Model B Rev 1.0"
# The defect check/serve now avoid: the real lgpio, imported as the companion user from
# a directory it cannot write, with no LG_WD, fails on its notification pipe.
in_root "$ROOT" sh -c "cd /home/pi && sudo -u companion $VPY -c 'import lgpio'" \
    >"$LOGDIR/lgpio-bare.log" 2>&1
check "the real lgpio imported bare from /home/pi fails on its pipe (the old defect): $(grep -m1 -o 'xCreatePipe.*\|PermissionError.*\|Errno.*' "$LOGDIR/lgpio-bare.log" | cut -c1-80)" \
    grep -q 'lgd-nfy\|xCreatePipe\|Permission denied' "$LOGDIR/lgpio-bare.log"
rm -f "$ROOT"/home/pi/.lgd-nfy*
CHECK_CMD=$(grep -m1 'sudo -u companion .*companion check' "$REPO/systemd/README.md")
in_root "$ROOT" sh -c "cd /home/pi && timeout 600 $CHECK_CMD" >"$LOGDIR/check-lgpio.log" 2>&1
check "companion check (real lgpio, no GPIO chip) fails on the chip, not on its notify pipe: $(grep -m1 -i 'gpiochip\|gpio chip' "$LOGDIR/check-lgpio.log")" \
    sh -c "! grep -q 'lgd-nfy' '$LOGDIR/check-lgpio.log' && grep -qi 'gpiochip\|gpio chip' '$LOGDIR/check-lgpio.log'"
check "no lgpio pipe left in the caller's directory" \
    sh -c "test -z \"\$(ls -A '$ROOT/home/pi' | grep lgd-nfy)\""
in_root "$ROOT" sh -c "cd /home/pi && timeout 600 sudo -u companion \
    /opt/vault-companion/venv/bin/companion check --simulate \
    --config /etc/vault-companion/config.toml" >"$LOGDIR/check-sim.log" 2>&1
check "companion check --simulate as the companion user: $(tail -1 "$LOGDIR/check-sim.log")" \
    grep -q 'all seats answered' "$LOGDIR/check-sim.log"
check "companion check --simulate also takes a frame, says a callout and asks the page: $(grep -E '^(camera|speaker|page):' "$LOGDIR/check-sim.log" | cut -c1-60 | tr '\n' ';')" \
    sh -c "grep -q '^camera: synthetic.*frame' '$LOGDIR/check-sim.log' && grep -q '^speaker: simulated' '$LOGDIR/check-sim.log' && grep -q '^page: http://127.0.0.1:[0-9]*/ answers' '$LOGDIR/check-sim.log'"
check "companion check on this Pi without its hardware: each failure one line, no traceback ($(grep -E '^(display|camera|speaker|page):' "$LOGDIR/check-lgpio.log" | cut -c1-70 | tr '\n' ';') $(grep '^check: ' "$LOGDIR/check-lgpio.log" | tail -1))" \
    sh -c "! grep -q Traceback '$LOGDIR/check-lgpio.log' && grep -q '^display: MAX7219 display on /dev/spidev0.0' '$LOGDIR/check-lgpio.log' && grep -q '^camera: ' '$LOGDIR/check-lgpio.log' && grep -q '^check: .* failed: ' '$LOGDIR/check-lgpio.log'"

# ------------------------------------------------------------------ 4d. the service
say "the installed service under a notify listener (mock pins)"
UNITF="$ROOT/etc/systemd/system/companion.service"
unit_val() { grep -E "^$1=" "$UNITF" | tail -1 | cut -d= -f2-; }
EXEC=$(unit_val ExecStart)
SVC_USER=$(unit_val User)
WD=$(unit_val WorkingDirectory)
ENVS=$(grep -E '^Environment=' "$UNITF" | cut -d= -f2- | tr '\n' ' ')
STATE=/var/lib/$(unit_val StateDirectory)
WDOG=$(unit_val WatchdogSec)
in_root "$ROOT" install -d -o "$SVC_USER" -g "$SVC_USER" -m 0750 "$STATE"
# the page on, on this host's loopback (the root shares the host's network): the first
# boot's page, its address and its PIN
PAGE_PORT=18467
sed -e 's/^pin_factory = .*/pin_factory = "mock"/' -e 's/^type = "max7219"/type = "none"/' \
    -e '/^\[page\]/,/^\[/{s/^enabled = .*/enabled = true/;s/^host = .*/host = "127.0.0.1"/;s/^port = .*/port = '"$PAGE_PORT"'/}' \
    "$ROOT/etc/vault-companion/config.toml" > "$ROOT/etc/vault-companion/config-mock.toml"
EXEC_MOCK=${EXEC//\/etc\/vault-companion\/config.toml/\/etc\/vault-companion\/config-mock.toml}
cat > "$ROOT/tmp/notify_listener.py" <<'EOF'
import os, pwd, signal, socket, subprocess, sys, time
sock_path, user, wd, envs, cmd, seconds, wdog = sys.argv[1:8]
if os.path.exists(sock_path):
    os.unlink(sock_path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
pw = pwd.getpwnam(user)
os.chown(sock_path, pw.pw_uid, pw.pw_gid)
env = {"PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": sock_path, "LANG": "C.UTF-8",
       "WATCHDOG_USEC": str(int(wdog) * 1_000_000), "STATE_DIRECTORY": "/var/lib/vault-companion",
       "HOME": pw.pw_dir, "USER": user}
for item in envs.split():
    k, _, v = item.partition("=")
    env[k] = v
def demote():
    os.setgroups([g for g in os.getgrouplist(user, pw.pw_gid)])
    os.setgid(pw.pw_gid)
    os.setuid(pw.pw_uid)
start = time.monotonic()
proc = subprocess.Popen(cmd.split(), cwd=wd, env=env, preexec_fn=demote,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
env["WATCHDOG_PID"] = str(proc.pid)
s.settimeout(0.5)
ready = None
pings = 0
status = ""
while time.monotonic() - start < float(seconds) and proc.poll() is None:
    try:
        data = s.recv(4096).decode()
    except socket.timeout:
        continue
    for line in data.splitlines():
        if line == "READY=1" and ready is None:
            ready = time.monotonic() - start
        elif line == "WATCHDOG=1" and ready is not None:
            pings += 1
        elif line.startswith("STATUS="):
            status = line[7:]
alive = proc.poll() is None
proc.send_signal(signal.SIGTERM)
try:
    out = proc.communicate(timeout=30)[0].decode(errors="replace")
except subprocess.TimeoutExpired:
    proc.kill()
    out = proc.communicate()[0].decode(errors="replace")
print(f"ready={'%.1f s' % ready if ready is not None else 'never'}")
print(f"watchdog_pings={pings} in {float(seconds) - (ready or 0):.0f} s after READY")
print(f"alive_until_sigterm={alive}")
print(f"exit={proc.returncode}")
print(f"status={status}")
print("---- output")
print(out)
EOF
in_root "$ROOT" python3 /tmp/notify_listener.py /run/vault-notify.sock "$SVC_USER" "$WD" \
    "$ENVS" "$EXEC_MOCK" 40 "${WDOG:-10}" >"$LOGDIR/service.log" 2>&1
check "service: $(sed -n 1p "$LOGDIR/service.log") (READY=1 sent)" grep -q '^ready=[0-9]' "$LOGDIR/service.log"
check "service: $(sed -n 2p "$LOGDIR/service.log")" grep -qE '^watchdog_pings=[1-9]' "$LOGDIR/service.log"
check "service alive until SIGTERM, $(sed -n 4p "$LOGDIR/service.log")" \
    sh -c "grep -q '^alive_until_sigterm=True' '$LOGDIR/service.log' && grep -q '^exit=0' '$LOGDIR/service.log'"
check "service announces the missing camera in one line: $(grep -i -m1 'camera gone' "$LOGDIR/service.log" | cut -c1-120)" \
    grep -qi 'camera gone' "$LOGDIR/service.log"
check "no traceback in the service's output" sh -c "! grep -q Traceback '$LOGDIR/service.log'"
check "service serves the page and gives its address and PIN: $(grep -m1 -o 'table page .*' "$LOGDIR/service.log")" \
    grep -qE "table page http://127.0.0.1:$PAGE_PORT/ PIN [0-9]{4,8}" "$LOGDIR/service.log"
# the first boot: until a phone pairs, the same address and PIN on the LED and said
PAGE_PIN=$(grep -m1 -oE "table page http://[^ ]+ PIN [0-9]{4,8}" "$LOGDIR/service.log" | awk '{print $NF}')
check "service shows and says the page's address and PIN until a phone pairs: $(grep -m1 -o 'table: pair a phone: .*' "$LOGDIR/service.log" | cut -c1-110)" \
    grep -qE "^table: pair a phone: open http://127.0.0.1:$PAGE_PORT/ and enter PIN ${PAGE_PIN:-none} \(on the LED and said until a phone pairs\)" "$LOGDIR/service.log"
check "service wrote its game log in $STATE" \
    sh -c "ls '$ROOT$STATE' | grep -q jsonl"

# ------------------------------------------------------------------ 4e. the suite, Pi venv
# The tests that cannot run under qemu-user, each with why (a test node, or a folder);
# every other test runs.
EMULATION_DESELECT=(
    "tests/hardware/test_buzzer_path.py::test_photo_finish_with_the_default_config_cops_delivered_first|real time: it blocks the loop's thread, delivers two edges and needs the second inside the 5 ms settle window; an emulated thread's wake-up takes longer than that now and then (it failed once in two emulated runs on 2026-11-23, never natively)"
    "tests/lab|the reader's lab (reader_lab/), which never goes on a Pi (the package holds companion* only): its tuning and training tests are numeric loops about 50 times slower under qemu-user (test_tuning_crossval.py's fold-by-fold test: 11 s on the x86-64 host, still running after 9 minutes emulated; the lab's 360 tests take 187 s natively), so the suite would pass the run's 90-minute limit without a summary"
)
DESELECT_ARGS=""
for entry in "${EMULATION_DESELECT[@]}"; do
    node="${entry%%|*}"
    if [[ $node == *::* ]]; then DESELECT_ARGS+=" --deselect $node"; else DESELECT_ARGS+=" --ignore=$node"; fi
    [[ $RUN_TESTS -eq 1 ]] && note "INFO  not run under qemu-user: $node: ${entry#*|}"
done
if [[ $RUN_TESTS -eq 1 ]]; then
    set_model "Raspberry Pi 5 Model B Rev 1.0"
    say "the test suite in a venv made as install.sh makes it (emulated: slow)"
    t0=$(date +%s)
    as_pi sh -c "cd $CO && rm -rf /home/pi/pi-venv \
        && python3 -m venv --system-site-packages /home/pi/pi-venv \
        && /home/pi/pi-venv/bin/pip install -q -c systemd/pi-constraints.txt -e '.[dev]' \
        && /home/pi/pi-venv/bin/python -c 'import numpy, cv2, onnxruntime; print(\"numpy\", numpy.__version__, numpy.__file__, \"opencv\", cv2.__version__, \"onnxruntime\", onnxruntime.__version__)' \
        && for w in 'numpy<2' 'numpy>=2,<2.3' opencv-python-headless==4.11.0.86 \
                PyWavelets==1.4.1; do /home/pi/pi-venv/bin/pip download -q \
                --only-binary :all: --no-deps -d /home/pi/wheelhouse \"\$w\" || true; done \
        && COMPANION_PI_WHEELHOUSE=/home/pi/wheelhouse \
            timeout 5400 /home/pi/pi-venv/bin/pytest -p no:cacheprovider -rs $DESELECT_ARGS" \
        >"$LOGDIR/pi-venv-tests.log" 2>&1
    rc=$?
    versions=$(grep -m1 '^numpy ' "$LOGDIR/pi-venv-tests.log")
    summary=$(grep -E '[0-9]+ (passed|failed)' "$LOGDIR/pi-venv-tests.log" | tail -1)
    check "suite in the Pi venv, $MODEL_NOW ($(( $(date +%s) - t0 )) s; $versions): ${summary:-no summary}" \
        sh -c "test $rc -eq 0 && echo '$versions' | grep -q '^numpy 1\.'"
else
    note "SKIP  the suite in the Pi venv (--no-tests)"
fi

# ------------------------------------------------------------------ 4f. README command 2
if [[ $RUN_TESTS -eq 1 ]]; then
    say "README command 2 (the test suite, emulated: slow), as a Pi 4"
    set_model "Raspberry Pi 4 Model B Rev 1.5"
    t0=$(date +%s)
    as_pi sh -c "cd $CO && rm -rf .venv && timeout 5400 sh -c '$README_TEST -p no:cacheprovider -rs $DESELECT_ARGS'" \
        >"$LOGDIR/readme-tests.log" 2>&1
    rc=$?
    summary=$(grep -E '[0-9]+ (passed|failed)' "$LOGDIR/readme-tests.log" | tail -1)
    check "README command 2, $MODEL_NOW ($(( $(date +%s) - t0 )) s): ${summary:-no summary}" test $rc -eq 0
else
    note "SKIP  README command 2 (--no-tests)"
fi

note "---- $PASSED passed, $FAILED failed (logs: $LOGDIR)"
[[ $FAILED -eq 0 ]]
