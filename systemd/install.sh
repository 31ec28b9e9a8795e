#!/usr/bin/env bash
# Install vault-companion as a systemd service on Raspberry Pi OS Bookworm.
# Run `systemd/install.sh --help` for what it does; systemd/README.md for the whole story.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: sudo systemd/install.sh [--no-apt] [--no-start] [--prefix DIR]

Installs vault-companion from this checkout as the systemd service companion.service on
Raspberry Pi OS Bookworm. Safe to run again (after `git pull`, to update).

  1. OS packages: python3-venv, python3-picamera2, python3-libcamera, python3-lgpio,
     python3-spidev, espeak-ng and alsa-utils (skipped with --no-apt),
  2. SPI for the MAX7219 display: turned on with raspi-config if it is off; then the
     service is enabled but not started and you are told to reboot,
  3. the system user "companion" in the gpio, spi, video, dialout and audio groups,
  4. a venv in PREFIX/venv made with --system-site-packages (picamera2 comes from apt),
     into which a clean copy of this checkout is installed with the "pi" extra (plus
     "rpigpio" on a Pi 4 or older, by /proc/device-tree/model), pinned by
     systemd/pi-constraints.txt (numpy < 2, as the apt camera stack needs),
  5. /etc/vault-companion/config.toml from hardware/companion.example.toml if there is
     none yet (an existing one is kept), then checked,
  6. the udev rule (/dev/vault-pico) and the unit; enables the service and (re)starts it.

Options:
  --no-apt       do not install OS packages (they must be there already)
  --no-start     enable the service but do not (re)start it
  --prefix DIR   install into DIR instead of /opt/vault-companion
  --print-extras print the board model and the extras it gets, and stop (no root needed)
  -h, --help     this text
EOF
}

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX=/opt/vault-companion
CONF_DIR=/etc/vault-companion
STATE_DIR=/var/lib/vault-companion
SERVICE_USER=companion
GROUPS_NEEDED=(gpio spi video dialout audio)
UNIT=companion.service
DO_APT=1
DO_START=1
PRINT_EXTRAS=0

while [[ $# -gt 0 ]]; do
    case "$1" in
        --no-apt) DO_APT=0 ;;
        --no-start) DO_START=0 ;;
        --prefix) PREFIX="${2:?--prefix needs a directory}"; shift ;;
        --print-extras) PRINT_EXTRAS=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

VENV="$PREFIX/venv"
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# The board, from the device tree ("Raspberry Pi 5 Model B Rev 1.0"); empty elsewhere.
# VAULT_PI_MODEL_FILE overrides where it is read (tests, the emulated check).
pi_model() {
    local f
    for f in ${VAULT_PI_MODEL_FILE:-/proc/device-tree/model /sys/firmware/devicetree/base/model}; do
        if [[ -r "$f" ]]; then tr -d '\0' < "$f"; return; fi
    done
}
MODEL="$(pi_model)"
# RPi.GPIO drives a Pi 4 and older, not a Pi 5 (nor later boards): add it only there.
EXTRAS=pi
case "$MODEL" in
    "Raspberry Pi 5"*|"Raspberry Pi Compute Module 5"*|"Raspberry Pi 500"*|"") ;;
    "Raspberry Pi"*) EXTRAS=pi,rpigpio ;;
esac
if [[ $PRINT_EXTRAS -eq 1 ]]; then
    echo "${MODEL:-not a Raspberry Pi}: [$EXTRAS]"
    exit 0
fi

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
        python3-venv python3-pip python3-setuptools python3-wheel python3-dev gcc \
        python3-picamera2 python3-libcamera \
        python3-lgpio python3-spidev \
        espeak-ng alsa-utils
fi

say "SPI"
SPI_REBOOT=0   # SPI is set to come on at the next boot: do not start the service now
if ls /dev/spidev0.* >/dev/null 2>&1; then
    echo "SPI is on (/dev/spidev0.*)"
elif command -v raspi-config >/dev/null 2>&1; then
    if [[ "$(raspi-config nonint get_spi 2>/dev/null || true)" != 0 ]]; then
        raspi-config nonint do_spi 0
        echo "SPI turned on: /dev/spidev0.* appears after a reboot"
    else
        echo "SPI is turned on in the boot config but not live yet: it needs a reboot"
    fi
    SPI_REBOOT=1
else
    echo "warning: no /dev/spidev0.* and no raspi-config: add dtparam=spi=on to" \
         "/boot/firmware/config.txt and reboot" >&2
    SPI_REBOOT=1
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

say "venv in $VENV (${MODEL:-not a Raspberry Pi}: extras [$EXTRAS])"
install -d -m 0755 "$PREFIX"
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv --system-site-packages "$VENV"
fi
# Build from a clean copy: never write build/ or *.egg-info into the user's checkout
# as root (a stale root-owned build/ would be reinstalled after the next git pull).
SRC="$(mktemp -d /tmp/vault-companion-src.XXXXXX)"
trap 'rm -rf "$SRC"' EXIT
tar -C "$REPO" --exclude=./.git --exclude=./.venv --exclude=./build --exclude='*.egg-info' \
    --exclude=__pycache__ --exclude=./vault-logs --exclude=./out -cf - . | tar -C "$SRC" -xf -
"$VENV/bin/python" -m pip install --upgrade --quiet pip \
    || echo "warning: could not upgrade pip (no package index?); going on with the venv's" >&2
# --no-build-isolation: the build uses the venv's setuptools (Bookworm's 66 is enough),
# so an update needs no package index for the build itself.
"$VENV/bin/python" -m pip install --upgrade --quiet --no-build-isolation \
    -c "$REPO/systemd/pi-constraints.txt" "$SRC[$EXTRAS]"
"$VENV/bin/python" -c 'import numpy, sys
if int(numpy.__version__.split(".")[0]) >= 2:
    sys.exit(f"install.sh: numpy {numpy.__version__} in the venv: the apt camera stack "
             "needs numpy < 2 (systemd/pi-constraints.txt)")'
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
from pathlib import Path
from companion.config import ConfigError, load_config
try:
    cfg = load_config(sys.argv[1])
except ConfigError as exc:
    sys.exit(str(exc))
profile = cfg.camera.profile
if cfg.camera.source != "none" and profile and not Path(profile).is_dir():
    print(f"warning: camera.profile {profile} does not exist yet: the camera reads pip "
          "dice only and reports the missing profile until you run `companion calibrate` "
          "(systemd/README.md, step 5), or set camera.profile = \"\"", file=sys.stderr)' \
        "$CONF_DIR/config.toml"; then
    echo "install.sh: fix the config above, then run this again" >&2
    exit 1
fi

say "udev rule for the Pico (/dev/vault-pico)"
install -D -m 0644 "$REPO/hardware/udev/99-vault-companion.rules" \
    /etc/udev/rules.d/99-vault-companion.rules
if command -v udevadm >/dev/null 2>&1; then
    udevadm control --reload-rules || true
    udevadm trigger --subsystem-match=tty || true
fi

say "systemd unit $UNIT"
sed "s#/opt/vault-companion#$PREFIX#g" "$REPO/systemd/$UNIT" > "/etc/systemd/system/$UNIT.new"
chmod 0644 "/etc/systemd/system/$UNIT.new"
mv "/etc/systemd/system/$UNIT.new" "/etc/systemd/system/$UNIT"
systemctl daemon-reload || true
systemctl enable "$UNIT"
STARTED=0
if [[ $SPI_REBOOT -eq 1 ]]; then
    echo "not starting $UNIT now: SPI comes on at the next boot, and it starts by itself then"
elif [[ $DO_START -eq 1 ]]; then
    echo "starting $UNIT"
    if systemctl restart "$UNIT"; then
        STARTED=1
        sleep 2
    else
        echo "warning: $UNIT did not start; see below and: journalctl -u ${UNIT%.service} -b" >&2
    fi
    systemctl --no-pager --lines=5 status "$UNIT" || true
fi

say "done"
echo "logs:   journalctl -u ${UNIT%.service} -f"
echo "games:  $STATE_DIR"
echo "config: $CONF_DIR/config.toml (then: sudo systemctl restart ${UNIT%.service})"
if [[ $SPI_REBOOT -eq 1 ]]; then
    printf '\n\033[1mSPI was just turned on: reboot now (sudo reboot). The companion starts by itself after the reboot.\033[0m\n'
elif [[ $STARTED -eq 0 && $DO_START -eq 1 ]]; then
    echo "the service is enabled but not running: check the lines above"
fi
