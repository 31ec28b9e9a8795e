"""Property tests: thousands of random legal and illegal event sequences.

A generator that only made random JSON would rarely get past new_game, so each step
draws from events that are plausible in the current state (most legal, many not) plus
outright garbage, and checks the invariants after every step."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games.vault_assault import definition as d
from companion.games.vault_assault.engine import (
    apply,
    current_round,
    new_state,
    replay,
    total_turns,
)
from companion.games.vault_assault.state import GAME_OVER, NO_GAME, GameState


def candidates(s: GameState) -> list[dict]:
    n = max(s.nseats, 1)
    seats = list(range(n + 1))  # one past the end: illegal
    out: list[dict] = [{"type": "undo"}, {"type": "nonsense"}, {"type": "stage"}]
    for p in (2, 3, 4):
        names = ["A", "B"] if p == 4 else [f"P{i}" for i in range(p)]
        out.append(
            {
                "type": "new_game",
                "game": "vault-assault",
                "players": p,
                "names": names,
                "first_cop": p % 2,
            }
        )
    rows = [
        ["alarm", "dye_pack", "diamond", "alarm", "alarm"],
        ["diamond", "alarm", "alarm", "alarm", "dye_pack"],
        ["alarm", "alarm", "alarm", "dye_pack", "alarm", "diamond"],
        ["alarm", "alarm", "alarm", "alarm", "alarm"],
    ]
    out += [{"type": "heist_hide", "row": r} for r in rows]
    if s.turn and s.turn.heist:
        h = s.turn.heist
        for pos in range(len(h.row) + 1):
            flips = []
            for i, seat in enumerate(sorted(h.in_heist)):
                if (pos + i) % 4 == 3:
                    flips.append({"seat": seat, "stop": True})
                else:
                    flips.append({"seat": seat, "position": (pos + i) % len(h.row)})
            out.append({"type": "heist_attempt", "flips": flips})
        out.append(
            {
                "type": "heist_attempt",
                "flips": [{"seat": x, "stop": True} for x in sorted(h.in_heist)],
            }
        )
    out.append({"type": "assault_start"})
    out += [{"type": "stage", "stage": k} for k in (1, 2, 3, 4)]
    for a in seats:
        out += [
            {"type": "buzz", "seat": a, "ts_ns": 1000 + a},
            {"type": "hostage", "seat": a},
            {"type": "backup", "seat": a},
            {"type": "loot", "seat": a},
            {"type": "dye_pack", "targets": [a]},
            {"type": "dye_pack", "targets": [a, (a + 1) % n]},
            {"type": "steal", "seat": a, "from": (a + 1) % n},
            {"type": "impound", "seat": a, "car": a % 3},
            {"type": "impound", "seat": a, "car": (a + 1) % 3},
            {"type": "tally", "seat": a, "cash": 5000 * a},
            {"type": "sticky_fingers", "seat": a, "from": None},
            {"type": "sticky_fingers", "seat": a, "from": (a + 1) % n},
        ]
    out.append({"type": "empty"})
    return out


def check_invariants(s: GameState) -> None:
    if s.phase == NO_GAME:
        return
    assert s.diamonds_in_box + sum(x.diamonds for x in s.seats) == d.DIAMONDS_IN_BOX
    assert 0 <= s.diamonds_in_box <= d.DIAMONDS_IN_BOX
    for x in s.seats:
        assert 0 <= x.cars <= d.CARS_PER_SEAT
        assert x.cars == d.CARS_PER_SEAT - len(x.impounded) or (x.cars == 0)
        assert x.escaped + x.arrested <= s.turns_played + 1
    assert 0 <= s.turns_played <= total_turns(s)
    assert 1 <= current_round(s) <= d.SETUPS[s.players].rounds
    if s.phase == GAME_OVER:
        assert s.turn is None
        assert s.turns_played == total_turns(s) or s.bank_empty
    else:
        assert s.cop == (s.first_cop + s.turns_played) % s.nseats
        assert s.turn is not None
        assert 0 <= s.turn.preset <= d.MAX_PRESET_PIECES
        assert 0 <= s.turn.stages <= 3
        assert len(s.turn.bang_intervals) <= 4
        assert s.cop not in s.turn.hostages and s.cop not in s.turn.escaped


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_sequences_keep_invariants(data):
    s = new_state()
    accepted: list[dict] = []
    for _ in range(data.draw(st.integers(20, 160), label="steps")):
        options = candidates(s)
        ev = data.draw(st.sampled_from(options), label="event")
        r = apply(s, ev)
        if r.rejection:
            assert r.state is s, "a rejected event must leave the state identical"
            assert "\n" not in r.rejection
            continue
        if ev["type"] != "undo":
            back = apply(r.state, {"type": "undo"})
            assert back.rejection is None and back.state is s, "undo restores the prior state"
        accepted.append(ev)
        s = r.state
        check_invariants(s)
    assert replay(accepted) == s, "replaying the accepted events reproduces the state"


@settings(max_examples=1000, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "type",
                "seat",
                "stage",
                "targets",
                "row",
                "flips",
                "cash",
                "car",
                "from",
                "ts_ns",
                "players",
                "names",
            ]
        ),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-3, 7),
            st.text(max_size=5),
            st.lists(st.integers(-1, 4), max_size=3),
            st.sampled_from(
                ["buzz", "stage", "heist_attempt", "dye_pack", "new_game", "tally", "impound"]
            ),
        ),
    )
)
def test_garbage_events_never_crash_and_never_change_state_when_rejected(ev):
    from game_builders import at_race

    for s in (new_state(), at_race(3)):
        r = apply(s, ev)
        if r.rejection:
            assert r.state is s
