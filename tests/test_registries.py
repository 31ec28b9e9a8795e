"""One name list each: the pip dice's readers (companion.vision.readers) and the display
types (companion.display.registry). A name added to a registry is accepted by the config
and by the command lines' parsers, and used by serve, check, watch, eval and sim, with
no other edit; the messages list the registry's names."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from pathlib import Path

import pytest
from luma.core.device import dummy

from companion.cli import build_parser, main
from companion.config import (
    Config,
    ConfigError,
    DisplayConfig,
    LogConfig,
    SoundConfig,
    parse_config,
)
from companion.display import registry as displays
from companion.display.frame import Frame
from companion.display.led_display import LedDisplay
from companion.display.led_matrix import LedMatrixDisplay
from companion.vision import readers

# luma.led_matrix 1.9 calls Image.getdata, which Pillow 13 deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")

SCRIPTS = Path(__file__).resolve().parent / "scripts"


@pytest.fixture
def fancy(monkeypatch):
    """A pip reader named "fancy", made up here; what it was asked to load."""
    loaded: list[tuple[int, object]] = []

    def load(threads: int, model_dir: object) -> object:
        loaded.append((threads, model_dir))
        return lambda image: []

    monkeypatch.setitem(readers.PIP_READERS, "fancy",
                        readers.PipReader("a reader made up by a test", load))
    return loaded


def test_the_readers_are_the_two_known_by_their_config_names():
    assert list(readers.PIP_READERS) == ["pips", "learned"]
    assert readers.DEFAULT_PIP_READER == "pips"
    assert list(displays.DISPLAY_TYPES) == ["max7219", "terminal", "none"]


def test_a_reader_added_to_the_registry_is_accepted_by_the_config(fancy):
    assert parse_config('[camera]\nreader = "fancy"').camera.reader == "fancy"
    with pytest.raises(ConfigError) as err:
        parse_config('[camera]\nreader = "yolo"')
    assert str(err.value) == ('config.toml: camera.reader must be one of "pips", "learned", '
                              "\"fancy\", got 'yolo'")
    # a profile turns the pip dice off: any reader but the default is refused with one
    with pytest.raises(ConfigError, match=r'camera.reader must be "pips" while camera.profile'
                                          r" names a profile \(the fancy reader"):
        parse_config('[camera]\nreader = "fancy"\nprofile = "calibration/synthetic"')


@pytest.mark.parametrize("words", [["watch", "synthetic"], ["eval", "labels.csv"], ["sim"]])
def test_a_reader_added_to_the_registry_is_accepted_by_the_commands(fancy, words, capsys):
    parser = build_parser()
    assert parser.parse_args([*words, "--reader", "fancy"]).reader == "fancy"
    assert parser.parse_args(words).reader == "pips"
    with pytest.raises(SystemExit):
        parser.parse_args([*words, "--reader", "yolo"])
    assert "(choose from 'pips', 'learned', 'fancy')" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args([*words, "--help"])
    assert "a reader made up by a test" in " ".join(capsys.readouterr().out.split())


def test_the_named_reader_is_the_one_loaded(fancy):
    from companion.commands.eval import _reader_for

    read, what = _reader_for(argparse.Namespace(reader="fancy", model="models/x", profile=None))
    assert read("image") == [] and what == "pip dice (fancy reader)"
    assert fancy == [(1, "models/x")]
    readers.load_pip_reader("fancy", threads=3)
    assert fancy[-1] == (3, None)
    from companion.vision.pips import read_pip_dice

    assert readers.load_pip_reader("pips") is read_pip_dice
    with pytest.raises(ValueError, match=r"unknown pip reader 'yolo' \(expected one of pips, "
                                         r"learned, fancy\)"):
        readers.check_pip_reader("yolo")


class Chain(dummy):
    """A luma dummy chain of 8x8 modules keeping every image it was sent."""

    def __init__(self, cascaded: int) -> None:
        super().__init__(width=8 * cascaded, height=8, mode="1")
        self.sent: list = []

    def display(self, image) -> None:  # noqa: ANN001 - luma's signature
        self.sent.append(image.copy())
        super().display(image)


@pytest.fixture
def chain(monkeypatch):
    """A display type named "chain", made up here: a dummy luma chain of
    `display.cascaded` modules; the devices it made."""
    made: list[Chain] = []

    def device(config: DisplayConfig) -> LedMatrixDisplay:
        made.append(Chain(config.cascaded))
        return LedMatrixDisplay(made[-1])

    def panel(config: DisplayConfig) -> displays.Panel:
        led = device(config)
        return displays.Panel(led.size, lambda frame: led.show(frame, force=True))

    monkeypatch.setitem(displays.DISPLAY_TYPES, "chain", displays.DisplayType(
        "a made-up chain", lambda config: LedDisplay(device(config)), panel))
    return made


def test_a_display_type_added_to_the_registry_is_accepted_by_the_config(chain):
    assert parse_config('[display]\ntype = "chain"\ncascaded = 8').display.type == "chain"
    with pytest.raises(ConfigError) as err:
        parse_config('[display]\ntype = "oled"')
    assert str(err.value) == ('config.toml: display.type must be one of "max7219", "terminal", '
                              "\"none\", \"chain\", got 'oled'")


def serve_script(tmp_path, cascaded: int, script: str = "game-3p.jsonl"):
    """A scripted game through `serve` (companion.appliance) on the "chain" display."""
    from companion.appliance import Appliance

    config = dataclasses.replace(
        Config(), display=DisplayConfig(type="chain", cascaded=cascaded),
        log=LogConfig(dir=tmp_path / "logs"), sound=SoundConfig(enabled=False))

    async def go() -> Appliance:
        app = Appliance(config)
        await app.start()
        await app.read_input(str(SCRIPTS / script))
        await asyncio.sleep(0.3)  # settle windows close, an animation plays a while
        app.buzzers.flush()
        await app.table.drain()
        await app.close()
        return app

    return asyncio.run(go())


@pytest.mark.parametrize("cascaded", [8, 3])
def test_serve_shows_the_configured_type_at_its_size(tmp_path, chain, cascaded, capsys):
    app = serve_script(tmp_path, cascaded)
    (device,) = chain
    size = (8 * cascaded, 8)
    assert app.referee.size == size
    assert app.referee.game.over(app.referee.state)  # the whole game was played
    assert len(device.sent) > 10 and {img.size for img in device.sent} == {size}
    assert device.sent[-1].getbbox() is None  # blanked at close
    err = capsys.readouterr().err
    narrow = ("companion: warning: the display is 24x8, smaller than the 32x8 the games' "
              "boards are laid out for: only their top-left part shows")
    assert (narrow in err) == (cascaded == 3)


@pytest.mark.parametrize("cascaded", [8, 3])
def test_check_lights_each_row_and_module_of_the_configured_panel(tmp_path, chain, cascaded,
                                                                  capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[display]\ntype = "chain"\ncascaded = {cascaded}\n'
                   f'[log]\ndir = "{tmp_path / "logs"}"\n')
    main(["check", "--config", str(cfg), "--timeout", "0.01", "--step", "0"])
    (device,) = chain
    width = 8 * cascaded
    lit = [{(x, y) for x in range(width) for y in range(8) if img.getpixel((x, y))}
           for img in device.sent]
    rows = [{(x, y) for x in range(width)} for y in range(8)]
    modules = [{(x, y) for x in range(8 * m, 8 * m + 8) for y in range(8)}
               for m in range(cascaded)]
    assert lit == rows + modules + [set()]
    assert (f"display: rows 0-7 and modules 1-{cascaded} lit in turn"
            in capsys.readouterr().out)


def test_the_shipped_types_open_nothing_until_shown():
    for name, kind in displays.DISPLAY_TYPES.items():
        config = DisplayConfig(type=name, cascaded=8)
        panel = kind.panel(config)
        assert panel.size == ((64, 8) if name == "max7219" else (32, 8))
        made = kind.make(config)
        assert (made is None) == (name == "none")
    assert isinstance(displays.DISPLAY_TYPES["max7219"].make(DisplayConfig()), LedDisplay)
    assert displays.DISPLAY_TYPES["none"].panel(DisplayConfig()).show(Frame.blank()) is None
    with pytest.raises(ValueError, match=r"unknown display type 'oled' \(expected one of "
                                         r"max7219, terminal, none\)"):
        displays.display_type("oled")
