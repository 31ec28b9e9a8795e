"""A device call checked before it is made: what travels, what comes back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reader_lab import device_call as D
from reader_lab import photo_pack

ROOT = Path(__file__).resolve().parents[2]
MIB = D.MIB


def _sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.truncate(size)


def test_what_fits_comes_back_whole(tmp_path):
    for name in ("det/resume.pt", "det/detector.onnx", "det/val.json", "det/train.log",
                 "faces/resume.pt", "faces/net.onnx", "faces/val.json", "gpu.log"):
        _sparse(tmp_path / name, MIB)
    assert D.return_problems(tmp_path) == []


def test_each_limit_on_what_comes_back_is_named(tmp_path):
    for k in range(9):
        (tmp_path / f"f{k}.txt").write_text("x")
    assert D.return_problems(tmp_path) == ["9 files, over the 8 that come back"]

    big = tmp_path / "big"
    _sparse(big / "a.onnx", 17 * MIB)
    assert D.return_problems(big) == ["a.onnx: 17.0 MiB, over 16 MiB a file"]

    deep = tmp_path / "deep"
    _sparse(deep / "a" / "b" / "c" / "x.log", 10)
    _sparse(deep / "a" / "b" / "ok.log", 10)
    assert D.return_problems(deep) == ["a/b/c/x.log: more than 2 folders down, it would not "
                                       "come back"]

    named = tmp_path / "named"
    _sparse(named / "a b.log", 10)
    assert "a name of other than letters" in D.return_problems(named)[0]

    many = tmp_path / "many"
    for k in range(5):
        _sparse(many / f"{k}.pt", 15 * MIB)
    assert D.return_problems(many) == ["75.0 MiB in all, over 64 MiB"]


def test_what_travels_is_held_to_its_limits():
    assert D.travel_problems(20 * MIB, {".lab/pack": 35 * MIB, ".lab/det/resume.pt": 6 * MIB}) == []
    # the whole detector folder carried back (its ONNX file too) is over: the second call
    # of the old plan, measured on this tree
    over = D.travel_problems(18 * MIB, {".lab/pack": 35 * MIB, ".lab/det": 16 * MIB})
    assert over == ["69.0 MiB would travel, over 64 MiB (the largest carried: .lab/pack)"]
    paths = {f".lab/p{k}": 1 for k in range(9)}
    assert D.travel_problems(0, paths) == ["9 carried paths: the device takes 8 at most"]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_tree_counts_tracked_and_untracked_files_but_not_ignored_ones(tmp_path,
                                                                          tmp_path_factory):
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".lab/\n")
    (tmp_path / "tracked.txt").write_bytes(b"x" * 100)
    _git(tmp_path, "add", ".gitignore", "tracked.txt")
    (tmp_path / "untracked.txt").write_bytes(b"y" * 30)
    _sparse(tmp_path / ".lab" / "pack" / "big.webp", 5 * MIB)
    assert D.tree_bytes(tmp_path) == 100 + 30 + len(".lab/\n")
    assert D.path_bytes(tmp_path / ".lab") == 5 * MIB
    assert D.path_bytes(tmp_path / ".lab" / "pack" / "big.webp") == 5 * MIB
    assert D.path_bytes(tmp_path / "absent") == 0
    with pytest.raises(D.CallError, match="not a git checkout") as err:
        D.tree_bytes(tmp_path_factory.mktemp("no-repository"))
    assert "\n" not in str(err.value)


def test_each_call_fits_its_limits_by_its_own_record():
    for name, call in D.CALLS.items():
        script = (ROOT / call.script).read_text()
        assert script.startswith("#!/usr/bin/env bash"), name
        assert D.PACK in call.carry and len(call.carry) <= D.CARRY_PATHS, name
        assert len(call.brings_back) <= D.RETURN_FILES, name
        for path in call.carry:  # the script's own header names what the call carries
            assert f'"{path}"' in script, (name, path)
        for back in call.brings_back:
            parts = Path(back).parts
            assert len(parts) - 1 <= D.RETURN_DEPTH and all(D.NAME.fullmatch(p) for p in parts)
    both = set(D.CALLS["both"].brings_back)
    alone = set(D.CALLS["detector"].brings_back) | set(D.CALLS["faces"].brings_back)
    assert both == alone - {"det/console.log", "faces/console.log"}
    carried = set(D.CALLS["detector"].carry) | set(D.CALLS["faces"].carry)
    assert set(D.CALLS["both"].carry) == carried


def _repo_with(tmp_path: Path, script: str, pack: bool = True) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text(".lab/\n")
    (tmp_path / "call.sh").write_text(script)
    if pack:
        (tmp_path / ".lab" / "pack").mkdir(parents=True)
        (tmp_path / ".lab" / "pack" / "pack.json").write_text("{}")
    return tmp_path


def _a_call(brings_back=("net/a.onnx",)):
    return D.Call("call.sh", (D.PACK, ".lab/net/resume.pt"), tuple(brings_back), {"X": "1"})


def test_the_check_says_what_travels_and_what_a_first_call_lacks(tmp_path):
    root = _repo_with(tmp_path, "#!/usr/bin/env bash\n")
    lines: list[str] = []
    assert D.check_travel(_a_call(), root, say=lines.append) == []
    assert lines[0].startswith("travels: 0.0 MiB of 64 (the tree 0.0, .lab/pack 0.0); "
                               "2 carried paths of 8")
    assert lines[1].startswith("not here, so not carried: .lab/net/resume.pt")
    bare = _repo_with(tmp_path / "bare", "#!/usr/bin/env bash\n", pack=False)
    assert D.check_travel(_a_call(), bare, say=lines.append) == [
        "no photo pack in .lab/pack: python -m reader_lab photo-pack .lab/pack"]


def _no_shared_photos(monkeypatch):
    def fake_pack(argv):
        out = Path(argv[0])
        out.mkdir(parents=True)
        (out / "pack.json").write_text(json.dumps({"images": []}))
        return 0
    monkeypatch.setattr(photo_pack, "main", fake_pack)


def test_a_try_runs_the_script_with_the_try_settings_and_checks_its_files(tmp_path, monkeypatch):
    _no_shared_photos(monkeypatch)
    root = _repo_with(tmp_path, "#!/usr/bin/env bash\nset -e\nmkdir -p \"$OUT/net\"\n"
                                "test -f \"$LAB/pack/pack.json\"\n"
                                "echo \"$X $DEVICE\" > \"$OUT/net/a.onnx\"\n")
    lines: list[str] = []
    assert D.try_on_cpu(_a_call(), root, 2, say=lines.append) == []
    assert "it left 1 files" in lines[-1] and "net/a.onnx" in lines[-1]
    # a file the call should bring back and did not leave is named
    problems = D.try_on_cpu(_a_call(("net/a.onnx", "net/b.pt")), root, 2, say=lines.append)
    assert problems == ["net/b.pt: the call did not leave it"]


def test_a_try_that_fails_is_one_line_with_the_scripts_last_words(tmp_path, monkeypatch):
    _no_shared_photos(monkeypatch)
    root = _repo_with(tmp_path, "#!/usr/bin/env bash\necho starting\necho 'no GPU here' >&2\n"
                                "exit 3\n")
    lines: list[str] = []
    problems = D.try_on_cpu(_a_call(), root, 2, say=lines.append)
    assert problems == ["call.sh failed on the CPU (exit 3): no GPU here"]
    assert "starting" in lines[-1]


def test_the_command_line(tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exc:
        D.main(["nothing"])
    assert exc.value.code == 2
    assert "invalid choice: 'nothing'" in capsys.readouterr().err
    root = _repo_with(tmp_path, "#!/usr/bin/env bash\n", pack=False)
    monkeypatch.setitem(D.CALLS, "detector", _a_call())
    assert D.main(["detector", "--root", str(root)]) == 1
    out, err = capsys.readouterr()
    assert err.strip() == ("device-call detector: no photo pack in .lab/pack: "
                           "python -m reader_lab photo-pack .lab/pack")
    assert json.loads(out.splitlines()[-1].removeprefix("run: ")) == {
        "command": "bash call.sh", "carry": [".lab/pack", ".lab/net/resume.pt"],
        "timeout_s": 600}
    (root / ".lab" / "pack").mkdir(parents=True)
    (root / ".lab" / "pack" / "pack.json").write_text("{}")
    assert D.main(["detector", "--root", str(root)]) == 0
    monkeypatch.setattr(D, "TRAVEL_LIMIT", 10)
    assert D.main(["detector", "--root", str(root)]) == 1
    assert "would travel, over" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        D.main(["detector", "--root", str(tmp_path / "elsewhere")])


def _log(points, loaded=10):
    lines = ["4 clutter scenes drawn in 0s", f"2,746,499 parameters; loaded in {loaded}s"]
    for took, step in points:
        lines.append(f"step {step}/60000 loss 0.5 (hm 0.5 wh 0.1) lr 1.0e-03 "
                     f"{step / max(took, 1e-6):.1f} steps/s, {took:.1f} s")
    return "\n".join(lines) + "\ngpu: 2026/12/06 05:00:00.000, 97 %, 40 %, 9000 MiB\n"


# the detector: 20 steps/s until the faces train beside it (from 60 + 25 - 10 = 75 s on
# its clock, for 300 s), 12 steps/s beside them, 20 again after
_DET = [(0.1, 1)] + [(10.0 * k, 200 * k) for k in range(1, 8)]
_DET += [(70 + 200 / 12 * k, 1400 + 200 * k) for k in range(1, 19)]
_DET += [(_DET[-1][0] + 10.0 * k, _DET[-1][1] + 200 * k) for k in range(1, 6)]


def test_the_detectors_rate_alone_and_beside_the_faces_is_read_from_the_logs():
    assert D.step_times(_log(_DET))[:2] == [(0.1, 1), (10.0, 200)]
    got = D.shared_rates(_log(_DET), _log([], loaded=25), 300.0, delay=60)
    assert (got["faces_from"], got["faces_to"]) == (75.0, 375.0)
    assert got["alone"] == pytest.approx(20.0, rel=0.01) and got["alone_n"] == 7
    # only the intervals wholly inside the faces' span: the one from 70 s and those after
    # 375 s are left out
    assert got["beside"] == pytest.approx(12.0, rel=0.01) and got["beside_n"] == 17
    with pytest.raises(D.CallError, match="loaded in"):
        D.shared_rates("step 1/9 loss 1 lr 1 1.0 steps/s, 1.0 s", _log([]), 300.0, 60)


def test_rates_are_reported_from_a_both_calls_files(tmp_path, capsys):
    (tmp_path / "det").mkdir()
    (tmp_path / "faces").mkdir()
    (tmp_path / "det" / "train.log").write_text(_log(_DET))
    (tmp_path / "faces" / "train.log").write_text(_log([(5.0, 200)], loaded=25))
    (tmp_path / "faces" / "val.json").write_text(json.dumps(
        [{"train_seconds": 1.0, "this_call_steps": 1},
         {"train_seconds": 300.0, "this_call_steps": 6000}]))
    assert D.main(["both", "--rates", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == ("the detector alone: 20.0 steps/s (7 intervals to 75 s); beside "
                           "the faces: 12.0 steps/s (17 intervals to 375 s), 60% of alone; "
                           "the faces: 20.0 steps/s over 300 s")
    # a log of the old kind (no seconds on its step lines) cannot tell them apart
    (tmp_path / "det" / "train.log").write_text(
        "loaded in 3s\nstep 200/60000 loss 1 lr 1e-3 9.0 steps/s\n")
    assert D.main(["both", "--rates", str(tmp_path)]) == 1
    assert "too few step lines" in capsys.readouterr().err
    (tmp_path / "faces" / "val.json").write_text("[{\"train_seconds\": ")
    assert D.main(["both", "--rates", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "cannot read the call's logs (JSONDecodeError" in err and err.count("\n") == 1
    (tmp_path / "faces" / "train.log").unlink()
    assert D.main(["both", "--rates", str(tmp_path)]) == 1
    assert "cannot read the call's logs (FileNotFoundError" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        D.main(["detector", "--rates", str(tmp_path)])
