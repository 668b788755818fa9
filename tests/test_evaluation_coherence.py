"""Coherence: constraints that every real record satisfies, and their synthetic violations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpquery import datasets
from dpquery.errors import DPQueryError
from dpquery.evaluation.coherence import coherence_report, find_constraints


def household(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Wives are women and husbands men; doctors are at least 25; children are not married."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    rel = np.where(sex == "Female", rng.choice(["Wife", "Own-child", "Unmarried"], n),
                   rng.choice(["Husband", "Own-child", "Unmarried"], n))  # fmt: skip
    age = np.where(rel == "Own-child", rng.integers(0, 30, n), rng.integers(18, 90, n))
    edu = np.where(age >= 25, rng.choice(["HS", "BA", "Doctorate"], n, p=[0.5, 0.3, 0.2]),
                   rng.choice(["HS", "BA"], n))  # fmt: skip
    return pd.DataFrame({"sex": sex, "relationship": rel, "age": age, "education": edu})


def described(constraints) -> set[str]:
    return {c.describe() for c in constraints}


def test_finds_the_household_rules():
    real = household()
    found = described(find_constraints(real))
    assert "never sex = 'Male' with relationship = 'Wife'" in found
    assert "never sex = 'Female' with relationship = 'Husband'" in found
    youngest_doctor = real.loc[real["education"] == "Doctorate", "age"].min()
    assert youngest_doctor >= 25
    assert f"education = 'Doctorate' implies age >= {youngest_doctor:g}" in found
    assert f"age >= {real['age'].min():g}" in found and f"age <= {real['age'].max():g}" in found
    # a pair that does occur is never a constraint
    assert not any("'Female' with relationship = 'Own-child'" in s for s in found)


@pytest.mark.parametrize("seed", range(3))
def test_every_constraint_holds_for_every_real_record(seed):
    real = household(seed=seed)
    report = coherence_report(real, real)
    assert report.constraints and report.incoherent == 0.0
    assert not report.violations.any()
    subset = real.sample(100, random_state=seed)  # any real records satisfy them too
    assert coherence_report(real, subset, constraints=report.constraints).incoherent == 0.0


def test_injected_violations_are_counted_exactly():
    real = household()
    synthetic = real.sample(100, random_state=1).reset_index(drop=True)
    synthetic.loc[:2, ["sex", "relationship"]] = ["Male", "Wife"]  # 3 husbands called wife
    synthetic.loc[3, ["age", "education", "relationship"]] = [3, "Doctorate", "Own-child"]
    report = coherence_report(real, synthetic)
    rates = {c.describe(): v for c, v in zip(report.constraints, report.violations, strict=True)}
    assert rates["never sex = 'Male' with relationship = 'Wife'"] == pytest.approx(0.03)
    doctor = [k for k in rates if k.startswith("education = 'Doctorate' implies age >=")]
    assert rates[doctor[0]] == pytest.approx(0.01)
    assert report.incoherent == pytest.approx(0.04)
    out = report.to_dict(limit=1)
    assert out["worst"][0]["violated_fraction"] == pytest.approx(0.03)
    assert "NOT differentially private" in out["note"]
    # weights: the 3 bad records carry half the weight
    synthetic["weight"] = np.where(np.arange(100) < 3, 97 / 3, 1.0)
    weighted = coherence_report(real, synthetic, constraints=report.constraints)
    assert weighted.incoherent == pytest.approx((97 + 1) / 194)


def test_independent_columns_break_adult():
    """Each column shuffled on its own (a 'bag of independent cells'): most records break
    some rule of the real Adult (shipped with the package, found without DPQUERY_DATA_DIR)."""
    real, _ = datasets.load_table("adult")
    real = real.iloc[:5000]
    rng = np.random.default_rng(0)
    bag = pd.DataFrame({c: rng.permutation(real[c].to_numpy()) for c in real.columns})
    report = coherence_report(real, bag)
    assert coherence_report(real, real, constraints=report.constraints).incoherent == 0.0
    assert report.incoherent > 0.5


def test_errors():
    real = household()
    with pytest.raises(DPQueryError, match=r"lacks the real table's columns \['sex'\]"):
        coherence_report(real, real.drop(columns="sex"))
    with pytest.raises(DPQueryError, match="min_support"):
        find_constraints(real, min_support=0)
    with pytest.raises(DPQueryError, match="no records"):
        find_constraints(real.iloc[:0])
