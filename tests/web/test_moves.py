"""The page's legal moves (companion/games/vault_assault/moves.py) and pairing bookkeeping."""

from __future__ import annotations

import random
from typing import Any

from game_builders import ROW5, at_race, new_game, play, stages
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.vault_assault.engine import apply, new_state
from companion.games.vault_assault.moves import dye_pack_choices, legal_moves, private_moves
from companion.games.vault_assault.state import GAME_OVER, NO_GAME
from companion.web.pairing import FREE_TRIES, GLOBAL_TRIES, Pairing


def offered_events(state, moves: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Concrete events for every kind of move the page offers."""
    out: list[dict[str, Any]] = []
    if "new_game" in moves:
        p = rng.choice(sorted(moves["new_game"]["players"]))
        n = moves["new_game"]["players"][p]
        out.append({"type": "new_game", "game": "vault-assault", "players": int(p),
                    "names": [f"P{i}" for i in range(n)], "first_cop": rng.randrange(n)})
    if "heist_hide" in moves:
        row = [f for f, c in moves["heist_hide"]["row"].items() for _ in range(c)]
        rng.shuffle(row)
        out.append({"type": "heist_hide", "row": row})
    if "heist_attempt" in moves:
        spec_ = moves["heist_attempt"]
        if spec_["secret"]:  # 3 players: the positions are the cops' and each robber's
            spec_ = private_moves(state, None)["heist"]["heist_attempt"]
            for seat in moves["heist_flip"]:
                mine = private_moves(state, seat)["heist"]["heist_flip"]
                pick = rng.choice(mine["positions"]) if mine["positions"] else None
                out.append({"type": "heist_flip", "seat": seat,
                            **({"stop": True} if pick is None else {"position": pick})})
        flips = []
        for seat, spec in spec_["seats"].items():
            if spec["positions"] and rng.random() < 0.8:
                flips.append({"seat": int(seat), "position": rng.choice(spec["positions"])})
            else:
                flips.append({"seat": int(seat), "stop": True})
        out.append({"type": "heist_attempt", "flips": flips})
    for kind in ("assault_start", "empty", "undo"):
        if moves.get(kind):
            out.append({"type": kind})
    if "stage" in moves:
        out.append({"type": "stage", "stage": moves["stage"]})
    if "dye_pack" in moves:
        k = rng.randint(1, moves["dye_pack"]["max"])
        out.append({"type": "dye_pack",
                    "targets": [rng.choice(moves["dye_pack"]["targets"]) for _ in range(k)]})
    for kind in ("hostage", "backup", "loot", "buzz", "tally"):
        for seat in moves.get(kind, []):
            ev = {"type": kind, "seat": seat}
            if kind == "tally":
                ev["cash"] = rng.randrange(0, 100) * 1000
            out.append(ev)
    for seat, victims in moves.get("steal", {}).items():
        out += [{"type": "steal", "seat": int(seat), "from": v} for v in victims]
    for seat, cars in moves.get("impound", {}).items():
        out += [{"type": "impound", "seat": int(seat), "car": c} for c in cars]
    for seat, sources in moves.get("sticky_fingers", {}).items():
        out += [{"type": "sticky_fingers", "seat": int(seat), "from": s} for s in sources]
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32))
def test_every_offered_move_is_accepted_along_random_games(seed):
    rng = random.Random(seed)
    state = new_state()
    for _ in range(150):
        moves = legal_moves(state)
        events = offered_events(state, moves, rng)
        if not events:
            assert state.phase == GAME_OVER
            break
        for ev in events:
            assert apply(state, ev).rejection is None, (state.phase, ev)
        # Prefer moving the game on over undoing it.
        forward = [e for e in events if e["type"] != "undo"] or events
        state = apply(state, {**rng.choice(forward), "ts_ns": 10**12}).state


def test_what_is_not_offered_is_refused():
    s = at_race(3, first_cop=0)
    moves = legal_moves(s)
    assert moves["stage"] == 1 and "buzz" in moves and 0 not in moves["buzz"]  # cops: no
    assert apply(s, {"type": "buzz", "seat": 0}).rejection  # before stage 3
    s3 = stages(s)
    assert 0 in legal_moves(s3)["buzz"]
    # A Bang! used: no second one before the next stage.
    s = play({"type": "dye_pack", "targets": [1]}, state=s)
    assert "dye_pack" not in legal_moves(s)
    assert dye_pack_choices(at_race(3)) and all(len(t) <= 2 for t in dye_pack_choices(at_race(3)))
    # new_game only with no game, unless the host starts a new log after a finished one.
    assert "new_game" in legal_moves(new_state())
    assert "new_game" not in legal_moves(play(new_game(2)))
    assert new_state().phase == NO_GAME


def test_a_3_player_heists_positions_are_offered_only_to_who_may_see_them():
    s = play(new_game(3), {"type": "heist_hide", "row": ROW5},
             {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0},
                                                 {"seat": 2, "position": 4}]})
    public = legal_moves(s)["heist_attempt"]
    assert public["secret"] and public["seats"] == {"1": {"stop": True}, "2": {"stop": True}}
    assert legal_moves(s)["heist_flip"] == [1, 2]
    assert private_moves(s, 1)["heist"]["heist_flip"]["positions"] == [1, 2, 3, 4]
    assert private_moves(s, 2)["heist"]["heist_flip"]["positions"] == [0, 1, 2, 3]
    table = private_moves(s, None)["heist"]["heist_attempt"]["seats"]
    assert table["1"]["positions"] == [1, 2, 3, 4] and table["2"]["positions"] == [0, 1, 2, 3]
    s = play({"type": "heist_flip", "seat": 2, "stop": True}, state=s)
    assert legal_moves(s)["heist_attempt"]["seats"] == {"1": {"stop": True}}
    assert legal_moves(s)["heist_attempt"]["chosen"] == [2]


def test_heist_moves_list_unflipped_positions():
    s = play(new_game(2), {"type": "heist_hide", "row": ROW5},
             {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]})
    spec = legal_moves(s)["heist_attempt"]
    assert spec["seats"]["1"]["positions"] == [1, 2, 3, 4]


def test_pairing_locks_a_guesser_then_everyone_and_unpair_all_draws_a_new_pin():
    now = [0.0]
    p = Pairing(pin="2580", clock=lambda: now[0])
    for _ in range(FREE_TRIES):
        assert p.locked("a") == 0
        assert p.try_pin("a", "0000") is None
    first = p.locked("a")
    assert first > 0
    now[0] += first
    assert p.locked("a") == 0 and p.try_pin("a", "1111") is None
    assert p.locked("a") > first  # doubled
    token = p.try_pin("b", "2580")
    assert token and p.is_paired(token) and not p.is_paired("forged")
    for i in range(GLOBAL_TRIES):
        p.try_pin(f"c{i}", "0000")
    assert p.locked("fresh") > 0  # too many misses from anywhere
    seen = []
    p.on_pin.append(seen.append)
    new = p.unpair_all()
    assert seen == [new] and not p.is_paired(token)
