"""Shared test helpers.

Real data is found only through ``$DPQUERY_DATA_DIR`` (the Makefile points it at
``../shared/data``), never through the git tree. Tests that need it are marked
``@pytest.mark.realdata`` and use the ``real_data_dir`` or ``require_dataset`` fixtures,
which skip with a message saying what is missing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

DATA_DIR_ENV = "DPQUERY_DATA_DIR"


def _data_dir_or_skip() -> Path:
    raw = os.environ.get(DATA_DIR_ENV)
    if not raw:
        pytest.skip(f"real data: ${DATA_DIR_ENV} is not set (make test sets it to ../shared/data)")
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        pytest.skip(f"real data: ${DATA_DIR_ENV}={raw} is not a folder")
    return path


def _require_dataset(name: str) -> Path:
    """Skip unless every file of dataset ``name`` is found under ``$DPQUERY_DATA_DIR``."""
    from dpquery import datasets

    base = _data_dir_or_skip()
    if not datasets.available(name):
        pytest.skip(f"real data: dataset {name!r} is not in ${DATA_DIR_ENV}={base}")
    outside = [p for p in datasets.locate(name).values() if not p.resolve().is_relative_to(base)]
    if outside:
        pytest.skip(f"real data: dataset {name!r} is not in ${DATA_DIR_ENV}={base}")
    return base


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """``$DPQUERY_DATA_DIR`` as a Path, or skip."""
    return _data_dir_or_skip()


@pytest.fixture(scope="session")
def require_dataset() -> Callable[[str], Path]:
    """``require_dataset(name)`` skips unless the dataset is in ``$DPQUERY_DATA_DIR``, and
    returns that folder. Usable from module-scoped fixtures."""
    return _require_dataset
