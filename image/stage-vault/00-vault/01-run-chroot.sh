#!/bin/bash -e
# pi-gen, inside the image's root (arm64, run under qemu on a PC): the box's setup, the
# same as on a Pi you set up by hand (systemd/README.md). Also run by
# systemd/emulated-pi-check.sh in its arm64 root.
exec /opt/vault-companion/src/image/vault-setup.sh
