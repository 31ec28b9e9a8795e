"""Vault (solitaire): the roll the camera enters itself (`"by": "camera"`, issue 66):
`camera_take`, the engine keeping and checking `by`, the log replaying it (and old logs
without it unchanged), and the one tap that takes it back (page, status, LED)."""

from __future__ import annotations

from pathlib import Path

from companion.gamelog import GameLog, read_log
from companion.games import registry
from companion.games.vault_solitaire import engine as e
from companion.games.vault_solitaire import table
from companion.games.vault_solitaire.state import PLAY, ROLL
from companion.loop import Referee

SCRIPT = Path(__file__).parent.parent / "scripts" / "vault-solitaire.jsonl"
NEW = {"type": "new_game", "game": "vault-solitaire", "players": 1, "names": ["Sam"]}
CAMERA_ROLL = {"type": "roll", "dice": [3, 5, 5, 6, 1], "by": "camera"}


def awaiting():
    return e.apply(e.new_state(), NEW).state


def test_camera_take_is_the_roll_by_the_camera_only_for_five_dice_while_a_roll_is_awaited():
    game = registry.get("vault-solitaire")
    assert game.camera_take is table.camera_take
    s = awaiting()
    assert game.camera_take(s, [3, 5, 5, 6, 1]) == CAMERA_ROLL
    assert game.camera_take(s, (3, 5, 5, 6, 1)) == CAMERA_ROLL
    for pips in ([3, 5, 5, 6], [3, 5, 5, 6, 1, 2], [3, 5, 5, 6, 7], [3, 5, True, 6, 1],
                 [3, 5, "5", 6, 1], None, "35561"):
        assert game.camera_take(s, pips) is None, pips
    rolled = e.apply(s, CAMERA_ROLL).state
    assert game.camera_take(rolled, [1, 2, 3, 4, 5]) is None  # the dice are on the table
    assert game.camera_take(e.new_state(), [1, 2, 3, 4, 5]) is None  # no game
    # the other games enter nothing
    for other in ("vault-assault", "big-score", "vault-abstract"):
        assert registry.get(other).camera_take(s, [3, 5, 5, 6, 1]) is None


def test_a_roll_by_the_camera_is_kept_in_the_state_and_said():
    s = awaiting()
    r = e.apply(s, CAMERA_ROLL)
    assert r.rejection is None
    assert r.state.phase == PLAY and r.state.dice == (3, 5, 5, 6, 1)
    assert r.state.rolled_by == "camera"
    assert [o.text for o in r.outputs] == [
        "Round A: 3 5 5 6 1 (entered by the camera; undo takes it back)"]
    typed = e.apply(s, {"type": "roll", "dice": [3, 5, 5, 6, 1]})
    assert typed.state.rolled_by == "" and [o.text for o in typed.outputs] == [
        "Round A: 3 5 5 6 1"]  # a roll without `by`: as it always was
    assert table.describe(CAMERA_ROLL) == "roll 3 5 5 6 1 (entered by the camera)"
    assert table.describe({"type": "roll", "dice": [3, 5, 5, 6, 1]}) == "roll 3 5 5 6 1"


def test_any_other_by_is_rejected_with_one_line_and_changes_nothing():
    s = awaiting()
    for by in ("x", "", "Camera", None, 1, ["camera"]):
        r = e.apply(s, {"type": "roll", "dice": [3, 5, 5, 6, 1], "by": by})
        assert r.rejection is not None and r.rejection.code == "bad_value", by
        assert "\n" not in r.rejection and r.state is s
    r = e.apply(s, {"type": "roll", "dice": [3, 5, 5, 6, 1], "by": "x"})
    assert r.rejection == "roll: 'by' must be 'camera' (or left out), got 'x'"


def test_a_camera_roll_is_logged_and_replays(tmp_path):
    log = GameLog(tmp_path / "game-1.jsonl", fsync=False)
    ref = Referee(log=log)
    mark = e.legal_marks(e.apply(awaiting(), CAMERA_ROLL).state)[0]
    for ev in (NEW, CAMERA_ROLL, mark,
               {"type": "undo"}, {"type": "undo"},  # the mark, then the camera's roll
               {"type": "roll", "dice": [3, 5, 5, 6, 2], "by": "camera"}):
        assert ref.submit(ev).rejection is None, ev
    log.close()
    logged = [ev for _, ev in read_log(tmp_path / "game-1.jsonl").events]
    assert {"type": "roll", "dice": [3, 5, 5, 6, 1], "by": "camera"} in [
        {k: v for k, v in ev.items() if k in ("type", "dice", "by")} for ev in logged]
    again = e.replay(logged)
    assert again == ref.state and again.rolled_by == "camera"
    assert again.dice == (3, 5, 5, 6, 2)


def test_old_logs_without_by_replay_unchanged():
    events = [ev for _, ev in read_log(SCRIPT).events]
    assert not any("by" in ev for ev in events)
    state = e.new_state()
    for ev in events:
        state = e.apply(state, ev).state
        assert state.rolled_by == ""  # no roll of an old log is the camera's
    assert state == e.replay(events)
    assert table.summary(state)["score"] == 4  # as docs/games/vault-solitaire.md says


def test_the_take_back_is_offered_only_right_after_the_cameras_roll():
    game = registry.get("vault-solitaire")
    s = awaiting()
    assert "take_back" not in game.page_moves(s)
    typed = e.apply(s, {"type": "roll", "dice": [3, 5, 5, 6, 1]}).state
    assert "take_back" not in game.page_moves(typed)  # typed: the usual undo only
    cam = e.apply(s, CAMERA_ROLL).state
    moves = game.page_moves(cam)
    assert moves["take_back"] == {"dice": [3, 5, 5, 6, 1], "text": "Camera entered 3 5 5 6 1"}
    assert moves["undo"] is True
    assert table.camera_entered(cam) == (3, 5, 5, 6, 1)
    assert any(line.endswith("Camera entered 3 5 5 6 1: undo takes it back")
               for line in game.status_lines(cam))
    assert all(len(line) <= 78 for line in game.status_lines(cam))
    # the LED says it ("CAM35561") over the dice row, and stops once a die is used
    assert game.render(cam, None, 0) != game.render(typed, None, 0)
    # taken back: one undo, to the awaited roll
    back = e.apply(cam, {"type": "undo"}).state
    assert back.phase == ROLL and back.dice == () and "take_back" not in game.page_moves(back)
    # anything done with the dice since: no take-back (undo takes back that instead)
    for ev in (e.legal_marks(cam)[0],
               {"type": "power", "die": 0, "skimmer": 0},
               {"type": "reroll", "dice": [0], "values": [4]},
               {"type": "pass"}):
        after = e.apply(cam, ev)
        assert after.rejection is None, ev
        assert "take_back" not in game.page_moves(after.state), ev
        assert table.camera_entered(after.state) is None
        assert not any("Camera entered" in line for line in game.status_lines(after.state))
    # a note in between is no move: the take-back stays
    noted = e.apply(cam, {"type": "note", "text": "hm"}).state
    assert game.page_moves(noted)["take_back"]["dice"] == [3, 5, 5, 6, 1]
    # the next round's roll, typed, is no camera's
    passed = e.apply(cam, {"type": "pass"}).state
    assert passed.rolled_by == ""


def test_the_led_shows_the_cameras_roll_until_a_die_is_used():
    from companion.display.bitfont import FONT_3X5
    from companion.games import led

    s = awaiting()
    cam = e.apply(s, CAMERA_ROLL).state
    assert FONT_3X5.text_width("CAM35561") <= 32
    rows = led.marks(6, [(i, True) for i in range(5)]) + led.marks(
        7, [(i, False) for i in range(12)], width=1)
    assert table.render(cam) == led.board("CAM35561", rows)
    mark = e.legal_marks(cam)[0]
    marked = e.apply(cam, mark).state
    typed = e.apply(s, {"type": "roll", "dice": [3, 5, 5, 6, 1]}).state
    assert table.render(marked) == table.render(e.apply(typed, mark).state)
