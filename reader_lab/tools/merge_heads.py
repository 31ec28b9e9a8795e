"""Merge a detector's two output convolutions into one: python -m reader_lab merge-heads FILE...

`python -m reader_lab train` exports so; this converts detector files exported before (the
committed model's was). Both outputs come out bit for bit as before, a little sooner.
Needs the [train] extra (onnx). Each file is rewritten in place; one already merged, or a
classifier, is left as it is.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from reader_lab.train_reader import merge_heads, rewrite_files  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return rewrite_files(sys.argv[1:] if argv is None else argv, merge_heads,
                         "output convolutions now one", "nothing to merge",
                         __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
