import json

from log_lines import unchained

from companion.gamelog import GameLog, read_log
from companion.loop import resume_state

NEW = {"type": "new_game", "game": "vault-assault", "players": 2, "names": ["A", "B"]}
HIDE = {"type": "heist_hide", "row": ["alarm", "dye_pack", "diamond", "alarm", "alarm"]}


def test_append_writes_one_json_object_a_line(tmp_path):
    p = tmp_path / "g.jsonl"
    with GameLog(p) as log:
        log.append(NEW)
        log.append(HIDE)
    lines = p.read_text().splitlines()
    assert [unchained(x) for x in lines] == [NEW, HIDE]
    assert lines[0].startswith('{"type":"new_game"')


def test_torn_last_line_is_reported_skipped_and_kept_aside(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps(NEW) + "\n" + '{"type":"heist_hi')
    contents = read_log(p)
    assert [e for _, e in contents.events] == [NEW]
    assert contents.problems == ["line 2: torn last line (17 bytes) skipped"]
    state, report = resume_state(p)
    assert report.events == 1 and state.players == 2
    with GameLog(p) as log:  # opening for append repairs the tail
        log.append(HIDE)
    assert [unchained(x) for x in p.read_text().splitlines()] == [NEW, HIDE]
    assert (tmp_path / "g.jsonl.torn").read_text() == '{"type":"heist_hi\n'


def test_whole_last_line_without_newline_is_kept(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps(NEW))
    with GameLog(p) as log:
        log.append(HIDE)
    assert [unchained(x) for x in p.read_text().splitlines()] == [NEW, HIDE]


def test_garbage_line_in_the_middle_is_reported_not_fatal(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps(NEW) + "\n\x00\x01garbage\n" + json.dumps(HIDE) + "\n")
    state, report = resume_state(p)
    assert report.events == 2
    assert len(report.problems) == 1 and report.problems[0].startswith("line 2: not JSON")
    assert state.phase == "heist"


def test_resume_reproduces_state_of_a_long_game(tmp_path):
    from companion.games.vault_assault.engine import replay

    script = (__import__("pathlib").Path(__file__).parent / "scripts" / "game-2p.jsonl").read_text()
    events = [unchained(x) for x in script.splitlines() if x.strip() and not x.startswith("#")]
    p = tmp_path / "g.jsonl"
    from companion.games.vault_assault.engine import apply, new_state

    s = new_state()
    with GameLog(p) as log:
        for ev in events:
            r = apply(s, ev)
            if r.rejection is None:
                log.append(ev)
                s = r.state
    resumed, report = resume_state(p)
    assert report.problems == []
    assert resumed == s == replay([e for _, e in read_log(p).events])
