"""Few-shot scoring by each upright network's own prototypes (the "members" embedding),
and the checks that keep a profile to the networks that made it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from learned_model import needs_model

from companion.vision.fewshot import (
    MEMBER_SHARPNESS,
    FewShotError,
    FewShotReader,
    face_scores,
    load_fewshot,
    prototype,
)
from companion.vision.learned import EMBED_SIZE
from reader_lab.render_dice import render_dice_scene


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _members(rng, networks: int, n: int) -> np.ndarray:
    """n embeddings of ``networks`` unit parts side by side."""
    return _unit(rng.normal(size=(n, networks, EMBED_SIZE))).reshape(n, -1)


def test_members_scores_are_each_networks_softmax_averaged():
    rng = np.random.default_rng(1)
    protos = _members(rng, 3, 4)
    dice = _members(rng, 3, 5)
    got = face_scores(dice, protos, "members")
    assert got.shape == (5, 4)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-6)
    # by hand, network by network
    want = np.zeros((5, 4))
    for m in range(3):
        part = slice(m * EMBED_SIZE, (m + 1) * EMBED_SIZE)
        sims = MEMBER_SHARPNESS * dice[:, part] @ protos[:, part].T
        z = np.exp(sims - sims.max(axis=1, keepdims=True))
        want += z / z.sum(axis=1, keepdims=True) / 3
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert face_scores(dice[:0], protos, "members").shape == (0, 4)


def test_a_die_the_networks_agree_on_scores_above_one_they_split_on():
    """Both dice are as like face 0 on average; only the agreeing one is sure of it."""
    rng = np.random.default_rng(2)
    protos = _members(rng, 2, 3).reshape(3, 2, EMBED_SIZE)
    agree = _unit(protos[0] + protos[1] * 0.2)  # near face 0 in both networks
    split = np.stack([protos[0, 0], protos[1, 1]])  # face 0 in one, face 1 in the other
    dice = np.stack([agree.reshape(-1), split.reshape(-1)])
    scores = face_scores(dice, protos.reshape(3, -1), "members")
    assert scores[0].argmax() == 0
    assert scores[0].max() > 0.9 > 0.6 > scores[1].max()


def test_plain_embeddings_score_by_cosine():
    rng = np.random.default_rng(3)
    protos, dice = _unit(rng.normal(size=(4, 64))), _unit(rng.normal(size=(2, 64)))
    for kind in ("turned", "upright"):
        np.testing.assert_allclose(face_scores(dice, protos, kind), dice @ protos.T)


def test_a_members_prototype_is_a_unit_per_network():
    rng = np.random.default_rng(4)
    shots = [rng.normal(size=3 * EMBED_SIZE) for _ in range(5)]
    p = prototype(shots, "members").reshape(3, EMBED_SIZE)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, rtol=1e-6)
    mean = np.mean(shots, axis=0).reshape(3, EMBED_SIZE)
    np.testing.assert_allclose(p, _unit(mean), rtol=1e-6)
    whole = prototype(shots, "upright")
    assert np.linalg.norm(whole) == pytest.approx(1.0)


@pytest.mark.parametrize("data, says", [
    ({"embedding": "members", "upright_files": "classifier_upright.onnx"},
     "key 'upright_files' must be a list of network file names"),
    ({"embedding": "members", "upright_files": []},
     "key 'upright_files' must be a list of network file names"),
    ({"embedding": "members", "prototypes": {"1": [0.5] * 70, "2": [0.5] * 70}},
     f"'members' prototypes must hold {EMBED_SIZE} numbers per network"),
    ({"fingerprints": ["classifier.onnx"]},
     "key 'fingerprints' must map network file names to fingerprints"),
    ({"fingerprints": {"classifier.onnx": 5}},
     "key 'fingerprints' must map network file names to fingerprints"),
])
def test_a_bad_members_profile_is_refused_in_one_line(tmp_path, data, says):
    doc = {"prototypes": {"1": [1.0] * 128, "2": [0.0] * 128}, **data}
    (tmp_path / "prototypes.json").write_text(json.dumps(doc))
    with pytest.raises(FewShotError) as exc:
        load_fewshot(tmp_path)
    assert says in str(exc.value) and "\n" not in str(exc.value)
    assert str(tmp_path / "prototypes.json") in str(exc.value)


@needs_model
def test_members_embedding_is_each_upright_networks_unit_embedding(reader):
    image, dice = render_dice_scene(7_000_003)
    boxes = [d.box for d in dice]
    probs, embs = reader.classify_all(image, boxes, ("upright", "members"))
    networks = len(reader.upright_files)
    assert networks >= 2
    assert embs["members"].shape == (len(boxes), networks * EMBED_SIZE)
    parts = embs["members"].reshape(len(boxes), networks, EMBED_SIZE)
    np.testing.assert_allclose(np.linalg.norm(parts, axis=2), 1.0, rtol=1e-4)
    # "upright" is the same networks' parts averaged and made a unit again
    np.testing.assert_allclose(embs["upright"], _unit(parts.mean(axis=1)), atol=1e-5)
    np.testing.assert_allclose(probs, reader.face_probabilities(image, boxes), atol=1e-6)
    _, none = reader.classify_all(image, [], ("members",))
    assert none["members"].shape == (0, networks * EMBED_SIZE)


def _members_profile(reader, files):
    rng = np.random.default_rng(5)
    protos = _members(rng, len(reader.upright_files), 2)
    return {"embedding": "members", "upright_files": files,
            "prototypes": {"1": protos[0].tolist(), "2": protos[1].tolist()}}


@needs_model
def test_a_members_profile_must_come_from_this_models_networks(reader):
    FewShotReader(_members_profile(reader, list(reader.upright_files)), reader=reader)
    other = list(reversed(reader.upright_files))
    with pytest.raises(FewShotError) as exc:
        FewShotReader(_members_profile(reader, other), reader=reader)
    assert "built with upright classifiers" in str(exc.value)
    assert "companion calibrate --from-manifest" in str(exc.value)
    short = _members_profile(reader, list(reader.upright_files))
    short["prototypes"] = {f: v[:EMBED_SIZE] for f, v in short["prototypes"].items()}
    with pytest.raises(FewShotError) as exc:
        FewShotReader(short, reader=reader)
    assert str(exc.value).startswith(f"the profile's prototypes hold {EMBED_SIZE} numbers")
    assert "\n" not in str(exc.value)


@needs_model
def test_a_members_profile_reads_a_scene_by_its_networks_scores(reader):
    """Prototypes made from a scene's own dice read that scene's dice back."""
    image, dice = render_dice_scene(7_000_004)
    boxes = [d.box for d in dice]
    _, embs = reader.classify_all(image, boxes, ("members",))
    faces = sorted({d.face for d in dice})
    protos = {f: prototype([e for e, d in zip(embs["members"], dice, strict=True)
                            if d.face == f], "members").tolist() for f in faces}
    few = FewShotReader({"embedding": "members", "prototypes": protos,
                         "upright_files": list(reader.upright_files),
                         "min_similarity": 0.3, "min_margin": 0.0,
                         "det_threshold": 0.3}, reader=reader)
    got = few(image)
    assert got and all(0.0 <= r.confidence <= 1.0 for r in got)
    right = sum(1 for r in got for d in dice
                if d.box[0] <= r.centre[0] <= d.box[2] and d.box[1] <= r.centre[1] <= d.box[3]
                and r.face == d.face)
    assert right >= 0.8 * len(dice)


@needs_model
def test_the_reader_fingerprints_each_classifier_file_by_its_bytes(reader):
    import hashlib

    from companion.vision.learned import MODEL_DIR, TURNED, network_fingerprint

    assert list(reader.fingerprints) == [TURNED, *reader.upright_files]
    for name, print_ in reader.fingerprints.items():
        assert print_ == hashlib.sha256((MODEL_DIR / name).read_bytes()).hexdigest()[:16]
        assert network_fingerprint(MODEL_DIR / name) == print_
    assert len(set(reader.fingerprints.values())) == len(reader.fingerprints)


@needs_model
def test_a_profile_whose_network_file_now_holds_other_weights_is_refused(tmp_path, reader):
    """A retrained model may put new weights in classifier_upright.onnx under the same
    name: a profile records each embedding network's fingerprint, and one made with the
    old weights is refused in one line naming the file, where names alone would let it
    read wrong."""
    import shutil

    from companion.vision.learned import MODEL_DIR, LearnedReader

    d = tmp_path / "model"
    shutil.copytree(MODEL_DIR, d)
    # another network with the same crops under the first one's name
    same = [n for n in reader.upright_files[1:]
            if reader.crop_shapes.get(n) == reader.crop_shapes.get(reader.upright_files[0])]
    shutil.copy(MODEL_DIR / same[0], d / reader.upright_files[0])
    other = LearnedReader(d)
    assert other.upright_files == reader.upright_files  # the same names
    profile = _members_profile(reader, list(reader.upright_files))
    profile["fingerprints"] = {n: reader.fingerprints[n] for n in reader.upright_files}
    FewShotReader(profile, reader=reader)
    with pytest.raises(FewShotError) as exc:
        FewShotReader(profile, reader=other)
    message = str(exc.value)
    assert f"built with another {reader.upright_files[0]}" in message
    assert reader.fingerprints[reader.upright_files[0]] in message
    assert "companion calibrate --from-manifest" in message and "\n" not in message
    # older profiles keep no fingerprints: checked by the names alone
    FewShotReader({k: v for k, v in profile.items() if k != "fingerprints"}, reader=other)
    # a fingerprint of a network the embedding does not use is not asked about
    turned = {"embedding": "turned", "prototypes": {"1": [1.0] + [0.0] * 63,
                                                   "2": [0.0, 1.0] + [0.0] * 62},
              "fingerprints": {**profile["fingerprints"],
                               "classifier.onnx": reader.fingerprints["classifier.onnx"]}}
    FewShotReader(turned, reader=other)
    turned["fingerprints"]["classifier.onnx"] = "0" * 16
    with pytest.raises(FewShotError, match="built with another classifier.onnx"):
        FewShotReader(turned, reader=other)


def test_nearest_faces_readings_hold_plain_numbers():
    """As the learned reader's: a few-shot reading pickled from the camera's
    process must not need numpy in the referee's."""
    import pickle

    from companion.vision.fewshot import nearest_faces

    box = tuple(np.float32(v) for v in (4.5, 6.25, 40.0, 44.75, 0.8))
    probs = np.array([[0.5, 0.3, 0.1, 0.05, 0.03, 0.01, 0.01]], np.float32)
    emb = np.array([[1.0, 0.0]], np.float32)
    protos = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    (r,) = nearest_faces([box], probs, emb, ["alarm", "escape"], protos, 0.5, 0.1)
    assert r.face == "escape" and r.confidence == 1.0
    assert [type(v) for v in (r.confidence, *r.centre)] == [float] * 3
    assert b"numpy" not in pickle.dumps(r)
