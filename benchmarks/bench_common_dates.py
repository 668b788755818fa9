"""How often a small day-first table's common date format is learned right
(``docs/learn.md``, "Dates in other formats"): tables of 300 and 1,000 records whose ``d``
is written ``DD/MM/YYYY`` (400 days from 2020-01-01) beside a number, learned at half the
rho of ``learn_budget(1, 1e-9)`` under each relation, seeds 0 to 9; prints the formats
learned and how often. ``PYTHONPATH=src python benchmarks/bench_common_dates.py``."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from dpquery.domain_learning import learn_budget, learn_domain
from dpquery.privacy import Ledger


def main() -> None:
    rng = np.random.default_rng(0)
    budget = learn_budget(1.0, 1e-9)
    for n in (300, 1000):
        days = [dt.date(2020, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 400, n)]
        df = pd.DataFrame({"d": [x.strftime("%d/%m/%Y") for x in days],
                           "v": rng.normal(size=n).round(1)})  # fmt: skip
        for relation in ("add-remove", "replace-one"):
            learned = []
            for seed in range(10):
                domain, _ = learn_domain(
                    df, rho=0.5 * budget.rho, delta=budget.delta_tail,
                    rng=np.random.default_rng(seed), ledger=Ledger(budget.ledger_budget),
                    neighbours=relation,
                )  # fmt: skip
                learned.append(getattr(domain["d"], "time", None))
            counts = pd.Series(learned).value_counts(dropna=False).to_dict()  # None: not a date
            print(f"{n} records, {relation}: {counts}", flush=True)


if __name__ == "__main__":
    main()
