"""A column the learning can neither bound nor select from (docs/learn.md, "Held-out
tables, a fourth set"): every value ``<other>``, never values invented in a bin ``[0, 1]``
(:func:`~dpquery.domain_learning.unknown_values`). Post-processing of noisy counts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpquery.data.domain import MISSING_LABEL, Categorical, Numeric
from dpquery.domain_learning import OTHER_LABEL, learn_domain, unknown_values
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE

N = 1_000


def _table(seed: int) -> pd.DataFrame:
    """A small table of many columns, two of them mostly missing: a column of names (86%
    missing) and one of district numbers 1 to 53 (77% missing), as a table of endorsements
    has them."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"c{j}": rng.choice(["a", "b", "c"], N) for j in range(10)})
    names = rng.choice([f"Name {k}" for k in range(15)], N).astype(object)
    names[rng.random(N) < 0.86] = None
    district = rng.integers(1, 54, N).astype(float)
    district[rng.random(N) < 0.77] = np.nan
    return df.assign(endorsee=names, district=district)


def test_unknown_values_are_the_catch_all_and_missing() -> None:
    attr, learned = unknown_values("x", has_missing=True)
    assert attr.values == (OTHER_LABEL, MISSING_LABEL)
    assert attr.other == OTHER_LABEL and attr.missing == MISSING_LABEL
    assert unknown_values("x", has_missing=False)[0].values == (OTHER_LABEL,)
    assert "no bounds found" in learned


def test_a_mostly_missing_column_never_gets_invented_values() -> None:
    """Over 12 seeds, neither column comes back as a numeric column of the bin ``[0, 1]``
    (bounds not found): its values are then unknown, released as ``<other>``. Before the
    rule, 7 of these 12 learnings had such a bin in one of the two columns (the noise
    decides whether the profile reads them as numbers). No false failures: the seeds are
    fixed and the rule is deterministic given the draws."""
    for seed in range(12):
        ledger = Ledger(Budget.zcdp(0.005))
        domain, report = learn_domain(
            _table(seed), rho=0.005, delta=1e-9, rng=np.random.default_rng(seed),
            ledger=ledger, neighbours=ADD_REMOVE,
        )  # fmt: skip
        noisy = {c.name: c.noisy for c in report.columns}
        for name in ("endorsee", "district"):
            attr = domain[name]
            if isinstance(attr, Numeric):
                assert noisy[name]["bounds"] is not None, (seed, name, attr)
            else:
                assert isinstance(attr, Categorical)
