"""Corrections of the winner's curse on replace-one's head mode (NOT PRIVATE scores).

Under replace-one the head mode keeps a picked item's noisy count ``y`` (noise ``sigma``)
where it clears ``T = (sqrt(2 ln k) + 1) sigma`` (``core.head_estimates``), and releases it
as measured: a count kept because its noise drew it over ``T`` is biased high. Each rule
below replaces the kept counts (post-processing of ``y``, the public ``T`` and ``sigma``),
drops those estimated at 0, and the release is rerun (the library path, replace-one):

* ``naive``: ``y`` (the release's);
* ``mle``: the conditional maximum-likelihood estimate given ``y >= T`` (the truncated
  normal's mean ``mu + sigma lambda((T - mu) / sigma)`` set equal to ``y``; Zhong and
  Prentice 2008, Ghosh, Zou and Wright 2008), clipped to ``[0, y]``;
* ``mle1``, ``mle05``: the same, moved at most 1 or 0.5 ``sigma`` below ``y`` (Efron and
  Morris 1972's limited translation, ``core.limited_translation``);
* ``clmean``: the mean of the normalised conditional likelihood over ``mu >= 0`` (Ghosh,
  Zou and Wright 2008's second estimate);
* ``jsdown``, ``jsdown1``: the lower of ``y`` and the James-Stein estimate over the ``k``
  picks' noisy counts (``core.james_stein``), the move uncapped or at most 1 ``sigma``;
* ``npmean``, ``npmed``: the lower of ``y`` and the NPMLE posterior mean or median over
  the ``k`` picks' noisy counts (``shrink.shrink``; empirical Bayes, which selection does
  not bias: Efron 2011, "Tweedie's formula and selection bias").

Per rule: each measure's ratio to zeros' at the worst seed and its mean over the seeds, and
the items kept per seed::

    nice .venv/bin/python benchmarks/head_selection_bias.py --shape dense --epsilon 0.1 \\
        --seeds 0 1 2 3 --rules naive mle mle1 npmed
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable

import numpy as np
from scipy.special import log_ndtr

from bench_wide_bounds import shape
from dpquery.algorithms import registry
from dpquery.algorithms.wide import core
from dpquery.algorithms.wide.shrink import shrink
from dpquery.evaluation.wide import WideMeasures

Estimates = Callable[..., tuple[np.ndarray, np.ndarray]]


def truncated_mean(mu: np.ndarray, threshold: float, sigma: float) -> np.ndarray:
    """``E[y | y >= threshold]`` for ``y ~ N(mu, sigma^2)``: ``mu + sigma lambda(a)``."""
    a = (threshold - mu) / sigma
    return mu + sigma * np.exp(-0.5 * a**2 - 0.5 * np.log(2 * np.pi) - log_ndtr(-a))


def conditional_mle(y: np.ndarray, threshold: float, sigma: float) -> np.ndarray:
    """The ``mu`` in ``[0, y]`` whose truncated mean is ``y`` (0 where even ``mu = 0``'s is
    above ``y``): bisection, the truncated mean rising with ``mu``."""
    lo, hi = np.zeros_like(y), y.copy()
    solve = truncated_mean(lo, threshold, sigma) < y
    for _ in range(60):
        mid = (lo + hi) / 2
        low = truncated_mean(mid, threshold, sigma) < y
        lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
    return np.where(solve, (lo + hi) / 2, 0.0)


def conditional_mean(y: np.ndarray, threshold: float, sigma: float) -> np.ndarray:
    """The mean of ``mu >= 0`` under the normalised conditional likelihood of each ``y``."""
    out = np.empty_like(y)
    for i, v in enumerate(y):
        mu = np.linspace(0.0, v + 8 * sigma, 2000)
        log_l = -0.5 * ((v - mu) / sigma) ** 2 - log_ndtr((mu - threshold) / sigma)
        w = np.exp(log_l - log_l.max())
        out[i] = (w * mu).sum() / w.sum()
    return out


def rule(name: str, original: Estimates) -> Estimates:
    """``core.head_estimates`` with replace-one's kept counts estimated by ``name``."""

    def head_estimates(y, sigma, n, k, shrunk=False, raise_limit=None):  # type: ignore[no-untyped-def]
        if shrunk or name == "naive":
            return original(y, sigma, n, k, shrunk, raise_limit)
        t = core.family_threshold(k) * sigma
        kept = y >= t
        yk = y[kept]
        if name.startswith("mle"):
            down = {"mle": np.inf, "mle1": 1.0, "mle05": 0.5}[name]
            est = core.limited_translation(yk, conditional_mle(yk, t, sigma), sigma, 0.0, down)
        elif name == "clmean":
            est = conditional_mean(yk, t, sigma)
        elif name.startswith("jsdown"):
            js = core.james_stein(y, sigma)[kept]
            est = core.limited_translation(yk, js, sigma, 0.0, np.inf if name == "jsdown" else 1)
        else:
            est = np.minimum(yk, shrink(y, sigma, mean=name == "npmean")[kept])
        c = np.zeros_like(y, dtype=np.float64)
        c[kept] = np.minimum(est, n)
        return c, kept & (c > 0)

    return head_estimates


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", required=True)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    p.add_argument("--rules", nargs="+", default=["naive", "mle", "mle1", "npmed"])
    args = p.parse_args()
    warnings.simplefilter("ignore")
    real = shape(args.shape, args.data_seed)
    m = WideMeasures.of(real, seed=0)
    z = m.reference_scores()["zeros"]
    original = core.head_estimates
    for name in args.rules:
        core.head_estimates = rule(name, original)
        rows, kept = [], []
        try:
            for s in args.seeds:
                options = {"epsilon": args.epsilon, "neighbours": "replace-one"}
                release = registry.build("wide", options, seed=s).fit(real.matrix)
                sc = m.scores(release.records)
                rows.append([sc[q][v] / z[q][v] for q in sc for v in ("max", "mean")])
                kept.append(int(release.parameters.get("items_kept", -1)))
        finally:
            core.head_estimates = original
        r = np.array(rows)
        worst = " ".join(f"{v:.4f}" for v in r.max(axis=0))
        mean = " ".join(f"{v:.4f}" for v in r.mean(axis=0))
        print(f"| {args.shape} | {args.epsilon} | {name} | {worst} | {mean} | {kept} |", flush=True)


if __name__ == "__main__":
    main()
