"""Scripts loaded in tests by their path (benchmarks/, reader_lab/benchmarks/ and
reader_lab/tools/), each afresh."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    """The script at ``path`` run afresh as a module named by its file's stem."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
