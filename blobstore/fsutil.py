"""Small filesystem primitives with the store's durability and privacy rules.

Blobs hold tool output, which may contain secrets: files are 0600 and folders
0700, set explicitly so a permissive umask cannot widen them.  Temp files are
created inside the store (same filesystem, so ``rename`` is atomic) and carry
an exclusive ``flock`` while their writer is alive, which lets the doctor tell
an in-flight write from the leftover of a killed process.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

FILE_MODE = 0o600
DIR_MODE = 0o700
TEMP_SUFFIX = ".tmp"


def ensure_dir(path: Path) -> bool:
    """Create ``path`` (and parents inside the store) with mode 0700; True if it was created.

    A new folder's own entry is durable only once its parent is fsync'ed:
    callers that rename durable files into it do that.
    """
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        if not path.is_dir():
            raise
        return False
    except FileNotFoundError:
        ensure_dir(path.parent)
        os.mkdir(path, DIR_MODE)
    os.chmod(path, DIR_MODE)
    return True


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_temp(tmp_dir: Path, prefix: str) -> tuple[int, Path]:
    """Create an exclusive, locked, 0600 temp file; return (fd, path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(16):
        path = tmp_dir / f"{prefix}-{os.getpid()}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
        try:
            fd = os.open(path, flags, FILE_MODE)
        except FileExistsError:
            continue
        try:
            os.fchmod(fd, FILE_MODE)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BaseException:
            os.close(fd)
            remove_quietly(path)
            raise
        return fd, path
    raise FileExistsError(f"could not create a unique temp file in {tmp_dir}")


def temp_in_use(path: Path) -> bool:
    """True when a live writer still holds the temp file's lock."""
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def write_all(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` until everything is written (short writes happen on full disks)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - defensive
            raise OSError("write returned 0 bytes")
        view = view[written:]


def write_durable(path: Path, data: bytes, tmp_dir: Path, sync: bool = True) -> None:
    """Atomically replace ``path`` with ``data`` (temp, fsync, rename, fsync dir).

    ``sync=False`` skips both fsyncs: for self-checking files that can be
    rebuilt (sidecars), where the caller fsyncs the folder after a later rename.
    """
    fd, tmp = create_temp(tmp_dir, "side")
    try:
        write_all(fd, data)
        if sync:
            os.fsync(fd)
        os.replace(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise
    finally:
        os.close(fd)
    if sync:
        fsync_dir(path.parent)


def append_line(path: Path, line: bytes) -> None:
    """Append one whole line to ``path`` (created 0600), without fsync: for rebuildable records.

    A write cut short (a full disk, a killed process) must never glue the next
    record onto its torn half.  So, under an exclusive ``flock`` that every
    appender takes: a failed write is cut back to where it began, and a file
    that still ends without a newline (a tear nobody could cut back) gets one
    before this record, so the torn half stays a line of its own, which
    readers skip, and this record stays whole.
    """
    data = line if line.endswith(b"\n") else line + b"\n"
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        start = os.fstat(fd).st_size
        if start and _byte_at(fd, start - 1) != b"\n":
            data = b"\n" + data
        try:
            write_all(fd, data)
        except OSError:
            _cut_back(fd, start)
            raise
    finally:
        os.close(fd)  # releases the lock


def _byte_at(fd: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - no pread (Windows); O_APPEND still writes at the end
    return os.read(fd, 1)


def _cut_back(fd: int, size: int) -> None:
    """Best effort: drop the torn tail a failed append left (the next append copes if this fails too)."""
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass


def remove_quietly(path: Path) -> bool:
    """Unlink ``path``; True if something was removed.  Used on cleanup paths."""
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def mode_of(path: Path) -> int:
    return os.stat(path, follow_symlinks=False).st_mode & 0o777
