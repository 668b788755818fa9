"""Online PMW benchmark: per-query time and memory against d, accuracy on the MWEM
paper's 27-bit Adult, and the constructed polynomials against Theorem 1.3.

Run: ``python benchmarks/bench_online.py`` (or ``make bench BENCH=online``); writes CSV under
``docs/results/online/`` and PNG under ``docs/figures/``. Real data needs ``DPQUERY_DATA_DIR``.
"""

from __future__ import annotations

import itertools
import math
import time
from pathlib import Path

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.online import (
    FullDomainMW,
    OnlineQuery,
    PMWSession,
    PolynomialMW,
    choose_representation,
    interpolated_or,
    lemma_4_1,
    lemma_4_2,
    theorem_1_3_bounds,
)
from dpquery.online.representation import n_monomials, set_mask
from tables import write_csv

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "online"
FIGURES = ROOT / "docs" / "figures"


def _write(name: str, rows: list[dict]) -> None:
    print(f"  wrote {write_csv(rows, RESULTS, name.removesuffix('.csv'))}")


def _time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def timing(k: int = 3, alpha_idc: float = 0.05) -> list[dict]:
    """Per-query time (value + update) and memory of both learners against d."""
    rng = np.random.default_rng(0)
    rows = []
    for d in (10, 15, 20, 25, 27, 30, 40, 60, 100, 200, 400):
        rep = choose_representation(d, k, alpha_idc, max_monomials=2**24)
        for label, t, W in (("polynomial (auto)", rep.t, rep.W), ("polynomial t=3", 3, None)):
            if t is None or n_monomials(d, t) > 2**23:
                continue
            if W is None:
                W = choose_representation(d, k, alpha_idc, m=d, max_monomials=2**24).W
            mw = PolynomialMW(d, t, W, alpha_idc)
            qs = [set_mask(rng.choice(d, k, replace=False), d) for _ in range(5)]
            per = _time(lambda mw=mw, qs=qs: [mw.update(q, 0.3) for q in qs], 3) / len(qs)
            rows.append({"d": d, "learner": label, "t": t, "N": mw.N, "W": round(W, 4),
                         "seconds_per_query": per, "mbytes": mw.nbytes / 2**20})  # fmt: skip
            print(f"  d={d:4} {label:18} t={t:3} N={mw.N:>10,} {per * 1e3:9.2f} ms "
                  f"{mw.nbytes / 2**20:8.1f} MiB")  # fmt: skip
        try:
            fd = FullDomainMW(d, alpha_idc)
        except DPQueryError as exc:
            rows.append({"d": d, "learner": "full-domain", "t": d, "N": 2**d, "W": 1,
                         "seconds_per_query": "", "mbytes": 16 * 2**d / 2**20})  # fmt: skip
            print(f"  d={d:4} full-domain refused: {str(exc)[:90]}")
            continue
        q = OnlineQuery("conjunction", ((0, True), (1, False), (2, True)))
        per = _time(lambda fd=fd, q=q: fd.update(q, 0.3), 3)
        rows.append({"d": d, "learner": "full-domain", "t": d, "N": 2**d, "W": 1,
                     "seconds_per_query": per, "mbytes": fd.nbytes / 2**20})  # fmt: skip
        print(f"  d={d:4} full-domain        {per * 1e3:9.2f} ms {fd.nbytes / 2**20:8.1f} MiB")
        del fd
    _write("timing.csv", rows)
    return rows


def polynomials() -> list[dict]:
    """Degree and weight of the constructions (gamma = 1/400) against Theorem 1.3."""
    rows = []
    for d, k in itertools.product((16, 64, 256, 1024), (1, 2, 3, 4, 8)):
        if k >= d:
            continue
        b = theorem_1_3_bounds(d, k)
        best = {}
        for m in sorted(
            {1, 2, 4, 8, 16, d // 8, d // 4, d // 2, d, math.ceil(d ** (1 / math.sqrt(k)))}
        ):
            if not 1 <= m <= d:
                continue
            for p in (lemma_4_2(d, k, m, 1 / 400), interpolated_or(d, k, m)):
                key = p.name.split(" (")[0]
                rows.append({"d": d, "k": k, "construction": key, "m": m, "degree": p.degree,
                             "weight": p.weight, "error": float(p.error),
                             "bound_degree_sqrt_k": b["degree_sqrt_k"],
                             "bound_degree_log": b["degree_log"],
                             "bound_weight": b["weight"]})  # fmt: skip
                best.setdefault(key, p)
        lm = max(1, round((math.log(d) / math.log(math.log(d))) ** 2))
        p = lemma_4_1(d, min(lm, d), 1 / 400)
        rows.append({"d": d, "k": k, "construction": "Lemma 4.1", "m": p.m, "degree": p.degree,
                     "weight": p.weight, "error": float(p.error),
                     "bound_degree_sqrt_k": b["degree_sqrt_k"], "bound_degree_log": b["degree_log"],
                     "bound_weight": b["weight"]})  # fmt: skip
    _write("polynomials.csv", rows)
    return rows


def adult_accuracy() -> list[dict]:
    """All 3-way marginal cells of adult-mwem, random and adversarial orders."""
    from dpquery import datasets

    if not datasets.available("adult-mwem"):
        print("  adult-mwem not found in DPQUERY_DATA_DIR: skipped")
        return []
    data = datasets.load("adult-mwem")
    dense = data.to_dense().astype(bool)
    d = data.d
    queries = [OnlineQuery("conjunction", tuple(zip(S, pol, strict=True)))
               for S in itertools.combinations(range(d), 3)
               for pol in itertools.product((False, True), repeat=3)]  # fmt: skip
    truth = {}
    for q in queries:
        cols = [dense[:, b] if p else ~dense[:, b] for b, p in q.literals]
        truth[q] = float((cols[0] & cols[1] & cols[2]).mean())
    rows = []
    configs = [("polynomial", len(queries), 64), ("full-domain", 60, 4)]  # 2^27: ~3 s an update
    for (rep, count, pool), order in itertools.product(configs, ("random", "adversarial")):
        rng = np.random.default_rng(1)
        s = PMWSession(data, 1.0, 1e-6, 0.1, 3, representation=rep, max_updates=200,
                       max_monomials=100_000, accept_unverified=True, seed=2)  # fmt: skip
        errs, sources, start = [], [], time.perf_counter()
        order_idx = rng.permutation(len(queries))[:count]
        for step in range(count):
            if order == "random":
                q = queries[order_idx[step]]
            else:  # the worst of `pool` random candidates under the current hypothesis
                cand = [queries[i] for i in rng.integers(len(queries), size=pool)]
                q = max(cand, key=lambda c: abs(s.hypothesis_answer(c) - truth[c]))
            a = s.answer(q)
            errs.append(abs(a.value - truth[q]))
            sources.append(a.source)
        secs = (time.perf_counter() - start) / count
        e = np.array(errs)
        src = np.array(sources)
        row = {"representation": rep, "order": order, "queries": count,
               "max_error": e.max(), "mean_error": e.mean(), "within_alpha": (e <= 0.1).mean(),
               "max_error_not_refused": e[src != "refused"].max(initial=0.0),
               "updates": s.updates_used, "refused": int((src == "refused").sum()),
               "spent": s.epsilon_spent, "seconds_per_query": secs,
               "B": s.mistake_bound}  # fmt: skip
        rows.append(row)
        print(f"  {rep:11} {order:11} {count:6} queries: max err {e.max():.3f}, mean "
              f"{e.mean():.4f}, within 0.1: {row['within_alpha']:.3f}, updates "
              f"{s.updates_used}, refused {row['refused']}, {secs * 1e3:.1f} ms/query")  # fmt: skip
    _write("adult_accuracy.csv", rows)
    return rows


def plot(timing_rows: list[dict], poly_rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIGURES.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for label in ("polynomial (auto)", "polynomial t=3", "full-domain"):
        pts = [(r["d"], r["seconds_per_query"], r["mbytes"]) for r in timing_rows
               if r["learner"] == label and r["seconds_per_query"] != ""]  # fmt: skip
        if pts:
            ax[0].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
            ax[1].plot([p[0] for p in pts], [p[2] for p in pts], "o-", label=label)
    ax[0].axhline(1.0, color="grey", ls=":")
    for a, title in zip(ax, ("seconds per query (update)", "memory (MiB)"), strict=True):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("d")
        a.set_title(title)
        a.legend()
    fig.tight_layout()
    fig.savefig(FIGURES / "online_timing.png", dpi=120)
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in (2, 3, 8):
        pts = sorted(
            (r["degree"], r["weight"])
            for r in poly_rows
            if r["d"] == 256 and r["k"] == k and r["construction"] == "Lemma 4.2"
        )
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"Lemma 4.2, k={k}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("degree t")
    ax.set_ylabel("weight W")
    ax.set_title("d=256, gamma=1/400: degree-weight trade-off over m")
    ax.legend()
    fig.tight_layout()
    fig.savefig(FIGURES / "online_polynomials.png", dpi=120)
    print(f"  wrote {FIGURES / 'online_timing.png'}, {FIGURES / 'online_polynomials.png'}")


def main() -> None:
    print("per-query time and memory against d (k=3, alpha_I=0.05)")
    t = timing()
    print("polynomials against Theorem 1.3 (gamma = 1/400)")
    p = polynomials()
    print("accuracy on adult-mwem, all 3-way marginal cells (eps=1, delta=1e-6, alpha=0.1)")
    adult_accuracy()
    plot(t, p)


if __name__ == "__main__":
    main()
