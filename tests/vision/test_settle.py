"""The settle tracker: still dice count after N frames; moving dice and hands do not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.vision.settle import SettleTracker, hand_boxes, hand_note
from companion.vision.types import DieReading, FrameReading


def die(x, y, face="4", dice_set="pip", size=40):
    h = size // 2
    return DieReading(dice_set, face, 0.95, (int(x) - h, int(y) - h, int(x) + h, int(y) + h),
                      (float(x), float(y)))


def frame(*dice, index=0, notes=()):
    return FrameReading(1280, 720, tuple(dice), False, index, tuple(notes))


def faces(reading):
    return sorted((d.dice_set, d.face) for d in reading.dice)


def feed(tracker, readings):
    return [tracker.update(r) for r in readings]


def test_still_die_settles_after_n_frames():
    tracker = SettleTracker(frames=3)
    out = feed(tracker, [frame(die(100, 100), index=i) for i in range(3)])
    assert [len(r.dice) for r in out] == [0, 0, 1]
    assert tracker.changed
    assert out[2].frame_index == 2
    tracker.update(frame(die(101, 99), index=3))  # jitter within tolerance
    assert not tracker.changed
    assert faces(tracker.settled) == [("pip", "4")]


def test_the_frame_count_is_configurable():
    for n in (1, 2, 5):
        tracker = SettleTracker(frames=n)
        counts = [len(tracker.update(frame(die(50, 50))).dice) for _ in range(6)]
        assert counts.index(1) == n - 1


def test_moving_die_is_ignored():
    tracker = SettleTracker(frames=3)
    for i in range(20):  # rolling across the table, 15 px a frame (die is 40 px)
        settled = tracker.update(frame(die(100 + 15 * i, 200), index=i))
        assert settled.dice == ()
    # it stops: three frames later it counts
    out = feed(tracker, [frame(die(400, 200)) for _ in range(3)])
    assert [len(r.dice) for r in out] == [0, 0, 1]


def test_slow_drift_never_settles_against_where_it_started():
    """4 px a frame is under the tolerance (10 px) frame to frame, not over 4 frames."""
    tracker = SettleTracker(frames=4, tolerance=0.25)
    for i in range(40):
        assert tracker.update(frame(die(100 + 4 * i, 100))).dice == ()
    # the same die sliding 2 px a frame is still for 4 frames (6 px) and settles
    tracker = SettleTracker(frames=4, tolerance=0.25)
    assert [len(tracker.update(frame(die(100 + 2 * i, 100))).dice) for i in range(4)] == [
        0, 0, 0, 1]


def test_rolling_face_changes_do_not_settle():
    tracker = SettleTracker(frames=3)
    for i, f in enumerate("1625341625"):
        assert tracker.update(frame(die(300, 300, face=f), index=i)).dice == ()


def test_face_change_in_place_replaces_the_settled_face():
    tracker = SettleTracker(frames=3)
    feed(tracker, [frame(die(200, 200, "3")) for _ in range(3)])
    assert faces(tracker.settled) == [("pip", "3")]
    out = feed(tracker, [frame(die(200, 200, "5")) for _ in range(3)])
    # one misread frame changes nothing; the new face replaces the old after N frames
    assert [faces(r) for r in out] == [[("pip", "3")], [("pip", "3")], [("pip", "5")]]
    assert tracker.changed


def test_single_misread_frame_changes_nothing():
    tracker = SettleTracker(frames=3)
    feed(tracker, [frame(die(200, 200, "2"), die(400, 200, "6")) for _ in range(3)])
    before = tracker.settled.dice
    tracker.update(frame(die(200, 200, "unknown"), die(400, 200, "6")))
    assert not tracker.changed
    tracker.update(frame(die(400, 200, "6")))  # and one dropped frame
    assert not tracker.changed
    tracker.update(frame(die(200, 200, "2"), die(400, 200, "6")))
    assert tracker.settled.dice == before


def test_die_picked_up_leaves_after_n_frames():
    tracker = SettleTracker(frames=3)
    feed(tracker, [frame(die(200, 200), die(500, 300, "1")) for _ in range(3)])
    out = feed(tracker, [frame(die(500, 300, "1")) for _ in range(3)])
    assert [len(r.dice) for r in out] == [2, 2, 1]
    assert faces(out[-1]) == [("pip", "1")]


def test_hand_over_the_table_neither_adds_nor_removes():
    tracker = SettleTracker(frames=3)
    feed(tracker, [frame(die(200, 200, "6"), die(900, 500, "2")) for _ in range(3)])
    hand = hand_note((100, 100, 400, 400))
    # the hand hides the first die and its knuckles read as dice; five frames of it
    for i in range(5):
        out = tracker.update(frame(die(250, 260, "5"), die(900, 500, "2"), index=i,
                                   notes=[hand]))
        assert faces(out) == [("pip", "2"), ("pip", "6")]
        assert not any(n.startswith("hand:") for n in out.notes)
    # the hand leaves: the die under it was never lost
    tracker.update(frame(die(200, 200, "6"), die(900, 500, "2")))
    assert faces(tracker.settled) == [("pip", "2"), ("pip", "6")]


def test_dice_away_from_the_hand_still_settle():
    tracker = SettleTracker(frames=3)
    hand = hand_note((0, 0, 300, 300))
    for _ in range(3):
        tracker.update(frame(die(100, 100, "3"), die(800, 500, "4"), notes=[hand]))
    assert faces(tracker.settled) == [("pip", "4")]


def test_a_blob_far_bigger_than_the_dice_is_not_a_die():
    tracker = SettleTracker(frames=2)
    blob = die(600, 400, "5", size=200)
    feed(tracker, [frame(die(100, 100), die(200, 100), die(300, 100), blob) for _ in range(2)])
    assert len(tracker.settled.dice) == 3
    assert all(d.box[2] - d.box[0] == 40 for d in tracker.settled.dice)


def test_two_identical_dice_side_by_side_are_two_dice():
    tracker = SettleTracker(frames=2)
    feed(tracker, [frame(die(100, 100, "6"), die(141, 100, "6")) for _ in range(2)])
    assert len(tracker.settled.dice) == 2


def test_hand_notes_round_trip_and_bad_notes_are_ignored():
    assert hand_boxes((hand_note((1, 2, 30, 40)), "mat:0,1,2,3", "hand:oops")) == [(1, 2, 30, 40)]


def test_reset_forgets():
    tracker = SettleTracker(frames=1)
    tracker.update(frame(die(10, 10)))
    tracker.reset()
    assert tracker.settled.dice == ()
    assert len(tracker.update(frame(die(10, 10))).dice) == 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 15), st.integers(0, 8), st.sampled_from("123456")),
             min_size=1, max_size=6, unique_by=lambda t: (t[0], t[1])),
    st.integers(1, 5),
)
def test_a_still_table_settles_exactly_after_n_frames(cells, n):
    dice = [die(40 + 80 * cx, 40 + 80 * cy, f) for cx, cy, f in cells]
    tracker = SettleTracker(frames=n)
    for i in range(n + 2):
        settled = tracker.update(frame(*dice, index=i))
        if i < n - 1:
            assert settled.dice == ()
        else:
            assert faces(settled) == sorted(("pip", f) for *_, f in cells)


def test_a_die_read_now_with_a_face_now_unknown_settles_unknown_then_its_face():
    tracker = SettleTracker(frames=3)
    out = feed(tracker, [frame(die(200, 200, f)) for f in ("3", "unknown", "3", "unknown")])
    # it does not vanish (each change of face used to start its run over)
    assert [faces(r) for r in out] == [[], [], [("pip", "unknown")], [("pip", "unknown")]]
    out = feed(tracker, [frame(die(200, 200, "3")) for _ in range(3)])  # read surely now
    assert [faces(r) for r in out] == [[("pip", "unknown")], [("pip", "unknown")],
                                       [("pip", "3")]]
    # two faces in turn are a rolling die, as before, however many unknowns between
    tracker = SettleTracker(frames=3)
    for f in ("3", "unknown", "5", "unknown", "3", "5") * 2:
        settled = tracker.update(frame(die(200, 200, f)))
    assert faces(settled) != [("pip", "3")] and faces(settled) != [("pip", "5")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=30), st.integers(1, 5),
       st.sampled_from("123456"))
def test_a_still_die_read_with_one_face_or_unknown_is_always_there_after_n_frames(
        unread, n, f):
    tracker = SettleTracker(frames=n)
    for i, u in enumerate(unread):
        settled = tracker.update(frame(die(300, 300, "unknown" if u else f), index=i))
        if i < n - 1:
            assert settled.dice == ()
        else:
            assert faces(settled) in ([("pip", f)], [("pip", "unknown")])
    # read with its face from now on, it is that face within 2n - 1 frames: a run still
    # going takes up to n - 1 of them and settles unknown, then the face replaces it
    for i in range(len(unread), len(unread) + 2 * n - 1):
        settled = tracker.update(frame(die(300, 300, f), index=i))
        allowed = [[("pip", f)], [("pip", "unknown")]] + ([[]] if i < n - 1 else [])
        assert faces(settled) in allowed
    assert faces(settled) == [("pip", f)]
