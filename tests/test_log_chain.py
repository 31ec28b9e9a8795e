"""The tamper-evident log: a chain of short checksums, resume stops at the first
damaged line and says which, old logs without checksums still replay."""

from __future__ import annotations

import json
from pathlib import Path

from game_builders import ROW5, new_game

from companion.cli import main
from companion.gamelog import GameLog, encode_log_line, line_chain, read_log
from companion.loop import resume_state

SCRIPTS = Path(__file__).parent / "scripts"


def write_game(path: Path) -> list[str]:
    """game-2p played into a checksummed log; returns its lines."""
    from companion.events import decode, is_comment

    with GameLog(path, fsync=False) as log:
        for line in (SCRIPTS / "game-2p.jsonl").read_text().splitlines():
            if not is_comment(line):
                log.append(decode(line))
    return path.read_text().splitlines()


def test_encode_log_line_chains_each_line_to_the_one_before():
    a = encode_log_line({"type": "note", "x": 1}, "")
    b = encode_log_line({"type": "note", "x": 1}, line_chain(a))
    assert json.loads(a)["chain"] != json.loads(b)["chain"]
    assert a.startswith('{"type":"note","x":1,"chain":"') and len(line_chain(a)) == 8
    assert "chain" not in json.loads(encode_log_line({"type": "x", "chain": "forged"}, ""))[
        "type"
    ]


def test_a_whole_log_reads_and_resumes_as_the_game(tmp_path):
    p = tmp_path / "g.jsonl"
    lines = write_game(p)
    contents = read_log(p)
    assert contents.chained and contents.damaged_line is None and not contents.problems
    assert all("chain" not in e for _, e in contents.events)
    state, report = resume_state(p)
    assert state.phase == "game_over"
    assert report.events + len(report.problems) == len(lines)  # (one illegal line in it)


def damaged(tmp_path: Path, edit) -> tuple[Path, int]:
    p = tmp_path / "g.jsonl"
    lines = write_game(p)
    n = edit(lines)
    p.write_text("\n".join(lines) + "\n")
    return p, n


def test_an_edited_cash_figure_stops_the_resume_at_that_line(tmp_path, capsys):
    def edit(lines):
        n = next(i for i, x in enumerate(lines) if '"type":"tally"' in x)
        ev = json.loads(lines[n])
        lines[n] = lines[n].replace(f'"cash":{ev["cash"]}', f'"cash":{ev["cash"] + 1000}')
        assert lines[n] != json.dumps(ev)
        return n + 1

    p, n = damaged(tmp_path, edit)
    state, report = resume_state(p)
    assert report.damaged_line == n and "checksum does not match" in report.damage
    assert report.events == state.events_applied == n - 2  # (line 16 is illegal)
    assert report.choice()["options"] == ["keep", "new"]
    assert report.choice()["keep"] == f"keep the game up to line {n - 1}"
    assert main(["replay", str(p), "--skip-invalid"]) == 2
    assert f"line {n}: damaged" in capsys.readouterr().err


def test_a_blanked_or_deleted_line_is_damage_too(tmp_path):
    def blank(lines):
        n = next(i for i, x in enumerate(lines) if '"type":"tally"' in x)
        lines[n] = ""
        return n + 1

    p, n = damaged(tmp_path, blank)
    assert resume_state(p)[1].damaged_line == n
    p.unlink()

    def delete(lines):
        del lines[10]
        return 11

    p, n = damaged(tmp_path, delete)
    _, report = resume_state(p)
    assert report.damaged_line == n and "went missing" in report.damage


def test_opening_a_damaged_log_keeps_the_game_before_it_and_the_original_beside(tmp_path):
    def edit(lines):
        lines[5] = lines[5].replace('"seat":1', '"seat":0', 1)
        return 6

    p, n = damaged(tmp_path, edit)
    original = p.read_bytes()
    with GameLog(p) as log:
        assert log.set_aside == tmp_path / "g.jsonl.damaged"
        log.append({"type": "note", "text": "after the damage"})
    assert (tmp_path / "g.jsonl.damaged").read_bytes() == original
    contents = read_log(p)
    assert contents.damaged_line is None and len(contents.events) == n
    assert contents.events[-1][1] == {"type": "note", "text": "after the damage"}


def test_old_logs_without_checksums_still_replay_and_grow_a_chain(tmp_path, capsys):
    for script in sorted(SCRIPTS.glob("*.jsonl")):
        assert main(["replay", str(script), "--json", "--skip-invalid"]) == 0, script
    p = tmp_path / "old.jsonl"
    p.write_text(json.dumps(new_game(2)) + "\n")
    with GameLog(p) as log:
        log.append({"type": "heist_hide", "row": ROW5})
    contents = read_log(p)
    assert contents.chained and len(contents.events) == 2 and not contents.problems
    p.write_text(p.read_text() + json.dumps({"type": "note"}) + "\n")
    assert read_log(p).damaged_line == 3  # an unchained line after the chain began


def test_a_torn_chained_last_line_is_torn_not_damage(tmp_path):
    p = tmp_path / "g.jsonl"
    write_game(p)
    data = p.read_bytes()
    p.write_bytes(data + data.splitlines()[3][:30])
    contents = read_log(p)
    assert contents.damaged_line is None and contents.torn_tail


def test_serve_offers_keep_or_new_for_a_damaged_log_and_takes_the_answer(tmp_path):
    import asyncio

    from companion.appliance import Appliance
    from companion.config import parse_config

    logs = tmp_path / "logs"
    logs.mkdir()
    p = logs / "game-20260101-000000.jsonl"
    lines = write_game(p)
    n = next(i for i, x in enumerate(lines) if i > 5 and '"seat":1' in x)
    lines[n] = lines[n].replace('"seat":1', '"seat":0', 1)
    p.write_text("\n".join(lines[: n + 8]) + "\n")  # unfinished, damaged at line n + 1
    cfg = parse_config(
        f'[gpio]\npin_factory = "mock"\n[display]\ntype = "none"\n[log]\ndir = "{logs}"\n'
    )

    async def run():
        app = Appliance(cfg, echo=False)
        await app.start()
        offer = app.referee.resume_choice
        assert offer and offer["damaged_line"] == n + 1 and offer["options"] == ["keep", "new"]
        assert any(f"LOG DAMAGED at line {n + 1}" in m for m in app.referee.messages)
        kept_phase = app.referee.state.phase
        app._take_input_line(1, b'{"type":"resume_choice","choice":"new"}\n')
        assert app.referee.resume_choice is None and app.referee.state.phase == "no_game"
        assert app.log_path != p
        app.table.post(json.loads(lines[0]))
        await app.table.drain()
        await app.close()  # the old log is renamed on its closing thread, which close awaits
        return kept_phase, app

    kept_phase, app = asyncio.run(run())
    assert (logs / (p.name + ".kept")).exists() and not p.exists()
    assert kept_phase != "no_game"  # until the answer, the game up to line 10 was kept
    assert (logs / (p.name + ".damaged")).exists()
    assert resume_state(app.log_path)[0].phase == "heist_hide"


def strip_chain(line: str) -> str:
    event = json.loads(line)
    del event["chain"]
    return json.dumps(event, separators=(",", ":"))


def test_a_first_line_whose_chain_was_removed_is_damage_not_a_legacy_line(tmp_path, capsys):
    p = tmp_path / "g.jsonl"
    lines = write_game(p)
    edited = json.loads(lines[0])
    edited["players"] = 3  # edited, and its chain removed so nothing checks it
    edited["names"] = [*edited["names"], "Eve"]
    del edited["chain"]
    lines[0] = json.dumps(edited, separators=(",", ":"))
    p.write_text("\n".join(lines) + "\n")
    contents = read_log(p)
    assert contents.damaged_line == 1 and contents.events == []
    assert "does not follow" in contents.damage
    state, report = resume_state(p)
    assert report.damaged_line == 1 and report.events == 0 and state.phase == "no_game"
    assert report.choice()["keep"] == "keep the game up to line 0"
    assert main(["replay", str(p)]) == 2
    assert "line 1: damaged" in capsys.readouterr().err
    original = p.read_bytes()
    with GameLog(p) as log:  # opening keeps nothing of it and the original beside it
        log.append(new_game(2))
    assert (tmp_path / "g.jsonl.damaged").read_bytes() == original
    after = read_log(p)
    assert after.damaged_line is None and [e for _, e in after.events] == [new_game(2)]


def test_any_unchained_line_before_a_chain_that_does_not_follow_is_the_damage(tmp_path):
    """Lines without a chain, then a chained line that does not check from the start:
    the damage is the first line without one, whichever was stripped."""
    p = tmp_path / "g.jsonl"
    lines = write_game(p)
    lines[:3] = ["# a comment", *[strip_chain(x) for x in lines[:3]]]
    p.write_text("\n".join(lines) + "\n")
    contents = read_log(p)
    assert contents.damaged_line == 2 and contents.events == []  # (line 1 is the comment)
    assert contents.good_length == len("# a comment\n")


def test_a_legacy_log_resumed_by_a_newer_companion_still_reads_whole(tmp_path):
    """Written before checksums, then resumed: unchained lines, then lines chained from
    the start of the chain. Editing its first chained line is damage, and the lines before
    it cannot be vouched for either."""
    p = tmp_path / "old.jsonl"
    p.write_text("# an old game\n" + json.dumps(new_game(2)) + "\n")
    with GameLog(p) as log:
        log.append({"type": "heist_hide", "row": ROW5})
        log.append({"type": "note", "text": "chained"})
    contents = read_log(p)
    assert contents.damaged_line is None and contents.chained and not contents.problems
    assert [e["type"] for _, e in contents.events] == ["new_game", "heist_hide", "note"]
    assert resume_state(p)[0].phase == "heist"
    lines = p.read_text().splitlines()
    lines[2] = lines[2].replace('"alarm"', '"dye_pack"', 1)
    p.write_text("\n".join(lines) + "\n")
    contents = read_log(p)
    assert contents.damaged_line == 2 and contents.events == []


def test_a_stripped_chain_on_the_last_line_of_two_is_damage_too(tmp_path):
    """The first line stripped and the second the last line of the file, without its
    newline: still damage, not a torn line."""
    p = tmp_path / "g.jsonl"
    lines = write_game(p)
    p.write_text(strip_chain(lines[0]) + "\n" + lines[1])
    contents = read_log(p)
    assert contents.damaged_line == 1 and contents.events == [] and not contents.torn_tail


def test_a_lazy_log_chains_lines_appended_before_it_read_the_file(tmp_path, monkeypatch):
    """A log opened by its writer thread (no file-system call in the constructor):
    lines appended before the writer read the file go on from its chain."""
    import threading

    p = tmp_path / "g.jsonl"
    lines = write_game(p)
    gate = threading.Event()
    real_prepare = GameLog._prepare

    def slow_prepare(self):
        gate.wait(5)
        real_prepare(self)

    monkeypatch.setattr(GameLog, "_prepare", slow_prepare)
    log = GameLog(p, lazy=True)
    log.append({"type": "note", "text": "before the file was read"})
    gate.set()
    log.append({"type": "note", "text": "after"})
    log.close()
    contents = read_log(p)
    assert contents.damaged_line is None and not contents.torn_tail
    assert len(contents.events) == len(lines) + 2
    assert contents.events[-2][1] == {"type": "note", "text": "before the file was read"}
