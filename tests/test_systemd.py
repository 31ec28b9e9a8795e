"""The appliance files: the unit says what the service needs, the install script parses,
the udev rule names the Pico."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
UNIT = REPO / "systemd" / "companion.service"
INSTALL = REPO / "systemd" / "install.sh"
UDEV = REPO / "hardware" / "udev" / "99-vault-companion.rules"


def unit_entries() -> dict[str, list[str]]:
    entries: dict[str, list[str]] = {}
    section = ""
    for raw in UNIT.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        entries.setdefault(f"{section}.{key}", []).append(value)
    return entries


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("Service.Type", "notify"),
        ("Service.WatchdogSec", "10"),
        ("Service.Restart", "on-failure"),
        ("Service.User", "companion"),
        ("Service.SupplementaryGroups", "gpio spi video dialout audio"),
        ("Service.CacheDirectory", "vault-companion"),
        ("Service.StateDirectory", "vault-companion"),
        ("Service.WorkingDirectory", "/var/lib/vault-companion"),
        (
            "Service.ExecStart",
            "/opt/vault-companion/venv/bin/companion serve --config "
            "/etc/vault-companion/config.toml",
        ),
        ("Install.WantedBy", "multi-user.target"),
    ],
)
def test_unit_has(key: str, value: str) -> None:
    assert unit_entries()[key] == [value]


def test_unit_is_not_root_and_working_dir_is_the_state_dir() -> None:
    e = unit_entries()
    assert e["Service.User"] != ["root"]
    assert e["Service.WorkingDirectory"][0].endswith(e["Service.StateDirectory"][0])


def test_install_script_parses() -> None:
    bash = shutil.which("bash")
    assert bash is not None
    result = subprocess.run([bash, "-n", str(INSTALL)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_install_script_refuses_unknown_options_before_doing_anything() -> None:
    result = subprocess.run(["bash", str(INSTALL), "--bogus"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "unknown option --bogus" in result.stderr


def test_install_script_installs_what_the_unit_uses() -> None:
    text = INSTALL.read_text()
    assert "--system-site-packages" in text
    assert '"$SRC[$EXTRAS]"' in text and "EXTRAS=pi" in text
    assert "companion.example.toml" in text and "/etc/vault-companion" in text
    assert "99-vault-companion.rules" in text
    assert "systemctl enable" in text


def test_udev_rule_links_the_pico() -> None:
    rules = [line for line in UDEV.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(rules) == 1
    rule = rules[0]
    assert 'ATTRS{idVendor}=="2e8a"' in rule
    assert 'SYMLINK+="vault-pico"' in rule
    assert 'GROUP="dialout"' in rule
