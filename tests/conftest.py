"""Shared test helpers.

Real data is found only through ``$DPQUERY_DATA_DIR`` (the Makefile points it at
``../shared/data``), never through the git tree. Tests that need it are marked
``@pytest.mark.realdata`` and use the ``real_data_dir`` or ``require_dataset`` fixtures,
which skip with a message saying what is missing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from dpquery.data import Binary, BinaryData, Categorical, Domain, encode
from dpquery.errors import DPQueryError
from dpquery.oracles import BestResponse, OracleResult

DATA_DIR_ENV = "DPQUERY_DATA_DIR"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``benchmarks/<name>.py`` imported as module ``name`` for one test (undone after it)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


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


# == helpers shared by the algorithm tests ====================================================
# A small domain with a one-value group (its bit is always set) and a free bit: MWEM's tests,
# the reweighting tests and the estimator-protocol tests run on it.
MIXED_DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Categorical("one", ("only",)),  # a one-value group: its bit is always set
        Categorical("size", (1, 2, 3, 4)),
        Binary("e"),
    )
)


# Each column's values and probabilities (None: uniform); a one-value column draws nothing.
COLUMNS: dict[str, tuple[list, list[float] | None]] = {
    "color": (["red", "green", "blue"], [0.6, 0.3, 0.1]),
    "smoker": (["no", "yes"], [0.7, 0.3]),
    "one": (["only"], None),
    "size": ([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4]),
    "e": ([0, 1], [0.8, 0.2]),
    "f": ([0, 1], None),
}


def sample_table(domain: Domain, n: int, seed: int) -> pd.DataFrame:
    """``n`` rows over ``domain``'s attributes (names of :data:`COLUMNS`), drawn column by
    column in the domain's order from one seeded generator."""
    rng = np.random.default_rng(seed)
    columns = {}
    for name in domain.names:
        values, p = COLUMNS[name]
        columns[name] = [values[0]] * n if len(values) == 1 else rng.choice(values, n, p=p)
    return pd.DataFrame(columns)


def mixed_data(n: int = 1000, seed: int = 0) -> BinaryData:
    return encode(sample_table(MIXED_DOMAIN, n, seed), MIXED_DOMAIN)


def one_hot_ok(rows: np.ndarray, groups: np.ndarray) -> bool:
    """Every record sets exactly one bit of every one-hot group."""
    return all((rows[:, a:b].sum(axis=1) == 1).all() for a, b in groups)


# -- an untrusted oracle's faults, injected (the only place tests mock) -----------------------
def fake_result(problem: BestResponse, record, **kw) -> OracleResult:
    fields = {
        "objective": 0.0, "bound": None, "optimal": False, "seconds": 0.0, "status": "fake",
        "timed_out": False, "free": np.zeros(problem.d, dtype=bool), "oracle": "fake",
    }  # fmt: skip
    return OracleResult(record=record, **{**fields, **kw})


def first_feasible(problem: BestResponse) -> np.ndarray:
    x = np.zeros(problem.d, dtype=np.uint8)
    x[problem.onehot_groups[:, 0]] = 1
    return x


def _raise(_problem):
    raise RuntimeError("solver crashed")


FAULTS = {
    "raises": _raise,
    "raises-dpquery-error": lambda p: (_ for _ in ()).throw(DPQueryError("bad model")),
    "timeout-poor-record": lambda p: fake_result(
        p, first_feasible(p), timed_out=True, status="time limit"
    ),
    "two-bits-in-group": lambda p: fake_result(p, np.ones(p.d, dtype=np.uint8), optimal=True),
    "empty-group": lambda p: fake_result(p, np.zeros(p.d)),
    "non-binary": lambda p: fake_result(p, np.full(p.d, 0.7)),
    "wrong-shape": lambda p: fake_result(p, np.zeros(p.d + 1, dtype=np.uint8)),
    "nan-record": lambda p: fake_result(p, np.full(p.d, np.nan)),
    "not-a-result": lambda p: None,
    # a feasible record with lies: claims optimality, a useless bound, every bit free
    "adversarial-liar": lambda p: fake_result(
        p,
        first_feasible(p) | (p.group_of_bit < 0).astype(np.uint8),
        optimal=True,
        bound=float("nan"),
        free=np.ones(p.d, dtype=bool),
        status=object(),
    ),
    "adversarial-bound-object": lambda p: fake_result(p, first_feasible(p), bound=object()),
    "adversarial-free-mask": lambda p: fake_result(p, first_feasible(p), free="all of them"),
}


class FaultyOracle:
    name = "faulty"

    def __init__(self, fault) -> None:
        self.fault = fault
        self.calls = 0

    def solve(self, problem: BestResponse, *, seed=None):
        self.calls += 1
        return self.fault(problem)
