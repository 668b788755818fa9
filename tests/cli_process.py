"""Run the real ``dpquery`` command in a subprocess (shared by the CLI tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dpquery

# The package under test, whatever the installed entry point points at.
_SRC = str(Path(dpquery.__file__).resolve().parents[1])
_MAIN = "import sys; from dpquery.cli import main; sys.exit(main())"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def dpquery_cli(
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
