"""The fuzz suite: seeded, a few seconds per target here (FUZZ_SECONDS to
change; benchmarks/fuzz_soak.py runs the long version and prints the figures).
0 crashes, 0 hangs, 0 silent stops is the bar for every target."""

from __future__ import annotations

import os

import fuzzing
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.events import MAX_REASON_CHARS, EventFormatError, decode_line, validate_event
from companion.loop import Referee

SECONDS = float(os.environ.get("FUZZ_SECONDS", "1.5"))
SEED = int(os.environ.get("FUZZ_SEED", "20261123"))


def test_events_through_the_gate_and_the_referee():
    assert fuzzing.fuzz_referee(SECONDS, SEED) > 0


def test_events_through_replay(tmp_path):
    assert fuzzing.fuzz_replay(SECONDS, SEED, tmp_path) > 0


def test_events_through_sim():
    assert fuzzing.fuzz_sim(SECONDS, SEED) > 0


def test_events_through_serve_input(tmp_path):
    assert fuzzing.fuzz_serve_input(SEED, tmp_path, lines=300) > 0


def test_bytes_through_the_pico_link():
    assert fuzzing.fuzz_pico(SECONDS, SEED) > 0


def test_mutated_toml_through_the_config():
    assert fuzzing.fuzz_config(SECONDS, SEED) > 0


def test_corrupted_and_truncated_logs_through_resume(tmp_path):
    assert fuzzing.fuzz_logs(SECONDS, SEED, tmp_path) > 0


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
KINDS = st.sampled_from(
    ["new_game", "heist_hide", "heist_attempt", "assault_start", "stage", "dye_pack", "buzz",
     "hostage", "backup", "loot", "steal", "empty", "impound", "tally", "sticky", "undo",
     "rejected", "clock", "note"]
)


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(kind=KINDS, fields=st.dictionaries(st.sampled_from(
    ["seat", "ts_ns", "stage", "targets", "flips", "row", "names", "players", "game", "from",
     "cash", "car", "photo_finish", "after", "clock"]), JSON, max_size=5))
def test_any_event_is_judged_never_raised(kind, fields):
    ref = Referee()
    ref.submit({"type": "new_game", "game": "vault-assault", "players": 3,
                "names": ["A", "B", "C"]})
    event = {"type": kind, **fields}
    try:
        event = validate_event(event)
    except EventFormatError as exc:
        assert 0 < len(str(exc)) <= MAX_REASON_CHARS
        return
    result = ref.submit(event)
    assert ref.internal_errors == 0, ref.last_fault
    assert result.rejection is None or 0 < len(result.rejection) <= MAX_REASON_CHARS


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=200))
def test_any_text_line_decodes_or_says_why(text):
    try:
        decode_line(text)
    except EventFormatError as exc:
        assert str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize(
    "blob", [b"\xff" * 10, b"{" * 100_000, b'{"a":"' + b"\\ud800" * 1000 + b'"}']
)
def test_bytes_lines(blob):
    with pytest.raises(EventFormatError):
        decode_line(blob)
