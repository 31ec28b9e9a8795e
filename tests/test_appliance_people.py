"""`serve` speaks to people: the referee's messages on stdout and to the speaker, the
sim's short commands on --input, and the cops' button claiming stages."""

import asyncio
import dataclasses

from companion.appliance import Appliance
from companion.config import Config, DisplayConfig, LogConfig, SoundConfig, TableConfig
from companion.speech.player import RecordingSpeaker


def config(tmp_path, claims=False):
    return dataclasses.replace(
        Config(),
        display=DisplayConfig(type="none"),
        log=LogConfig(dir=tmp_path / "logs"),
        sound=SoundConfig(enabled=False),
        table=TableConfig(cop_button_claims_stages=claims),
    )


def run_input(tmp_path, lines, claims=False, pin=None):
    inp = tmp_path / "in.txt"
    inp.write_text("\n".join(lines) + "\n")

    async def go():
        app = Appliance(config(tmp_path, claims))
        await app.start()
        assert isinstance(app.speaker, RecordingSpeaker)
        if pin:
            app.announce_pin(pin)
        await app.read_input(str(inp))
        await asyncio.sleep(0.05)  # settle windows close
        app.buzzers.flush()
        await app.table.drain()
        await app.close()
        return app

    return asyncio.run(go())


def test_short_commands_play_and_messages_reach_stdout_and_speaker(tmp_path, capsys):
    app = run_input(
        tmp_path,
        [
            "# a comment",
            "new 2 Ann Bob",
            "hide A P D A A",
            "flip 2:6",  # out of range: one line naming it
            "flip 2:3",  # seats and positions from 1 for people: the diamond is at 3
            "go",
            "stage 2",
            "stage 1",
            "bogus words",
        ],
        pin="4719",
    )
    out, err = capsys.readouterr()
    state = app.referee.state
    assert state.seats[1].diamonds == 1 and state.turn.stages == 1
    assert "table: pairing PIN 4719" in out
    assert "table: Ann (seat 1) are the cops: hide the diamond" in out
    assert "table: REJECTED stage: stages go in order; next is stage 1, got 2" in out
    assert "table: Stage 1: Fuel Up: yell a donut flavour!" in out
    assert "table: Bob (seat 2) found the diamond and takes a Diamond tile!" in out
    assert "input line 9: unknown command 'bogus'" in err
    assert "input line 4: flip: position must be 1-5 (the cops' row, left to right), got 6" in err
    said = app.speaker.said
    assert said[0] == "The pin is four, seven, one, nine."
    assert "Go!" in said and "Stage one comes next." in said
    assert "Stage one. Fuel up! Yell a donut flavour!" in said


def test_cops_button_claims_stages_then_arrests(tmp_path, capsys):
    app = run_input(
        tmp_path,
        ["new 2 Ann Bob", "hide A P D A A", "flip 2:stop", "go", "1", "1", "1", "1"],
        claims=True,
    )
    state = app.referee.state
    lines = [line for line in app.log_path.read_text().splitlines()]
    kinds = [__import__("json").loads(x)["type"] for x in lines]
    assert kinds[-4:] == ["stage", "stage", "stage", "buzz"]
    assert state.seats[1].arrested == 1 and state.phase == "impound"
    assert "Arrested! Bob." in app.speaker.said


def test_without_the_option_the_cops_early_press_is_rejected(tmp_path, capsys):
    app = run_input(tmp_path, ["new 2 Ann Bob", "hide A P D A A", "flip 2:stop", "go", "1"])
    assert app.referee.state.turn.stages == 0
    assert "REJECTED buzz: Arrested! needs stages 1-3 complete" in capsys.readouterr().out


def test_pin_shows_on_the_led_frame_for_seconds(tmp_path, capsys):
    from companion.display.model import flash_frame

    async def go():
        app = Appliance(config(tmp_path))
        await app.start()
        app.announce_pin("0382", seconds=30)
        view = app.referee.view()
        app.referee.on_tick()  # a tick later (the loop's 0.25 s) it is still up
        still = app.referee.flash
        await app.close()
        return view, still

    view, still = asyncio.run(go())
    assert view.flash == "pin:0382" and still == "pin:0382"
    assert view.frame == flash_frame("PIN 0382")
    assert "table: pairing PIN 0382" in capsys.readouterr().out
