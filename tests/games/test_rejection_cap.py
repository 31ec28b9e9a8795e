"""Every rejection is one line of at most MAX_REASON_CHARS characters, in every game,
whatever the event holds: the cap is made where a rejection is made
(`companion.games.base.Rejection`), so no handler's wording can break it."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.events import MAX_REASON_CHARS
from companion.gamelog import read_log
from companion.games import registry
from companion.games.base import Rejection

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
GAMES = {
    "vault-assault": "game-3p.jsonl",
    "big-score": "big-score-3p.jsonl",
    "vault-solitaire": "vault-solitaire.jsonl",
    "vault-abstract": "vault-abstract.jsonl",
}

LONG = "x" * 1000
ODD_VALUES: list[Any] = [
    LONG,
    "line one\nline two\r\n" * 100,
    "\u2028\x85\x00\x1b[2J" * 200,
    "\ud800" * 300,
    {LONG: 1},
    {"seat": LONG},
    [LONG],
    [LONG, LONG, LONG],
    list(range(500)),
    [[[[[LONG]]]]],
    10**39,
    -(10**39),
    -1,
    1.5,
    None,
    True,
    "",
]


def script_events(game_id: str) -> list[dict[str, Any]]:
    return [ev for _, ev in read_log(SCRIPTS / GAMES[game_id]).events]


def states_along(game_id: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Each position of the game's script: the state, and the event the script sends next."""
    game = registry.get(game_id)
    state = game.new_state()
    for ev in script_events(game_id):
        yield state, ev
        result = game.apply(state, ev)
        if result.rejection is None:
            state = result.state


def mutations(event: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`event` with each field, each item of a list field and each field of an object in
    one, in turn, made odd; and with a long unknown field added at each of those levels."""
    for key in [k for k in event if k != "type"]:
        for odd in ODD_VALUES:
            yield {**event, key: odd}
        value = event[key]
        if isinstance(value, list):
            for i, item in enumerate(value):
                for odd in ODD_VALUES:
                    changed = copy.deepcopy(value)
                    changed[i] = odd
                    yield {**event, key: changed}
                if isinstance(item, dict):
                    for inner in list(item) + [LONG]:
                        for odd in ODD_VALUES:
                            changed = copy.deepcopy(value)
                            changed[i] = {**item, inner: odd}
                            yield {**event, key: changed}
    yield {**event, LONG: LONG}
    yield {**event, "type": event["type"] + "\n" + LONG}


def assert_capped(reason: str | None, event: Any) -> None:
    if reason is None:
        return
    assert isinstance(reason, Rejection), (type(reason), event)
    assert 0 < len(reason) <= MAX_REASON_CHARS, (len(reason), reason[:300])
    assert reason.isprintable(), repr(reason[:300])  # one line: no breaks, no controls
    reason.encode("utf-8")  # no lone surrogates: it can be logged and sent to the page


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_rejection_of_an_odd_event_is_one_short_line(game_id):
    game = registry.get(game_id)
    rejected = 0
    for state, event in states_along(game_id):
        for odd in mutations(event):
            result = game.apply(state, odd)
            assert_capped(result.rejection, odd)
            rejected += result.rejection is not None
    assert rejected > 100  # the odd events did reach the handlers' checks


def test_the_big_scores_unknown_act1_field_is_named_short_with_the_known_fields():
    game = registry.get("big-score")
    event = script_events("big-score")[0]
    assert event["type"] == "new_game"
    event = copy.deepcopy(event)
    event["act1"][1]["y" * 1000] = 3
    reason = game.apply(game.new_state(), event).rejection
    assert reason is not None
    assert len(reason) <= MAX_REASON_CHARS
    assert reason.startswith("new_game: act1 of seat 2 has unknown field 'yyyy")  # Bob
    assert "(known: expert, cash, diamonds, artifacts, hard_drives)" in reason
    assert "(1" not in reason  # not cut by the cap: the message itself is short


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_long_player_name_does_not_make_long_rejections(game_id):
    """Vault Assault takes any name; the reasons that name a seat stay capped."""
    game = registry.get(game_id)
    new_game = copy.deepcopy(script_events(game_id)[0])
    new_game["names"] = ["N" * 5000 + f"{i}" for i in range(len(new_game["names"]))]
    result = game.apply(game.new_state(), new_game)
    state = result.state if result.rejection is None else game.new_state()
    for _, event in states_along(game_id):
        assert_capped(game.apply(state, event).rejection, event)


def test_a_rejection_made_anywhere_is_capped_and_never_empty():
    long = Rejection("a\nb" * 500, "internal_error")
    assert len(long) <= MAX_REASON_CHARS and long.isprintable()
    assert long.code == "internal_error"
    assert Rejection("") == "rejected"
    assert Rejection("Too late, Cat.", "too_late") == "Too late, Cat."  # short ones untouched


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**40), 10**40)
    | st.text(max_size=2000) | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=600), inner,
                                                                 max_size=4),
    max_leaves=20,
)
POSITIONS = {game_id: list(states_along(game_id)) for game_id in GAMES}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_id=st.sampled_from(sorted(GAMES)), where=st.integers(0, 10**6),
       key=st.text(max_size=600) | st.sampled_from(["seat", "names", "act1", "floor", "flips",
                                                    "row", "cell", "from", "to", "dice",
                                                    "tokens", "game", "players"]),
       value=JSON)
def test_any_json_in_any_field_is_rejected_in_one_short_line(game_id, where, key, value):
    state, event = POSITIONS[game_id][where % len(POSITIONS[game_id])]
    odd = {**event, key: value} if key != "type" else event
    assert_capped(registry.get(game_id).apply(state, odd).rejection, odd)
