"""Holding the camera's native libraries to the threads it is given.

OpenBLAS (numpy's matrix multiply, used by the symbol reader) starts one thread per
core when numpy is imported, and OpenCV keeps a pool of its own: left alone, the camera
takes every core and the referee's loop waits. ``limit_native_threads(n)`` must run
before numpy is first imported (``companion serve`` and ``sim`` call it first thing):
it sets the thread-count variables OpenBLAS, OpenMP and MKL read when they load, and
OpenCV's pool is set when the camera starts (``set_opencv_threads``).
"""

from __future__ import annotations

import os
import sys

ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_native_threads(threads: int = 1) -> str | None:
    """Hold BLAS/OpenMP to ``threads`` (unless the environment already says). Returns a
    one-line warning when numpy is already loaded, so the limit came too late."""
    for var in ENV_VARS:
        os.environ.setdefault(var, str(threads))
    if "numpy" in sys.modules:
        try:  # threadpoolctl, when installed, can still do it at run time
            from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]

            threadpool_limits(threads)
            return None
        except ImportError:
            return (
                f"numpy was loaded before the thread limit: BLAS may use every core "
                f"(set OPENBLAS_NUM_THREADS={threads} in the environment)"
            )
    return None


def set_opencv_threads(threads: int) -> None:
    """OpenCV's own pool (process-wide; only the camera uses OpenCV heavily)."""
    import cv2

    cv2.setNumThreads(max(0, threads))
