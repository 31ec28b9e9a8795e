"""Store ONNX networks' weights at half precision: python tools/half_weights.py FILE...

`companion train` exports so since issue 8o; this converts files exported before (the
committed model's were, in issue 8o). Needs the [train] extra (onnx). Each file is
rewritten in place; one already converted is left as it is.
"""

import sys

from companion.vision.train_reader import rewrite_files, store_half

if __name__ == "__main__":
    sys.exit(rewrite_files(sys.argv[1:], store_half, "weights now half precision",
                           "already half precision", __doc__.splitlines()[0]))
