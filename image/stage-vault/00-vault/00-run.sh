#!/bin/bash -e
# pi-gen, on the build host: copy this checkout (its files, not .git, .venv or build
# output) into the image at /opt/vault-companion/src, where 01-run-chroot.sh installs
# it. Also run by systemd/emulated-pi-check.sh with ROOTFS_DIR set to its arm64 root.
REPO="${VAULT_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
SRC="${ROOTFS_DIR:?set ROOTFS_DIR to the image root folder}/opt/vault-companion/src"
rm -rf "${SRC}"
install -d -m 0755 "${SRC}"
if git -C "${REPO}" rev-parse --git-dir >/dev/null 2>&1; then
	# the checkout's files as git sees them (tracked, and new ones it does not ignore)
	(cd "${REPO}" && git ls-files -co --exclude-standard -z \
		| xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' \
		| tar --null -T - -cf -) | tar -C "${SRC}" -xf -
else
	tar -C "${REPO}" --exclude=./.venv --exclude=./build --exclude='*.egg-info' \
		--exclude=__pycache__ --exclude=./vault-logs --exclude=./out -cf - . \
		| tar -C "${SRC}" -xf -
fi
[ "$(id -u)" -ne 0 ] || chown -R 0:0 "${SRC}"
echo "vault-companion: copied ${REPO} to ${SRC}"
