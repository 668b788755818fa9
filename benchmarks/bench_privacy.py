"""Privacy-core benchmark: the multiplicative-weights sampler at DualQuery's scale
(s = 1750 samples from N = 2,000,000 log-weights, once per round).

Run: ``python benchmarks/bench_privacy.py`` (or ``make bench``).
"""

from __future__ import annotations

import time

import numpy as np

from dpquery.privacy import sample_from_log_weights
from dpquery.rng import make_rng


def main(n_items: int = 2_000_000, s: int = 1750, repeats: int = 5) -> None:
    rng = make_rng(0)
    log_w = rng.normal(scale=50.0, size=n_items)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sample_from_log_weights(log_w, s, rng)
        times.append(time.perf_counter() - start)
    best = min(times)
    print(f"sample_from_log_weights: s={s:,} from N={n_items:,} log-weights")
    print(f"  best {best * 1e3:.1f} ms, median {np.median(times) * 1e3:.1f} ms over {repeats} "
          f"runs; {n_items / best / 1e6:.0f} M items/s")  # fmt: skip


if __name__ == "__main__":
    main()
