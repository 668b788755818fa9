"""Privacy-core benchmark: the exponential mechanism's sampler at the algorithms' scales.

* DualQuery: s = 1750 samples from N = 2,000,000 log-weights, once per round;
* FEM on adult-pgm at epsilon 1: one draw from N = 948,858 scores, once per round.

Each is timed for the exact sampler (:func:`dpquery.privacy.sample_from_log_weights`) and for
the float64 inverse-CDF sampler it replaced (reproduced here, for the comparison only), on the
same inputs in the same process; then the exact discrete samplers per draw.

Run: ``python benchmarks/bench_privacy.py`` (or ``python benchmarks/run.py privacy``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from functools import partial

import numpy as np

from dpquery.privacy import sample_from_log_weights
from dpquery.privacy.discrete import sample_discrete_gaussian, sample_discrete_laplace
from dpquery.rng import make_rng


def float_sampler(log_w: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """The float64 sampler the exact one replaced (allowance ~N 2^-53 per draw)."""
    weights = np.exp(log_w - log_w.max())
    cumulative = np.cumsum(weights)
    idx = np.searchsorted(cumulative, rng.random(size) * cumulative[-1], side="right")
    return np.minimum(idx, log_w.size - 1)


def best_of(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times), float(np.median(times))


def main(repeats: int = 9) -> None:
    rng = make_rng(0)
    for label, n_items, s, scale in (
        ("DualQuery round", 2_000_000, 1750, 50.0),
        ("FEM round (adult-pgm)", 948_858, 1, 5.0),
    ):
        log_w = rng.normal(scale=scale, size=n_items)
        print(f"{label}: {s:,} draw(s) from N={n_items:,} log-weights")
        for name, sampler in (("exact", sample_from_log_weights), ("float64", float_sampler)):
            best, median = best_of(partial(sampler, log_w, s, rng), repeats)
            print(f"  {name:<8} best {best * 1e3:6.1f} ms, median {median * 1e3:6.1f} ms "
                  f"over {repeats} runs")  # fmt: skip
    for name, draw, count in (
        ("discrete Laplace, scale 1e6/7", partial(sample_discrete_laplace, 10**6, 7),
         10**5),
        ("discrete Gaussian, sigma^2 = 50", partial(sample_discrete_gaussian, Fraction(50)),
         10**4),
    ):  # fmt: skip
        best, _ = best_of(partial(draw, count, rng), 3)
        print(f"{name}: {best / count * 1e6:.2f} us per draw")


if __name__ == "__main__":
    main()
