"""Train the learned die reader: python tools/train_reader.py [--out DIR] [--seed N].

Same as `companion train`; needs the [train] extra (pip install -e ".[train]").
"""

import sys

from companion.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
