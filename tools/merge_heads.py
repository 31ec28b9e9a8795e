"""Merge a detector's two output convolutions into one: python tools/merge_heads.py FILE...

`companion train` exports so since issue 9p; this converts detector files exported before
(the committed model's was, in issue 9p). Both outputs come out bit for bit as before, a
little sooner. Needs the [train] extra (onnx). Each file is rewritten in place; one
already merged, or a classifier, is left as it is.
"""

import sys

from companion.vision.train_reader import merge_heads, rewrite_files

if __name__ == "__main__":
    sys.exit(rewrite_files(sys.argv[1:], merge_heads, "output convolutions now one",
                           "nothing to merge", __doc__.splitlines()[0]))
