"""Every input is handled inside a boundary: one test per trigger that used
to stop the referee, end a reader, or crash a command. Each leaves the game playable."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from game_builders import ROW5, at_race, new_game
from log_lines import unchained, wait_for_logged_lines

from companion.cli import main
from companion.events import (
    MAX_LINE_CHARS,
    MAX_REASON_CHARS,
    EventFormatError,
    decode_line,
    encode,
    validate_event,
)
from companion.gamelog import GameLog, read_log
from companion.games.vault_assault import engine
from companion.games.vault_assault.engine import apply
from companion.loop import Referee, TableLoop, resume_state

ROOT = Path(__file__).resolve().parents[1]
NEW = json.dumps(new_game(2))
HIDE = json.dumps({"type": "heist_hide", "row": ROW5})
STOP = json.dumps({"type": "heist_attempt", "flips": [{"seat": 1, "stop": True}]})
GO = '{"type":"assault_start"}'


# ---------------------------------------------------------------- the one gate


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"type":"buzz","seat":' + "9" * 5000 + "}", "number too long"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"type":"x","a":' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
        ('{"type":"new_game","names":["\\ud800"]}', "lone surrogate"),
        ('{"type":"x","\\udfff":1}', "lone surrogate"),
        ('{"type":"assault_start","ts_ns":' + "1" * 400 + "}", "number too long"),
        ('{"type":"assault_start","ts_ns":' + str(2**63) + "}", "'ts_ns' must be"),
        ('{"type":"assault_start","ts_ns":-1}', "'ts_ns' must be"),
        ('{"type":"x","v":1e999}', "number out of range"),
        ('{"type":"x","v":NaN}', "not JSON"),
        ('{"type":"' + "t" * 100 + '"}', "'type' too long"),
        ("x" * (MAX_LINE_CHARS + 1), "line too long"),
        ("[1]", "not a JSON object"),
    ],
)
def test_decode_line_bounds_every_line_before_and_after_decoding(line, why):
    with pytest.raises(EventFormatError) as info:
        decode_line(line)
    assert why in str(info.value)
    assert len(str(info.value)) <= MAX_REASON_CHARS and "\n" not in str(info.value)


def test_decode_line_keeps_what_the_format_allows():
    assert decode_line('{"type":"x","name":"\\ud83d\\ude00 Zo\\u00eb"}')["name"] == "😀 Zoë"
    assert decode_line(b'{"type":"buzz","seat":1,"ts_ns":9223372036854775807}')["seat"] == 1
    depth = '{"type":"x","a":' + "[" * 10 + "]" * 10 + ',"s":"' + "[" * 50 + '"}'
    assert decode_line(depth)["s"] == "[" * 50  # brackets inside strings are text
    with pytest.raises(EventFormatError, match="not UTF-8"):
        decode_line(b'{"type":"x","n":"\xff"}')


def test_validate_event_is_the_same_gate_for_the_page():
    assert validate_event({"type": "buzz", "seat": 1, "ts_ns": 5}) == {
        "type": "buzz",
        "seat": 1,
        "ts_ns": 5,
    }
    for bad in ({"type": "x", "n": "\ud800"}, {"type": "x", "ts_ns": 10**400}, [1], {"a": {1j}}):
        with pytest.raises(EventFormatError):
            validate_event(bad)


def test_raw_u2028_is_written_escaped_and_read_as_one_line(tmp_path, capsys):
    line = '{"type":"new_game","game":"vault-assault","players":2,"names":["A\u2028B","C"]}'
    assert "\u2028" not in encode(json.loads(line))
    p = tmp_path / "s.jsonl"
    p.write_text(line + "\n", encoding="utf-8")
    assert main(["sim", "--script", str(p), "--headless", "--strict"]) == 0
    assert json.loads(capsys.readouterr().out)["seats"][0]["name"] == "A\u2028B"


# ------------------------------------------------------- the referee's boundary


def test_engine_range_checks_stamps_so_a_huge_go_cannot_overflow():
    s = apply(at_race(2), {"type": "stage", "stage": 1}).state
    r = apply(s, {"type": "assault_start", "ts_ns": 10**400})
    assert r.rejection and "ts_ns" in r.rejection


def test_400_digit_go_then_buzz_leaves_the_game_playable():
    from dataclasses import replace

    # A Go! stamp of 400 digits, set by hand (the decoder and the engine refuse it
    # now): whatever slips through, the referee turns the exception into a rejection.
    ref = Referee(state=at_race(2))
    s = ref.state
    turn = s.turn
    ref.state = replace(s, turn=replace(turn, go_ns=10**400))
    r = ref.submit({"type": "buzz", "seat": 1, "ts_ns": 5})
    assert r.rejection and "internal error" in r.rejection and "OverflowError" in r.rejection
    assert ref.internal_errors == 1 and any("internal error" in m for m in ref.messages)
    ref.state = replace(ref.state, turn=replace(turn, go_ns=None))
    assert ref.submit({"type": "buzz", "seat": 1, "ts_ns": 5}).rejection is None


def test_accepted_event_with_a_photo_finish_field_goes_on(tmp_path):
    with GameLog(tmp_path / "g.jsonl") as log:
        ref = Referee(state=at_race(2), log=log)
        for finish in ({"ties": [1], "seats": [1, 0], "margin_ns": 5}, {"ties": 3}, {"seats": 7}):
            r = ref.submit({"type": "loot", "seat": 1, "photo_finish": finish})
            assert r.rejection is None
        assert ref.internal_errors == 0
        assert ref.submit({"type": "stage", "stage": 1}).rejection is None


def test_an_exception_in_the_engine_is_an_announced_rejection_and_the_loop_goes_on(tmp_path):
    real = engine.apply

    def flaky(state, event, *args):
        if event.get("boom"):
            raise KeyError("boom")
        return real(state, event, *args)

    from dataclasses import replace

    from companion.games import registry

    flaky_game = replace(registry.default(), apply=flaky)  # the referee judges with it
    faults: list[str] = []
    with GameLog(tmp_path / "g.jsonl") as log:
        ref = Referee(game=flaky_game, log=log)
        ref.fault_hooks.append(faults.append)

        async def run():
            table = TableLoop(ref, stamp_missing=False)
            await table.start()
            table.post(json.loads(NEW))
            table.post({"type": "heist_hide", "row": ROW5, "boom": 1})
            table.post({"type": "heist_hide", "row": ROW5})
            await asyncio.wait_for(table.drain(), 5)
            await table.stop()

        asyncio.run(run())
    assert ref.state.phase == "heist"
    assert faults and faults[0].startswith("internal error (judging): KeyError")
    lines = [unchained(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    assert [x["type"] for x in lines] == ["new_game", "rejected", "heist_hide"]
    assert lines[1]["reason"].startswith("internal error")


def test_a_failing_display_or_listener_does_not_stop_the_referee():
    class Broken:
        def show(self, view):
            raise RuntimeError("display fell off")

    ref = Referee(displays=[Broken()])
    ref.listeners.append(lambda e, r: 1 / 0)
    assert ref.submit(json.loads(NEW)).rejection is None
    assert ref.submit(json.loads(HIDE)).rejection is None
    assert ref.state.phase == "heist" and ref.internal_errors >= 2


def test_an_event_the_log_cannot_hold_is_rejected_not_applied(tmp_path):
    with GameLog(tmp_path / "g.jsonl") as log:
        ref = Referee(log=log)
        r = ref.submit({**new_game(2), "names": ["A\ud800", "B"]})
        assert r.rejection and r.rejection.startswith("internal error (logging)")
        assert ref.state.phase == "no_game"
        assert ref.submit(json.loads(NEW)).rejection is None
    state, report = resume_state(tmp_path / "g.jsonl")
    assert state == ref.state and not report.problems


def test_an_empty_first_line_of_a_reason_still_counts_as_rejected():
    r = apply(at_race(2), {"type": "\n", "ts_ns": -1})
    assert r.rejection and r.rejection.startswith("\\n")
    r = apply(at_race(2), {"type": "\n"})
    assert r.rejection


def test_megabyte_input_is_not_echoed_into_the_log(tmp_path):
    names = ["x" * 1_000_000, "B"]
    with GameLog(tmp_path / "g.jsonl") as log:
        ref = Referee(log=log)
        ref.submit(json.loads(NEW))
        r = ref.submit({**new_game(2), "names": names})
        assert r.rejection and len(r.rejection) <= MAX_REASON_CHARS
    size = (tmp_path / "g.jsonl").stat().st_size
    assert size < 4000
    note = unchained((tmp_path / "g.jsonl").read_text().splitlines()[-1])
    assert note["event"]["clipped_chars"] > 1_000_000


# ------------------------------------------------------------------- commands


def test_sim_goes_on_after_an_unhashable_seat_and_a_lone_surrogate(tmp_path, capsys):
    p = tmp_path / "s.jsonl"
    p.write_text(
        "\n".join(
            [
                NEW,
                HIDE,
                STOP,
                GO,
                '{"type":"buzz","seat":[1],"ts_ns":5}',
                '{"type":"loot","seat":1,"note":"\\ud800"}',
                '{"type":"loot","seat":' + "7" * 5000 + "}",
                "[" * 5000,
                '{"type":"buzz","seat":1}',
            ]
        )
        + "\n"
    )
    assert main(["sim", "--script", str(p), "--headless"]) == 0
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    errs = cap.err.strip().splitlines()
    assert errs[0].startswith("line 5: buzz: 'seat' must be a whole number")
    assert "lone surrogate" in errs[1] and "number too long" in errs[2]
    assert "nested too deeply" in errs[3]
    assert json.loads(cap.out)["seats"][1]["escaped"] == 1  # the last line still played


def test_replay_reports_bad_lines_without_a_traceback(tmp_path, capsys):
    p = tmp_path / "log.jsonl"
    p.write_text(
        '{"type":"new_game","game":"vault-assault","players":2,"names":["\\ud800","B"]}\n'
        + NEW
        + "\n"
        + '{"type":"loot","seat":'
        + "1" * 5000
        + "}\n"
        + "[" * 5000
        + "\n"
    )
    assert main(["replay", str(p), "--skip-invalid"]) == 0
    cap = capsys.readouterr()
    assert "lone surrogate" in cap.err and "Traceback" not in cap.err
    assert "nested too deeply" in cap.err and "number too long" in cap.err


def _serve(tmp_path, input_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n'
        f'[log]\ndir = "{tmp_path / "logs"}"\n'
    )
    return subprocess.Popen(
        [sys.executable, "-m", "companion", "serve", "--config", str(cfg)]
        + ["--input", str(input_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_serve_input_reader_survives_every_bad_line(tmp_path):
    inp = tmp_path / "in.jsonl"
    bad = [
        '{"type":"loot","seat":' + "9" * 5000 + "}",
        "[" * 5000 + "]" * 5000,
        '{"type":"loot","seat":1,"n":"\\ud800"}',
        "x" * (MAX_LINE_CHARS * 5),
        '{"type":"assault_start","ts_ns":' + "1" * 400 + "}",
    ]
    good = [NEW, HIDE, STOP, GO, '{"type":"stage","stage":1,"photo_finish":{"ties":[1]}}']
    lines = [good[0], *bad[:3], good[1], bad[3], good[2], bad[4], good[3]]
    # The line that is not UTF-8 comes before the last good one: once that is
    # logged, the reader has passed it, so its complaint is on stderr (as the
    # last line, it raced the SIGTERM).
    inp.write_bytes(
        ("\n".join(lines) + "\n").encode()
        + b'{"type":"loot","seat":1,"b":"\xff"}\n'
        + (good[4] + "\n").encode()
    )
    proc = _serve(tmp_path, inp)
    try:
        logs = wait_for_logged_lines(tmp_path / "logs", 5, 20)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    logged = [unchained(x)["type"] for x in logs[0].read_text().splitlines()]
    assert logged == ["new_game", "heist_hide", "heist_attempt", "assault_start", "stage"]
    for n, why in [
        (2, "number too long"),
        (3, "nested too deeply"),
        (4, "lone surrogate"),
        (6, "line too long"),
        (8, "number too long"),
        (10, "not UTF-8"),
    ]:
        assert f"input line {n}: " in err and why in err, (n, why, err)
    assert read_log(logs[0]).chained
