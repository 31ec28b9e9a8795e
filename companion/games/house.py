"""The short commands every game takes alike, read before the game's own: the same in
the sim, on `serve --input` and in the page's command box, before a game, during it
and after any game ends.

    help                 the commands now: the game's own, then these and the games
    new WORDS...         a new game of the game on the table (on a fresh box, the
                         default's: Vault Assault), or, when the words do not fit it,
                         of the default (`new 2 Ann Bob` as always)
    play GAME WORDS...   a new game of any game: `play vault-abstract Ann Bob`
    undo                 take back the last accepted event

A `new_game` is judged like any event: refused while a game is under way in the log;
after a game is over the sim, `serve` and the page start the next one in a new log.
"""

from __future__ import annotations

from typing import Any

from companion.events import command_words
from companion.games import registry
from companion.games.registry import Game


class Help(str):
    """Not an event: the help text, the answer to `help`."""


def command(text: str, game: Game, state: Any) -> dict[str, Any] | Help:
    """One line typed at the table while `game` (in `state`) is on: an event, or the
    help. ValueError with one line for a line that is neither."""
    parsed = command_words(text)  # a JSON line through the bounded gate, or words
    if isinstance(parsed, dict):
        return parsed
    word, *args = parsed
    if word == "help" and not args:
        return Help(help_text(game))
    if word == "play":
        return play(args)
    if word == "new":
        return new(args, game)
    if word == "undo" and not args:
        return {"type": "undo"}
    return game.parse_command(text, state)


def play(args: list[str]) -> dict[str, Any]:
    """`play GAME WORDS...` -> that game's new_game."""
    if not args or not registry.known(args[0]):
        raise ValueError(f"usage: play {'|'.join(registry.MODULES)} NAME...")
    game = registry.get(args[0])
    try:
        return game.new_game(args[1:])
    except ValueError as exc:
        raise ValueError(f"play {game.id}: {exc}") from None


def new(args: list[str], game: Game) -> dict[str, Any]:
    """`new WORDS...` -> a new_game of `game`, or of the default game when the words
    do not fit `game` (the error is `game`'s when they fit neither)."""
    try:
        return game.new_game(args)
    except ValueError as exc:
        first = exc
    fallback = registry.default()
    if fallback is not game:
        try:
            return fallback.new_game(args)
        except ValueError:
            pass
    raise ValueError(f"new: {first}") from None


def help_text(game: Game) -> str:
    """`game`'s own commands, then the house's: `play` with every game and its words,
    `help` and `quit`. The house's lines fit 80 columns."""
    lines = [game.help, "play GAME WORDS...           a new game of any kind, when none is on:"]
    for g in registry.games():
        lo, hi = g.players
        count = f"{lo} player{'s' if hi > 1 else ''}" if lo == hi else f"{lo}-{hi} players"
        lines.append(f"  {g.id:<16}{g.new_words:<37}{count}")
    lines.append("help / quit")
    return "\n".join(lines)
