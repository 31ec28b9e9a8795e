"""The companion's configuration: one TOML file, validated before any hardware is touched.

Every setting has a default, and the defaults describe the simulated table (mock pins,
terminal display, no co-processor, no camera), so ``companion sim`` needs no file. The
documented example for a real box is ``hardware/companion.example.toml``.

``load_config(path)`` reads and checks the whole file. Anything wrong (a TOML syntax
error, an unknown section or key, a value of the wrong type or out of range, a missing
value that the other settings make necessary, two roles on one GPIO pin) raises
:class:`ConfigError` whose message is one line naming the file, the key and what was
expected, e.g.::

    config.toml: timing.settle_ms must be a number of milliseconds between 0 and 100, got 'x'

Relative paths in the file (``log.dir``, ``camera.profile``, a camera file) are taken
relative to the directory holding the file, and ``~`` is expanded. A path or device no
system can open (``~nosuchuser``, a NUL byte) is refused like any other wrong value, so
``serve`` says one line and exits 78.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from companion.display.registry import DISPLAY_TYPES
from companion.errors import CompanionError
from companion.games.claims import CLAIM_MODES
from companion.hardware.arbitration import TIE_RULES
from companion.hardware.pins import FACTORY_NAMES
from companion.vision.readers import DEFAULT_PIP_READER, PIP_READERS

_C = TypeVar("_C")  # a table's config type

BLOCK_ORIENTATIONS = (0, 90, -90, 180)
CAMERA_SOURCES = ("none", "picamera2", "picamera", "synthetic")
# BCM numbers of the 40-pin header's GPIOs. 0 and 1 are the HAT ID EEPROM bus.
BCM_PINS = range(2, 28)
# SPI0 uses these BCM pins (CE1, CE0, MISO, MOSI, SCLK); SPI1 uses 16-21.
SPI_PINS = {0: {7, 8, 9, 10, 11}, 1: {16, 17, 18, 19, 20, 21}}
MAX_SEATS = 8


MAX_CONFIG_CHARS = 256 * 1024  # a config file is a page or two of TOML


class ConfigError(CompanionError, ValueError):
    """A configuration problem; ``str(err)`` is one line naming the key."""


@dataclass(frozen=True)
class GpioConfig:
    # gpiozero pin factory: "mock" (simulated pins), "lgpio" (Pi 5 / Bookworm: kernel
    # edge timestamps), "rpigpio" (RPi.GPIO, Pi 4 and older), "native", or "auto"
    # (gpiozero's own choice).
    pin_factory: str = "mock"


@dataclass(frozen=True)
class ButtonsConfig:
    # BCM pin per seat, seat 0 first. Button between the pin and GND, internal pull-up.
    pins: tuple[int, ...] = (17, 27, 22, 23)


@dataclass(frozen=True)
class LampsConfig:
    # BCM pin of the lamp inside each seat's button (same order as buttons.pins), or ().
    pins: tuple[int, ...] = ()
    # BCM pins of a bar of discrete LEDs (e.g. the cops' stage progress), or ().
    progress_pins: tuple[int, ...] = ()
    # True when a lamp lights with its pin LOW (driver wired active-low).
    active_low: bool = False


@dataclass(frozen=True)
class DisplayConfig:
    type: str = "terminal"  # a name in companion.display.registry
    cascaded: int = 4  # number of MAX7219 8x8 modules in the chain
    spi_port: int = 0
    spi_device: int = 0
    block_orientation: int = 0  # 0, 90, -90 or 180: per-module correction
    rotate: int = 0  # 0..3: quarter turns of the whole display
    blocks_reversed: bool = False  # modules chained right-to-left
    brightness: int = 64  # 0..255 (MAX7219 intensity is this / 16)


@dataclass(frozen=True)
class TimingConfig:
    lockout_ms: float = 50.0  # after a press, ignore that button's line this long
    settle_ms: float = 5.0  # after a race's first press, wait for earlier-stamped ones
    tie_us: float = 50.0  # presses closer than this are a tie
    tie_rule: str = "robbers"  # who wins a tie: "robbers", "cops", "lowest-seat"
    stuck_after_ms: float = 2000.0  # held or chattering this long: stuck, not presses

    @property
    def lockout_ns(self) -> int:
        return round(self.lockout_ms * 1_000_000)

    @property
    def settle_ns(self) -> int:
        return round(self.settle_ms * 1_000_000)

    @property
    def tie_ns(self) -> int:
        return round(self.tie_us * 1_000)

    @property
    def stuck_after_ns(self) -> int:
        return round(self.stuck_after_ms * 1_000_000)


@dataclass(frozen=True)
class PicoConfig:
    enabled: bool = False
    port: str = "/dev/vault-pico"  # a device path or any pyserial URL (picosim://...)
    baud: int = 115200


def _default_log_dir() -> Path:
    # systemd sets STATE_DIRECTORY for units with StateDirectory=.
    state = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    return Path(state) if state else Path("vault-logs")


UNDO_LIMIT = 1000  # [log] undo_limit's default


@dataclass(frozen=True)
class LogConfig:
    dir: Path = field(default_factory=_default_log_dir)
    # Undo steps the referee keeps in memory (0: the whole game). Bounded by default:
    # a game is a few hundred events, and events sent without end (a phone, a script on
    # the network) must not grow the referee's memory, or its pauses, without end.
    undo_limit: int = UNDO_LIMIT


@dataclass(frozen=True)
class CameraConfig:
    # "none", "picamera2", a V4L2 device index (int), "synthetic[:SEED]", or a path/URL
    # OpenCV can open.
    source: str | int = "none"
    # A calibration profile directory for the symbol dice ("" : pip dice only).
    profile: str = ""
    fps: float = 30.0  # frames taken a second at most (late frames are dropped)
    threads: int = 1  # OpenCV/BLAS threads the camera may use
    nice: int = 10  # how much lower the camera's CPU priority is than the referee's
    process: bool = True  # the camera in a process of its own (else a thread)
    # The pip dice's reader: "pips" (the classical counter) or "learned" (the committed
    # detector and classifiers, companion/data/models). Read only without a profile.
    reader: str = DEFAULT_PIP_READER  # a name in companion.vision.readers
    # What the camera does with a claim (an Escape, a stage, a roll): "off" (nothing),
    # "advise" (confirms it or says what it sees instead), "challenge" (a claim it sees
    # is false is challenged: the table upholds it or plays on). "challenge" needs a
    # profile whose own check passed (`companion calibrate`); else it advises.
    claims: str = "advise"


@dataclass(frozen=True)
class SoundConfig:
    # Spoken callouts (espeak-ng rendered to cached WAV files, played with aplay).
    enabled: bool = True
    voice: str = "en"  # an espeak-ng voice: "en", "en-us", "en+f3", "de", ...
    volume: int = 100  # 0-100: % of espeak-ng's normal loudness
    speed: int = 175  # words per minute, 80-450
    device: str = ""  # an ALSA device for aplay -D ("" : the default device)


@dataclass(frozen=True)
class TableConfig:
    # The cops' button claims stages: each press before stage 3 is claimed is the next
    # `stage`; after it, the press is "Arrested!" as always.
    cop_button_claims_stages: bool = False
    # The Big Score: the choosing window closes on its own after this many seconds
    # (no press by then = Rob); 0: only when all have chosen or the table closes it.
    choose_seconds: float = 10.0


@dataclass(frozen=True)
class PageConfig:
    # The table page (companion.web). Off unless enabled; binds the LAN address given
    # here (never all interfaces by default). pin: a fixed PIN (4-8 digits) instead of
    # a new one per start.
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 8080
    pin: str | None = None


@dataclass(frozen=True)
class Config:
    gpio: GpioConfig = field(default_factory=GpioConfig)
    buttons: ButtonsConfig = field(default_factory=ButtonsConfig)
    lamps: LampsConfig = field(default_factory=LampsConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    pico: PicoConfig = field(default_factory=PicoConfig)
    log: LogConfig = field(default_factory=LogConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)
    source: str = "<defaults>"  # where it came from, for messages
    sound: SoundConfig = field(default_factory=SoundConfig)
    table: TableConfig = field(default_factory=TableConfig)
    page: PageConfig = field(default_factory=PageConfig)

    @property
    def seats(self) -> int:
        return len(self.buttons.pins)


# --- validation helpers ------------------------------------------------------------------

_MISSING = object()


class _Checker:
    """Reads one table of the parsed TOML, checking each key once; unknown keys are
    reported by :meth:`done`."""

    def __init__(self, source: str, section: str, table: Mapping[str, Any]) -> None:
        self.source = source
        self.section = section
        self.table = table
        self.seen: set[str] = set()

    def fail(self, key: str, expected: str, value: Any = _MISSING) -> ConfigError:
        name = f"{self.section}.{key}" if self.section else key
        if value is _MISSING:
            return ConfigError(f"{self.source}: {name} is missing; expected {expected}")
        return ConfigError(f"{self.source}: {name} must be {expected}, got {_show(value)}")

    def get(self, key: str, default: Any, check: Callable[[Any], Any], expected: str) -> Any:
        self.seen.add(key)
        if key not in self.table:
            return default
        value = self.table[key]
        try:
            return check(value)
        except (TypeError, ValueError, RuntimeError, OSError):
            # RuntimeError, OSError: what the file system's helpers raise for a value
            # (Path.expanduser for an unknown user): a fault of the file, said so.
            raise self.fail(key, expected, value) from None

    def require(self, key: str, check: Callable[[Any], Any], expected: str) -> Any:
        if key not in self.table:
            self.seen.add(key)
            raise self.fail(key, expected)
        return self.get(key, None, check, expected)

    def done(self) -> None:
        for key in self.table:
            if key not in self.seen:
                name = f"{self.section}.{key}" if self.section else key
                known = ", ".join(sorted(self.seen)) or "none"
                raise ConfigError(f"{self.source}: unknown key {name} (known keys: {known})")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(lo: float, hi: float) -> Callable[[Any], float]:
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
            raise ValueError
        return float(v)

    return check


def _integer(lo: int, hi: int) -> Callable[[Any], int]:
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError
        return v

    return check


def _choice(options: Collection[Any]) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if isinstance(v, bool) or v not in options:
            raise ValueError
        return v

    return check


def _boolean(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError
    return v


def _nonempty_str(v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ValueError
    return v


def _pin_list(min_len: int, max_len: int) -> Callable[[Any], tuple[int, ...]]:
    def check(v: Any) -> tuple[int, ...]:
        if not isinstance(v, list) or not min_len <= len(v) <= max_len:
            raise ValueError
        pins = tuple(_integer(BCM_PINS.start, BCM_PINS.stop - 1)(p) for p in v)
        if len(set(pins)) != len(pins):
            raise ValueError
        return pins

    return check


def _pins_expected(min_len: int, max_len: int) -> str:
    lo, hi = BCM_PINS.start, BCM_PINS.stop - 1
    count = f"{min_len} to {max_len}" if min_len != max_len else str(min_len)
    return f"a list of {count} different BCM pin numbers ({lo}-{hi})"


def _camera_source(base: Path | None) -> Callable[[Any], str | int]:
    def check(v: Any) -> str | int:
        if isinstance(v, bool):
            raise ValueError
        if isinstance(v, int):
            if v < 0:
                raise ValueError
            return v
        v = _nonempty_str(v)
        if "\x00" in v or len(v) > 4096:
            raise ValueError  # no device, file or URL takes a NUL byte
        if v in CAMERA_SOURCES or v.startswith("synthetic:") or "://" in v or base is None:
            return v
        return str(_path(v, base))  # ~nosuchuser: refused, as every path in the file

    return check


# --- loading -----------------------------------------------------------------------------

SECTIONS = ("gpio", "buttons", "lamps", "display", "timing", "pico", "log", "camera")
SECTIONS += ("sound", "table", "page")


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate a config file. Raises ConfigError (one line) on any problem,
    including a file that cannot be read."""
    path = Path(path)
    source = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    try:
        base_dir = path.resolve().parent
    except (OSError, RuntimeError) as exc:  # a working directory since removed, a loop
        raise ConfigError(f"{path}: cannot find the config file's folder ({exc})") from None
    return parse_config(text, source=source, base_dir=base_dir)


def parse_config(text: str, source: str = "config.toml", base_dir: Path | None = None) -> Config:
    """Validate TOML text. ``base_dir`` anchors relative paths (default: the cwd)."""
    if len(text) > MAX_CONFIG_CHARS:
        raise ConfigError(f"{source}: too long ({len(text)} characters, limit {MAX_CONFIG_CHARS})")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message already ends "(at line N, column M)".
        raise ConfigError(f"{source}: TOML syntax error: {exc}") from None
    except (RecursionError, MemoryError, ValueError) as exc:  # 10,000 nested arrays...
        raise ConfigError(f"{source}: not a usable TOML file ({type(exc).__name__})") from None
    return config_from_dict(data, source=source, base_dir=base_dir)


def config_from_dict(
    data: Mapping[str, Any], source: str = "config.toml", base_dir: Path | None = None
) -> Config:
    tables = _top_tables(source, data)
    base = base_dir if base_dir is not None else Path.cwd()
    gpio = _read(source, "gpio", tables, _gpio_table)
    pico = _read(source, "pico", tables, _pico_table)
    listed = "buttons" in data
    buttons = _read(source, "buttons", tables, lambda c: _buttons_table(c, gpio, pico, listed))
    lamps = _read(source, "lamps", tables, lambda c: _lamps_table(c, buttons))
    display = _read(source, "display", tables, _display_table)
    timing = _read(source, "timing", tables, _timing_table)
    log = _read(source, "log", tables, lambda c: _log_table(c, base))
    camera = _read(source, "camera", tables, lambda c: _camera_table(c, base_dir, base))
    sound = _read(source, "sound", tables, _sound_table)
    table = _read(source, "table", tables, _table_table)
    page = _read(source, "page", tables, _page_table)
    config = Config(
        gpio, buttons, lamps, display, timing, pico, log, camera, source, sound, table, page
    )
    _check_pin_conflicts(config)
    return config


def _top_tables(source: str, data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The file's tables by name (an absent one: empty); no keys outside them."""
    top = _Checker(source, "", data)
    tables: dict[str, Mapping[str, Any]] = {}
    for name in SECTIONS:
        value = top.get(name, {}, _table, "a table ([" + name + "])")
        tables[name] = value
    top.done()
    return tables


def _read(
    source: str,
    name: str,
    tables: Mapping[str, Mapping[str, Any]],
    read: Callable[[_Checker], _C],
) -> _C:
    """One table read by `read`, then checked for keys it does not know."""
    c = _Checker(source, name, tables[name])
    value = read(c)
    c.done()
    return value


def _gpio_table(c: _Checker) -> GpioConfig:
    """The [gpio] table."""
    return GpioConfig(
        pin_factory=c.get(
            "pin_factory",
            GpioConfig.pin_factory,
            _choice(FACTORY_NAMES),
            "one of " + _options(FACTORY_NAMES),
        )
    )


def _pico_table(c: _Checker) -> PicoConfig:
    """The [pico] table."""
    enabled = c.get("enabled", False, _boolean, "true or false")
    if enabled:
        port = c.require("port", _device, "a serial device path or pyserial URL")
    else:
        port = c.get("port", PicoConfig.port, _device, "a serial device path or URL")
    return PicoConfig(
        enabled=enabled,
        port=port,
        baud=c.get(
            "baud",
            PicoConfig.baud,
            _integer(1200, 4_000_000),
            "a baud rate between 1200 and 4000000",
        ),
    )


def _buttons_table(
    c: _Checker, gpio: GpioConfig, pico: PicoConfig, listed: bool
) -> ButtonsConfig:
    """The [buttons] table: pins required when [buttons] is given or real GPIO (not the
    Pico) reads the buttons."""
    pins_expected = _pins_expected(2, MAX_SEATS)
    needs_pins = gpio.pin_factory != "mock" and not pico.enabled
    if needs_pins or listed:
        pins = c.require("pins", _pin_list(2, MAX_SEATS), pins_expected + ", one per seat")
    else:
        pins = ButtonsConfig.pins
    return ButtonsConfig(pins=pins)


def _lamps_table(c: _Checker, buttons: ButtonsConfig) -> LampsConfig:
    """The [lamps] table."""
    n = len(buttons.pins)
    return LampsConfig(
        pins=c.get(
            "pins", (), _pin_list(n, n), _pins_expected(n, n) + ", one per seat like buttons.pins"
        ),
        progress_pins=c.get("progress_pins", (), _pin_list(1, 16), _pins_expected(1, 16)),
        active_low=c.get("active_low", False, _boolean, "true or false"),
    )


def _display_table(c: _Checker) -> DisplayConfig:
    """The [display] table."""
    dtype = c.get(
        "type", DisplayConfig.type, _choice(DISPLAY_TYPES), "one of " + _options(DISPLAY_TYPES)
    )
    return DisplayConfig(
        type=dtype,
        cascaded=c.get(
            "cascaded", 4, _integer(1, 16), "a whole number of 8x8 modules between 1 and 16"
        ),
        spi_port=c.get("spi_port", 0, _integer(0, 1), "0 or 1 (SPI0 or SPI1)"),
        spi_device=c.get("spi_device", 0, _integer(0, 2), "0, 1 or 2 (the chip select)"),
        block_orientation=c.get(
            "block_orientation", 0, _choice(BLOCK_ORIENTATIONS), "one of 0, 90, -90, 180"
        ),
        rotate=c.get("rotate", 0, _integer(0, 3), "0, 1, 2 or 3 (quarter turns)"),
        blocks_reversed=c.get("blocks_reversed", False, _boolean, "true or false"),
        brightness=c.get("brightness", 64, _integer(0, 255), "a whole number from 0 to 255"),
    )


def _timing_table(c: _Checker) -> TimingConfig:
    """The [timing] table."""
    return TimingConfig(
        lockout_ms=c.get(
            "lockout_ms", 50.0, _number(0, 1000), "a number of milliseconds between 0 and 1000"
        ),
        settle_ms=c.get(
            "settle_ms", 5.0, _number(0, 100), "a number of milliseconds between 0 and 100"
        ),
        tie_us=c.get(
            "tie_us", 50.0, _number(0, 100_000), "a number of microseconds between 0 and 100000"
        ),
        tie_rule=c.get("tie_rule", "robbers", _choice(TIE_RULES), "one of " + _options(TIE_RULES)),
        stuck_after_ms=c.get(
            "stuck_after_ms",
            2000.0,
            _number(100, 600_000),
            "a number of milliseconds between 100 and 600000",
        ),
    )


def _log_table(c: _Checker, base: Path) -> LogConfig:
    """The [log] table."""
    return LogConfig(
        dir=c.get("dir", None, lambda v: _path(v, base), "a directory path") or _default_log_dir(),
        undo_limit=c.get(
            "undo_limit", UNDO_LIMIT, _integer(0, 1_000_000),
            "a whole number of undo steps (0: all)"
        ),
    )


def _camera_table(c: _Checker, base_dir: Path | None, base: Path) -> CameraConfig:
    """The [camera] table. The learned reader reads pip dice, which a profile (symbol
    dice) turns off, so the two together are refused."""
    camera = CameraConfig(
        source=c.get(
            "source",
            "none",
            _camera_source(base_dir),
            '"none", "picamera2", a camera index (0, 1, ...) or a file path/URL',
        ),
        profile=c.get(
            "profile",
            "",
            lambda v: "" if v == "" else str(_path(v, base)),
            'a calibration profile directory (e.g. "calibration/synthetic") or ""',
        ),
        fps=c.get("fps", 30.0, _number(1, 120), "a number of frames a second between 1 and 120"),
        threads=c.get("threads", 1, _integer(1, 64), "a whole number of threads (1-64)"),
        nice=c.get("nice", 10, _integer(0, 19), "a whole number between 0 and 19"),
        process=c.get("process", True, _boolean, "true or false"),
        reader=c.get("reader", DEFAULT_PIP_READER, _choice(PIP_READERS),
                     "one of " + _options(PIP_READERS)),
        claims=c.get("claims", "advise", _choice(CLAIM_MODES), "one of " + _options(CLAIM_MODES)),
    )
    if camera.reader != DEFAULT_PIP_READER and camera.profile:
        raise c.fail("reader", f'"{DEFAULT_PIP_READER}" while camera.profile names a profile '
                     f'(the {camera.reader} reader reads pip dice, which a profile turns off; '
                     'set profile = "")', camera.reader)
    return camera


def _sound_table(c: _Checker) -> SoundConfig:
    """The [sound] table."""
    return SoundConfig(
        enabled=c.get("enabled", True, _boolean, "true or false"),
        voice=c.get("voice", "en", _voice, 'an espeak-ng voice name such as "en" or "en-us+f3"'),
        volume=c.get("volume", 100, _integer(0, 100), "a whole number from 0 to 100"),
        speed=c.get("speed", 175, _integer(80, 450), "words per minute from 80 to 450"),
        device=c.get("device", "", _alsa_device, 'an ALSA device name such as "plughw:1,0" or ""'),
    )


def _table_table(c: _Checker) -> TableConfig:
    """The [table] table."""
    return TableConfig(
        cop_button_claims_stages=c.get(
            "cop_button_claims_stages", False, _boolean, "true or false"
        ),
        choose_seconds=c.get(
            "choose_seconds", 10.0, _number(0, 3600), "a number of seconds between 0 and 3600"
        ),
    )


def _page_table(c: _Checker) -> PageConfig:
    """The [page] table."""
    page_on = c.get("enabled", False, _boolean, "true or false")
    host_expected = "the box's LAN address to serve the page on (e.g. \"192.168.1.20\")"
    if page_on:
        host = c.require("host", _host, host_expected)
    else:
        host = c.get("host", PageConfig.host, _host, host_expected)
    return PageConfig(
        enabled=page_on,
        host=host,
        port=c.get("port", PageConfig.port, _integer(1, 65535), "a TCP port from 1 to 65535"),
        pin=c.get("pin", None, _pin, 'a PIN of 4 to 8 digits in quotes (e.g. "2580") or ""'),
    )


def _host(v: Any) -> str:
    import ipaddress

    v = _nonempty_str(v).strip()
    try:
        return str(ipaddress.ip_address(v.strip("[]")))
    except ValueError:
        pass
    labels = v.rstrip(".").split(".")
    if len(v) > 253 or not all(
        label and len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii()
        for label in labels
    ):
        raise ValueError
    return v


def _pin(v: Any) -> str | None:
    if v == "":
        return None  # a new PIN at every start
    if not isinstance(v, str) or not 4 <= len(v) <= 8 or not v.isascii() or not v.isdigit():
        raise ValueError
    return v


def _table(v: Any) -> Mapping[str, Any]:
    if not isinstance(v, dict):
        raise ValueError
    return v


def _voice(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_+-]{1,40}", v):
        raise ValueError
    return v


def _alsa_device(v: Any) -> str:
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_:,.=-]{0,80}", v):
        raise ValueError
    return v


def _device(v: Any) -> str:
    """A device path or URL: no NUL byte (no device takes one), not absurdly long."""
    text = _nonempty_str(v)
    if "\x00" in text or len(text) > 4096:
        raise ValueError
    return text


def _path(v: Any, base: Path) -> Path:
    text = _nonempty_str(v)
    if "\x00" in text or len(text) > 4096:
        raise ValueError  # no file system takes a NUL byte in a path
    try:
        p = Path(text).expanduser()
    except RuntimeError:  # ~nosuchuser
        raise ValueError from None
    return p if p.is_absolute() else base / p


def check_log_dir(config: Config) -> None:
    """At start (before any hardware): the log directory exists or can be made, is a
    directory and is writable. Raises ConfigError naming log.dir, so `serve` says one
    line and exits 78 instead of failing later with a traceback."""
    d = Path(config.log.dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
        if not d.is_dir():
            raise NotADirectoryError("not a directory")
        probe = d / f".companion-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise ConfigError(
            f"{config.source}: log.dir {_show(str(d))} cannot hold game logs ({why})"
        ) from None


def _options(options: Iterable[Any]) -> str:
    return ", ".join(f'"{o}"' if isinstance(o, str) else str(o) for o in options)


def _check_pin_conflicts(config: Config) -> None:
    """One GPIO, one role; and nothing on the SPI pins the MAX7219 uses."""
    owners: dict[int, str] = {}
    roles: list[tuple[str, tuple[int, ...]]] = [
        ("lamps.pins", config.lamps.pins),
        ("lamps.progress_pins", config.lamps.progress_pins),
    ]
    if not config.pico.enabled:
        roles.insert(0, ("buttons.pins", config.buttons.pins))
    for key, pins in roles:
        for pin in pins:
            if pin in owners:
                raise ConfigError(
                    f"{config.source}: {key} must not reuse a pin, got BCM {pin} "
                    f"(already in {owners[pin]})"
                )
            owners[pin] = key
    if DISPLAY_TYPES[config.display.type].spi:
        spi = SPI_PINS[config.display.spi_port]
        for pin, key in sorted(owners.items()):
            if pin in spi:
                raise ConfigError(
                    f"{config.source}: {key} must keep clear of the SPI{config.display.spi_port}"
                    f" pins {sorted(spi)} the MAX7219 display uses, got BCM {pin}"
                )
