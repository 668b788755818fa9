"""Exact discrete samplers: integer noise from integer arithmetic, no floating point.

Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020;
CKS below). Every probability is a rational number and every random choice is a uniform
integer, so the output distribution is *exactly* the stated one: there is no porous
floating-point output set of the kind Mironov 2012 exploited in textbook Laplace samplers.

**Uniform integers.** The only source of randomness is :func:`uniform_below`, a uniform integer
in ``{0, ..., m-1}``: for ``m <= 2^63`` numpy's ``Generator.integers(m)`` (exact: bounded
integers by rejection from the bit generator's uniform 64-bit words, Lemire 2019); beyond,
``ceil(log2 m)`` uniform bits assembled from 63-bit words of ``Generator.integers(2^63)``, kept
if ``< m``, else drawn again (each try succeeds with probability ``> 1/2``). Python integers
have unbounded size, so rational parameters may have large denominators.

One public function per sampler; the Bernoulli(exp(-gamma)) step is public because every
sampler of CKS Section 5 is built on it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from dpquery.privacy import _validate
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.sampling import _check_rng

_WORD = 2**63


def uniform_below(m: int, rng: np.random.Generator) -> int:
    """A uniform integer in ``{0, ..., m - 1}``, exact for every ``m >= 1`` (module docstring)."""
    if m <= _WORD:
        return int(rng.integers(m))
    bits = (m - 1).bit_length()
    words = -(-bits // 63)
    while True:
        u = 0
        for w in rng.integers(0, _WORD, size=words, dtype=np.int64):
            u = (u << 63) | int(w)
        u >>= 63 * words - bits
        if u < m:
            return u


def bernoulli_rational(p: Fraction, rng: np.random.Generator) -> bool:
    """``Bernoulli(p)`` for a rational ``p`` in ``[0, 1]``: ``U < numerator`` with ``U`` uniform
    in ``{0, ..., denominator - 1}``."""
    return uniform_below(p.denominator, rng) < p.numerator


def bernoulli_exp(gamma: Fraction, rng: np.random.Generator) -> bool:
    """``Bernoulli(exp(-gamma))`` exactly for a rational ``gamma >= 0`` (CKS Algorithm 1).

    For ``gamma <= 1``: draw ``A_k ~ Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first
    ``A_k = 0``; the ``K`` at which it stops is odd with probability ``exp(-gamma)`` (the
    alternating series ``sum_k (-gamma)^k / k!``). For ``gamma > 1``: ``floor(gamma)``
    independent ``Bernoulli(exp(-1))`` and one ``Bernoulli(exp(-(gamma - floor(gamma))))``
    must all be 1.
    """
    if gamma < 0:
        raise PrivacyParameterError(f"gamma must be >= 0; got {gamma}")
    return _bernoulli_exp(gamma.numerator, gamma.denominator, rng)


def _bernoulli_exp(num: int, den: int, rng: np.random.Generator) -> bool:
    """:func:`bernoulli_exp` of ``gamma = num / den`` on plain integers (no Fraction cost)."""
    whole, num = divmod(num, den)
    for _ in range(whole):
        if not _bernoulli_exp_le1(1, 1, rng):
            return False
    return _bernoulli_exp_le1(num, den, rng)


def _bernoulli_exp_le1(num: int, den: int, rng: np.random.Generator) -> bool:
    """``Bernoulli(exp(-num/den))`` for ``num <= den``: ``A_k ~ Bernoulli(num / (k den))``."""
    k = 1
    while uniform_below(k * den, rng) < num:
        k += 1
    return k % 2 == 1


def _discrete_laplace_one(s: int, t: int, rng: np.random.Generator) -> int:
    """One draw of ``Lap_Z(t/s)`` (CKS Algorithm 2, integers ``s, t >= 1``)."""
    while True:
        u = uniform_below(t, rng)
        if not _bernoulli_exp_le1(u, t, rng):
            continue
        v = 0
        while _bernoulli_exp_le1(1, 1, rng):
            v += 1
        y = (u + t * v) // s
        negative = uniform_below(2, rng) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def sample_discrete_laplace(
    scale_num: int, scale_den: int, size: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """``size`` independent draws of the discrete Laplace distribution with scale
    ``t = scale_num / scale_den``: ``P(Z = z) = (e^(1/t) - 1) / (e^(1/t) + 1) * e^(-|z| / t)``
    for every integer ``z`` (CKS Definition of ``Lap_Z(t)``, sampled by their Algorithm 2).

    Added to an integer count of sensitivity 1 it is ``(1/t)``-DP: for neighbouring counts
    ``c, c + 1`` the probabilities of any output differ by a factor ``e^(1/t)`` at most (the
    geometric mechanism of Ghosh, Roughgarden and Sundararajan 2009 with ``alpha = e^(-1/t)``).
    Exact: integer arithmetic only (module docstring); raises if a draw does not fit int64.
    """
    num = _validate.integer("scale_num", scale_num, minimum=1)
    den = _validate.integer("scale_den", scale_den, minimum=1)
    n = _validate.integer("size", size, minimum=0)
    rng = _check_rng(rng)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        z = _discrete_laplace_one(den, num, rng)
        if not -(2**63) < z < 2**63:  # pragma: no cover - needs a scale near 2^60
            raise PrivacyParameterError(f"a discrete Laplace draw {z} does not fit int64")
        out[i] = z
    return out


def discrete_laplace_pmf(z: NDArray[np.int64] | int, scale: Fraction) -> NDArray[np.float64]:
    """The exact pmf of ``Lap_Z(scale)`` (for tests and accuracy bounds), in float64."""
    inv = float(1 / scale)
    zz = np.abs(np.asarray(z, dtype=np.float64))
    return np.tanh(inv / 2) * np.exp(-zz * inv)


def discrete_laplace_tail(m: int, scale: Fraction) -> float:
    """``P(|Z| >= m)`` for ``Z ~ Lap_Z(scale)`` and an integer ``m >= 1``:
    ``2 e^(-m/t) / (1 + e^(-1/t))`` (sum of the geometric tails)."""
    m = _validate.integer("m", m, minimum=1)
    inv = float(1 / scale)
    return float(min(1.0, 2 * np.exp(-m * inv) / (1 + np.exp(-inv))))
