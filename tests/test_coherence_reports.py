"""Coherence in the JSON evaluations of ``dpquery synth --evaluate`` and ``dpquery evaluate``
(NOT PRIVATE, labelled), and the canonical form that lets a CSV's text meet decoded values."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli_process import dpquery_cli
from dpquery.data import Domain, read_table
from dpquery.evaluation.coherence import canonical_table, coherence_section

CODEBOOK = {
    "relationship": ["Husband", "Wife", "Child"],
    "sex": ["Female", "Male"],
    "size": [1, 2, 3],
    "age": {"min": 0, "max": 100, "bins": 10},
}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """400 records where every husband is male, every wife female, every child under 20."""
    rng = np.random.default_rng(0)
    n = 400
    rel = rng.choice(["Husband", "Wife", "Child"], n, p=[0.4, 0.4, 0.2])
    sex = np.where(
        rel == "Husband",
        "Male",
        np.where(rel == "Wife", "Female", rng.choice(["Female", "Male"], n)),
    )
    age = np.where(rel == "Child", rng.integers(0, 20, n), rng.integers(20, 90, n))
    pd.DataFrame({"relationship": rel, "sex": sex, "size": rng.choice([1, 2, 3], n),
                  "age": age}).to_csv(tmp_path / "data.csv", index=False)  # fmt: skip
    Domain.from_codebook(CODEBOOK).save(tmp_path / "domain.json")
    return tmp_path


DATA = ("--data", "data.csv", "--domain", "domain.json")


def test_canonical_form_matches_csv_text_with_decoded_values(files: Path) -> None:
    domain = Domain.load(files / "domain.json")
    real = read_table(files / "data.csv", domain)  # categorical columns read as text
    assert real["size"].map(type).eq(str).all()
    synthetic = pd.DataFrame({"relationship": ["Wife", "Child"], "sex": ["Male", "Male"],
                              "size": [3, 1], "age": [40, 45]})  # fmt: skip
    section = coherence_section(real, synthetic, domain)
    worst = {w["constraint"]: w["violated_fraction"] for w in section["worst"]}
    assert worst["never relationship = 'Wife' with sex = 'Male'"] == 0.5
    # the male wife, and a child of 45: numeric values compare by their public bins, and no
    # real child is in the frequent bin [40, 50)
    assert section["incoherent_fraction"] == 1.0
    assert any("age" in w["constraint"] and w["violated_fraction"] == 0.5
               for w in section["worst"])  # fmt: skip
    # among categorical attributes only the male wife breaks a rule (age is numeric)
    assert section["categorical"]["incoherent_fraction"] == 0.5
    assert 0 < section["categorical"]["constraints"] < section["constraints"]
    assert "NOT differentially private" in section["note"]
    sizes = canonical_table(real, domain)["size"]
    assert sizes.tolist() == real["size"].astype(int).tolist()  # text "1" is the value 1


def test_synth_evaluate_reports_coherence_not_in_the_publishable_report(files: Path) -> None:
    result = dpquery_cli(
        "synth", *DATA, "--algorithm", "adaptive-projection", "--epsilon", "1",
        "--workload", "all-marginals", "--k", "2", "--seed", "0",
        "--out", "S.csv", "--report", "R.json", "--evaluate", cwd=files,
    )  # fmt: skip
    assert result.code == 0, result.err
    evaluation = json.loads((files / "S.evaluation.json").read_text())
    coherence = evaluation["coherence"]
    assert "NOT differentially private" in coherence["note"]
    # the real table's 400 rows (NOT private), the output's noisy n of them (add/remove)
    synthetic_rows = len(read_table(files / "S.csv"))
    assert coherence["synthetic_rows"] == synthetic_rows and coherence["real_rows"] == 400
    assert 0 <= coherence["incoherent_fraction"] <= 1 and coherence["constraints"] > 0
    assert "coherence: " in result.out and "rules every real record keeps" in result.out
    assert "coherence" not in (files / "R.json").read_text()  # never in what is published


def test_evaluate_report_carries_coherence(files: Path) -> None:
    assert dpquery_cli("workload", "make", *DATA, "--kind", "all-marginals", "--k", "2",
                       "-o", "W.npz", cwd=files).code == 0  # fmt: skip
    synthetic = read_table(files / "data.csv").sample(frac=1, random_state=0)
    synthetic["sex"] = synthetic["sex"].to_numpy()[::-1]  # breaks the husband/wife rules
    synthetic.to_csv(files / "S.csv", index=False)
    result = dpquery_cli("evaluate", *DATA, "--synthetic", "S.csv", "--workload", "W.npz",
                         "--report", "E.json", cwd=files)  # fmt: skip
    assert result.code == 0, result.err
    report = json.loads((files / "E.json").read_text())
    assert report["coherence"]["incoherent_fraction"] > 0.1
    assert "max_error" in report  # the error report is unchanged beside it
    assert "coherence: " in result.out


def test_a_numeric_missing_value_stays_missing_in_the_canonical_form() -> None:
    domain = Domain.from_codebook({"age": {"min": 0, "max": 100, "bins": 10}})
    domain = Domain((dataclasses.replace(domain.attributes[0], missing=True),))
    table = pd.DataFrame({"age": [5.0, None, 95.0]})
    ages = canonical_table(table, domain)["age"].tolist()
    labels = domain.attributes[0].labels  # ten bins, then the missing value's label
    assert ages[0] == labels[0] and ages[2] == labels[9] and pd.isna(ages[1])
