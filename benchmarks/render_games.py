"""Pictures of the other games' LED boards for the README, drawn by luma's emulator
through the same `LedMatrixDisplay` as the real MAX7219.

Writes OUT_DIR/led-big-score.png, led-solitaire.png, led-abstract.png (each game's
board part-way through its script in tests/scripts/), led-big-score-reveal.png (a
round's choices revealed: R robs, F flees over each seat), led-big-score-over.png,
led-solitaire-nudge.png (the flash when the camera cannot read a die of the roll) and
led-check.png (Vault Assault: the camera challenges an Escape, "CHK 4/5": 4 of 5 Escapes seen).

    .venv/bin/python benchmarks/render_games.py docs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from render_legend import capture_png  # noqa: E402

from companion.gamelog import read_log  # noqa: E402
from companion.games import registry  # noqa: E402

SCRIPTS = Path(__file__).resolve().parents[1] / "tests" / "scripts"

# (picture, script, events played, flash or None) — each a moment worth showing.
SCREENS = (
    ("led-big-score.png", "big-score-3p.jsonl", 9, None),
    ("led-big-score-reveal.png", "big-score-3p.jsonl", 18, None),
    ("led-big-score-over.png", "big-score-3p.jsonl", None, None),
    ("led-solitaire.png", "vault-solitaire.jsonl", 3, None),
    ("led-abstract.png", "vault-abstract.jsonl", 7, None),
    ("led-solitaire-nudge.png", "vault-solitaire.jsonl", 1, "dice_unread"),
    # the camera challenges an Escape: it reads 4 of the 5 Escapes claimed
    ("led-check.png", "game-3p.jsonl", 6, "check:4/5"),
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    args = ap.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, script, n, flash in SCREENS:
        events = [ev for _, ev in read_log(SCRIPTS / script).events]
        game = registry.default()
        state = game.new_state()
        for ev in events[:n]:
            game, state = registry.chosen_by(game, state, ev)
            state = game.apply(state, ev).state
        frame = game.render(state, flash, 0)
        print(capture_png(frame, args.out_dir / name))
        print("\n".join(frame.to_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
