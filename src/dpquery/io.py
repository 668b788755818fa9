"""File output that never leaves a partial file and never overwrites by accident.

Every file is written to a temporary file beside its destination, then renamed onto it. The
temporary file is created private (mode 0600, :func:`tempfile.mkstemp`) while it is written;
before the rename it gets the mode any new file would get, ``0o666 & ~umask``, so a file
dpquery writes is as readable as one written by ``open(path, "w")`` (0644 under umask 022).
"""

from __future__ import annotations

import os
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dpquery.errors import DPQueryError

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it (``/proc/self/status`` on Linux); where
    that file is absent, set and restored at once under a lock (``os.umask`` is the only
    portable reader)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path, *, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    With ``overwrite=False`` an existing ``path`` is an error, raised before any work.
    """
    path = Path(path)
    if path.is_dir():
        raise DPQueryError(f"cannot write {path}: it is a folder; give a file name")
    if not overwrite and path.exists():
        raise DPQueryError(f"{path} already exists; refusing to overwrite it")
    if not path.parent.exists():
        raise DPQueryError(f"cannot write {path}: folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~current_umask())
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


def atomic_write(
    path: str | Path, write: Callable[[Path], object], *, overwrite: bool = True
) -> None:
    """Call ``write(tmp_path)`` and move the result onto ``path`` atomically."""
    with atomic_path(path, overwrite=overwrite) as tmp:
        write(tmp)


def npz_error(path: str | Path, what: str, exc: BaseException) -> DPQueryError:
    """A one-line error for an ``.npz`` file that cannot be read as ``what``.

    numpy's advice to load pickled data "unsafely with allow_pickle" is not passed on: a
    dpquery file never holds pickles, and loading one could run arbitrary code.
    """
    if isinstance(exc, zipfile.BadZipFile | EOFError):
        reason = "truncated or not an .npz archive"
    elif "pickle" in str(exc):
        reason = "it holds pickled Python objects; dpquery never loads those: they can run code"
    else:
        reason = str(exc)
    return DPQueryError(f"{path}: not a dpquery {what} file ({reason})")


def atomic_write_text(path: str | Path, text: str, *, overwrite: bool = True) -> None:
    atomic_write(path, lambda p: p.write_text(text), overwrite=overwrite)
