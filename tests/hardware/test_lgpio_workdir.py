"""lgpio's working directory: `companion check` and `serve` choose it before lgpio is
imported, wherever they are started from.

lgpio's C library, when the Python module is imported, creates its notification pipe
``.lgd-nfy<N>`` in ``$LG_WD`` (or the current directory) and chdir()s there. The
stand-in below does exactly that (and refuses a directory it cannot write, as
``xCreatePipe`` does), then offers the lgpio API of tests/support/lgpio_standin.py so
gpiozero's real LGPIOFactory runs on top of it.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from companion.hardware import pins

FAKE_LGPIO = '''
import os
_wd = os.environ.get("LG_WD") or os.getcwd()
os.chdir(_wd)
if not os.access(_wd, os.W_OK):
    raise PermissionError(f"xCreatePipe: Can't set permissions (664) for {_wd}/.lgd-nfy0")
os.mkfifo(".lgd-nfy0")
WORKDIR = _wd
from lgpio_standin import *  # noqa: E402,F401,F403
'''


@pytest.fixture
def fake_lgpio(tmp_path, monkeypatch):
    """A fresh `lgpio` to import, LG_WD unset, cwd a directory of its own."""
    mod_dir = tmp_path / "mods"
    mod_dir.mkdir()
    (mod_dir / "lgpio.py").write_text(FAKE_LGPIO)
    monkeypatch.syspath_prepend(str(mod_dir))
    monkeypatch.delitem(sys.modules, "lgpio", raising=False)
    monkeypatch.delenv("LG_WD", raising=False)
    caller = tmp_path / "caller"
    caller.mkdir()
    monkeypatch.chdir(caller)
    import gpiozero.pins.local
    import lgpio_standin

    lgpio_standin.reset()
    monkeypatch.setattr(gpiozero.pins.local, "get_pi_revision", lambda: 0xD04170)  # a Pi 5
    sys.modules.pop("gpiozero.pins.lgpio", None)
    yield caller
    lgpio_standin.reset()
    sys.modules.pop("lgpio", None)
    sys.modules.pop("gpiozero.pins.lgpio", None)


def pipes(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".lgd-nfy"))


def test_the_pipe_goes_to_the_state_directory_and_the_cwd_stays(fake_lgpio, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    assert pins.prepare_lgpio_workdir(state) == state
    assert os.environ["LG_WD"] == str(state)
    assert str(state) == sys.modules["lgpio"].WORKDIR
    assert pipes(state) == [".lgd-nfy0"] and stat.S_ISFIFO((state / ".lgd-nfy0").stat().st_mode)
    assert pipes(fake_lgpio) == []
    assert Path.cwd() == fake_lgpio  # back where we were started


def test_no_writable_state_directory_means_a_private_temporary_one(fake_lgpio, tmp_path):
    workdir = pins.prepare_lgpio_workdir(tmp_path / "not-created-yet")
    assert workdir is not None and workdir.is_dir()
    assert workdir.name.startswith("companion-lgpio-")
    assert stat.S_IMODE(workdir.stat().st_mode) == 0o700
    assert pipes(workdir) == [".lgd-nfy0"] and pipes(fake_lgpio) == []
    assert Path.cwd() == fake_lgpio


def test_a_writable_lg_wd_from_the_environment_is_kept(fake_lgpio, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setenv("LG_WD", str(mine))
    assert pins.prepare_lgpio_workdir(tmp_path / "state") == mine
    assert pipes(mine) == [".lgd-nfy0"]


def test_an_unwritable_caller_directory_no_longer_matters(fake_lgpio, tmp_path, monkeypatch):
    """What `sudo -u companion companion check` from someone's home met: the stand-in
    refuses an unwritable directory the way lgpio does; the factory never sees it."""
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (
        False if Path(p) == fake_lgpio else real_access(p, mode, **kw)))
    state = tmp_path / "state"
    state.mkdir()
    factory = pins.make_pin_factory("lgpio", workdir=state)
    try:
        assert type(factory).__name__ == "LGPIOFactory"
    finally:
        factory.close()
    assert pipes(state) == [".lgd-nfy0"] and pipes(fake_lgpio) == []


def test_without_the_fix_the_caller_directory_is_used(fake_lgpio, monkeypatch):
    """The defect, shown on the stand-in: imported as before, lgpio uses the cwd."""
    import importlib

    importlib.import_module("lgpio")
    assert pipes(fake_lgpio) == [".lgd-nfy0"]


def test_mock_pins_never_touch_lgpio(fake_lgpio):
    pins.make_pin_factory("mock")
    assert "lgpio" not in sys.modules and "LG_WD" not in os.environ


def test_check_command_prepares_lgpio_in_the_config_log_dir(fake_lgpio, tmp_path, capsys):
    state = tmp_path / "logs"
    state.mkdir()
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[gpio]\npin_factory = "lgpio"\n[buttons]\npins = [17, 27]\n'
                   f'[display]\ntype = "none"\n[log]\ndir = "{state}"\n')
    from companion.cli import main

    status = main(["check", "--config", str(cfg), "--timeout", "0.05", "--step", "0"])
    out = capsys.readouterr().out
    assert "lgpio" in out
    assert status == 1 and "no press from seat(s) 0, 1" in out  # nobody pressed
    assert pipes(state) == [".lgd-nfy0"] and pipes(fake_lgpio) == []
