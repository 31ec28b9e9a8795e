#!/usr/bin/env bash
# Build the vault-companion SD card image with pi-gen (image/README.md).
#
#   git clone --depth 1 --branch arm64 https://github.com/RPi-Distro/pi-gen
#   sudo image/build.sh pi-gen
#
# Runs pi-gen's own build.sh with image/config and STAGE_LIST "stage0 stage1 stage2
# image/stage-vault": Raspberry Pi OS Lite (64-bit, Bookworm) and this repository's
# stage, whose install step is systemd/install.sh. Only this stage's image is exported
# (stage2's Lite image is skipped). The image lands in pi-gen/deploy/, xz-compressed,
# named by pi-gen from the date and IMG_NAME (...vault-companion...img.xz).
# Needs a Debian or Ubuntu machine (amd64 or arm64) with pi-gen's dependencies
# (pi-gen/depends; on amd64 also qemu-user-static and binfmt_misc) that reaches
# deb.debian.org, archive.raspberrypi.com and PyPI.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit $(( $# == 1 ? 0 : 2 ))
fi
PIGEN="$(cd "$1" && pwd)"
if [[ ! -x "$PIGEN/build.sh" || ! -d "$PIGEN/stage2" ]]; then
    echo "image/build.sh: $PIGEN is not a pi-gen checkout (no build.sh, stage2)" >&2
    exit 2
fi
if [[ $EUID -ne 0 ]]; then
    echo "image/build.sh: pi-gen builds as root: sudo $0 $*" >&2
    exit 1
fi
touch "$PIGEN/stage2/SKIP_IMAGES"
cd "$PIGEN"
STAGE_LIST="stage0 stage1 stage2 $HERE/stage-vault" ./build.sh -c "$HERE/config"
ls -l "$PIGEN/deploy/"
