"""The ``dpquery`` command: a thin layer over the library.

Each sub-command lives in its own module with a ``register(subparsers)`` function. Errors
from bad input become one line on stderr (with what a failed fit spent under it) and a
non-zero exit; output files are written atomically (see :func:`dpquery.io.atomic_write`), so
a failure leaves no partial file.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from dpquery import __version__
from dpquery.cli import data, demo, domain, online, privacy, synth, workload
from dpquery.errors import DPQueryError, NonPrivateWarning

EXIT_BAD_INPUT = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a pipeline's writer stopped so


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpquery",
        description="Differentially private query release on high-dimensional data.",
    )
    parser.add_argument("--version", action="version", version=f"dpquery {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (data, domain, workload, synth, privacy, demo, online):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except (DPQueryError, FileNotFoundError, FileExistsError, PermissionError) as exc:
        print(f"dpquery: error: {exc}", file=sys.stderr)
        _print_notes(exc)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as exc:
        print("dpquery: interrupted", file=sys.stderr)
        _print_notes(exc)
        return 130
    except BrokenPipeError:
        # the reader of stdout left (`dpquery privacy synth ... | head`): stop quietly, as
        # cat does, not with a traceback; stdout is pointed at devnull so that the
        # interpreter's last flush does not raise again. Files are written whole or not at all.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _print_notes(exc: BaseException) -> None:
    """The exception's notes under its line: what a failed fit spent, so that a user who
    runs the command again knows that the data has been spent on already."""
    for note in getattr(exc, "__notes__", []):
        print(f"  {note}", file=sys.stderr)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Warnings as one line on stderr; a non-private input is shouted."""
    label = "WARNING" if issubclass(category, NonPrivateWarning) else "warning"
    print(f"dpquery: {label}: {message}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
