"""One root exception: every exception class defined in companion/ (and in the reader's
lab) derives from companion.errors.CompanionError and keeps the base it had, so
`except CompanionError` catches them all and `except ValueError` still catches a
ConfigError."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
from pathlib import Path

import companion
from companion.errors import CompanionError

REPO = Path(__file__).resolve().parents[1]
BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException))


def companion_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in a module of the companion package."""
    found = []
    for info in pkgutil.walk_packages(companion.__path__, "companion."):
        if info.name.endswith(".__main__"):  # runs the CLI
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name and issubclass(cls, BaseException):
                found.append(cls)
    return found


def test_every_exception_in_the_companion_is_a_companion_error() -> None:
    found = companion_exceptions()
    names = {cls.__name__ for cls in found}
    # the walk finds them (a sample of each kind)
    assert {"CompanionError", "ConfigError", "DisplayError", "LogFolderInUse", "CameraGone",
            "ModelUnreadable", "EventFormatError", "ProtocolError", "Rejected"} <= names
    strays = [f"{cls.__module__}.{cls.__qualname__}" for cls in found
              if not issubclass(cls, CompanionError)]
    assert strays == []


def test_each_keeps_its_old_base() -> None:
    from companion.config import ConfigError
    from companion.display.led_matrix import DisplayError
    from companion.events import EventFormatError
    from companion.vision.faults import CameraGone, FrameUnreadable, SourceError
    from companion.vision.learned import ModelMissing, ModelUnreadable

    for cls in (ConfigError, EventFormatError, FrameUnreadable):
        assert issubclass(cls, ValueError)
    for cls in (DisplayError, SourceError, CameraGone, ModelMissing):
        assert issubclass(cls, RuntimeError)
    assert issubclass(ModelUnreadable, ModelMissing)
    try:
        raise ConfigError("config.toml: display.type must be one of ...")
    except ValueError as exc:  # the old catch still works
        assert isinstance(exc, CompanionError)


def test_the_labs_exceptions_are_companion_errors_too() -> None:
    """Read from the source (some lab modules need torch to import): every class there
    whose base is a built-in exception names CompanionError among its bases."""
    strays = []
    for path in sorted((REPO / "reader_lab").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
            if bases & BUILTIN_EXCEPTIONS and "CompanionError" not in bases:
                strays.append(f"{path.relative_to(REPO)}: {node.name}")
    assert strays == []
