"""The camera's answers to claims in Vault Assault's rules: `claim_check` (an aside: not
a move), `challenge_upheld` and `play_on`, and the pure judge of a claim against a
settled reading."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.game_builders import at_race, play, reject, stages

from companion.games.claims import CANT_SEE, CHALLENGED, CONFIRMED, Claim
from companion.games.vault_assault import claims
from companion.games.vault_assault.engine import apply, replay
from companion.games.vault_assault.state import ASSAULT, HEIST_HIDE, IMPOUND, GameState
from companion.vision.types import DieReading, FrameReading


def check(event: int, answer: str = CHALLENGED, claim: str = "escape", seat: int | None = 1,
          mode: str = "challenge", seen: int = 4, **more: Any) -> dict[str, Any]:
    ev = {"type": "claim_check", "claim": claim, "event": event, "answer": answer,
          "seen": seen, "needs": 5, "text": f"the camera sees {seen} Escapes", "mode": mode}
    if seat is not None:
        ev["seat"] = seat
    ev.update(more)
    return ev


def escaped(players: int = 3) -> GameState:
    return play({"type": "buzz", "seat": 1}, state=at_race(players))


# ---- the rules


def test_a_challenged_escape_is_taken_back_when_upheld() -> None:
    state = escaped()
    number = state.events_applied
    state = play(check(number), state=state)
    assert [c.event for c in state.challenges] == [number]
    assert state.events_applied == number  # an aside: not counted
    upheld = play({"type": "challenge_upheld"}, state=state)
    assert 1 not in upheld.turn.escaped and upheld.seats[1].escaped == 0
    assert upheld.challenges == () and upheld.phase == ASSAULT


def test_play_on_keeps_the_verdict() -> None:
    state = play(check(escaped().events_applied), state=escaped())
    kept = play({"type": "play_on"}, state=state)
    assert 1 in kept.turn.escaped and kept.challenges == ()
    assert "no challenge is open" in reject(kept, {"type": "challenge_upheld"}).rejection


def test_upheld_escape_keeps_what_happened_since() -> None:
    """The other robber's Escape after the challenged one stands."""
    state = escaped()
    number = state.events_applied
    state = play(check(number), {"type": "loot", "seat": 2}, state=state)
    upheld = play({"type": "challenge_upheld", "event": number}, state=state)
    assert upheld.turn.escaped == () and upheld.seats[2].loots == 1


def test_the_last_escape_that_ended_the_turn_is_taken_back_whole() -> None:
    state = play({"type": "buzz", "seat": 1}, state=at_race(2))
    assert state.phase == HEIST_HIDE  # the only robber out: the turn ended
    state = play(check(state.events_applied), state=state)
    upheld = play({"type": "challenge_upheld"}, state=state)
    assert upheld.phase == ASSAULT and upheld.turn.escaped == ()
    assert upheld.turns_played == 0 and upheld.seats[1].escaped == 0


def test_play_that_went_on_after_the_turn_ended_blocks_the_take_back() -> None:
    state = play({"type": "buzz", "seat": 1}, state=at_race(2))
    number = state.events_applied
    state = play({"type": "heist_hide", "row": ["alarm", "alarm", "alarm", "dye_pack",
                                                "diamond"]}, check(number), state=state)
    result = reject(state, {"type": "challenge_upheld"})
    assert "play went on since event" in result.rejection


def test_a_challenged_arrest_is_taken_back() -> None:
    state = stages(at_race(3))
    state = play({"type": "buzz", "seat": 0}, state=state)
    assert state.phase == IMPOUND
    state = play(check(state.events_applied, claim="arrest", seat=0, stage=4), state=state)
    upheld = play({"type": "challenge_upheld"}, state=state)
    assert upheld.phase == ASSAULT and not upheld.turn.arrest_called
    assert all(s.arrested == 0 for s in upheld.seats)


def test_a_challenged_stage_is_taken_back_and_its_bang_counts_before_it() -> None:
    state = stages(at_race(2), 2)
    number = state.events_applied
    state = play({"type": "dye_pack", "targets": [1]}, check(number, claim="stage", seat=0,
                                                             stage=2), state=state)
    upheld = play({"type": "challenge_upheld"}, state=state)
    assert upheld.turn.stages == 1
    assert upheld.turn.bang_since_stage  # the Bang! now counts before stage 2
    assert "only one Bang!" in reject(upheld, {"type": "dye_pack", "targets": [1]}).rejection


def test_advise_confirmed_and_cant_see_open_no_challenge() -> None:
    state = escaped()
    number = state.events_applied
    for ev in (check(number, mode="advise"), check(number, CONFIRMED, seen=5),
               check(number, CANT_SEE, seen=3)):
        result = apply(state, ev)
        assert result.rejection is None and result.state.challenges == ()
        assert result.outputs


def test_a_new_race_drops_an_open_challenge() -> None:
    state = play({"type": "buzz", "seat": 1}, state=at_race(2))
    state = play(check(state.events_applied), state=state)
    row = {"type": "heist_hide", "row": ["alarm", "alarm", "alarm", "dye_pack", "diamond"]}
    state = play(row, {"type": "heist_attempt", "flips": [{"seat": 0, "stop": True}]},
                 {"type": "assault_start"}, state=state)
    assert state.challenges == ()


@pytest.mark.parametrize("bad, words", [
    ({"claim": "loot"}, "'claim' must be one of"),
    ({"answer": "maybe"}, "'answer' must be one of"),
    ({"mode": "loud"}, "'mode' must be"),
    ({"event": 999}, "'event' must be"),
    ({"text": "two\nlines"}, "one printable line"),
    ({"text": "x" * 500}, "one printable line"),
    ({"seat": 7}, "seat"),
])
def test_a_bad_claim_check_is_refused_with_one_line(bad: dict[str, Any], words: str) -> None:
    state = escaped()
    result = reject(state, {**check(state.events_applied), **bad})
    assert words in result.rejection and "\n" not in result.rejection


def test_claim_checks_replay_and_undo_goes_past_them() -> None:
    events = [{"type": "buzz", "seat": 1}]
    state = at_race(3)
    state = replay(events, state)
    state = play(check(state.events_applied, mode="advise"), state=state)
    undone = play({"type": "undo"}, state=state)
    assert undone.turn.escaped == ()  # the press itself, not the aside


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["upheld", "play_on", "undo", "loot2", "escape2"]),
                max_size=6))
def test_whatever_the_answers_a_challenge_never_breaks_the_count(moves: list[str]) -> None:
    """Escape counts never go below zero and the open challenges are ones made."""
    state = escaped()
    state = play(check(state.events_applied), state=state)
    made = {c.event for c in state.challenges}
    table = {"upheld": {"type": "challenge_upheld"}, "play_on": {"type": "play_on"},
             "undo": {"type": "undo"}, "loot2": {"type": "loot", "seat": 2},
             "escape2": {"type": "buzz", "seat": 2}}
    for m in moves:
        state = apply(state, table[m]).state
        assert all(s.escaped >= 0 for s in state.seats)
        assert {c.event for c in state.challenges} <= made


# ---- the judge


def die(dice_set: str, face: str, x: float, conf: float = 0.99) -> DieReading:
    return DieReading(dice_set, face, conf, (int(x), 0, int(x) + 20, 20), (x + 10, 10))


def reading(*dice: DieReading) -> FrameReading:
    return FrameReading(640, 480, tuple(dice), mat_found=True)


ESCAPE = Claim("escape", 9, 1, "5 Escapes", None, ("black",))


def test_five_sure_escapes_confirm() -> None:
    r = reading(*(die("black", "escape", 30 * i) for i in range(5)))
    j = claims.judge(ESCAPE, r, None, 0.5, at_race(3))
    assert (j.answer, j.seen) == (CONFIRMED, 5)


def test_four_escapes_and_a_loot_read_surely_are_challenged() -> None:
    r = reading(*(die("black", "escape", 30 * i) for i in range(4)), die("black", "loot", 200),
                *(die("white", "escape", 300 + 30 * i) for i in range(5)))
    j = claims.judge(ESCAPE, r, None, 0.5, at_race(3))
    assert j.answer == CHALLENGED and j.text == "the camera sees 4 Escapes"


@pytest.mark.parametrize("last", [
    None,  # a die out of view
    die("black", "loot", 200, conf=0.3),  # read, not surely
    die("black", "unknown", 200, conf=0.0),
    die("unknown", "escape", 200),
])
def test_what_the_camera_cannot_read_surely_is_never_a_challenge(last: Any) -> None:
    four = [die("black", "escape", 30 * i) for i in range(4)]
    r = reading(*four, *([last] if last is not None else []))
    assert claims.judge(ESCAPE, r, None, 0.5, at_race(3)).answer == CANT_SEE


def test_the_four_player_team_may_keep_a_hostage_aside() -> None:
    team = Claim("escape", 9, 1, "5 Escapes", None, ("black", "white"))
    dice = [die("black", "escape", 0), die("black", "escape", 30), die("black", "hostage", 60),
            die("white", "escape", 90), die("white", "escape", 120),
            die("white", "escape", 150)]
    assert claims.judge(team, reading(*dice), None, 0.5, at_race(4)).answer == CONFIRMED
    dice[0] = die("black", "loot", 0)
    assert claims.judge(team, reading(*dice), None, 0.5, at_race(4)).answer == CHALLENGED


def test_seats_get_their_colours_in_the_cops_order() -> None:
    state = at_race(3)  # seat 0 the cops: seat 1 black, seat 2 white
    assert claims.robber_sets_of(state, 1) == ("black",)
    assert claims.robber_sets_of(state, 2) == ("white",)
    assert claims.robber_sets_of(at_race(4), 1) == ("black", "white")
    claim = claims.claim_of(state, {"type": "buzz", "seat": 2},
                            play({"type": "buzz", "seat": 2}, state=state))
    assert claim is not None and claim.kind == "escape" and claim.sets == ("white",)
    arrest = claims.claim_of(state, {"type": "buzz", "seat": 0}, state)
    assert arrest is not None and arrest.kind == "arrest" and arrest.stage == 4
    assert claims.claim_of(state, {"type": "loot", "seat": 1}, state) is None


def test_a_stage_missing_a_piece_among_sure_dice_is_challenged() -> None:
    claim = Claim("stage", 9, 0, "stage 2's mosaic", 2, ("red", "blue"))
    dice = [die("red", "piece-2-1", 0), die("red", "piece-2-2", 30), die("blue", "piece-2-3", 60),
            die("blue", "alarm", 90), die("red", "dye_pack", 120)]
    j = claims.judge(claim, reading(*dice), None, 0.5, at_race(2))
    assert j.answer == CHALLENGED and j.seen == 3
    dice[4] = die("red", "dye_pack", 120, conf=0.2)  # one die unsure: it might be the wild
    assert claims.judge(claim, reading(*dice), None, 0.5, at_race(2)).answer == CANT_SEE


def test_the_sims_short_commands_answer_the_latest_challenge() -> None:
    from companion.games.vault_assault.commands import describe, parse_command

    state = play(check(escaped().events_applied), state=escaped())
    assert parse_command("upheld", state) == {"type": "challenge_upheld"}
    assert parse_command("playon", state) == {"type": "play_on"}
    with pytest.raises(ValueError, match="takes nothing after it"):
        parse_command("upheld 2", state)
    line = describe(check(12))
    assert line == "camera: escape (event 12) challenged: the camera sees 4 Escapes"
