"""Tuning runs of adaptive-projection under add/remove, in-process, scored as bench_utility.

One line per (variant, dataset, epsilon): the means over the algorithm seeds of workload
max / TV, random 3-way max / TV and random 5-way max / TV (``bench_utility.score``; workload
every 3-way marginal of at most n cells, workload seed 0; ``delta = 1/n^2``). ``options``
is a JSON object of :class:`AdaptiveProjection` keywords plus these experiment-only keys:

* ``size_x``: release ``size_x * n`` records (scored normalised); with ``--subsample``
  also a uniform random ``n`` of them (seed ``1000 + seed``);
* ``tol``: the projection's stop rule (a sweep moving fewer than ``tol m`` attributes ends
  a fit; the module's default 1e-3);
* ``four``: add every 4-way marginal of at most ``four * n`` cells to the candidates;
* ``coarse_k``: keep only the coarse candidates of at most this many attributes;
* ``pair_weight``: the 2-way candidates' weights ``w_r`` times this;
* ``max_pairs``: with ``max_share`` / ``max_final``, the rounds that select by the largest
  cell error select among the 2-way candidates only (fine, compressed or binned);
* ``unlinked_before``: with ``unlinked``, also score the records as they were just before
  :func:`~dpquery.algorithms.marginal.unlinked.unlink` (the same fit, variant ``before``),
  interpolated within bins as the release is (a copy of the generator at that step).

Run (docs/utility.md, Tuning under add/remove)::

    DPQUERY_DATA_DIR=../shared/data PYTHONPATH=src nice .venv/bin/python \\
        benchmarks/tune_add_remove.py adult-pgm 0.5 0,1 '{"coarse": 60, "coarse_weight": 0.5}' c60
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_utility as bu
import dpquery.algorithms.marginal.adaptive_projection as ap
import dpquery.algorithms.marginal.projection as pj

KEYS = ["workload_max", "workload_tv", "random64_max", "random64_tv", "five64_max", "five64_tv"]


def codes_of(release, layout) -> np.ndarray:
    rows = release.records.rows
    return np.stack([rows[:, s : s + k].argmax(1) if oh else rows[:, s]
                     for s, k, oh in zip(layout.starts, layout.sizes, layout.onehot,
                                         strict=True)], axis=1)  # fmt: skip


BEFORE: list[np.ndarray] = []


def patch(opts: dict) -> None:
    """The experiment-only keys (module docstring), applied to the module in place."""
    if "pair_weight" in opts:  # the 2-way candidates' weights times this
        beta, cands = opts.pop("pair_weight"), ap.candidates_of

        def boosted(workload, extra=()):
            table = cands(workload, extra)
            return {r: w * (beta if len(r) == 2 else 1.0) for r, w in table.items()}

        ap.candidates_of = boosted
    if opts.pop("max_pairs", False):  # the max rounds among the 2-way candidates only
        real = ap.select

        def pairs_only(candidates, weights, true_counts, *args, score="l1", cell_maps=(),
                       **kwargs):  # fmt: skip
            if score != "max":
                return real(candidates, weights, true_counts, *args, score=score,
                            cell_maps=cell_maps, **kwargs)  # fmt: skip
            keep = [i for i, r in enumerate(candidates) if len(r) == 2]
            j = real([candidates[i] for i in keep], weights[keep],
                     [true_counts[i] for i in keep], *args, score=score,
                     cell_maps=[cell_maps[i] for i in keep], **kwargs)  # fmt: skip
            return keep[j]

        ap.select = pairs_only
    if opts.pop("unlinked_before", False):
        unlink = ap.unlink

        def keep(X, *args, **kwargs):
            BEFORE.append(X.copy())
            return unlink(X, *args, **kwargs)

        ap.unlink = keep
        within = ap.interpolate_within_bins

        def both(X, *args, rng, **kwargs):  # the records before the step go through it too
            if BEFORE:
                BEFORE.append(within(BEFORE.pop(), *args, rng=copy.deepcopy(rng), **kwargs)[0])
            return within(X, *args, rng=rng, **kwargs)

        ap.interpolate_within_bins = both
    if "tol" in opts:
        ap.fit_records = functools.partial(pj.fit_records, tol=opts.pop("tol"))
    if "four" in opts:
        cap, pairs = opts.pop("four"), ap.pair_candidates

        def more(sizes, n):
            four = [r for r in itertools.combinations(range(len(sizes)), 4)
                    if np.prod([int(sizes[a]) for a in r]) <= cap * n]  # fmt: skip
            return list(pairs(sizes, n)) + four

        ap.pair_candidates = more
    if "coarse_k" in opts:  # every extra candidate set (coarse, and the ordinal bins)
        kmax, coarse = opts.pop("coarse_k"), ap.extra_candidates

        def fewer(table, fine, sizes, comp, wide):
            return coarse({r: w for r, w in table.items() if len(r) <= kmax}, fine, sizes,
                          comp, wide)  # fmt: skip

        ap.extra_candidates = fewer


def main() -> None:
    dataset, eps, seeds, opts, tag = sys.argv[1:6]
    subsample = "--subsample" in sys.argv[6:]
    eps_f, seed_list, options = float(eps), [int(s) for s in seeds.split(",")], json.loads(opts)
    data, layout, true = bu.load(dataset)
    marginals = bu.workload_of(data, layout, "all3", 0)
    workload = bu.to_workload(data, marginals)
    n = data.n
    patch(options)
    if "size_x" in options:
        options["size"] = int(options.pop("size_x") * n)
    scores: dict[str, list[list[float]]] = {}
    for seed in seed_list:
        start = time.perf_counter()
        model = ap.AdaptiveProjection(
            seed=seed,
            epsilon=eps_f,
            delta=1.0 / n**2,
            neighbours="add-remove",
            progress=False,
            **options,
        )
        release = model.fit(data, workload)
        seconds = time.perf_counter() - start
        X = codes_of(release, layout)
        variants = {"all": X}
        if BEFORE:
            variants["before"] = BEFORE.pop()
        if subsample and X.shape[0] > n:
            pick = np.random.default_rng(1000 + seed).choice(X.shape[0], n, replace=False)
            variants["rand_n"] = X[pick]
        for name, Y in variants.items():
            s = bu.score(data, layout, true, Y, marginals)
            scores.setdefault(name, []).append([s[k] for k in KEYS])
        rounds = sum(1 for r in release.rounds if isinstance(r.get("round"), int))
        moved = [r["movable"] for r in release.rounds if r.get("round") == "unlinked"]
        if moved:
            print(f"# movable share {moved[0]:.3f}")
        mine = ", ".join(f"{v:.4f}" for v in scores[next(iter(variants))][-1])
        print(f"# {tag} seed {seed} eps {eps} m={X.shape[0]} rounds={rounds} s={seconds:.1f}: "
              f"{mine}")  # fmt: skip
    for name, v in scores.items():
        m = np.mean(v, axis=0)
        cells = ", ".join(f"{m[i]:.4f} / {m[i + 1]:.4f}" for i in (0, 2, 4))
        print(f"{tag} {dataset} eps={eps} seeds={seed_list} {name}: {cells}", flush=True)


if __name__ == "__main__":
    main()
