"""One source of randomness per run (see :mod:`dpquery.privacy.randomness`).

Every random choice in dpquery flows from one ``numpy.random.Generator``. Give a seed for
testing and research (a PCG64 generator: runs are then reproducible bit for bit on the same
platform); give none for a release, and the generator is a cryptographically secure one
(AES-128 in counter mode) keyed from the operating system's entropy.
"""

from __future__ import annotations

from dpquery.privacy.randomness import SeedLike, child_rng, describe_rng, make_rng

__all__ = ["SeedLike", "child_rng", "describe_rng", "make_rng"]
