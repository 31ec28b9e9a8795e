"""The camera's process as a program of its own (companion.vision.child); its work with
the referee is tested through VisionProcess (test_process.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from multiprocessing.connection import Pipe

import pytest
from fresh_process import in_fresh_process

from companion.vision.child import BOOTSTRAP, main


def test_the_camera_process_imports_no_event_loop():
    """What the camera's process imports to read frames with the learned reader: no
    asyncio (nor ssl, which asyncio brings): 3 MiB it has no use for."""
    said = in_fresh_process(
        "import sys\n"
        "import companion.vision.child\n"
        "from companion.vision.frames import open_source\n"
        "from companion.vision.pipeline import Pipeline\n"
        "from companion.vision.worker import ChangeGate, VisionWorker\n"
        "from companion.vision.profile import load_profile\n"
        "from companion.vision.readers import load_pip_reader\n"
        "load_pip_reader('learned', 1)\n"
        "print(sorted(m for m in ('asyncio', 'ssl', 'aiohttp') if m in sys.modules))\n"
    )
    assert said == "[]"


def test_a_parent_gone_before_its_orders_ends_the_child_quietly():
    results_read, results = Pipe(duplex=False)
    orders, orders_write = Pipe(duplex=False)
    orders_write.close()  # the referee went before saying what to read
    assert main([str(os.dup(results.fileno()))], orders) == 1
    results.close()
    with pytest.raises(EOFError):  # nothing said, and the child's end closed
        results_read.recv()


def test_the_child_runs_the_parents_companion_whatever_its_working_folder(tmp_path):
    """A folder holding another ``companion`` (a checkout, a copy) as the working folder
    of the referee: the child takes the parent's import path before it imports this
    package, and puts no working folder before it (``-P``)."""
    other = tmp_path / "companion"
    other.mkdir()
    (other / "__init__.py").write_text("raise SystemExit('the wrong companion')\n")
    (other / "vision").mkdir()
    (other / "vision" / "__init__.py").write_text("")
    orders, orders_write = Pipe(duplex=False)
    results_read, results = Pipe(duplex=False)
    fds = (results.fileno(), orders.fileno())
    child = subprocess.Popen([sys.executable, "-P", "-c", BOOTSTRAP, *map(str, fds)],
                             pass_fds=fds, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    results.close()
    orders.close()
    orders_write.send([p for p in sys.path if p not in ("", str(tmp_path))])
    orders_write.close()  # then gone, before the arguments
    _, err = child.communicate(timeout=60)
    assert child.returncode == 1 and "wrong companion" not in err, err
