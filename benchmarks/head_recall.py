"""How many of a table's commonest items a private selection finds (NOT private: it reads the
true counts to score the selections, for the data holder and for the method's design).

The head mode's 1-way max error is at most ``0.75x`` the all-zeros table's only when every
item held by more than ``0.75`` of the top item's share is released; an item left out costs
its whole share. This simulates, on the exact counts, the selections a release could make
and reports the share of those items each finds (recall) and how often it finds all of them:

* ``em k=K rho=R``: ``K`` picks by the exponential mechanism on the whole counts (sensitivity
  1), ``K epsilon_0^2 / 8 = R rho`` (the head mode's picks; top-``K`` of Gumbel-perturbed
  counts, the peeling mechanism's law, Durfee and Rogers 2019);
* ``l2 M rho=R``: the ``M`` largest of every item's Gaussian-noised count with each record's
  items weighted ``1 / sqrt(|x|)`` (L2 sensitivity ``sqrt 2``, 1 under add/remove; per item
  at least the signal-to-noise of any cut, by Cauchy-Schwarz);
* ``l2 M1 -> em k``: the ``M1`` largest of those first, then ``k`` picks among them.

``rho`` is the zCDP budget of epsilon 1, delta ``1 / n^2``. With ``--neighbours add-remove``
it is that of delta ``1e-9`` less the noisy ``n``'s 2%, and the picks weigh ``exp(epsilon_0 c)``
(monotone counts, ``measure.pick_head``). Commands (data seed 0, or ``--data-seed``)::

    nice .venv/bin/python benchmarks/head_recall.py --shapes small narrow steep mid --draws 200
    nice .venv/bin/python benchmarks/head_recall.py --neighbours add-remove --draws 200

``--grid`` prints instead how often all of them are found by ``em k=K rho=R`` over a grid of
``K`` (25-60, or ``--picks``) and ``R`` (0.75-1 of ``rho``, or ``--shares``)::

    nice .venv/bin/python benchmarks/head_recall.py --neighbours add-remove --grid \
        --shapes small --draws 1000 --data-seed 2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from dpquery.algorithms.parameters import budget_of
from dpquery.privacy.budget import budget_rho

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wide_bounds import shape

GRID_PICKS = (25, 30, 35, 40, 45, 50, 60)
GRID_SHARES = (0.75, 0.85, 0.9, 0.95, 1.0)
SELECTIONS = (
    ("em", 20, 0.6),
    ("em", 30, 0.7),
    ("em", 20, 1.0),
    ("em", 40, 1.0),
    ("l2", 60, 1.0),
    ("l2", 300, 1.0),
    ("l2>em", (1000, 20), (0.3, 0.6)),
    ("em", 35, 0.75),
)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["small", "narrow", "steep", "mid"])
    p.add_argument("--draws", type=int, default=200)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--neighbours", default="replace-one", choices=("replace-one", "add-remove"))
    p.add_argument("--grid", action="store_true", help="all found, over picks and shares")
    p.add_argument("--picks", type=int, nargs="+", default=list(GRID_PICKS), help="--grid's K")
    p.add_argument("--shares", type=float, nargs="+", default=list(GRID_SHARES),
                   help="--grid's R, shares of rho")  # fmt: skip
    args = p.parse_args()
    rng = np.random.default_rng(0)
    if args.grid:
        print("| table | picks | " + " | ".join(f"{r:g} of rho" for r in args.shares) + " |")
        print("|---|---|" + "---|" * len(args.shares))
    else:
        print("| shape | n x d | items above 0.75x top | selection | recall | all found |")
        print("|---|---|---|---|---|---|")
    for name in args.shapes:
        X = shape(name, args.data_seed).matrix.tocsr()
        n, d = X.shape
        add_remove = args.neighbours == "add-remove"
        delta = 1e-9 if add_remove else 1 / n**2
        rho = budget_rho(budget_of(epsilon=args.epsilon, delta=delta)) * (0.98 if add_remove else 1)
        divisor = 1.0 if add_remove else 2.0  # monotone weights under add/remove
        counts = np.bincount(X.indices, minlength=d).astype(np.float64)
        top = np.flatnonzero(counts > 0.75 * counts.max())
        lengths = np.diff(X.indptr)
        weight = 1 / np.sqrt(np.maximum(lengths, 1))
        signal = np.bincount(X.indices, weights=np.repeat(weight, lengths), minlength=d)

        def em(
            candidates: np.ndarray,
            k: int,
            r: float,
            rho: float = rho,
            counts: np.ndarray = counts,
            divisor: float = divisor,
        ) -> np.ndarray:
            eps0 = np.sqrt(8 * r * rho / k)
            g = counts[candidates] * eps0 / divisor + rng.gumbel(size=candidates.size)
            return candidates[np.argsort(-g)[:k]]

        sens2 = 1.0 if add_remove else 2.0  # squared L2 sensitivity of the weighted counts

        def l2(
            m: int, r: float, rho: float = rho, signal: np.ndarray = signal, sens2: float = sens2
        ) -> np.ndarray:
            noisy = signal + rng.standard_normal(signal.size) * np.sqrt(sens2 / (2 * r * rho))
            return np.argsort(-noisy)[:m]

        if args.grid:
            for k in args.picks:
                found = [
                    np.mean([np.isin(top, em(np.arange(d), k, r)).all() for _ in range(args.draws)])
                    for r in args.shares
                ]
                label = f"{name} (data seed {args.data_seed}, {top.size} items)"
                print(f"| {label} | {k} | " + " | ".join(f"{f:.2f}" for f in found) + " |",
                      flush=True)  # fmt: skip
            continue
        for kind, size, share in SELECTIONS:
            found = []
            for _ in range(args.draws):
                if kind == "em":
                    chosen = em(np.arange(d), size, share)  # type: ignore[arg-type]
                elif kind == "l2":
                    chosen = l2(size, share)  # type: ignore[arg-type]
                else:
                    chosen = em(l2(size[0], share[0]), size[1], share[1])  # type: ignore[index]
                found.append(np.isin(top, chosen))
            hit = np.asarray(found)
            if kind == "em":
                label = f"em k={size} rho={share:g}"
            elif kind == "l2":
                label = f"l2 M={size} rho={share:g}"
            else:
                label = f"l2 M={size[0]} rho={share[0]:g} -> em k={size[1]} rho={share[1]:g}"  # type: ignore[index]
            print(
                f"| {name} | {n:,} x {d:,} | {top.size} | {label} | {hit.mean():.2f} | "
                f"{hit.all(axis=1).mean():.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
