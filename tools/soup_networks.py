"""Average networks fine-tuned from one start: python tools/soup_networks.py OUT FILE FILE...

Writes OUT, an ONNX network whose every weight is the mean of that weight in the FILEs
(all of one graph: fine-tunes of one committed network, `companion train --init`); it is
read at one network's cost (issue 9t, `companion/vision/weight_soup.py`). Needs the
[train] extra (onnx). A file that cannot be read, or is another network, ends it with
one line naming it and 2.
"""

import sys
from pathlib import Path

from companion.vision.train_reader import InitUnusable
from companion.vision.weight_soup import soup


def main(argv: list[str], say=print) -> int:
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
    sys.exit(main(sys.argv[1:]))
