"""Public pairs of values (``True``/``False``, ``yes``/``no``, ``male``/``female``): a learned
categorical holding one holds the other (:func:`dpquery.domain_learning.partners`,
docs/learn.md "Rules for the kind of a column")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpquery.data import Categorical
from dpquery.domain_learning import learn_domain, partners
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE


def test_partners_are_written_in_the_keys_case_and_never_repeated():
    assert partners(["True"]) == ["False"]
    assert partners(["YES"]) == ["NO"]
    assert partners(["Y"]) == [] and partners(["x", "y"]) == []  # a letter is no pair
    assert partners(["female", "x"]) == ["male"]
    assert partners(["Male"]) == ["Female"]
    assert partners(["yes", "no"]) == []
    assert partners([1, "red", "maybe"]) == []


def test_a_small_tables_minority_partner_is_a_category_not_the_catch_all():
    # 900 records, 35% female: at this budget a selection releases only values held by
    # about half the records (the small-table rules), so female alone would be <other>
    rng = np.random.default_rng(0)
    n = 900
    df = pd.DataFrame({
        "sex": np.where(rng.random(n) < 0.35, "female", "male"),
        "alive": np.where(rng.random(n) < 0.4, "yes", "no"),
    })  # fmt: skip
    ledger = Ledger(Budget.zcdp(1.0))
    domain, report = learn_domain(df, rho=0.0006, delta=1e-9, rng=np.random.default_rng(1),
                                  ledger=ledger, neighbours=ADD_REMOVE)  # fmt: skip
    for name, pair in (("sex", {"male", "female"}), ("alive", {"yes", "no"})):
        attr = domain[name]
        assert isinstance(attr, Categorical)
        released = {v for v in attr.values if v not in (attr.other, attr.missing)}
        # the majority value is released by its count (its threshold is far below 60%), its
        # partner with it; neither appears unless the other does
        assert released == pair, (name, released, report)
