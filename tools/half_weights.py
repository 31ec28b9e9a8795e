"""Store ONNX networks' weights at half precision: python tools/half_weights.py FILE...

`companion train` exports so since issue 8o; this converts files exported before (the
committed model's were, in issue 8o). Needs the [train] extra (onnx). Each file is
rewritten in place; one already converted is left as it is.
"""

import sys
from pathlib import Path

from companion.vision.train_reader import InitUnusable, store_half

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.splitlines()[0])
        sys.exit(2)
    for name in sys.argv[1:]:
        try:
            changed = store_half(Path(name))
        except (InitUnusable, OSError) as exc:  # unreadable or unwritable: names the file
            print(exc)
            sys.exit(2)
        state = "weights now half precision" if changed else "already half precision"
        print(f"{name}: {state}")
