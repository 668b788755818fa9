"""Run the ``dpquery`` command for the CLI tests: in this process, or in a fresh interpreter.

:func:`dpquery_cli` calls :func:`dpquery.cli.main` in the test process, as the entry point
does (``sys.exit(main())``), with stdout and stderr captured, stdin empty, the working folder
and the environment set for the call and restored after it, and the warnings filters of a
fresh interpreter: a test that checks messages, exit codes or files learns the same from it
as from a subprocess, without the interpreter's start-up (pandas, numba, scipy: seconds on a
slow machine, on each of about two hundred calls).

:func:`dpquery_process` runs the real command in a fresh interpreter. The tests of what only
a process shows use it: the entry point itself, and commands that start dask (its cluster's
threads and logging handlers outlive a call). :func:`dpquery_cli` hands argv that names dask
to it.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dpquery
from dpquery.cli import main

# The package under test, whatever the installed entry point points at.
_SRC = str(Path(dpquery.__file__).resolve().parents[1])
_MAIN = "import sys; from dpquery.cli import main; sys.exit(main())"
# argv words that start a dask cluster or client: such a call runs in a subprocess.
_PROCESS_WORDS = frozenset({"dask"})


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def dpquery_cli(
    *argv: str, cwd: Path | None = None, env: dict[str, str | None] | None = None
) -> Result:
    """``dpquery ARGV`` run by :func:`dpquery.cli.main` in this process (a subprocess when
    argv names dask); ``env`` sets (or, with None, removes) environment variables."""
    if _PROCESS_WORDS.intersection(argv):
        return dpquery_process(*argv, cwd=cwd, env=env)
    out, err = io.StringIO(), io.StringIO()
    with (
        _environment(env or {}),
        _working_folder(cwd),
        _fresh_warnings(),
        _streams(out, err),
    ):
        code = _exit_code(list(argv))
    return Result(code, out.getvalue(), err.getvalue())


def dpquery_process(
    *argv: str, cwd: Path | None = None, env: dict[str, str | None] | None = None
) -> Result:
    """``dpquery ARGV`` in a fresh interpreter; ``env`` sets (or, with None, removes)
    environment variables."""
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join([_SRC, environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    for key, value in (env or {}).items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    proc = subprocess.run(
        [sys.executable, "-c", _MAIN, *argv],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _exit_code(argv: list[str]) -> int:
    """The exit status of ``sys.exit(main(argv))`` in a fresh interpreter: SystemExit's code
    (None is 0; a message is printed and is 1), and an uncaught exception's traceback on
    stderr with status 1."""
    try:
        code: object = main(argv)
    except SystemExit as exc:
        code = exc.code
    except Exception:
        traceback.print_exc()
        return 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _environment(env: dict[str, str | None]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in env}
    try:
        _set_environment(env)
        yield
    finally:
        _set_environment(saved)


def _set_environment(env: dict[str, str | None]) -> None:
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@contextlib.contextmanager
def _working_folder(cwd: Path | None) -> Iterator[None]:
    saved = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _fresh_warnings() -> Iterator[None]:
    """The warnings filters a fresh interpreter starts with (not pytest's, which show every
    DeprecationWarning), warnings printed to the stderr of the moment, and every warning's
    "already shown" record cleared on entry, as a new process has none."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("ignore", ResourceWarning)
        warnings.simplefilter("ignore", ImportWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        warnings.showwarning = _print_warning
        yield


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning on the stderr of the moment, as a fresh interpreter prints it."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextlib.contextmanager
def _streams(out: io.StringIO, err: io.StringIO) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(), out, err
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
