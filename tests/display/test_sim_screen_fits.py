"""The sim's screen fits 80x24 in every game and every screen (issue 65): each of the
four games played through its shipped script, event by event, with long names and many
messages; the LED frame is always the first line (nothing above it scrolls it off), no
line is wider than 80 columns, and the help of every game is shown whole, a page at a
time under the frame, nothing cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.display.terminal import (
    ROWS,
    TerminalDisplay,
    help_pages,
    led_lines,
    render_view,
)
from companion.events import is_comment
from companion.games import registry
from companion.games.house import help_text
from companion.interactive import PROMPT
from companion.loop import Referee

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
GAMES = {
    "game-2p.jsonl": "vault-assault",
    "game-3p.jsonl": "vault-assault",
    "game-4p.jsonl": "vault-assault",
    "big-score-3p.jsonl": "big-score",
    "vault-solitaire.jsonl": "vault-solitaire",
    "vault-abstract.jsonl": "vault-abstract",
}


def events(name: str) -> list[dict]:
    lines = (SCRIPTS / name).read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip() and not is_comment(x)]


def check(text: str, frame_lines: int) -> None:
    lines = text.split("\n")
    assert len(lines) <= ROWS, f"{len(lines)} lines:\n{text}"
    wide = [x for x in lines if len(x) > 80]
    assert not wide, wide
    assert lines[0].startswith("+") and lines[frame_lines - 1].startswith("+")  # the frame
    assert lines[-1].startswith("keys 1-4")  # the prompt, on the last line


def long_names(event: dict) -> dict:
    """The script's new_game with names as long as a game takes (the screen wraps)."""
    if event.get("type") != "new_game" or "names" not in event:
        return event
    names = [f"{n} {'Longname' * 3}"[:30] for n in event["names"]]
    return {**event, "names": names}


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("names", ["short", "long"])
def test_every_screen_of_every_game_fits_80x24(name, names):
    ref = Referee()
    shown = TerminalDisplay(out=open("/dev/null", "w"), clear=False)  # noqa: SIM115
    ref.displays.append(shown)
    ref.listeners.append(shown.on_event)
    played = 0
    for event in events(name):
        if names == "long":
            event = long_names(event)
        ref.submit(event)
        played += 1
        for n in range(6):  # with many messages too
            ref.say(f"message {n}: " + "a long line of a message, " * n)
        view = ref.view()
        check(render_view(view, PROMPT, shown.log), len(led_lines(view.frame, view.flash)))
    assert played > 5 and ref.game.id == GAMES[name]


@pytest.mark.parametrize("game_id", list(registry.MODULES))
def test_every_games_help_is_shown_whole_a_page_at_a_time(game_id):
    game = registry.get(game_id)
    ref = Referee(state=game.new_state(), game=game)
    view = ref.view()
    frame = len(led_lines(view.frame))
    help_lines = help_text(game).splitlines()
    pages = help_pages(help_lines, frame)
    shown_words = []
    for page in range(len(pages)):
        text = render_view(view, PROMPT, help_lines=help_lines, help_page=page)
        check(text, frame)
        body = text.split("\n")[frame:-2]
        assert not any("…" in line for line in body)  # wrapped, never cut
        shown_words += " ".join(body).split()
    for line in help_lines:  # every word of the help is on one of its pages
        for word in line.split():
            assert word in shown_words, word


def test_enter_turns_the_help_page_and_the_last_page_closes_it():
    game = registry.default()
    ref = Referee()
    display = TerminalDisplay(out=open("/dev/null", "w"), clear=False)  # noqa: SIM115
    display.prompt = PROMPT
    ref.displays.append(display)
    ref.refresh()
    display.help = help_text(game).splitlines()
    pages = help_pages(display.help, len(led_lines(ref.view().frame)))
    assert len(pages) >= 2
    turned = [display.next_help_page() for _ in range(len(pages))]
    assert turned == [True] * (len(pages) - 1) + [False]
    assert display.help_page == len(pages) - 1


def test_a_long_typed_command_keeps_its_end_in_view():
    ref = Referee()
    typed = "new 3 " + " ".join(["Bartholomew"] * 8)
    text = render_view(ref.view(), PROMPT + typed)
    last = text.split("\n")[-1]
    assert len(last) == 80 and last.endswith("Bartholomew") and last.startswith("…")


def test_the_terminal_leaves_the_cursor_on_the_prompt_line():
    import io

    out = io.StringIO()
    display = TerminalDisplay(out=out, clear=True)
    display.prompt = PROMPT
    ref = Referee()
    ref.displays.append(display)
    ref.refresh()
    assert not out.getvalue().endswith("\n")  # a newline would scroll a 24-line screen
    assert out.getvalue().count("\n") <= ROWS - 1
