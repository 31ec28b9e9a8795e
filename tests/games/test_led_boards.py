"""The LED boards of the other games (companion.games.*.table.render): what each
shows, read back from the 32x8 frame, and the flash words."""

from __future__ import annotations

from pathlib import Path

from game_builders import script_states

from companion.display.bitfont import FONT_3X5, render_text
from companion.display.model import flash_frame
from companion.gamelog import read_log
from companion.games import registry
from companion.loop import Referee

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def row(frame, y):
    return "".join("1" if frame.pixel(x, y) else "0" for x in range(32))


def text_rows(frame):
    return [row(frame, y) for y in range(5)]


def shows_text(frame, text):
    return text_rows(frame) == [row(render_text(text, FONT_3X5, x=0, y=0), y) for y in range(5)]


def test_big_score_board_shows_round_cops_and_who_has_chosen_never_what():
    ss = script_states("big-score-3p.jsonl")
    g = registry.get("big-score")
    first = g.render(ss[0])
    assert shows_text(first, "R1 C0/4")
    assert row(first, 6).startswith("1000100010001000")  # 4 empty spaces on the track
    assert row(first, 7).startswith("100010001000")  # nobody has chosen
    one = g.render(ss[1])  # Ann chose (to rob)
    assert row(one, 7).startswith("111010001000")
    # A flee and a rob look the same on the board.
    flee = g.render(registry.judge(ss[0], {"type": "choose", "seat": 0, "flee": True}).state)
    assert row(flee, 7) == row(one, 7)
    cops = next(s for s in ss if s.cops == 1)
    assert row(g.render(cops), 6).startswith("1110100010001000")
    assert g.render(ss[-1]) == flash_frame("WINNER ANN")
    assert g.render(ss[-1], "busted") == flash_frame("BUSTED!")


def test_solitaire_board_shows_lock_score_dice_and_gems():
    ss = script_states("vault-solitaire.jsonl")
    g = registry.get("vault-solitaire")
    rolled = ss[1]
    f = g.render(rolled)
    assert shows_text(f, "A 3")  # three unused skimmers score 1 each
    assert row(f, 6).startswith("1110111011101110111")  # five dice to use
    marked = ss[2]  # b3 marked with two dice
    assert row(g.render(marked), 6).startswith("1000100011101110111")
    cracked = next(s for s in ss if s.circled)
    assert row(g.render(cracked), 7).startswith("1")
    assert g.render(ss[-1]) == flash_frame("SCORE 4")
    assert g.render(ss[-1], "gems") == flash_frame("GEMS!")


def test_abstract_board_shows_mover_move_number_last_move_and_pawns():
    ss = script_states("vault-abstract.jsonl")
    g = registry.get("vault-abstract")
    assert shows_text(g.render(ss[0]), "W1")
    assert shows_text(g.render(ss[1]), "B2 B1B2")
    assert row(g.render(ss[0]), 6) == "1" * 10 + "0" * 22
    last = ss[-2]
    white, black = (len(p) for p in last.pawns)
    assert row(g.render(last), 6).count("1") == white and row(g.render(last), 7).count("1") == black
    assert g.render(ss[-1]) == flash_frame("WINNER WANDA")
    assert g.render(ss[1], "capture") == flash_frame("CAPTURE!")


def test_the_referee_shows_the_games_board_and_shared_flashes():
    ref = Referee()
    for _, ev in list(read_log(SCRIPTS / "vault-abstract.jsonl").events)[:2]:
        ref.submit(ev)
    ref.flash = None
    assert ref.view().frame == registry.get("vault-abstract").render(ref.state)
    ref.show_flash("log_failing")
    assert ref.view().frame == flash_frame("LOG FAILING")
    ref.show_flash("pin:4719")
    assert ref.view().frame == flash_frame("PIN 4719")


def test_solitaire_board_shows_the_roll_the_camera_saw_until_it_is_taken():
    ss = script_states("vault-solitaire.jsonl")
    g = registry.get("vault-solitaire")
    waiting = ss[0]  # the game started, no roll yet
    seen = registry.judge(waiting, {"type": "seen", "dice": [3, 5, 5, 6, 1]}).state
    assert shows_text(g.render(seen), "A? 35561")
    assert not shows_text(g.render(waiting), "A? 35561")
    taken = registry.judge(seen, {"type": "roll", "dice": [3, 5, 5, 6, 1]}).state
    assert not shows_text(g.render(taken), "A? 35561")


def test_abstract_board_shows_a_pick_on_the_buttons():
    g = registry.get("vault-abstract")
    s = registry.judge(g.new_state(), {"type": "new_game", "game": "vault-abstract",
                                       "players": 2, "names": ["Wes", "Bea"]}).state
    s = registry.judge(s, {"type": "pick", "seat": 0}).state
    assert shows_text(g.render(s), "W A1?")
    s = registry.judge(s, {"type": "pick", "seat": 0, "choose": True}).state
    assert shows_text(g.render(s), f"A1-{s.pick[1].upper()}?")
    s = registry.judge(s, {"type": "pick", "seat": 1}).state  # Black cancels
    assert shows_text(g.render(s), "W1")


def test_big_score_reveal_shows_each_seats_choice_over_its_mark_then_the_round():
    ss = script_states("big-score-3p.jsonl")
    g = registry.get("big-score")
    s = ss[0]
    for seat, flee in ((0, True), (1, False)):
        s = registry.judge(s, {"type": "choose", "seat": seat, "flee": flee}).state
    assert shows_text(g.render(s), "R1 C0/4")  # Cat still choosing: nothing told
    closed = registry.judge(s, {"type": "close_choices"})
    assert ("flash", "reveal") in [(o.kind, o.name) for o in closed.outputs]
    assert g.render(closed.state, "reveal") == flash_frame("OPEN!")
    board = g.render(closed.state)
    assert shows_text(board, "FRR")  # Ann flees, Bob and Cat rob: a letter over each mark
    assert row(board, 7).startswith("111011101110")
    assert row(board, 6).startswith("1000100010001000")  # the cop track stays
    # The tokens drawn entered: the round's board again (the trades).
    after = registry.judge(closed.state, {"type": "reveal",
                                          "tokens": [None, "gold", "key"]}).state
    assert shows_text(g.render(after), "R1 C0/4")
