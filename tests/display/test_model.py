from game_builders import ROW5, at_race, new_game, play, stages

from companion.display.bitfont import FONT_3X5
from companion.display.frame import Frame
from companion.display.model import flash_frame
from companion.games.vault_assault.board import (
    SEAT_X,
    STAGE_X,
    board,
    game_over_frame,
    game_over_lines,
    render,
)
from companion.games.vault_assault.engine import new_state
from companion.games.vault_assault.status import status_lines


def block_lit(frame, x0, y0, w, h):
    return all(frame.pixel(x, y) for x in range(x0, x0 + w) for y in range(y0, y0 + h))


def test_blank_before_a_game():
    assert render(new_state()) == Frame.blank()


def test_claimed_stages_are_solid_blocks_and_current_stage_marked():
    f = board(stages(at_race(), 2))
    assert block_lit(f, STAGE_X[0], 0, 4, 4) and block_lit(f, STAGE_X[1], 0, 4, 4)
    assert not any(f.pixel(x, y) for x in range(STAGE_X[2], STAGE_X[2] + 4) for y in range(4))
    assert f.pixel(STAGE_X[2] + 1, 4) and f.pixel(STAGE_X[2] + 2, 4)


def test_preset_pieces_show_in_first_mosaic():
    s = play(
        new_game(2),
        {"type": "heist_hide", "row": ROW5},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]},
        {"type": "heist_attempt", "flips": [{"seat": 1, "position": 3}]},
    )
    f = board(s)
    assert s.turn.preset == 2
    assert block_lit(f, 0, 0, 2, 2) and block_lit(f, 2, 0, 2, 2)  # top-left, top-right
    assert not f.pixel(0, 2) and not f.pixel(3, 3)


def test_camera_mosaic_overrides_preset():
    f = board(at_race(), mosaic={1: frozenset({3})})
    assert block_lit(f, 2, 2, 2, 2) and not f.pixel(0, 0)


def test_cop_marker_cars_diamonds_and_bang():
    s = play({"type": "dye_pack", "targets": [1]}, state=at_race(3, first_cop=2))
    f = board(s)
    assert all(f.pixel(SEAT_X[2] + j, 0) for j in range(3))  # seat 2 are the cops
    assert not f.pixel(SEAT_X[0], 0)
    assert all(f.pixel(SEAT_X[0] + j, 2) for j in range(3))  # three cars
    assert all(f.pixel(x, 5) for x in range(STAGE_X[0], STAGE_X[0] + 4))  # Bang before stage 1


def test_escaped_and_arrested_marks():
    s = play({"type": "buzz", "seat": 1}, state=stages(at_race(3)))
    s = play({"type": "buzz", "seat": 0}, state=s)
    f = board(s)
    assert all(f.pixel(SEAT_X[1] + j, 6) for j in range(3))  # escaped: solid
    assert f.pixel(SEAT_X[2], 6) and not f.pixel(SEAT_X[2] + 1, 6)  # arrested: dotted
    assert block_lit(f, STAGE_X[3], 0, 4, 4)  # the Arrest block


def test_turn_track_blinks_current_turn():
    s = at_race()
    assert board(s, tick=0).pixel(0, 7) and not board(s, tick=1).pixel(0, 7)


def test_flash_replaces_board_with_centred_word():
    f = render(at_race(), flash="bang")
    w = FONT_3X5.text_width("BANG!")
    lit_x = [x for x, _ in f.lit()]
    assert min(lit_x) == (32 - w) // 2 and max(lit_x) < (32 - w) // 2 + w


def test_long_flash_scrolls():
    a, b = render(at_race(), "arrested", tick=0), render(at_race(), "arrested", tick=3)
    assert a != b and a.count() > 0 and b.count() > 0


def test_status_lines_name_cops_and_phase():
    text = "\n".join(status_lines(at_race(3, first_cop=1)))
    assert "Cops: Bob (seat 2)" in text and "the race is on" in text  # seats from 1


def _game_over(cash=(20_000, 5_000)):
    s = stages(at_race(2))
    s = play({"type": "empty"}, {"type": "buzz", "seat": 0, "ts_ns": 5}, state=s)
    s = play({"type": "impound", "seat": 1, "car": 0}, state=s)
    for seat, c in enumerate(cash):
        s = play({"type": "tally", "seat": seat, "cash": c}, state=s)
    return s


def test_stage_flash_names_the_stage_claimed():
    s = stages(at_race(2), 2)
    assert render(s, "stage") == render(s, "STAGE 2")
    assert render(s, "stage") != render(s, "STAGE")
    assert render(s, "pin:4719") == render(s, "PIN 4719")


def test_empty_marks_skipped_stages_until_the_turn_ends():
    s = play({"type": "empty"}, state=stages(at_race(3), 1))
    f = board(s)
    assert block_lit(f, STAGE_X[0], 0, 4, 4)  # stage 1 was claimed
    for k in (1, 2):  # stages 2 and 3 skipped: an X each
        x0 = STAGE_X[k]
        assert all(f.pixel(x0 + i, i) and f.pixel(x0 + 3 - i, i) for i in range(4))
        assert not f.pixel(x0 + 1, 0)
    assert f.pixel(STAGE_X[3] + 1, 4) and f.pixel(STAGE_X[3] + 2, 4)  # marker under Arrest
    assert not f.pixel(STAGE_X[1] + 1, 4)
    assert board(s, tick=1) != board(stages(at_race(3), 1), tick=1)


def test_game_over_scrolls_the_winner_then_holds_each_total():
    s = _game_over()
    assert game_over_lines(s) == [("WINNER Ann", True), ("Ann 20K", False), ("Bob 5K", False)]
    frames = [game_over_frame(s, t) for t in range(60)]
    assert render(s, None, 3) == frames[3]
    assert frames[0] != frames[1] != frames[2]  # scrolling
    held = [t for t in range(60) if frames[t] == flash_frame("Ann 20K")]
    assert len(held) == 8 and held == list(range(held[0], held[0] + 8))
    assert any(f == flash_frame("Bob 5K") for f in frames)
    untallied = _game_over(cash=(20_000,))
    assert game_over_lines(untallied) == [("GAME OVER", True), ("TALLY", False)]
    tie = _game_over(cash=(7_500, 7_500))
    assert game_over_lines(tie)[0] == ("WINNERS Ann+Bob", True)
    assert game_over_lines(tie)[1] == ("Ann 7.5K", False)


def test_status_shows_heist_flips_counted_from_1_and_the_turn_after_an_early_end():
    s = play(new_game(2), {"type": "heist_hide", "row": ROW5})
    s = play({"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]}, state=s)
    assert "Heist, positions 1-5 flipped: Bob 1" in status_lines(s)
    # 3 players: robbers hide their dice from each other, so how many, never which
    s = play(new_game(3), {"type": "heist_hide", "row": ROW5})
    s = play({"type": "heist_attempt", "flips": [{"seat": 1, "position": 0},
                                                  {"seat": 2, "stop": True}]}, state=s)
    assert "Heist (dice hidden): Bob 1 flipped · Cat 0 flipped (out)" in status_lines(s)
    over = _game_over()
    text = "\n".join(status_lines(over))
    assert "turn 1/6 · game over · BANK EMPTY" in text
    assert "Winner: Ann with $20,000" in text
    assert "seat 2 Bob        cars 2 diamonds 0 escaped 0 arrested 1 total $5,000" in text
    assert all(len(line) <= 80 for line in status_lines(over))
