"""Store ONNX networks' weights at half precision: python -m reader_lab half-weights FILE...

`python -m reader_lab train` exports so; this converts files exported before (the
committed model's were). Needs the [train] extra (onnx). Each file is rewritten in place;
one already converted is left as it is.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from reader_lab.train_reader import rewrite_files, store_half  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    return rewrite_files(sys.argv[1:] if argv is None else argv, store_half,
                         "weights now half precision", "already half precision",
                         __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
