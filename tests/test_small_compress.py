"""A small table's release compresses its candidates less (``SMALL_COMPRESS``): the rule by
hand (small, add/remove, auto or adaptive-projection, no ``compress`` given), and in the
pipeline: a small table's add/remove release records the threshold and spends what it spent
(the compression reads the 1-way measurements only: post-processing), a replace-one one is
unchanged.

Randomised checks are seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpquery
from dpquery.pipeline.learning import SMALL_COMPRESS, small_release_options


def _learned(small: bool) -> Any:
    return SimpleNamespace(report=SimpleNamespace(small=small))


def test_small_release_options_by_hand() -> None:
    assert SMALL_COMPRESS == 2.0
    base = {"epsilon": None, "compress": None}
    out = small_release_options(base, "auto", _learned(True), True)
    assert out == {"epsilon": None, "compress": 2.0} and base["compress"] is None
    assert small_release_options({}, "adaptive-projection", _learned(True), True) == {
        "compress": 2.0
    }
    # the user's threshold (0: off) kept; not small, replace-one, another algorithm: as given
    assert small_release_options({"compress": 0}, "auto", _learned(True), True)["compress"] == 0
    assert small_release_options({"compress": 7.0}, "auto", _learned(True), True)["compress"] == 7
    assert small_release_options(base, "auto", _learned(False), True) == base
    assert small_release_options(base, "auto", _learned(True), False) == base
    assert small_release_options(base, "fem", _learned(True), True) == base


def _small_table(n: int = 900, seed: int = 0) -> pd.DataFrame:
    """900 records: a district of 4 values, a neighbourhood of 12 (each in one district) and a
    score the neighbourhood decides: a small table at epsilon 1."""
    rng = np.random.default_rng(seed)
    hood = rng.choice(12, n, p=np.array([30, 20, 12, 9, 7, 6, 5, 4, 3, 2, 1, 1]) / 100)
    return pd.DataFrame({
        "district": np.array(["N", "S", "E", "W"])[hood % 4],
        "neighbourhood": np.array([f"h{i}" for i in range(12)])[hood],
        "score": (50 + 4 * hood).astype(str),
    })  # fmt: skip


def test_a_small_tables_release_compresses_at_small_compress_and_spends_the_same() -> None:
    df = _small_table()
    _, release = dpquery.synthesize(df, epsilon=1.0, seed=5)
    assert release.parameters["compress"] == SMALL_COMPRESS
    _, given = dpquery.synthesize(df, epsilon=1.0, seed=5, compress=5.0)
    assert given.parameters["compress"] == 5.0
    spent = release.ledger.accountant.rho(release.ledger.totals)
    assert spent == pytest.approx(given.ledger.accountant.rho(given.ledger.totals), rel=1e-9)
    assert [e.charge.mechanism for e in release.ledger.entries][:3] == [
        e.charge.mechanism for e in given.ledger.entries
    ][:3]


def test_a_replace_one_release_keeps_the_default_threshold() -> None:
    _, release = dpquery.synthesize(_small_table(), epsilon=1.0, seed=5,
                                    neighbours="replace-one")  # fmt: skip
    assert release.parameters["compress"] == 5.0
