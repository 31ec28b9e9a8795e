#!/usr/bin/env bash
# The vault-companion box's setup inside an image's root (pi-gen's chroot step, see
# image/README.md), and what systemd/emulated-pi-check.sh runs in its arm64 root:
#
#   1. the boot config: SPI on (the LED display), the camera found by itself, the
#      on-board sound driver on; an I2S amplifier's overlay is left to the maker
#      (docs/maker-guide.md), as it depends on the board,
#   2. mDNS: avahi-daemon enabled, so the box answers as HOSTNAME.local (vault.local:
#      pi-gen's TARGET_HOSTNAME, or whatever Raspberry Pi Imager's settings give it),
#   3. systemd/install.sh --no-start: the same install as on a Pi set up by hand (the
#      service is enabled and starts at the first boot),
#   4. the config: the example, with the page on (every address of the box, port 8080),
#      unless a config is there already.
#
# Nothing about users, passwords or Wi-Fi: Raspberry Pi Imager's settings do those.
#   image/vault-setup.sh [--boot-config FILE] [--no-apt] [--boot-only]
#   (--boot-only: step 1 alone, on FILE; no root needed: the tests use it)
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BOOT_CONFIG=/boot/firmware/config.txt
INSTALL_ARGS=(--no-start)
BOOT_ONLY=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --boot-config) BOOT_CONFIG="${2:?--boot-config needs a file}"; shift ;;
        --no-apt) INSTALL_ARGS+=(--no-apt) ;;
        --boot-only) BOOT_ONLY=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
        *) echo "vault-setup.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
say() { printf '==> vault-setup: %s\n' "$*"; }

# One "key=value" line under [all] in config.txt, replacing an earlier value of the key.
boot_line() {
    local line="$1" key="${1%%=*}"
    if grep -qE "^[[:space:]]*#?[[:space:]]*${key//./\\.}=" "$BOOT_CONFIG"; then
        sed -i -E "s|^[[:space:]]*#?[[:space:]]*${key//./\\.}=.*|${line}|" "$BOOT_CONFIG"
    else
        grep -q '^\[all\]' "$BOOT_CONFIG" || printf '\n[all]\n' >> "$BOOT_CONFIG"
        printf '%s\n' "$line" >> "$BOOT_CONFIG"
    fi
}
dtparam_on() {  # dtparam=NAME=on, replacing dtparam=NAME=off or a commented one
    local name="$1"
    if grep -qE "^[[:space:]]*#?[[:space:]]*dtparam=${name}=" "$BOOT_CONFIG"; then
        sed -i -E "s|^[[:space:]]*#?[[:space:]]*dtparam=${name}=.*|dtparam=${name}=on|" \
            "$BOOT_CONFIG"
    else
        grep -q '^\[all\]' "$BOOT_CONFIG" || printf '\n[all]\n' >> "$BOOT_CONFIG"
        printf 'dtparam=%s=on\n' "$name" >> "$BOOT_CONFIG"
    fi
}

say "boot config $BOOT_CONFIG: SPI, camera, sound"
install -d "$(dirname "$BOOT_CONFIG")"
touch "$BOOT_CONFIG"
dtparam_on spi
dtparam_on audio
boot_line camera_auto_detect=1
[[ $BOOT_ONLY -eq 1 ]] && exit 0

say "mDNS (avahi-daemon): the box answers as \$(hostname).local"
if [[ -e /lib/systemd/system/avahi-daemon.service || -e /usr/lib/systemd/system/avahi-daemon.service ]]; then
    systemctl enable avahi-daemon >/dev/null 2>&1 || \
        ln -sf /lib/systemd/system/avahi-daemon.service \
            /etc/systemd/system/multi-user.target.wants/avahi-daemon.service
else
    echo "vault-setup.sh: avahi-daemon is not installed (stage-vault/00-vault/00-packages)" >&2
    exit 1
fi

CONF=/etc/vault-companion/config.toml
HAD_CONFIG=0
[[ -e "$CONF" ]] && HAD_CONFIG=1
say "systemd/install.sh ${INSTALL_ARGS[*]}"
"$SRC/systemd/install.sh" "${INSTALL_ARGS[@]}"

say "the config: the page on every address of the box"
if [[ $HAD_CONFIG -eq 1 ]]; then
    echo "keeping the existing $CONF as it is"
else
    # [page] of the example, with enabled = true and host = "0.0.0.0": the image cannot
    # know the LAN address the box will get; the pairing PIN guards the page.
    sed -i -E '/^\[page\]/,/^\[/{s/^enabled = .*/enabled = true/;s/^host = .*/host = "0.0.0.0"/}' \
        "$CONF"
    sed -i -E '/^\[page\]/a # vault-setup.sh: page on every address (the image cannot know the LAN one)' \
        "$CONF"
fi
/opt/vault-companion/venv/bin/python -c 'import sys
from companion.config import load_config
c = load_config(sys.argv[1]).page
print(f"page: enabled={c.enabled} on {c.host}:{c.port}")' "$CONF"
say "done: the companion starts at the first boot"
