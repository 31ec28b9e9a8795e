#!/usr/bin/env bash
# Install vault-companion as a systemd service on Raspberry Pi OS Bookworm.
#
#   sudo systemd/install.sh [--no-apt] [--no-start] [--prefix DIR]
#
# Idempotent: run it again after `git pull` to update. It
#   1. installs the OS packages (python3-venv, picamera2, lgpio, spidev, espeak-ng) unless --no-apt,
#   2. enables SPI (for the MAX7219 display) if it is not on yet,
#   3. creates the system user "companion" in the gpio, spi, video, dialout and audio groups,
#   4. makes a venv with --system-site-packages (picamera2 and libcamera come from apt)
#      in PREFIX/venv and installs this checkout into it with the "pi" extra,
#   5. copies hardware/companion.example.toml to /etc/vault-companion/config.toml if
#      there is no config yet (an existing one is kept) and checks it,
#   6. installs the udev rule (/dev/vault-pico) and the unit, enables and (re)starts it.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX=/opt/vault-companion
CONF_DIR=/etc/vault-companion
STATE_DIR=/var/lib/vault-companion
SERVICE_USER=companion
GROUPS_NEEDED=(gpio spi video dialout audio)
UNIT=companion.service
DO_APT=1
DO_START=1

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --no-apt) DO_APT=0 ;;
        --no-start) DO_START=0 ;;
        --prefix) PREFIX="${2:?--prefix needs a directory}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

VENV="$PREFIX/venv"
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

if [[ $EUID -ne 0 ]]; then
    echo "install.sh: run as root: sudo $0 $*" >&2
    exit 1
fi
if [[ ! -f "$REPO/pyproject.toml" ]]; then
    echo "install.sh: $REPO does not look like the vault-companion checkout" >&2
    exit 1
fi

if [[ $DO_APT -eq 1 ]]; then
    say "OS packages"
    apt-get update
    apt-get install -y --no-install-recommends \
        python3-venv python3-pip python3-dev gcc \
        python3-picamera2 python3-libcamera \
        python3-lgpio python3-spidev \
        espeak-ng alsa-utils
fi

say "SPI"
if ls /dev/spidev0.* >/dev/null 2>&1; then
    echo "SPI is on (/dev/spidev0.*)"
elif command -v raspi-config >/dev/null 2>&1; then
    raspi-config nonint do_spi 0
    echo "SPI enabled; it appears after a reboot"
else
    echo "warning: no /dev/spidev0.* and no raspi-config: add dtparam=spi=on to" \
         "/boot/firmware/config.txt and reboot" >&2
fi

say "user $SERVICE_USER"
for g in "${GROUPS_NEEDED[@]}"; do
    getent group "$g" >/dev/null || groupadd --system "$g"
done
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
        --shell /usr/sbin/nologin "$SERVICE_USER"
fi
usermod -a -G "$(IFS=,; echo "${GROUPS_NEEDED[*]}")" "$SERVICE_USER"

say "venv in $VENV"
install -d -m 0755 "$PREFIX"
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv --system-site-packages "$VENV"
fi
"$VENV/bin/python" -m pip install --upgrade --quiet pip
"$VENV/bin/python" -m pip install --upgrade --quiet "$REPO[pi]"
install -m 0644 "$REPO/systemd/README.md" "$PREFIX/README.md"

say "config in $CONF_DIR"
install -d -m 0755 "$CONF_DIR"
if [[ ! -e "$CONF_DIR/config.toml" ]]; then
    install -m 0644 "$REPO/hardware/companion.example.toml" "$CONF_DIR/config.toml"
    echo "installed the example config: edit $CONF_DIR/config.toml for your wiring"
else
    echo "keeping the existing $CONF_DIR/config.toml"
fi
if ! "$VENV/bin/python" -c 'import sys
from companion.config import ConfigError, load_config
try:
    load_config(sys.argv[1])
except ConfigError as exc:
    sys.exit(str(exc))' "$CONF_DIR/config.toml"; then
    echo "install.sh: fix the config above, then run this again" >&2
    exit 1
fi

say "udev rule for the Pico (/dev/vault-pico)"
install -m 0644 "$REPO/hardware/udev/99-vault-companion.rules" /etc/udev/rules.d/
if command -v udevadm >/dev/null 2>&1; then
    udevadm control --reload-rules || true
    udevadm trigger --subsystem-match=tty || true
fi

say "systemd unit $UNIT"
sed "s#/opt/vault-companion#$PREFIX#g" "$REPO/systemd/$UNIT" > "/etc/systemd/system/$UNIT.new"
chmod 0644 "/etc/systemd/system/$UNIT.new"
mv "/etc/systemd/system/$UNIT.new" "/etc/systemd/system/$UNIT"
systemctl daemon-reload
systemctl enable "$UNIT"
if [[ $DO_START -eq 1 ]]; then
    systemctl restart "$UNIT"
    sleep 2
    systemctl --no-pager --lines=5 status "$UNIT" || true
fi

say "done"
echo "logs:   journalctl -u ${UNIT%.service} -f"
echo "games:  $STATE_DIR"
echo "config: $CONF_DIR/config.toml (then: sudo systemctl restart ${UNIT%.service})"
