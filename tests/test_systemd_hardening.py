"""The unit's sandbox fits a GPIO/SPI/camera/audio box."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from test_systemd import UNIT, unit_entries


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ProtectKernelModules", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("ProtectClock", "yes"),
        ("ProtectProc", "invisible"),
        ("CapabilityBoundingSet", ""),
        ("UMask", "0077"),
        ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"),
        ("DevicePolicy", "closed"),
        ("LimitNOFILE", "1024"),
        ("MemoryMax", "512M"),
    ],
)
def test_hardening_key(key, value):
    assert unit_entries()[f"Service.{key}"] == [value]


def test_system_calls_and_devices():
    e = unit_entries()
    assert "@system-service" in e["Service.SystemCallFilter"]
    allowed = {v.split()[0] for v in e["Service.DeviceAllow"]}
    assert {"char-gpiochip", "char-spi", "char-video4linux", "char-alsa", "char-ttyACM"} <= allowed
    # The clock epochs read /proc/sys/kernel/random/boot_id: /proc must stay whole.
    assert "Service.ProcSubset" not in e and "Service.PrivateDevices" not in e


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_systemd_analyze_rates_the_unit_ok():
    out = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", str(UNIT)],
        capture_output=True,
        text=True,
    )
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+) (\w+)", out.stdout)
    if m is None:
        pytest.skip(f"systemd-analyze cannot rate offline here: {out.stderr.strip()[:80]}")
    assert float(m.group(1)) <= 1.5 and m.group(2) == "OK", out.stdout[-300:]
