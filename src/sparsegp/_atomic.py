"""Files written whole or not at all: model files, the CLI's outputs and the reproductions' results.

The content goes to a temporary file in the target's directory, is flushed and synced to disk, and then renamed
over the target (``os.replace``, atomic on POSIX and Windows within one file system). A crash, a kill or a full
disk before the rename leaves the old file as it was; after it, the new file is whole. (A process killed outright,
SIGKILL or a power cut, leaves its temporary file, ``.<name>.<random>.partial`` beside the target, to remove.)
The new file keeps the old one's permission bits, or gets those the umask gives a new file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat


def _create(directory: str, name: str) -> tuple[int, str]:
    """A new temporary file beside the target, created as ``open(path, "w")`` creates one (0o666 less the umask)."""
    for _ in range(100):
        temporary = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.partial")
        try:
            return os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666
            ), temporary
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {name!r} in {directory!r}")


@contextlib.contextmanager
def replaced_atomically(path, mode: str = "wb", **open_options):
    """``with replaced_atomically(path) as f:`` writes ``f`` and then puts it at ``path`` in one rename; on any
    exception (KeyboardInterrupt included) the temporary file is removed and ``path`` is untouched."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = _create(directory, os.path.basename(path))
    try:
        with os.fdopen(fd, mode, **open_options) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileNotFoundError):  # a new file keeps the mode it was created with
            os.chmod(temporary, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _sync_directory(directory: str) -> None:
    """The rename itself on disk (POSIX); where a directory cannot be opened (Windows) the rename stands as made."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["replaced_atomically"]
