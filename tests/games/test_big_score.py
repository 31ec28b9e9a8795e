"""The Big Score, Act II: the scripted 3-player game, payouts, abilities, bad input and
invariants over random games (hypothesis)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.gamelog import read_log
from companion.games.big_score import definition as d
from companion.games.big_score import engine as e
from companion.games.big_score.state import CHOOSE, GAME_OVER, TRADE
from companion.games.big_score.summary import breakdown, summary, total, winners

SCRIPT = Path(__file__).parent.parent / "scripts" / "big-score-3p.jsonl"
FLOOR = ["artifact", "silver", "cash20", "diamond", "key"]


def new(n=3, act1=None, **extra):
    """A game of P0..P(n-1); the marker to the first of those with the fewest payout
    tokens (the rules' choice) unless `first_player` is given."""
    first = 0
    if act1 is not None:
        counts = [a.get("diamonds", 0) + a.get("artifacts", 0) + a.get("hard_drives", 0)
                  for a in act1]
        first = counts.index(min(counts))
    ev = {"type": "new_game", "game": "big-score", "players": n,
          "names": [f"P{i}" for i in range(n)], "floor": FLOOR, "first_player": first,
          **extra}
    if act1 is not None:
        ev["act1"] = act1
    r = e.apply(e.new_state(), ev)
    assert r.rejection is None, r.rejection
    return r.state


def run(state, *events):
    for ev in events:
        r = e.apply(state, ev)
        assert r.rejection is None, (ev, r.rejection)
        state = r.state
    return state


def choose_all(state, flee=()):
    for s in state.in_vault():
        state = run(state, {"type": "choose", "seat": s, "flee": s in flee})
    return state


def test_scripted_game_payouts_worked_out_by_hand():
    state = e.replay([ev for _, ev in read_log(SCRIPT).events])
    out = summary(state)
    assert out["over"] and out["busted"] and out["cops"] == 4 and out["busted_at"] == 4
    # Ann fled with diamond, gold, key: $300K cash + gold $200K + 3 diamonds $100K +
    # 1 artifact $30K + her Act I drive unlocked by the key $200K = $830K.
    # Bob was busted (his Act II artifact back in the vault): $250K + 2 artifacts $60K +
    # the majority $250K (2 against Ann's 1) + the Hacker's 2 unpaired drives $100K.
    # Cat fled with silver and the Driver's $100K: $500K + $150K + 1 diamond $20K.
    by_name = {p["name"]: p for p in out["players"]}
    assert by_name["Ann"]["breakdown"] == {
        "cash": 300_000, "silver": 0, "gold": 200_000, "diamonds": 100_000,
        "artifacts": 30_000, "artifact_majority": 0, "hard_drives": 200_000, "hacker": 0}
    assert by_name["Bob"]["breakdown"] == {
        "cash": 250_000, "silver": 0, "gold": 0, "diamonds": 0, "artifacts": 60_000,
        "artifact_majority": 250_000, "hard_drives": 0, "hacker": 100_000}
    assert by_name["Cat"]["breakdown"]["cash"] == 500_000
    assert [p["total"] for p in out["players"]] == [830_000, 660_000, 670_000]
    assert [p["status"] for p in out["players"]] == ["fled", "busted", "fled"]
    assert by_name["Bob"]["vault_tokens"] == []
    assert out["floor"] == ["artifact", "cash20", "cash50", "diamond"]  # Gun Man stole one
    assert out["winners"] == [0]
    assert e.tokens_accounted(state) == d.TOTAL_TOKENS


def test_diamond_table_and_cop_track():
    assert [d.diamonds_worth(n) for n in range(8)] == [0, 20, 50, 100, 200, 350, 500, 650]
    assert [d.busted_after(n) for n in (1, 4, 6)] == [2, 5, 7]


def test_artifact_tie_gives_nobody_the_bonus_and_hacker_keys():
    act1 = [{"artifacts": 2}, {"artifacts": 2, "hard_drives": 1, "expert": "hacker"}, {}]
    s = new(3, act1)
    assert breakdown(s, 0)["artifact_majority"] == breakdown(s, 1)["artifact_majority"] == 0
    # Seat 1 draws two keys: one pairs with the drive ($200K), one unpaired ($50K, Hacker).
    s = replace(s, players=tuple(replace(p, vault=("key", "key")) if i == 1 else p
                                 for i, p in enumerate(s.players)))
    assert breakdown(s, 1)["hard_drives"] == 200_000 and breakdown(s, 1)["hacker"] == 50_000
    assert breakdown(s, 0)["hacker"] == 0


def test_first_player_is_the_fewest_payout_tokens_and_a_tie_must_be_named():
    ev = {"type": "new_game", "game": "big-score", "players": 2, "names": ["A", "B"],
          "floor": FLOOR, "act1": [{"diamonds": 2}, {"artifacts": 1}]}
    assert e.apply(e.new_state(), ev).state.marker == 1
    tied = {**ev, "act1": [{}, {}]}
    r = e.apply(e.new_state(), tied)
    assert "give 'first_player'" in r.rejection
    assert e.apply(e.new_state(), {**tied, "first_player": 1}).state.marker == 1


def test_a_fleeing_marker_holder_passes_it_left_even_when_the_reveal_busts_the_vault():
    """The rulebook, The Reveal: "Opens his empty fist and reveals that he has chosen to
    Flee, his participation in Act II is over. If he has it, he should pass the First
    Player Marker to the left." -- and the marker skips "any player who has chosen to
    Flee The Vault". Here P1 holds it and flees in the round whose cops bust the vault:
    it goes left past P2 (fled earlier) to P3, not staying with P1."""
    s = new(4, first_player=1)
    s = choose_all(s)
    s = run(s, {"type": "reveal", "tokens": ["cop", "cop", "cop", "gold"]},
            {"type": "pass", "seat": 3})
    s = choose_all(s, flee={2})
    s = run(s, {"type": "reveal", "tokens": ["cash20", "cash30", None, "key"]},
            {"type": "pass", "seat": 1}, {"type": "pass", "seat": 3}, {"type": "pass", "seat": 0})
    assert s.marker == 1 and s.cops == 3 and s.players[2].status == "fled"
    s = choose_all(s, flee={1})
    r = e.apply(s, {"type": "reveal", "tokens": ["cop", None, None, "cop"]})
    assert r.rejection is None
    assert r.state.busted and r.state.phase == GAME_OVER
    assert [p.status for p in r.state.players] == ["busted", "fled", "fled", "busted"]
    assert r.state.marker == 3 and summary(r.state)["first_player"] == 3
    assert "The First Player Marker passes to P3" in [o.text for o in r.outputs]
    # The same reveal without the bust (one cop fewer) passes it the same way.
    calm = e.apply(s, {"type": "reveal", "tokens": ["cop", None, None, "silver"]}).state
    assert not calm.busted and calm.marker == 3


def test_first_player_must_be_among_the_tied_fewest_payout_tokens():
    """The rulebook, Act II Setup: "The First Player Marker is given to the player with
    the fewest number (not value) of Payout Tokens - do not include Cash Tokens when
    counting. If there is a tie, the First Player Marker is given to the youngest among
    the tied players." A `first_player` outside that tie is refused, in one line naming
    who may go first (seats counted from 1), so a mistyped seat cannot change the trade
    order for the whole game."""
    act1 = [{"diamonds": 1}, {"cash": 900}, {}, {"artifacts": 2}]
    ev = {"type": "new_game", "game": "big-score", "players": 4,
          "names": ["Ann", "Bob", "Cat", "Dan"], "floor": FLOOR, "act1": act1}
    for wrong in (0, 3):
        r = e.apply(e.new_state(), {**ev, "first_player": wrong})
        assert r.rejection == (
            f"new_game: {['Ann', 'Bob', 'Cat', 'Dan'][wrong]} (seat {wrong + 1}) may not go "
            "first: the First Player Marker goes to one of Bob (seat 2), Cat (seat 3) (tied "
            "for the fewest payout tokens: the youngest)")
        assert r.state == e.new_state()
    for right in (1, 2):  # Bob's $900K cash does not count
        assert e.apply(e.new_state(), {**ev, "first_player": right}).state.marker == right
    one = {**ev, "act1": [{"diamonds": 1}, {"hard_drives": 1}, {}, {"artifacts": 2}]}
    r = e.apply(e.new_state(), {**one, "first_player": 1})
    assert r.rejection == ("new_game: Bob (seat 2) may not go first: the First Player Marker "
                           "goes to Cat (seat 3) (the fewest payout tokens)")
    assert e.apply(e.new_state(), one).state.marker == 2  # no tie: no need to say
    r = e.apply(e.new_state(), ev)
    assert r.rejection == ("new_game: Bob (seat 2), Cat (seat 3) tie for the fewest payout "
                           "tokens: give 'first_player' (the youngest of them)")


def test_never_flee_with_no_cops_advice_and_the_busting_round():
    s = new(2)
    assert "never flee" in e.advice(s)[0]
    s = choose_all(s)
    s = run(s, {"type": "reveal", "tokens": ["cop", "cop"]})
    assert s.phase == CHOOSE and s.cops == 2 and "1 more cop" in e.advice(s)[0]
    # Seat 0 flees this round while seat 1 draws the third cop: only seat 1 is busted.
    s = replace(s, players=tuple(replace(p, vault=("gold",)) for p in s.players))
    s = choose_all(s, flee={0})
    s = run(s, {"type": "reveal", "tokens": [None, "cop"]})
    assert s.phase == GAME_OVER and s.busted
    assert s.players[0].status == "fled" and s.players[0].vault == ("gold",)
    assert s.players[1].status == "busted" and s.players[1].vault == ()


def test_the_choosing_window_closing_means_rob():
    s = new(3)
    s = run(s, {"type": "choose", "seat": 1, "flee": True})  # a press: flee
    r = e.apply(s, {"type": "reveal", "tokens": ["gold", None, "key"]})
    assert "still choosing" in r.rejection
    s = run(s, {"type": "close_choices"})
    assert [p.flee for p in s.players] == [False, True, False]
    assert "already" in e.apply(s, {"type": "close_choices"}).rejection
    s = run(s, {"type": "reveal", "tokens": ["gold", None, "key"]})
    assert s.players[1].status == "fled" and s.queue == (0, 2)


def test_all_reveal_at_once_when_the_window_closes_and_not_before():
    from companion.speech.phrases import callouts

    s = new(3)
    r = e.apply(s, {"type": "choose", "seat": 1, "flee": True})
    assert [o.text for o in r.outputs] == ["P1 has chosen"]  # who, never what
    r = e.apply(r.state, {"type": "close_choices"})  # the window closes: the rest rob
    assert [(o.kind, o.name, o.text) for o in r.outputs] == [
        ("announce", "reveal", "Everyone has chosen: open your fists!"),
        ("flash", "reveal", "P0 robs, P1 flees, P2 robs")]
    assert callouts({"type": "close_choices"}, r)[-1] == "P0 robs, P1 flees, P2 robs."
    # The last choice closes the window too; the fled stay out of the next reveal.
    s = run(s, {"type": "choose", "seat": 0, "flee": True}, {"type": "choose", "seat": 1,
                                                           "flee": False})
    r = e.apply(s, {"type": "choose", "seat": 2, "flee": False})
    assert r.outputs[-1].text == "P0 flees, P1 robs, P2 robs"
    s = run(r.state, {"type": "reveal", "tokens": [None, "gold", "key"]},
            {"type": "pass", "seat": 1}, {"type": "pass", "seat": 2})
    assert s.phase == CHOOSE and s.round == 2
    s = run(s, {"type": "choose", "seat": 2, "flee": True})
    assert e.choices_line(run(s, {"type": "close_choices"})) == "P1 robs, P2 flees"


def test_trade_order_marker_passing_skips_fled_players():
    s = new(4)
    s = choose_all(s)
    s = run(s, {"type": "reveal", "tokens": ["cash20", "cash30", "cop", "gold"]})
    assert s.queue == (0, 1, 3)
    r = e.apply(s, {"type": "trade", "seat": 1, "take": "silver"})
    assert "P0 (seat 1)'s turn" in r.rejection  # seats counted from 1 for people
    s = run(s, {"type": "pass", "seat": 0})
    assert s.marker == 0  # passing keeps the marker
    s = run(s, {"type": "trade", "seat": 1, "take": "silver"},
            {"type": "trade", "seat": 3, "take": "key"})
    # Next round seat 1 flees: the marker (seat 0) trades and passes it left, past 1 to 2.
    s = choose_all(s, flee={1})
    s = run(s, {"type": "reveal", "tokens": ["cash20", None, "diamond", "diamond"]},
            {"type": "trade", "seat": 0, "take": "artifact"})
    assert s.marker == 2


def test_abilities_once_each():
    act1 = [{"expert": "con_man"}, {"expert": "grease_man"}, {"expert": "muscle"}]
    s = new(3, act1)
    s = run(s, {"type": "muscle", "seat": 2})
    assert s.marker == 2
    assert "no unused Muscle" in e.apply(s, {"type": "muscle", "seat": 2}).rejection
    assert "no unused Muscle" in e.apply(s, {"type": "muscle", "seat": 0}).rejection
    s = choose_all(s)
    s = run(s, {"type": "reveal", "tokens": ["gold", "cash50", "cop"]})
    assert s.queue == (0, 1)
    s = run(s, {"type": "pass", "seat": 0}, {"type": "pass", "seat": 1})
    s = choose_all(s, flee={1})
    # The Grease Man flees and steals from the floor with the reveal.
    r = e.apply(s, {"type": "reveal", "tokens": ["cash20", None, "cash30"],
                    "grease": {"seat": 0, "token": "key"}})
    assert "not a grease man" in r.rejection
    s = run(s, {"type": "reveal", "tokens": ["cash20", None, "cash30"],
                "grease": {"seat": 1, "token": "key"}})
    assert s.players[1].vault == ("cash50", "key") and len(s.floor) == 4
    # The Con Man trades his earlier gold instead of the cash20 he just drew.
    assert s.queue == (2, 0)
    s = run(s, {"type": "pass", "seat": 2},
            {"type": "trade", "seat": 0, "take": "silver", "give": "gold"})
    assert s.players[0].vault == ("cash20", "silver") and "gold" in s.floor
    assert s.players[0].ability_used
    s = choose_all(s)
    s = run(s, {"type": "reveal", "tokens": ["cash20", None, "cash30"]})
    r = e.apply(s, {"type": "trade", "seat": 2, "take": "gold", "give": "cash30"})
    assert r.rejection is None
    s = run(s, {"type": "pass", "seat": 2})
    r = e.apply(s, {"type": "trade", "seat": 0, "take": "gold", "give": "silver"})
    assert "only the token just drawn" in r.rejection


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"type": "choose", "seat": 9, "flee": True}, "'seat' must be 0..2"),
        ({"type": "choose", "seat": 0, "flee": "yes"}, "true or false"),
        ({"type": "choose", "seat": 0}, "missing field 'flee'"),
        ({"type": "choose", "seat": 10**40, "flee": False}, "'seat' must be 0..2"),
        ({"type": "reveal", "tokens": ["cop", "cop", "cop"]}, "still choosing"),
        ({"type": "trade", "seat": 0, "take": "gold"}, "not allowed now"),
        ({"type": "muscle", "seat": 0}, "no unused Muscle"),
        ({"type": "heist"}, "unknown event type"),
        ({"type": None}, "no 'type'"),
        ("choose", "must be a JSON object"),
        ({"type": "new_game", "game": "big-score"}, "already under way"),
    ],
)
def test_bad_input_one_line_state_unchanged(event, reason):
    s = new(3)
    r = e.apply(s, event)
    assert r.state is s and reason in r.rejection, r.rejection
    assert "\n" not in r.rejection


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"game": "vault-assault"}, "unknown game"),
        ({"players": 7}, "'players' must be 1..6"),
        ({"floor": ["cop", "gold", "key", "key", "key"]}, "never placed on the Vault Floor"),
        ({"floor": ["gold", "gold", "key", "key", "key"]}, "no gold token is left"),
        ({"floor": ["gold"]}, "'floor' must list the 5"),
        ({"act1": [{"cash": 10**12}, {}, {}]}, "'cash' must be 0..100000"),
        ({"act1": [{"expert": "wizard"}, {}, {}]}, "'expert' must be one of"),
        ({"act1": [{"rubies": 3}, {}, {}]}, "unknown field 'rubies'"),
        ({"names": ["A", "B"]}, "'names' must list 3"),
    ],
)
def test_bad_new_game(change, reason):
    ev = {"type": "new_game", "game": "big-score", "players": 3, "names": ["A", "B", "C"],
          "floor": FLOOR, "first_player": 0, **change}
    r = e.apply(e.new_state(), ev)
    assert r.rejection and reason in r.rejection, r.rejection


def test_reveal_checks_tokens_against_the_vault():
    s = choose_all(new(3), flee={2})
    for tokens, reason in [
        (["gold", "gold", None], "no gold token is left"),
        (["gold", "cop", "cop"], "fled and drew nothing"),
        (["gold", None, None], "must be a token name"),
        (["gold", "ruby", None], "must be a token name"),
        (["gold"], "must list 3 entries"),
    ]:
        r = e.apply(s, {"type": "reveal", "tokens": tokens})
        assert r.state is s and reason in r.rejection, r.rejection


TOKENS = list(d.TOKEN_KINDS)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 6), st.lists(st.integers(0, 10**6), min_size=5, max_size=120))
def test_invariants_over_random_games(n, draws):
    experts = list(d.EXPERTS)
    act1 = [{"cash": 100 + 10 * i, "artifacts": i % 3, "hard_drives": i % 2,
             "expert": experts[i % len(experts)]} for i in range(n)]
    s = new(n, act1)
    pick = iter(draws)
    for _ in range(len(draws) // 3):
        try:
            a, b, c = next(pick), next(pick), next(pick)
        except StopIteration:
            break
        if s.phase == GAME_OVER:
            break
        if s.phase == CHOOSE:
            waiting = [p for p in s.in_vault() if s.players[p].flee is None]
            if waiting:
                ev = {"type": "choose", "seat": waiting[a % len(waiting)], "flee": b % 4 == 0}
            else:
                bag = [k for k, cnt in zip(TOKENS, s.bag, strict=True) for _ in range(cnt)]
                toks = []
                for seat, p in enumerate(s.players):
                    if p.status == "in" and not p.flee and bag:
                        toks.append(bag.pop((a + seat * 7) % len(bag)))
                    else:
                        toks.append(None)
                ev = {"type": "reveal", "tokens": toks}
        elif s.phase == TRADE:
            seat = s.queue[0]
            ev = ({"type": "pass", "seat": seat} if b % 2 or not s.floor else
                  {"type": "trade", "seat": seat, "take": s.floor[c % len(s.floor)]})
        before = s
        r = e.apply(s, ev)
        if r.rejection:
            assert r.state is s
            continue
        s = r.state
        assert e.tokens_accounted(s) == d.TOTAL_TOKENS
        assert all(cnt >= 0 for cnt in s.bag)
        assert all(total(s, i) >= 0 for i in range(s.n))
        assert e.apply(s, {"type": "undo"}).state == before
        garbage = e.apply(s, {"type": "trade", "seat": a % 9, "take": TOKENS[c % 10],
                              "give": "x" * (b % 50)})
        if garbage.rejection:
            assert garbage.state is s
    if s.phase == GAME_OVER:
        assert winners(s) and summary(s)["over"]


@pytest.mark.parametrize(
    ("act1", "reason"),
    [
        ([{"diamonds": 20}, {"diamonds": 11}, {}],
         "the players hold 31 diamonds from Act I, but the box has 30"),
        ([{"hard_drives": 31}, {}, {}], "hold 31 hard drives from Act I, but the box has 30"),
        ([{"expert": "hacker"}, {"expert": "hacker"}, {"expert": "hacker"}],
         "3 players trained a Hacker, but its 7 expert cards train at most 2"),
    ],
)
def test_act1_within_the_box_and_the_expert_cards(act1, reason):
    """"Hard Drive (30) [...] Diamond (30) [...] Artifact (30)" are the box's Act I
    payout tokens; "There are 7 Expert Crew Cards of each Crew type. As a result, it is
    possible for 2 different players to each gain the same Expert Ability" (3 cards
    each): no more than 2."""
    ev = {"type": "new_game", "game": "big-score", "players": 3, "names": ["A", "B", "C"],
          "floor": FLOOR, "act1": act1, "first_player": 2}
    r = e.apply(e.new_state(), ev)
    assert r.rejection and reason in r.rejection, r.rejection
    two = [{"expert": "hacker"}, {"expert": "hacker"}, {"diamonds": 30}]
    assert e.apply(e.new_state(), {**ev, "act1": two, "first_player": 0}).rejection is None


def test_people_count_seats_from_1_in_commands_messages_and_the_log_pane():
    from companion.games.big_score import table as t

    s = new(3)
    assert t.parse_command("flee 1", s) == {"type": "choose", "seat": 0, "flee": True}
    assert t.parse_command("3", s) == {"type": "choose", "seat": 2, "flee": True}
    assert t.parse_command("trade 2 silver gold", s) == {"type": "trade", "seat": 1,
                                                         "take": "silver", "give": "gold"}
    assert t.parse_command("muscle 3", s) == {"type": "muscle", "seat": 2}
    for bad in ("flee 0", "rob 4", "pass x", "0"):
        with pytest.raises(ValueError, match=r"the seat is a number 1-3"):
            t.parse_command(bad, s)
    words = ["Ann", "Bob", "Cat", "floor=artifact,silver,cash20,diamond,key"]
    assert t.new_command(words)["first_player"] == 0  # the first name, the youngest
    assert t.new_command([*words, "first=3"])["first_player"] == 2
    with pytest.raises(ValueError, match=r"first= is a seat 1-3"):
        t.new_command([*words, "first=0"])
    s = run(s, {"type": "choose", "seat": 0, "flee": False})
    r = e.apply(s, {"type": "choose", "seat": 0, "flee": True})
    assert r.rejection.startswith("choose: P0 (seat 1) has already chosen")
    assert t.describe({"type": "choose", "seat": 0}) == "seat 1 has chosen"
    assert t.describe({"type": "reveal", "tokens": ["gold", None]}) == "reveal 1:gold 2:-"
    assert t.describe({"type": "pass", "seat": 2}) == "seat 3 keeps the token"
    lines = t.status_lines(s)
    assert lines[-3].startswith("  1 P0 ") and lines[-1].startswith("  3 P2 ")
    assert "Choosing: P1, P2 still to choose" in lines
    # The JSON keeps its seats from 0.
    assert t.page_moves(s)["choose"] == [1, 2]


def test_the_page_is_offered_the_abilities_that_act_now():
    from companion.games.big_score import table as t

    act1 = [{"expert": "gun_man"}, {"expert": "driver"}, {"expert": "grease_man"}]
    s = choose_all(new(3, act1), flee={1, 2})
    reveal = t.page_moves(s)["reveal"]
    assert reveal["seats"] == [0] and reveal["driver"] == [1] and reveal["grease"] == [2]
    assert reveal["floor"] == sorted(FLOOR)
    s = choose_all(new(3, act1))
    s = run(s, {"type": "reveal", "tokens": ["gold", "cop", "cop"]})
    trade = t.page_moves(s)["trade"]
    assert trade == {"seat": 0, "take": sorted(FLOOR), "give": ["gold"], "drawn": "gold",
                     "steal": True}
