"""The pip dice's readers, by name: the one list that the config (``[camera] reader``),
``serve``'s camera, ``companion watch``, ``eval`` and ``sim`` (``--reader``) all read.

``PIP_READERS`` maps each name to a :class:`PipReader`: a line for people and a lazy
loader, so that naming, listing and checking a reader load neither OpenCV nor a model
(the referee's own process checks the name; the camera's process loads it). A name
added here is accepted everywhere a reader is named, with nothing else to edit.

Plain Python; the loaders import the readers themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A die reader: a BGR image -> its dice (companion.vision.types.DieReading).
DieReader = Callable[..., Any]


@dataclass(frozen=True)
class PipReader:
    """One pip-dice reader: what it is, for people, and how to load it. ``load`` takes
    the threads it may use and a model folder (None: the committed one; readers without
    a model ignore it) and returns the reader, or raises one line (ModelMissing /
    ModelUnreadable) when it cannot."""

    description: str
    load: Callable[[int, str | Path | None], DieReader]


def _classical(threads: int, model_dir: str | Path | None) -> DieReader:
    from companion.vision.pips import read_pip_dice

    return read_pip_dice


def _learned(threads: int, model_dir: str | Path | None) -> DieReader:
    from companion.vision.learned import LearnedReader

    return LearnedReader(model_dir, threads=threads)


PIP_READERS: dict[str, PipReader] = {
    "pips": PipReader("the classical pip counter", _classical),
    "learned": PipReader("the learned detector and classifiers (companion/data/models)",
                         _learned),
}
# The reader without a name given; the only one that reads with a symbol-dice profile
# loaded (a profile turns the pip dice off, so naming another reader then is refused).
DEFAULT_PIP_READER = "pips"


def check_pip_reader(name: str) -> None:
    """ValueError, one line, unless ``name`` is one of ``PIP_READERS``."""
    if name not in PIP_READERS:
        raise ValueError(f"unknown pip reader {name!r} (expected one of "
                         f"{', '.join(PIP_READERS)})")


def load_pip_reader(name: str, threads: int = 1, model_dir: str | Path | None = None
                    ) -> DieReader:
    """The pip-dice reader named ``name`` (``[camera] reader``, ``--reader``), loaded."""
    check_pip_reader(name)
    return PIP_READERS[name].load(threads, model_dir)


def readers_help() -> str:
    """The readers for a ``--reader`` help line: "pips: ..., learned: ..."."""
    return "; ".join(f"{name}: {r.description}" for name, r in PIP_READERS.items())
