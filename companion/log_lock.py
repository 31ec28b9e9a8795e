"""One companion per log folder: `serve` holds an exclusive lock on a file in the
folder (`<log dir>/.companion.lock`, fcntl.flock) for as long as it runs, taken before
any log in it is read or opened. A second `serve` on the same folder finds it held and
stops at once, naming the first one's PID (written into the lock file), instead of
resuming the same game and writing into the same log.

The lock belongs to the open file, not to the file's existence: it goes when the
process ends, however it ends (a `kill -9` never leaves a stale lock), and the file
itself stays. Child processes started with exec (the camera's process, the
speaker's player) do not inherit the descriptor (Python opens it close-on-exec).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from companion.errors import CompanionError

LOCK_NAME = ".companion.lock"


class LogFolderInUse(CompanionError):
    """Another process holds the folder's lock."""

    def __init__(self, folder: Path, pid: int | None) -> None:
        self.folder = folder
        self.pid = pid
        who = f"PID {pid}" if pid is not None else "PID unknown"
        super().__init__(
            f"the log folder {folder} is in use by another companion ({who}); stop it first"
        )


class LogFolderLock:
    """The lock on one log folder, held while this object's descriptor is open."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self.path = folder / LOCK_NAME
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let go (closing the descriptor releases the lock); the file stays."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LogFolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder_pid(path: Path) -> int | None:
    """The PID written in a lock file, if it reads as one."""
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def lock_log_folder(folder: str | os.PathLike[str]) -> LogFolderLock:
    """Take `folder`'s lock without waiting. Raises LogFolderInUse when another process
    holds it, OSError when the lock file cannot be opened or locked at all. Writing this
    PID into the file is best effort (a full disk may refuse even those few bytes)."""
    folder = Path(folder)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise LogFolderInUse(folder, holder_pid(path)) from None
        raise
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        os.fsync(fd)
    return LogFolderLock(folder, fd)
