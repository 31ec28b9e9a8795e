"""Store ONNX networks' weights at half precision: python tools/half_weights.py FILE...

`companion train` exports so since issue 8o; this converts files exported before (the
committed model's were, in issue 8o). Needs the [train] extra (onnx). Each file is
rewritten in place; one already converted is left as it is.
"""

import sys
from pathlib import Path

from companion.vision.train_reader import InitUnusable, _first_line, store_half

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.splitlines()[0])
        sys.exit(2)
    for name in sys.argv[1:]:
        try:
            changed = store_half(Path(name))
        except InitUnusable as exc:  # names the file itself
            print(exc)
            sys.exit(2)
        except Exception as exc:  # noqa: BLE001 - a missing or foreign file: say which
            print(f"{name}: cannot convert: {_first_line(exc)}")
            sys.exit(2)
        state = "weights now half precision" if changed else "already half precision"
        print(f"{name}: {state}")
