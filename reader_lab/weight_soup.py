"""Weight soups: one network whose every weight is the mean of the same weight in
networks fine-tuned from one start (issue 9t).

Networks fine-tuned from the same ONNX file (``python -m reader_lab train --init``, batch norm
frozen, so every export keeps its batch norms folded alike) lie close enough that the
mean of their weights is a network too, read at one network's cost. ``soup`` makes one
from ONNX files of one graph (the same nodes and tensor names and shapes); the weights
are averaged in 32-bit and stored as the first file stores them (16-bit where it keeps
16-bit, issue 8o). Needs the [train] extra (onnx). Files that are not of one graph are
refused with one line naming the first that differs, as are files whose inputs or
marks (how their crops are cut) differ.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reader_lab.train_reader import InitUnusable, _read_onnx


def _graph_key(model) -> tuple:
    """What must match for two files' weights to mean the same thing: the nodes, the
    inputs as declared (a 48 px and a 64 px classifier hold weights of the same shapes)
    and the file's marks (``crop_filter``, ``crop_span``: how its crops are cut)."""
    nodes = [(n.op_type, tuple(n.input), tuple(n.output)) for n in model.graph.node]
    inputs = [(i.name, str(i.type)) for i in model.graph.input]
    marks = sorted((p.key, p.value) for p in model.metadata_props)
    return nodes, inputs, marks


def soup(files: list[Path], out: Path, weights: list[float] | None = None) -> int:
    """Write to ``out`` the network whose weights are the (weighted) mean of ``files``'
    weights; returns how many tensors were averaged. Raises InitUnusable (a ValueError)
    naming a file that cannot be read or is not of the first file's graph, or weights
    that do not fit the files."""
    import onnx
    from onnx import numpy_helper

    if len(files) < 2:
        raise InitUnusable("a soup needs at least two networks")
    if weights is None:
        weights = [1.0] * len(files)
    if len(weights) != len(files) or min(weights) < 0 or sum(weights) <= 0:
        raise InitUnusable(f"soup weights {weights}: need one share >= 0 per network, "
                           "not all 0")
    models = [_read_onnx(f) for f in files]
    first = models[0]
    if not first.graph.node:
        raise InitUnusable(f"{files[0]}: not an ONNX network (no nodes in it)")
    shapes = {t.name: (tuple(t.dims), t.data_type) for t in first.graph.initializer}
    for path, model in zip(files[1:], models[1:], strict=True):
        other = {t.name: (tuple(t.dims), t.data_type) for t in model.graph.initializer}
        if _graph_key(model) != _graph_key(first) or other != shapes:
            raise InitUnusable(f"{path}: not the same network as {files[0]} "
                               "(its nodes, inputs, marks or weight tensors differ)")
    share = np.asarray(weights, dtype=np.float64) / float(sum(weights))
    arrays = [{t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
              for m in models]
    averaged = 0
    for tensor in first.graph.initializer:
        values = [a[tensor.name] for a in arrays]
        if not np.issubdtype(values[0].dtype, np.floating):
            continue  # shapes and indices stay as the first file has them
        mean = sum(s * v.astype(np.float64) for s, v in zip(share, values, strict=True))
        tensor.CopyFrom(numpy_helper.from_array(mean.astype(values[0].dtype), tensor.name))
        averaged += 1
    onnx.checker.check_model(first)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(first, str(out))
    return averaged
