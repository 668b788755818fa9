"""The domain a release from the raw table learns (``dpquery synth --data T.csv``, no
``--domain``), its learning alone: the release's budget split and pool, as
:func:`dpquery.pipeline.learning.learn` draws them, on the run's one generator. Writes per
table and seed ``OUT/<table>-s<seed>.json``: the learned domain (``Domain.to_dict``) and the
learning's ledger entries, for a byte comparison of two versions of the code (each its
``src`` on ``PYTHONPATH``). Reads the table (NOT a release: for comparing code only).

    PYTHONPATH=V/src python benchmarks/release_domains.py OUT --seeds 3 10 \
        [--epsilon 1] [--neighbours add-remove] T1.csv T2.csv ...
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from dpquery.domain_learning import (
    DEFAULT_DOMAIN_SHARE,
    SECOND_SHARE,
    WITHIN_SHARE,
    learn_domain,
)
from dpquery.errors import DPQueryError
from dpquery.pipeline.learning import (
    large_borrow_rho,
    read_raw,
    run_budget,
    small_borrow_rho,
    weights_rho,
)
from dpquery.privacy import Budget, Ledger
from dpquery.rng import make_rng


def learned(path: Path, seed: int, epsilon: float, neighbours: str) -> dict[str, object]:
    """The release's learning alone on the CSV ``path`` at ``seed``: its domain and charges,
    or the error it raised."""
    raw = read_raw(path)
    add_remove = neighbours == "add-remove"
    budget = run_budget({"epsilon": epsilon, "delta": 1e-9}, None if add_remove else len(raw),
                        DEFAULT_DOMAIN_SHARE, add_remove)  # fmt: skip
    borrow = small_borrow_rho(budget)
    ledger = Ledger(Budget.zcdp(budget.learn_rho + borrow))
    try:
        domain, _ = learn_domain(
            raw, rho=(1 - WITHIN_SHARE) * budget.learn_rho, delta=budget.delta_tail,
            rng=make_rng(seed), ledger=ledger, neighbours=neighbours,
            second_rho=SECOND_SHARE * budget.learn_rho,
            small_rho=weights_rho(budget) + borrow, large_rho=large_borrow_rho(budget),
        )  # fmt: skip
    except DPQueryError as exc:
        return {"error": str(exc)}
    charges = [[e.charge.mechanism, repr(e.charge.cost)] for e in ledger.entries]
    return {"domain": domain.to_dict(), "charges": charges}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("tables", nargs="+", type=Path)
    parser.add_argument("--seeds", nargs="+", type=int, default=[3, 10])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--neighbours", choices=("add-remove", "replace-one"),
                        default="add-remove")  # fmt: skip
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for path in args.tables:
        for seed in args.seeds:
            got = learned(path, seed, args.epsilon, args.neighbours)
            text = json.dumps(got, indent=1, default=lambda x: np.asarray(x).tolist())
            (args.out / f"{path.stem}-s{seed}.json").write_text(text)


if __name__ == "__main__":
    main()
