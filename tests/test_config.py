from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from companion.config import (
    Config,
    ConfigError,
    config_from_dict,
    load_config,
    parse_config,
)

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "hardware" / "companion.example.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("config.toml: ")
    return message


def test_defaults_describe_the_simulated_table() -> None:
    c = Config()
    assert c.gpio.pin_factory == "mock"
    assert c.display.type == "terminal"
    assert c.display.cascaded == 4
    assert c.timing.lockout_ms == 50 and c.timing.settle_ms == 5 and c.timing.tie_us == 50
    assert c.timing.tie_rule == "robbers" and c.timing.stuck_after_ms == 2000
    assert c.timing.settle_ns == 5_000_000 and c.timing.tie_ns == 50_000
    assert c.timing.lockout_ns == 50_000_000 and c.timing.stuck_after_ns == 2_000_000_000
    assert c.pico.enabled is False
    assert c.seats == 4


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().timing.settle_ms = 3  # type: ignore[misc]


def test_empty_file_gives_defaults(tmp_path: Path) -> None:
    c = load_config(write(tmp_path, "# nothing\n"))
    assert dataclasses.replace(c, source="<defaults>", log=Config().log) == Config()
    assert c.source == "config.toml"


def test_documented_example_loads() -> None:
    c = load_config(EXAMPLE)
    assert c.gpio.pin_factory == "lgpio"
    assert c.buttons.pins == (17, 27, 22, 23)
    assert c.lamps.pins == (5, 6, 13, 19)
    assert c.lamps.progress_pins == (12, 16, 20, 21)
    assert c.display.type == "max7219" and c.display.block_orientation == -90
    assert c.log.dir == Path("/var/lib/vault-companion")
    assert c.camera.source == "picamera2"


def test_example_documents_every_key() -> None:
    """Every setting the dataclasses know appears in the documented example."""
    text = EXAMPLE.read_text()
    for section in dataclasses.fields(Config):
        if section.name == "source":
            continue
        assert f"[{section.name}]" in text
        for f in dataclasses.fields(section.type if not isinstance(section.type, str)
                                    else getattr(Config(), section.name)):
            assert f"\n{f.name} = " in text, f"{section.name}.{f.name} not in the example"


def test_full_file_is_read(tmp_path: Path) -> None:
    c = load_config(
        write(
            tmp_path,
            """
[gpio]
pin_factory = "rpigpio"
[buttons]
pins = [2, 3, 4]
[lamps]
pins = [5, 6, 13]
active_low = true
[display]
type = "max7219"
cascaded = 8
spi_port = 0
spi_device = 1
block_orientation = 90
rotate = 2
blocks_reversed = true
brightness = 255
[timing]
lockout_ms = 12.5
settle_ms = 0
tie_us = 100
tie_rule = "lowest-seat"
stuck_after_ms = 5000
[pico]
enabled = true
port = "picosim://t"
baud = 921600
[log]
dir = "games"
[camera]
source = 1
""",
        )
    )
    assert c.gpio.pin_factory == "rpigpio"
    assert c.seats == 3
    assert c.lamps.active_low is True
    assert c.display.cascaded == 8 and c.display.spi_device == 1 and c.display.rotate == 2
    assert c.display.blocks_reversed is True and c.display.brightness == 255
    assert c.timing.lockout_ms == 12.5 and c.timing.settle_ms == 0
    assert c.timing.tie_rule == "lowest-seat"
    assert c.pico.enabled and c.pico.port == "picosim://t" and c.pico.baud == 921600
    assert c.log.dir == tmp_path.resolve() / "games"
    assert c.camera.source == 1


def test_relative_camera_file_is_anchored_at_the_config(tmp_path: Path) -> None:
    c = load_config(write(tmp_path, '[camera]\nsource = "clips/table.mp4"\n'))
    assert c.camera.source == str(tmp_path.resolve() / "clips" / "table.mp4")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[camera]\nsource = "~nosuchuser-vault/x.mp4"\n', "camera.source"),
        ('[camera]\nsource = "a\\u0000b"\n', "camera.source"),
        ('[camera]\nsource = "rtsp://cam\\u0000/x"\n', "camera.source"),
        ('[camera]\nprofile = "~nosuchuser-vault/profile"\n', "camera.profile"),
        ('[log]\ndir = "~nosuchuser-vault/logs"\n', "log.dir"),
        ('[pico]\nenabled = true\nport = "/dev/tty\\u0000ACM0"\n', "pico.port"),
        ('[pico]\nport = "' + "p" * 5000 + '"\n', "pico.port"),
    ],
)
def test_paths_no_system_can_open_are_one_line_naming_the_key(
    tmp_path: Path, text: str, key: str
) -> None:
    """Read from a file (relative paths anchored there, `~` expanded): an unknown user
    or a NUL byte is the file's fault, never a traceback from the path helpers."""
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    message = str(info.value)
    assert message.startswith(f"config.toml: {key} must be ") and "\n" not in message


def test_a_home_relative_camera_file_is_expanded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    c = load_config(write(tmp_path, '[camera]\nsource = "~/clips/table.mp4"\n'))
    assert c.camera.source == str(tmp_path / "home" / "clips" / "table.mp4")


def test_state_directory_is_the_default_log_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/vault-companion")
    assert parse_config("").log.dir == Path("/var/lib/vault-companion")
    monkeypatch.delenv("STATE_DIRECTORY")
    assert parse_config("").log.dir == Path("vault-logs")


def test_the_example_message_from_the_docs() -> None:
    assert error_of('[timing]\nsettle_ms = "x"\n') == (
        "config.toml: timing.settle_ms must be a number of milliseconds between 0 and 100,"
        " got 'x'"
    )


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("[timing]\nsettle_ms = 101", "timing.settle_ms", "between 0 and 100"),
        ("[timing]\nlockout_ms = -1", "timing.lockout_ms", "between 0 and 1000"),
        ("[timing]\nlockout_ms = true", "timing.lockout_ms", "milliseconds"),
        ("[timing]\ntie_us = '50'", "timing.tie_us", "microseconds"),
        ("[timing]\ntie_rule = 'dealer'", "timing.tie_rule", '"robbers", "cops"'),
        ("[timing]\nstuck_after_ms = 10", "timing.stuck_after_ms", "between 100"),
        ("[gpio]\npin_factory = 'pigpio'", "gpio.pin_factory", '"lgpio"'),
        ("[buttons]\npins = [17]", "buttons.pins", "2 to 8 different BCM"),
        ("[buttons]\npins = [17, 17]", "buttons.pins", "different"),
        ("[buttons]\npins = [17, 40]", "buttons.pins", "(2-27)"),
        ("[buttons]\npins = [17, 1]", "buttons.pins", "(2-27)"),
        ("[buttons]\npins = '17,27'", "buttons.pins", "a list"),
        ("[lamps]\npins = [5, 6]", "lamps.pins", "one per seat"),
        ("[lamps]\nactive_low = 'yes'", "lamps.active_low", "true or false"),
        ("[display]\ntype = 'oled'", "display.type", '"max7219", "terminal", "none"'),
        ("[display]\ncascaded = 0", "display.cascaded", "between 1 and 16"),
        ("[display]\ncascaded = 4.0", "display.cascaded", "whole number"),
        ("[display]\nspi_port = 2", "display.spi_port", "0 or 1"),
        ("[display]\nblock_orientation = 45", "display.block_orientation", "-90"),
        ("[display]\nrotate = 4", "display.rotate", "0, 1, 2 or 3"),
        ("[display]\nbrightness = 300", "display.brightness", "0 to 255"),
        ("[pico]\nbaud = 'fast'", "pico.baud", "baud rate"),
        ("[pico]\nenabled = 1", "pico.enabled", "true or false"),
        ("[log]\ndir = ''", "log.dir", "directory path"),
        ("[camera]\nsource = -1", "camera.source", "picamera2"),
        ("[camera]\nreader = 'yolo'", "camera.reader", '"pips", "learned"'),
        ("timing = 5", "timing", "a table"),
    ],
)
def test_wrong_values_name_the_key(text: str, key: str, expected: str) -> None:
    message = error_of(text)
    assert f" {key} must be " in message
    assert expected in message
    assert ", got " in message


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[gpio]\npin_factory = 'lgpio'", "buttons.pins"),  # real pins need real numbers
        ("[buttons]\n", "buttons.pins"),
        ("[pico]\nenabled = true", "pico.port"),
    ],
)
def test_missing_values_name_the_key(text: str, key: str) -> None:
    message = error_of(text)
    assert f" {key} is missing; expected " in message


def test_pico_replaces_button_pins() -> None:
    c = parse_config("[gpio]\npin_factory = 'lgpio'\n[pico]\nenabled = true\nport = '/dev/x'")
    assert c.pico.enabled


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("[timing]\nsetle_ms = 5", "timing.setle_ms"),
        ("[dispaly]\ntype = 'none'", "dispaly"),
        ("verbose = true", "verbose"),
    ],
)
def test_unknown_keys_are_typos(text: str, name: str) -> None:
    message = error_of(text)
    assert f"unknown key {name} " in message


def test_syntax_error_names_the_line() -> None:
    message = error_of('[timing]\nsettle_ms = 5\nlockout_ms = = 3\n')
    assert "TOML syntax error" in message
    assert "line 3" in message


def test_duplicate_key_is_a_syntax_error() -> None:
    assert "line 3" in error_of("[timing]\nsettle_ms = 5\nsettle_ms = 6\n")


def test_pin_used_twice_across_roles() -> None:
    message = error_of("[buttons]\npins = [17, 27]\n[lamps]\nprogress_pins = [27]")
    assert "lamps.progress_pins must not reuse a pin" in message
    assert "BCM 27" in message and "buttons.pins" in message


def test_spi_pins_are_kept_clear_for_the_display() -> None:
    text = "[display]\ntype = 'max7219'\n[buttons]\npins = [17, 10]"
    message = error_of(text)
    assert "buttons.pins must keep clear of the SPI0 pins" in message
    assert "BCM 10" in message
    # The same pins are fine when there is no MAX7219 display.
    assert parse_config("[display]\ntype = 'none'\n[buttons]\npins = [17, 10]").seats == 2


def test_unreadable_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "absent.toml")
    path = tmp_path / "config.toml"
    path.write_bytes(b"[timing]\nsettle_ms = 5\n\xff\xfe")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


def test_config_from_dict_checks_types() -> None:
    with pytest.raises(ConfigError, match="timing.settle_ms"):
        config_from_dict({"timing": {"settle_ms": None}})


def test_sound_and_table_sections(tmp_path: Path) -> None:
    c = parse_config(
        '[sound]\nenabled = false\nvoice = "en-us+f3"\nvolume = 40\nspeed = 200\n'
        'device = "plughw:1,0"\n[table]\ncop_button_claims_stages = true\n'
    )
    assert (c.sound.enabled, c.sound.voice, c.sound.volume) == (False, "en-us+f3", 40)
    assert (c.sound.speed, c.sound.device) == (200, "plughw:1,0")
    assert c.table.cop_button_claims_stages is True
    assert Config().sound.enabled is True and Config().table.cop_button_claims_stages is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sound]\nvolum = 3\n", "unknown key sound.volum (known keys: device, enabled, speed,"),
        ("[sound]\nvolume = 101\n", "sound.volume must be a whole number from 0 to 100, got 101"),
        ('[sound]\nvoice = "en; rm -rf /"\n', "sound.voice must be an espeak-ng voice name"),
        ('[sound]\nenabled = "yes"\n', "sound.enabled must be true or false, got 'yes'"),
        ("[table]\ncop_button_claims_stages = 1\n", "table.cop_button_claims_stages must be true"),
        ("sound = 3\n", "sound must be a table ([sound]), got 3"),
    ],
)
def test_sound_and_table_errors_name_the_key(text: str, message: str) -> None:
    assert message in error_of(text)


def test_camera_stream_and_undo_keys() -> None:
    c = parse_config("[camera]\nfps = 15\nthreads = 2\nnice = 0\n[log]\nundo_limit = 50\n")
    assert (c.camera.fps, c.camera.threads, c.camera.nice) == (15.0, 2, 0)
    assert c.log.undo_limit == 50
    d = Config()
    assert (d.camera.fps, d.camera.threads, d.camera.nice, d.log.undo_limit) == (30.0, 1, 10, 1000)
    assert "camera.fps" in error_of("[camera]\nfps = 0\n")
    assert "camera.threads" in error_of('[camera]\nthreads = "all"\n')
    assert "log.undo_limit" in error_of("[log]\nundo_limit = -1\n")


def test_the_cameras_pip_reader_is_the_classical_one_unless_the_config_says():
    assert Config().camera.reader == "pips"
    assert parse_config('[camera]\nreader = "learned"\n').camera.reader == "learned"
    assert load_config(EXAMPLE).camera.reader == "pips"
    message = error_of('[camera]\nreader = "learned"\nprofile = "calibration/synthetic"\n')
    assert "camera.reader must be \"pips\" while camera.profile names a profile" in message
    assert "\n" not in message
