"""The pure mapping from the referee's results to spoken phrases."""

from game_builders import at_race, new_game, play, stages
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.vault_assault.engine import EVENT_TYPES, apply, new_state
from companion.speech.phrases import callouts, pin_phrase


def said(state, event):
    return callouts(event, apply(state, event))


def test_race_shouts():
    s = at_race(3)  # Ann cops; Bob, Cat robbers
    assert said(s, {"type": "hostage", "seat": 1}) == ["Hostage! Bob."]
    s2 = play({"type": "hostage", "seat": 1}, state=s)
    assert said(s2, {"type": "backup", "seat": 1}) == ["Backup! Bob."]
    assert said(s, {"type": "dye_pack", "targets": [1, 2]}) == ["Bang! Tiles from Bob and Cat."]
    assert said(s, {"type": "dye_pack", "targets": [2, 2]}) == ["Bang! Tiles from Cat."]
    assert said(s, {"type": "stage", "stage": 1}) == ["Stage one. Fuel up! Yell a donut flavour!"]
    s3 = stages(s, 1)
    assert said(s3, {"type": "stage", "stage": 2}) == ["Stage two. Dispatch! Yell a street name!"]
    assert said(s, {"type": "empty"}) == ["Empty! Everyone, escape or arrest!"]
    assert said(s, {"type": "buzz", "seat": 2, "ts_ns": 5}) == ["Escaped! Cat."]


def test_go_and_the_heist():
    s = play(
        new_game(2),
        {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
    )
    assert said(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 2}]}) == [
        "Diamond! Bob.",
        "The heist is over. Get ready for the race.",
    ]
    assert said(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 1}]})[0] == (
        "Trap! Bob takes a hostage die."
    )
    assert said(s, {"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]}) == ["Alarm!"]
    s = play({"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]}, state=s)
    assert said(s, {"type": "assault_start"}) == ["Go!"]


def test_new_game_names_the_cops():
    assert said(new_state(), new_game(3, first_cop=2)) == [
        "Cat, you are the cops. Hide the diamond."
    ]


def test_arrest_with_a_photo_finish_in_words():
    s = stages(at_race(3))
    ev = {
        "type": "buzz",
        "seat": 0,
        "ts_ns": 10,
        "photo_finish": {"seats": [0, 1], "margin_ns": 400_000, "ties": []},
    }
    assert said(s, ev) == [
        "Arrested! Bob, Cat.",
        "Photo finish! Ann, by four tenths of a millisecond.",
        "Cops, choose a getaway car to impound.",
    ]
    tie = {**ev, "photo_finish": {"seats": [1, 0], "margin_ns": 20_000, "ties": [[0, 1]]}}
    tie["seat"] = 1
    assert said(s, tie)[-1] == "Photo finish! A tie, decided by the tie rule."


def test_rejections_worth_hearing_and_the_rest_silent():
    s = at_race(3)
    assert said(s, {"type": "buzz", "seat": 0, "ts_ns": 5}) == [
        "Not yet! The cops need all three stages before the arrest."
    ]
    before_go = play(
        new_game(2),
        {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
    )
    assert said(before_go, {"type": "buzz", "seat": 1}) == ["False start! Bob."]
    assert said(s, {"type": "stage", "stage": 3}) == ["Stage one comes next."]
    hostage = play({"type": "hostage", "seat": 2}, state=s)
    assert said(hostage, {"type": "buzz", "seat": 2, "ts_ns": 9}) == [
        "Cat, you have a hostage set aside. Backup first!"
    ]
    late = {"type": "buzz", "seat": 2, "ts_ns": 9, "after": {"seat": 1, "by_ns": 3}}
    settled = play({"type": "empty"}, {"type": "buzz", "seat": 0, "ts_ns": 8}, state=s)
    assert said(settled, late) == ["Too late, Cat."]
    assert said(s, {"type": "tally", "seat": 0, "cash": 5}) == []  # a typo: the screen says it
    assert said(s, {"type": "nonsense"}) == []
    assert callouts("not a dict", apply(s, {"type": "undo"})) == []


def test_the_winner_with_the_total_in_words():
    s = stages(at_race(2))
    s = play({"type": "empty"}, {"type": "buzz", "seat": 0, "ts_ns": 5}, state=s)
    s = play({"type": "impound", "seat": 1, "car": 0}, state=s)
    assert s.phase == "game_over"
    s = play({"type": "tally", "seat": 0, "cash": 20_000}, state=s)
    assert said(s, {"type": "tally", "seat": 1, "cash": 5_000}) == [
        "The winner is Ann, with twenty thousand dollars!"
    ]
    assert said(s, {"type": "tally", "seat": 1, "cash": 20_000}) == [
        "A tie! The winners are Ann and Bob, with twenty thousand dollars each!"
    ]


def test_pin_is_read_digit_by_digit():
    assert pin_phrase("4719") == "The pin is four, seven, one, nine."


event_values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 6), st.text(max_size=4),
    st.lists(st.integers(-1, 4), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(sorted(EVENT_TYPES)),
    fields=st.dictionaries(
        st.sampled_from(["seat", "stage", "targets", "from", "cash", "car", "ts_ns",
                         "photo_finish", "after"]),
        event_values,
        max_size=4,
    ),
    where=st.sampled_from(["race", "staged", "hostage"]),
)
def test_any_event_gives_a_few_short_phrases_and_never_raises(kind, fields, where):
    s = at_race(3)
    if where == "staged":
        s = stages(s)
    elif where == "hostage":
        s = play({"type": "hostage", "seat": 1}, state=s)
    phrases = said(s, {"type": kind, **fields})
    assert isinstance(phrases, list) and len(phrases) <= 4
    assert all(isinstance(p, str) and 0 < len(p) < 120 and "seat" not in p for p in phrases)


def test_an_arrested_seat_with_no_car_left_is_said_not_asked():
    from companion.games.base import Output, Result

    s = play(new_game(2))
    out = Output("announce", "no_car", "Bob (seat 2) has no getaway car left: nothing", 1)
    assert callouts({"type": "buzz", "seat": 0}, Result(s, None, (out,))) == [
        "Bob has no getaway car left."]
