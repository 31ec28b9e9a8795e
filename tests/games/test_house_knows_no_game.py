"""The house knows no game: no module outside a game's own package imports it (the
registry names each by a string), none asks which game is on, and every game's pure
rules import nothing above them (no display, page, loop, sim, camera or config)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPANION = ROOT / "companion"
GAMES = COMPANION / "games"
GAME_PACKAGES = sorted(p for p in GAMES.iterdir() if (p / "table.py").is_file())
RULES = ("definition.py", "state.py", "engine.py", "summary.py")


def imports(path: Path) -> set[str]:
    """Every module `path` imports (absolute names)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def house_modules() -> list[Path]:
    """Every module of the companion outside the games' own packages."""
    return [p for p in sorted(COMPANION.rglob("*.py"))
            if not any(pkg in p.parents for pkg in GAME_PACKAGES)]


def test_the_rules_package_is_gone_and_four_games_have_their_own():
    assert not (COMPANION / "rules").exists() and not (COMPANION / "sim_table.py").exists()
    assert {p.name for p in GAME_PACKAGES} == {
        "vault_assault", "big_score", "vault_solitaire", "vault_abstract"}


@pytest.mark.parametrize("package", GAME_PACKAGES, ids=lambda p: p.name)
def test_no_module_outside_a_game_imports_it(package):
    name = f"companion.games.{package.name}"
    users = [str(p.relative_to(ROOT)) for p in house_modules()
             if any(m == name or m.startswith(name + ".") for m in imports(p))]
    others = [str(p.relative_to(ROOT)) for other in GAME_PACKAGES if other != package
              for p in other.rglob("*.py")
              if any(m == name or m.startswith(name + ".") for m in imports(p))]
    assert users == [] and others == []


@pytest.mark.parametrize("package", GAME_PACKAGES, ids=lambda p: p.name)
def test_every_games_pure_rules_import_nothing_above_them(package):
    own = f"companion.games.{package.name}"
    # what every game's rules share: the runner and the camera claims' vocabulary
    allowed = ("companion.events", "companion.games.base", "companion.games.claims", own)
    for rules in RULES:
        above = {m for m in imports(package / rules) if m.startswith("companion")
                 and not any(m == a or m.startswith(a + ".") for a in allowed)
                 and m not in ("companion.games",)}
        assert above == set(), (rules, above)


# What asking "which game is on" looked like: comparing with the default game's id,
# testing a state's type, or naming a game's kind of camera.
ASKS = re.compile(r"registry\.DEFAULT|\bGameState\b|camera_reads|[\"']vault-assault[\"']\s*[)!=]"
                  r"|==\s*[\"']vault-assault[\"']")


def test_no_module_outside_a_game_asks_which_game_is_on():
    asking = [f"{p.relative_to(ROOT)}:{n}" for p in house_modules()
              for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
              if ASKS.search(line) and p.name != "registry.py"]
    assert asking == []


def test_the_terminal_and_the_vault_entry_import_nothing_above_them():
    assert not {m for m in imports(COMPANION / "display" / "terminal.py")
                if m.startswith(("companion.loop", "companion.games", "companion.sim"))}
    assert not {m for m in imports(GAMES / "vault_assault" / "table.py")
                if m.startswith(("companion.web", "companion.sim", "companion.loop"))}
