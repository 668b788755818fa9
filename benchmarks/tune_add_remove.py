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
* ``final_fit``: the final fit's sweeps at most this many (the module's default 30; the
  interpolation's re-fit keeps its own);
* ``five_weight``: ``lam``; every candidate's weight ``sum_{a in r} (c3_a + lam c5_a C3 / C5)``
  instead of AIM's ``sum_{s in W} |r ∩ s| = sum_{a in r} c3_a`` (``c3_a``, ``c5_a``: the
  workload's marginals and the 5-way marginals of at most ``n`` cells holding ``a``;
  ``C3``, ``C5`` their sums over the attributes);
* ``select_fixed``: the selections' ``epsilon`` never annealed (each at most the plan's
  ``epsilon_0``, the last round's too; only the measurements' ``sigma`` anneals; what
  the selections no longer spend is left to the later rounds);
* ``anneal_margin``: ``k``; a round anneals when the fit moved its marginal by at most
  ``k sqrt(2/pi) sigma n_r`` (AIM: ``k = 1``; needs a build whose module reads
  ``ANNEAL_MARGIN``, an experiment-only copy);
* ``four_weight``: with ``four``, the 4-way candidates' weights ``w_r`` times this;
* ``coarse_k``: keep only the coarse candidates of at most this many attributes;
* ``pair_weight``: the 2-way candidates' weights ``w_r`` times this;
* ``max_pairs``: with ``max_share`` / ``max_final``, the rounds that select by the largest
  cell error select among the 2-way candidates only (fine, compressed or binned);
* ``one_way_factor``: the 1-way measurements' share of the measuring budget this times
  AIM's ``g / T`` (``one_way_share``, read off the plan's ``T``);
* ``unlinked_before``: with ``unlinked``, also score the records as they were just before
  :func:`~dpquery.algorithms.marginal.unlinked.unlink` (the same fit, variant ``before``),
  interpolated within bins as the release is (a copy of the generator at that step).

Run (docs/utility.md, Tuning under add/remove)::

    DPQUERY_DATA_DIR=../shared/data PYTHONPATH=src nice .venv/bin/python \\
        benchmarks/tune_add_remove.py adult-pgm 0.5 0,1 '{"coarse": 60, "coarse_weight": 0.5}' c60
"""

from __future__ import annotations

import collections
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
    if "one_way_factor" in opts:  # the 1-way share as a multiple of AIM's g / T
        f, plan = opts.pop("one_way_factor"), ap.plan_adaptive

        def scaled(**kw):
            first = plan(**kw)
            kw["one_way_share"] = min(0.9, f * len(kw["sizes"]) / first.T)
            return plan(**kw)

        ap.plan_adaptive = scaled
    if "final_fit" in opts:  # the final fit (the only call at DEFAULT_FINAL_SWEEPS) capped
        k, fit = opts.pop("final_fit"), ap.fit_records

        def capped(X, measured, sizes, *, sweeps, **kw):
            return fit(X, measured, sizes, sweeps=k if sweeps == ap.DEFAULT_FINAL_SWEEPS
                       else sweeps, **kw)  # fmt: skip

        ap.fit_records = capped
    if opts.pop("select_fixed", False):
        plan_of, real_select, first = ap.plan_adaptive, ap.select, []

        def remember(**kw):
            p = plan_of(**kw)
            first[:] = [p.epsilon0]
            return p

        def fixed(*args, epsilon, **kw):
            return real_select(*args, epsilon=min(epsilon, first[0]), **kw)

        ap.plan_adaptive, ap.select = remember, fixed
    if "anneal_margin" in opts:
        ap.ANNEAL_MARGIN = opts.pop("anneal_margin")  # type: ignore[attr-defined]
    if "tol" in opts:
        ap.fit_records = functools.partial(pj.fit_records, tol=opts.pop("tol"))
    if "four" in opts:
        cap, pairs = opts.pop("four"), ap.pair_candidates

        def more(sizes, n):
            four = [r for r in itertools.combinations(range(len(sizes)), 4)
                    if np.prod([int(sizes[a]) for a in r]) <= cap * n]  # fmt: skip
            return list(pairs(sizes, n)) + four

        ap.pair_candidates = more
        if "four_weight" in opts:
            f4, table_of = opts.pop("four_weight"), ap.candidates_of

            def lighter(workload, extra=()):
                table = table_of(workload, extra)
                return {r: w * (f4 if len(r) == 4 else 1.0) for r, w in table.items()}

            ap.candidates_of = lighter
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
    if "five_weight" in options:  # the weights also read the 5-way marginals' attributes
        lam, sizes, g = options.pop("five_weight"), layout.sizes, layout.g
        c5 = np.zeros(g)
        for r in itertools.combinations(range(g), 5):
            if np.prod([int(sizes[a]) for a in r]) <= n:
                c5[list(r)] += 1
        c3 = np.zeros(g)
        for r in marginals:
            c3[list(r)] += 1
        bonus = lam * c5 * c3.sum() / c5.sum()
        table_of = ap.candidates_of

        def with_five(workload, extra=()):
            return {r: w + float(bonus[list(r)].sum())
                    for r, w in table_of(workload, extra).items()}  # fmt: skip

        ap.candidates_of = with_five
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
        ways = [len(r["marginal"]) for r in release.rounds if isinstance(r.get("round"), int)]
        annealed = sum(1 for r in release.rounds if r.get("annealed"))
        print(f"# rounds by width: {dict(sorted(collections.Counter(ways).items()))}, "
              f"annealed {annealed}")  # fmt: skip
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
