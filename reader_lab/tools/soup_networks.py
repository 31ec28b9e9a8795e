"""Average networks fine-tuned from one start: python -m reader_lab soup-networks OUT FILE FILE...

Writes OUT, an ONNX network whose every weight is the mean of that weight in the FILEs
(all of one graph: fine-tunes of one committed network, `python -m reader_lab train
--init`); it is read at one network's cost (``reader_lab/weight_soup.py``). Needs the
[train] extra (onnx). A file that cannot be read, or is another network, ends it with
one line naming it and 2.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo root: runs by path too

from reader_lab.train_reader import InitUnusable  # noqa: E402
from reader_lab.weight_soup import soup  # noqa: E402


def main(argv: list[str] | None = None, say=print) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3:
        say(__doc__.splitlines()[0])
        return 2
    out, files = Path(argv[0]), [Path(a) for a in argv[1:]]
    try:
        n = soup(files, out)
    except (InitUnusable, OSError) as exc:
        say(exc)
        return 2
    say(f"{out}: {n} weight tensors, each the mean of {len(files)} networks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
