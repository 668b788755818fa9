"""One pipeline behind both front doors: ``dpquery synth`` and ``dpquery.synthesize`` give
the same bytes for the same inputs and seed (a table of a built-in dataset, a codebooked
table with missing values, and item data)."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dpquery
from cli_process import dpquery_cli
from dpquery import datasets
from dpquery.data import Domain
from dpquery.data.items import ItemSets, write_item_sets

NPM_WORDS = Path(os.environ.get("DPQUERY_DATA_DIR", "data")) / "wide/npm_words.transactions.csv.gz"
CODEBOOK = {
    "sex": ["F", "M"],
    "age": {"min": 0, "max": 100, "bins": 20},
    "state": {"values": ["CA", "NY", "other"], "missing": "other"},
    "score": {"min": 0.0, "max": 1.0, "bins": 4, "missing": True},
}


def synth(*argv: str) -> None:
    result = dpquery_cli("synth", "--epsilon", "1", "--seed", "3", "--quiet", *argv)
    assert result.code == 0, result.err


@pytest.mark.realdata
def test_a_built_in_dataset(tmp_path: Path, require_dataset: Callable[[str], Path]) -> None:
    require_dataset("adult-pgm")
    out = tmp_path / "cli.csv"
    synth("--dataset", "adult-pgm", "--k", "2", "--size", "2000", "--out", str(out))
    table, domain = datasets.load_table("adult-pgm")
    frame, _ = dpquery.synthesize(table, domain, epsilon=1, seed=3, k=2, size=2000)
    frame.to_csv(tmp_path / "api.csv", index=False)
    assert (tmp_path / "api.csv").read_bytes() == out.read_bytes()


def test_a_codebooked_table_with_missing_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 400
    table = pd.DataFrame({
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(0, 100, n),
        "state": rng.choice(["CA", "NY", None], n),
        "score": np.where(rng.random(n) < 0.2, np.nan, rng.random(n)),
    })  # fmt: skip
    table.to_csv(tmp_path / "data.csv", index=False)
    Domain.from_codebook(CODEBOOK).save(tmp_path / "domain.json")
    out = tmp_path / "cli.csv"
    synth("--data", str(tmp_path / "data.csv"), "--domain", str(tmp_path / "domain.json"),
          "--out", str(out))  # fmt: skip
    frame, _ = dpquery.synthesize(pd.read_csv(tmp_path / "data.csv"), CODEBOOK, epsilon=1, seed=3)
    frame.to_csv(tmp_path / "api.csv", index=False)
    assert (tmp_path / "api.csv").read_bytes() == out.read_bytes()


def npm_words_slice(path: Path, rows: int = 2000, items: int = 1000) -> sp.csr_array:
    """The records ``< rows`` of npm_words over its items ``< items``."""
    with gzip.open(NPM_WORDS, "rt") as fh:
        pairs = np.loadtxt(fh, dtype=np.int64, comments="#")
    pairs = pairs[(pairs[:, 0] < rows) & (pairs[:, 1] < items)]
    values = np.ones(len(pairs), dtype=np.uint8)
    matrix = sp.csr_array((values, (pairs[:, 0], pairs[:, 1])), shape=(rows, items))
    matrix.sum_duplicates()
    matrix.data[:] = 1
    write_item_sets(path, ItemSets(matrix))
    return matrix


@pytest.mark.skipif(not NPM_WORDS.exists(), reason=f"{NPM_WORDS} not found")
def test_item_data(tmp_path: Path) -> None:
    matrix = npm_words_slice(tmp_path / "npm.transactions.csv")
    out = tmp_path / "cli.transactions.csv"
    synth("--data", str(tmp_path / "npm.transactions.csv"), "--out", str(out))
    released, _ = dpquery.synthesize(matrix, epsilon=1, seed=3)
    write_item_sets(tmp_path / "api.transactions.csv", ItemSets(released))
    assert (tmp_path / "api.transactions.csv").read_bytes() == out.read_bytes()
