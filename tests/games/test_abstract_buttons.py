"""Vault (abstract) on a 2-seat table's buttons: the seat to move picks its own move
(press to step through its pawns, pause to choose one, press to step through its cells,
pause to play), the other seat cancels a pick or asks for the companion's move."""

from __future__ import annotations

import asyncio
import json

import pytest

from companion.games import registry
from companion.games.vault_abstract import definition as d
from companion.games.vault_abstract import engine, opponent
from companion.games.vault_abstract.table import DEFAULT_LEVEL, press_event, timed_window
from companion.loop import Referee
from companion.scripted import play_script
from companion.window_timer import WindowTimer

NEW = {"type": "new_game", "game": "vault-abstract", "players": 2, "names": ["Wes", "Bea"]}


def started() -> Referee:
    ref = Referee()
    assert ref.submit(NEW).rejection is None
    return ref


def test_presses_step_through_the_movers_pawns_from_its_home_row_left_to_right():
    ref = started()
    shown = []
    for i in range(d.SIZE + 1):
        event = press_event(ref.state, 0, i)
        assert event == {"type": "pick", "seat": 0, "ts_ns": i}
        assert ref.submit(event).rejection is None
        shown.append(ref.state.pick)
    assert [p[0] for p in shown[:d.SIZE]] == [f"{f}1" for f in d.FILES]
    assert shown[d.SIZE] == ("a1", "")  # round again
    assert ref.state.moves == ()  # a pick moves nothing


def test_black_steps_from_its_own_left_and_a_pause_plays_the_move():
    ref = started()
    assert ref.submit({"type": "move", "from": "a1", "to": "a2"}).rejection is None
    assert ref.submit(press_event(ref.state, 1, 1)).rejection is None
    assert ref.state.pick == ("j10", "")  # Black sits across the board: j is its left
    assert ref.submit({"type": "pick", "seat": 1, "choose": True}).rejection is None
    frm, to = ref.state.pick
    assert frm == "j10" and to in engine.legal_destinations(ref.state, "j10")
    assert ref.submit(press_event(ref.state, 1, 2)).rejection is None  # the next cell
    frm2, to2 = ref.state.pick
    assert frm2 == "j10" and to2 != to
    key, closing, seconds = timed_window(ref.state)
    assert closing == {"type": "move", "from": "j10", "to": to2} and seconds == d.PICK_SECONDS
    assert ref.submit(closing).rejection is None
    assert ref.state.moves[-1] == ("j10", to2) and ref.state.pick is None


def test_the_other_seat_cancels_a_pick_or_asks_for_the_companions_move():
    ref = started()
    expected = opponent.choose_move(ref.state, DEFAULT_LEVEL, seed=0)
    event = press_event(ref.state, 1, 5)  # Black's button on White's turn, no pick
    assert event == {"type": "move", "from": expected[0], "to": expected[1], "ts_ns": 5}
    ref = started()
    ref.submit(press_event(ref.state, 0, 1))
    cancel = press_event(ref.state, 1, 2)
    assert cancel == {"type": "pick", "seat": 1, "ts_ns": 2}
    assert ref.submit(cancel).rejection is None and ref.state.pick is None
    assert ref.state.moves == () and ref.state.to_move == 0


def test_bad_picks_get_one_line():
    ref = started()
    r = ref.submit({"type": "pick", "seat": 1})
    assert r.rejection is not None and r.rejection == "pick: it is Wes (White)'s move"
    r = ref.submit({"type": "pick", "seat": 0, "choose": True})
    assert r.rejection is not None and r.rejection.code == "wrong_phase"
    r = ref.submit({"type": "pick", "seat": 0, "choose": "yes"})
    assert r.rejection is not None and r.rejection.code == "bad_value"


@pytest.mark.parametrize("seconds", [10.0, 0.0])  # the pick's own pause, whatever the
def test_the_window_timer_chooses_and_plays_after_the_pause(seconds):  # choose_seconds
    now = [0.0]
    ref = Referee(clock=lambda: now[0])
    posted: list[dict] = []
    timer = WindowTimer(ref, posted.append, seconds)
    ref.submit(NEW)
    timer.check()
    assert posted == [] and timer.remaining() is None  # no pick: no window
    for press in range(3):  # c1
        ref.submit(press_event(ref.state, 0, press))
        now[0] += 1.0
        timer.check()
    now[0] += d.PICK_SECONDS - 0.1
    timer.check()
    assert posted == []
    now[0] += 0.1
    timer.check()
    assert posted == [{"type": "pick", "seat": 0, "choose": True}]
    ref.submit(posted.pop())
    timer.check()
    now[0] += d.PICK_SECONDS
    timer.check()
    assert posted == [{"type": "move", "from": "c1", "to": ref.state.pick[1]}]
    ref.submit(posted.pop())
    assert ref.state.moves[0][0] == "c1" and ref.state.to_move == 1


def test_presses_through_the_buttons_pick_and_play_a_move_in_a_script():
    lines = [json.dumps(NEW), '{"type":"buzz","seat":0,"ts_ns":1000000000}',
             '{"type":"buzz","seat":0,"ts_ns":2000000000}',
             '{"type":"pick","seat":0,"choose":true}',
             '{"type":"move","from":"b1","to":"b2"}',
             '{"type":"buzz","seat":0,"ts_ns":3000000000}']  # White's press, Black to move
    ref = Referee()
    played, rejected = asyncio.run(play_script(lines, ref, echo_rejections=False))
    assert (played, rejected) == (6, 0)
    # White's press on Black's turn, with no pick: the companion moved for Black
    after_white = engine.replay([NEW, {"type": "move", "from": "b1", "to": "b2"}])
    bot = opponent.choose_move(after_white, DEFAULT_LEVEL, seed=1)
    assert ref.state.moves == (("b1", "b2"), bot) and ref.state.to_move == 0
    assert registry.get("vault-abstract").summary(ref.state)["moves"][0] == ["b1", "b2"]
