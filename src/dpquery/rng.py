"""One source of randomness per run.

Every random choice in dpquery flows from one ``numpy.random.Generator``. Give a seed for
testing and research (runs are then reproducible bit for bit on the same platform); give
none in production, and the generator is seeded from the operating system's entropy, so its
draws are unpredictable.
"""

from __future__ import annotations

import numpy as np

SeedLike = int | np.random.Generator | np.random.SeedSequence | None


def make_rng(seed: SeedLike = None) -> np.random.Generator:
    """Return a Generator: the one passed, one seeded by ``seed``, or an OS-seeded one."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not (
        seed is None or isinstance(seed, int | np.integer | np.random.SeedSequence)
    ):
        raise TypeError(f"seed must be an int, a numpy Generator or None; got {seed!r}")
    if isinstance(seed, int | np.integer) and seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed}")
    return np.random.default_rng(seed)
