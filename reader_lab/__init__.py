"""The learned die reader's lab: training, tuning, the photo sets and their splits,
audits, quantisation and weight tools, and the benchmarks that measure the reader.

Not part of the companion: the runtime wheel ships only ``companion`` (the reader's run
time is ``companion.vision.learned`` and ``companion.vision.fewshot``, which never import
anything here). Run from the repository root: ``python -m reader_lab COMMAND``.
"""
