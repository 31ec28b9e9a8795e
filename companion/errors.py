"""The root of the companion's own exceptions.

Every error this package raises on purpose derives from :class:`CompanionError` and
keeps the base it had before (``class ConfigError(CompanionError, ValueError)``), so a
caller may catch all of them at once, or go on catching ``ValueError`` or
``RuntimeError`` as it always did. Plain Python: any module may import it.
"""

from __future__ import annotations


class CompanionError(Exception):
    """Every error this package raises on purpose."""
