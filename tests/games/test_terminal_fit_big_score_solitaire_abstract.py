"""The sim's 80x24 terminal in The Big Score, Vault (solitaire) and Vault (abstract):
every state of their scripts (and a 6-player Big Score with 40-character names) draws
within 24 lines of 80 columns, the games' own lines within 78 and shown whole (never cut
with "…"), and each game's help screen fits too."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.display.terminal import COLUMNS, ROWS, render_view
from companion.gamelog import read_log
from companion.games import house, registry
from companion.loop import Referee

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
PROMPT = "keys 1-4 press buttons · command + Enter · help · quit > "  # a prompt of its length
WIDTH = 78
GAMES = {"big-score": "big-score-3p.jsonl", "vault-solitaire": "vault-solitaire.jsonl",
         "vault-abstract": "vault-abstract.jsonl"}
LONG = ["Alexandra-Catherine Montgomery-Smythe X", "B" * 40, "Cat", "Dmitri " * 5, "Eve",
        "F" * 39]


def check_screen(ref: Referee) -> None:
    game, state = ref.game, ref.state
    own = game.status_lines(state)
    assert all(len(line) <= WIDTH for line in own), [x for x in own if len(x) > WIDTH]
    screen = render_view(ref.view(), PROMPT).splitlines()
    assert len(screen) <= ROWS, "\n".join(screen)
    assert all(len(line) <= COLUMNS for line in screen)
    for line in own:  # shown whole, not cut
        assert line in screen, (line, screen)
    assert not any("…" in line for line in own)


def played(script: str):
    ref = Referee()
    for _, ev in read_log(SCRIPTS / script).events:
        assert ref.submit(ev).rejection is None
        yield ref


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_state_of_the_script_fits_the_terminal(game_id):
    n = 0
    for ref in played(GAMES[game_id]):
        ref.messages.extend(["A message long enough to wrap over two lines of the "
                             "terminal, as the referee's messages often are."] * 4)
        check_screen(ref)
        n += 1
    assert n > 10


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_the_help_screen_fits(game_id):
    game = registry.get(game_id)
    lines = [*house.help_text(game).splitlines(), "(Enter or any command closes this help)"]
    assert all(len(line) <= WIDTH for line in lines), [x for x in lines if len(x) > WIDTH]
    ref = Referee()
    screen = render_view(ref.view(), PROMPT, help_lines=lines).splitlines()
    assert len(screen) <= ROWS and all(line in screen for line in lines)


def test_six_players_with_long_names_fit_in_every_phase():
    ref = Referee()
    floor = ["artifact", "silver", "cash100", "diamond", "key"]
    act1 = [{"expert": e} for e in ("muscle", "con_man", "driver", "grease_man", "gun_man",
                                    "hacker")]
    assert ref.submit({"type": "new_game", "game": "big-score", "players": 6, "names": LONG,
                       "floor": floor, "act1": act1, "first_player": 0}).rejection is None
    check_screen(ref)
    for seat in range(5):
        ref.submit({"type": "choose", "seat": seat, "flee": False})
        check_screen(ref)
    ref.submit({"type": "choose", "seat": 5, "flee": False})
    check_screen(ref)  # the reveal, before the tokens
    ref.submit({"type": "reveal", "tokens": ["cash100", "cash100", "cash100", "cash50", "cop",
                                             "gold"]})
    check_screen(ref)  # the trades
    for seat in (0, 1, 2, 3, 5):
        assert ref.submit({"type": "pass", "seat": seat}).rejection is None
        check_screen(ref)
    for seat in range(6):
        ref.submit({"type": "choose", "seat": seat, "flee": seat < 3})
    ref.submit({"type": "reveal", "tokens": [None, None, None, "cop", "cop", "cop"]})
    check_screen(ref)  # 4 cops of 7, three players out
    for seat in (3, 4, 5):
        ref.submit({"type": "choose", "seat": seat, "flee": False})
    ref.submit({"type": "reveal", "tokens": [None, None, None, "cop", "cop", "cop"]})
    assert ref.game.over(ref.state) and ref.state.busted
    check_screen(ref)
