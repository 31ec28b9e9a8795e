"""``python -m reader_lab COMMAND [ARGS]``: the lab's command line (``reader_lab.cli``)."""

import sys

from reader_lab.cli import main

sys.exit(main())
