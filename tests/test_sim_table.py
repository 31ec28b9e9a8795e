import pytest
from game_builders import at_race

from companion.games.vault_assault.commands import parse_command
from companion.games.vault_assault.engine import new_state

S = new_state()


@pytest.mark.parametrize(
    ("text", "event"),
    [
        ("3", {"type": "buzz", "seat": 2}),  # people count seats from 1
        (
            "new 3 Ann Bob Cat cop=3",
            {
                "type": "new_game",
                "game": "vault-assault",
                "players": 3,
                "names": ["Ann", "Bob", "Cat"],
                "first_cop": 2,
            },
        ),
        (
            "new 4",
            {
                "type": "new_game",
                "game": "vault-assault",
                "players": 4,
                "names": ["Team A", "Team B"],
                "first_cop": 0,
            },
        ),
        (
            "hide A P D A A",
            {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
        ),
        (
            "hide apdaa",
            {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]},
        ),
        (
            "flip 2:3 3:stop",
            {
                "type": "heist_attempt",
                "flips": [{"seat": 1, "position": 2}, {"seat": 2, "stop": True}],
            },
        ),
        ("go", {"type": "assault_start"}),
        ("stage 2", {"type": "stage", "stage": 2}),
        ("bang 2 3", {"type": "dye_pack", "targets": [1, 2]}),
        ("hostage 2", {"type": "hostage", "seat": 1}),
        ("steal 2 1", {"type": "steal", "seat": 1, "from": 0}),
        ("tally 2 $35k", {"type": "tally", "seat": 1, "cash": 35000}),
        ("tally 1 12,500", {"type": "tally", "seat": 0, "cash": 12500}),
        ("sticky 2 box", {"type": "sticky_fingers", "seat": 1, "from": None}),
        ("undo", {"type": "undo"}),
        ('{"type":"empty"}', {"type": "empty"}),
    ],
)
def test_commands(text, event):
    assert parse_command(text, S) == event


def test_impound_defaults_to_next_car():
    assert parse_command("impound 2", at_race()) == {"type": "impound", "seat": 1, "car": 0}


@pytest.mark.parametrize("text", ["", "fly", "stage x", "hide Q", "steal 1", "{nope", "[1]"])
def test_bad_commands_say_why(text):
    with pytest.raises(ValueError) as exc:
        parse_command(text, S)
    assert str(exc.value) and "\n" not in str(exc.value)


def test_flip_positions_are_1_to_5_for_people():
    from game_builders import ROW5, new_game, play

    s = play(new_game(2), {"type": "heist_hide", "row": ROW5})
    assert parse_command("flip 2:1", s)["flips"] == [{"seat": 1, "position": 0}]
    assert parse_command("flip 2:5", s)["flips"] == [{"seat": 1, "position": 4}]
    for bad in ("flip 2:0", "flip 2:6"):
        with pytest.raises(ValueError, match=r"position must be 1-5 \(the cops' row"):
            parse_command(bad, s)
    s = play({"type": "heist_attempt", "flips": [{"seat": 1, "position": 0}]}, state=s)
    with pytest.raises(ValueError, match="seat 2 already flipped position 1"):
        parse_command("flip 2:1", s)


def test_describe_reads_like_the_commands():
    from companion.games import registry

    describe = registry.get("vault-assault").describe_event

    assert describe(parse_command("flip 2:3 3:stop", S)) == "flip 2:3 3:stop"
    assert describe(parse_command("hide A P D A A", S)) == "hide A P D A A"
    assert describe({"type": "buzz", "seat": 2, "ts_ns": 5}) == "button 3"
    finish = {"type": "buzz", "seat": 0, "photo_finish": {"margin_ns": 400_000}}
    assert describe(finish) == "button 1 (photo finish, by 0.400 ms)"
    assert describe({"type": "tally", "seat": 1, "cash": 35000}) == "tally 2 $35,000"
    assert describe({"type": "rejected", "reason": "x: y"}) == "REJECTED x: y"
    assert describe({"type": "mystery", "ts_ns": 9, "a": 1}) == '{"type":"mystery","a":1}'
    assert describe({"type": "tally", "seat": 1, "cash": "lots"}) == (
        '{"type":"tally","seat":1,"cash":"lots"}'
    )


def test_describe_names_another_games_new_game_without_cops():
    from companion.games import registry

    describe = registry.get("vault-assault").describe_event

    line = describe({"type": "new_game", "game": "vault-solitaire", "players": 1,
                     "names": ["Sam"]})
    assert line == "new game of Vault (solitaire): 1 players (Sam)"
    assert "cops" in describe({"type": "new_game", "players": 2, "names": ["A", "B"]})
    assert describe({"type": "new_game", "game": "chess", "players": 2}).startswith(
        "new game of chess")
