"""Text cells written with spaces around them (``"C7 "``, a fixed-width export) learned and
encoded alike (``docs/learn.md``, "Padded text"): one normalisation (``cell_text``) read by
the learner and the encoder, so that the records of a released category encode to it and
the release writes the category as learned.

The releases are seeded; each category holds about 1,000 of 3,000 records, some 40 noise
sd above the selection's threshold at epsilon 1, so that every category is released on all
but a vanishing share of seeds (below 1e-12 a category)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery
from dpquery.cli import main
from dpquery.data.domain import Categorical, cell_text
from dpquery.data.encode import attribute_codes
from dpquery.domain_learning import _cell
from dpquery.errors import DPQueryError

WRITTEN = ("C1 ", " C2", "  C3  ")  # trailing, leading and both
LEARNED = ("C1", "C2", "C3")


def _table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "cls": rng.choice(WRITTEN, n),
        "age": rng.integers(18, 80, n).astype(str),
    })  # fmt: skip


def test_cell_text_is_the_learners_key_and_strips_only_the_ends() -> None:
    assert [cell_text(v) for v in WRITTEN] == list(LEARNED)
    assert cell_text(" New  York ") == "New  York"  # inner spaces are the value's
    assert cell_text("   ") == ""
    assert cell_text(12) == "12" and cell_text(1.5) == "1.5"
    for v in (*WRITTEN, " New  York ", "x", "   "):
        assert _cell(v)[0] == cell_text(v)  # the learner's key of a text cell
    assert _cell(" 12 ")[1] == 12.0  # a number padded still reads as one


def test_the_encoder_reads_padded_cells_as_their_category() -> None:
    attr = Categorical("cls", (*LEARNED, "<other>"), other="<other>")
    series = pd.Series([*WRITTEN, "C1", "C9 ", None], dtype=object)
    assert attribute_codes(series, attr).tolist() == [0, 1, 2, 0, 3, 3]


def test_a_value_declared_with_its_spaces_keeps_its_own_category() -> None:
    # exact values first: a given domain listing both spellings keeps them apart
    attr = Categorical("cls", ("C1 ", "C1"))
    assert attribute_codes(pd.Series(["C1 ", "C1", " C1"]), attr).tolist() == [0, 1, 1]


def test_padded_cells_outside_a_domain_without_other_still_fail() -> None:
    attr = Categorical("cls", LEARNED)
    with pytest.raises(DPQueryError, match="C9"):
        attribute_codes(pd.Series(["C1 ", "C9 "]), attr)


def _check_release(synth: pd.DataFrame, domain: dpquery.Domain) -> None:
    learned = domain["cls"]
    assert isinstance(learned, Categorical)
    assert set(LEARNED) <= set(learned.values)
    assert set(synth["cls"].dropna()) <= set(LEARNED)  # no record in <other>, none padded
    counts = synth["cls"].value_counts(normalize=True)
    assert all(abs(counts[c] - 1 / 3) < 0.1 for c in LEARNED)


def test_synthesize_releases_no_record_in_other() -> None:
    synth, release = dpquery.synthesize(_table(), epsilon=1, seed=1)
    _check_release(synth, release.records.domain)


def test_the_cli_releases_no_record_in_other(tmp_path: Path) -> None:
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _table(seed=2).to_csv(data, index=False)
    assert "C1 ," in data.read_text()  # the cells are written padded
    args = ["synth", "--data", str(data), "--epsilon", "1", "--seed", "3", "--out", str(out),
            "--quiet"]  # fmt: skip
    assert main(args) == 0
    synth = pd.read_csv(out, dtype=str, keep_default_na=False)
    _check_release(synth, dpquery.Domain.load(out.with_suffix(".domain.json")))
