"""Where the noise comes from: one generator per run, cryptographically secure unless seeded.

Differential privacy assumes the adversary cannot predict the noise. A seeded PCG64 is
reproducible bit for bit, which research and tests need, but PCG64 is not a cryptographic
generator: its state can be recovered from enough of its outputs, and a seed can be guessed.
So:

* ``make_rng(None)`` (every release without a seed) returns a generator driven by
  ``randomgen.AESCounter``, AES-128 in counter mode (a cryptographically secure generator,
  as in NIST SP 800-90A's CTR_DRBG), keyed with 128 bits from :mod:`secrets` (the operating
  system's entropy);
* ``make_rng(seed)`` with an ``int`` or ``SeedSequence`` returns numpy's PCG64: for testing
  and research only;
* ``make_rng(generator)`` returns the generator itself, so one generator can be threaded
  through a run.

:func:`child_rng` derives a sub-generator (for a stage of a run) of the same kind, and
:func:`describe_rng` says which kind a report's noise came from.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np
from randomgen import AESCounter

SeedLike = int | np.random.Generator | np.random.SeedSequence | None

CRYPTOGRAPHIC_BIT_GENERATORS = (AESCounter,)


def secure_rng() -> np.random.Generator:
    """A generator on AES-128 in counter mode, keyed from the operating system's entropy."""
    return np.random.Generator(AESCounter(key=secrets.randbits(128)))


def make_rng(seed: SeedLike = None) -> np.random.Generator:
    """The run's generator: ``seed`` itself if it is one; a cryptographically secure one when
    ``seed`` is ``None``; PCG64 seeded by ``seed`` (an int >= 0 or a ``SeedSequence``)
    otherwise (research and testing only)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not (
        seed is None or isinstance(seed, int | np.integer | np.random.SeedSequence)
    ):
        raise TypeError(f"seed must be an int, a numpy Generator or None; got {seed!r}")
    if isinstance(seed, int | np.integer) and seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed}")
    if seed is None:
        return secure_rng()
    return np.random.default_rng(seed)


def is_cryptographic(rng: np.random.Generator) -> bool:
    """Whether ``rng`` draws from a cryptographically secure bit generator."""
    return isinstance(rng.bit_generator, CRYPTOGRAPHIC_BIT_GENERATORS)


def child_rng(rng: np.random.Generator) -> np.random.Generator | int:
    """A seed for a sub-stage of a run, of the same kind as ``rng``: a fresh secure generator
    keyed by ``rng`` (itself secure, so the key is unpredictable) or, for a research run, an
    ``int`` seed drawn from ``rng`` (PCG64, reproducible from the run's seed)."""
    if is_cryptographic(rng):
        key = int.from_bytes(rng.bytes(16), "little")
        return np.random.Generator(AESCounter(key=key))
    return int(rng.integers(2**63))


def describe_rng(rng: np.random.Generator) -> dict[str, Any]:
    """What a report says about the noise's source: bit generator and whether it is secure."""
    name = type(rng.bit_generator).__name__
    if is_cryptographic(rng):
        note = "cryptographically secure (AES-128 counter mode, keyed from OS entropy)"
    else:
        note = "seeded, NOT cryptographically secure: for testing and research only"
    return {"bit_generator": name, "cryptographic": is_cryptographic(rng), "note": note}
