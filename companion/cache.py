"""Where the companion keeps what it can make again (spoken phrases, half-size photo sets)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(part: str) -> Path:
    """``part``'s folder: under systemd's ``CacheDirectory=`` (``$CACHE_DIRECTORY``) when
    the service has one, else ``$XDG_CACHE_HOME/vault-companion`` (``~/.cache`` unset)."""
    base = os.environ.get("CACHE_DIRECTORY", "").split(":")[0]
    if base:
        return Path(base) / part
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "vault-companion" / part
