"""Exact samplers for integer noise: Canonne, Kamath and Steinke 2020 ("The Discrete Gaussian
for Differential Privacy", NeurIPS 2020), Algorithms 1-3.

Floating-point Laplace or Gaussian noise added to a value leaks the value through which
doubles are reachable (Mironov 2012). Integer noise on integer counts has no such leak, and
these samplers draw it *exactly*: every step is a comparison of uniform integers (numpy's
``Generator.integers``, which is unbiased, or :func:`uniform_below` for larger ranges) with
rational thresholds, so the output distribution is the ideal one, with no rounding error.

* :func:`bernoulli_exp_neg`: ``Bernoulli(exp(-gamma))`` for a rational ``gamma >= 0``
  (Algorithm 1), one draw, in Python integers;
* :func:`sample_discrete_laplace`: ``P(x) ~ exp(-|x|/b)`` on the integers for a rational scale
  ``b = t/s`` (Algorithm 2), vectorised over numpy ``int64`` arrays;
* :func:`sample_discrete_gaussian`: ``P(x) ~ exp(-x^2 / (2 sigma^2))`` on the integers for a
  rational ``sigma^2`` (Algorithm 3): discrete Laplace proposals of scale
  ``t = floor(sigma) + 1``, each accepted with ``Bernoulli(exp(-(|y| - sigma^2/t)^2 /
  (2 sigma^2)))``.

Why not OpenDP's samplers (``opendp`` on PyPI, which implements the same algorithms): they
draw from OpenDP's own operating-system generator, which cannot be seeded from the run's
``numpy.random.Generator``; dpquery's rule is that every random choice flows from one
generator (seeded for research, cryptographically secure otherwise: :mod:`dpquery.privacy.
randomness`), and these ~150 lines keep that rule without a compiled dependency.

Privacy of the mechanisms built on them (:mod:`dpquery.privacy.integer_mechanisms`): integer
queries of L1 sensitivity ``Delta`` plus discrete Laplace noise of scale ``b`` are
``Delta/b``-DP (Ghosh, Roughgarden and Sundararajan 2009; CKS, Section 2.2); of L2
sensitivity ``Delta`` plus discrete Gaussian noise of variance parameter ``sigma^2`` are
``Delta^2 / (2 sigma^2)``-zCDP (CKS Theorem 4, the same as the continuous Gaussian).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from dpquery.privacy.errors import PrivacyParameterError

Rational = Fraction | int

_INT64_SAFE = 2**62  # products of the vectorised steps stay below int64's 2^63


def _rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {rng!r}")
    return rng


def _rational(name: str, value: object, *, positive: bool) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | Fraction | float):
        raise PrivacyParameterError(f"{name} must be a rational number; got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise PrivacyParameterError(f"{name} must be finite; got {value!r}")
    x = Fraction(value)
    if x < 0 or (positive and x == 0):
        raise PrivacyParameterError(
            f"{name} must be {'positive' if positive else 'non-negative'}; got {value!r}"
        )
    return x


def rational_at_least(x: float, denominator: int = 2**20) -> Fraction:
    """The smallest multiple of ``1/denominator`` that is ``>= x``: a public, rational
    stand-in for a float noise scale (rounding up only adds noise)."""
    return Fraction(math.ceil(Fraction(x) * denominator), denominator)


# -- Algorithm 1 -------------------------------------------------------------------------------
def uniform_below(m: int, rng: np.random.Generator) -> int:
    """A uniform integer in ``[0, m)``, exactly, for any positive Python ``int`` ``m``."""
    if m <= 2**63:
        return int(rng.integers(m))
    bits = m.bit_length()
    while True:  # rejection from the next power of two: accepted with probability > 1/2
        x = int.from_bytes(rng.bytes((bits + 7) // 8), "little") >> (-bits % 8)
        if x < m:
            return x


def bernoulli(p: Fraction, rng: np.random.Generator) -> bool:
    """``Bernoulli(p)`` for a rational ``0 <= p <= 1``, exactly."""
    return uniform_below(p.denominator, rng) < p.numerator


def bernoulli_exp_neg(gamma: Rational, rng: np.random.Generator) -> bool:
    """``Bernoulli(exp(-gamma))`` for a rational ``gamma >= 0`` (CKS 2020, Algorithm 1).

    For ``gamma <= 1``: draw ``A_k ~ Bernoulli(gamma/k)`` for ``k = 1, 2, ...`` until the first
    failure at ``K``; ``P(K odd) = exp(-gamma)``. Larger ``gamma``: ``floor(gamma)`` draws at
    ``gamma = 1`` and one at the fractional part, all of which must succeed.
    """
    g = _rational("gamma", gamma, positive=False)
    rng = _rng(rng)
    for _ in range(math.floor(g)):
        if not _bernoulli_exp_neg_unit(Fraction(1), rng):
            return False
    return _bernoulli_exp_neg_unit(g - math.floor(g), rng)


def _bernoulli_exp_neg_unit(g: Fraction, rng: np.random.Generator) -> bool:
    k = 1
    while bernoulli(g / k, rng):
        k += 1
    return k % 2 == 1


# -- Algorithm 2, vectorised -------------------------------------------------------------------
def _bernoulli_exp_neg_fraction(
    u: NDArray[np.int64], t: int, rng: np.random.Generator
) -> NDArray[np.bool_]:
    """``Bernoulli(exp(-u_i/t))`` for integers ``0 <= u_i < t`` (Algorithm 1, gamma <= 1), one
    draw per element: ``A_k ~ Bernoulli(u/(t k))`` is ``integers(t k) < u``."""
    k = np.ones(u.size, dtype=np.int64)
    active = np.arange(u.size)
    while active.size:
        if t * int(k[active].max()) > _INT64_SAFE:  # needs k ~ 2^30: probability ~ 0
            raise OverflowError("Bernoulli(exp(-gamma)) ran out of int64 range")
        success = rng.integers(t * k[active]) < u[active]
        k[active[success]] += 1
        active = active[success]
    return k % 2 == 1


def _geometric_exp_neg_one(size: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """The number of successes of ``Bernoulli(exp(-1))`` before the first failure."""
    v = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        success = _bernoulli_exp_neg_fraction(np.ones(active.size, np.int64), 1, rng)
        v[active[success]] += 1
        active = active[success]
    return v


def sample_discrete_laplace(
    scale: Rational, size: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """``size`` i.i.d. draws with ``P(x) ~ exp(-|x| / scale)`` on the integers, exactly (CKS
    2020, Algorithm 2, with ``scale = t/s``): ``U`` uniform below ``t`` kept with
    ``Bernoulli(exp(-U/t))`` and ``V`` geometric give ``X = U + t V`` geometric of rate
    ``exp(-1/t)``; ``Y = floor(X/s)`` with a random sign, ``-0`` rejected."""
    b = _rational("scale", scale, positive=True)
    rng = _rng(rng)
    if size < 0:
        raise PrivacyParameterError(f"size must be non-negative; got {size}")
    t, s = b.numerator, b.denominator
    if t > _INT64_SAFE // 4096 or s > _INT64_SAFE:
        raise PrivacyParameterError(
            f"scale {b} has a numerator above 2^50 or a denominator above 2^62; round it "
            f"with rational_at_least"
        )
    out = np.empty(0, dtype=np.int64)
    while out.size < size:
        m = max(2 * (size - out.size), 16)  # about 1/3 of the candidates survive at worst
        u = rng.integers(t, size=m, dtype=np.int64)
        u = u[_bernoulli_exp_neg_fraction(u, t, rng)]
        x = u + t * _geometric_exp_neg_one(u.size, rng)
        y = x // s
        negative = rng.integers(2, size=y.size).astype(bool)
        keep = ~(negative & (y == 0))
        out = np.concatenate([out, np.where(negative, -y, y)[keep]])
    return out[:size]


# -- Algorithm 3 -------------------------------------------------------------------------------
def sample_discrete_gaussian(
    sigma2: Rational, size: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """``size`` i.i.d. draws with ``P(x) ~ exp(-x^2 / (2 sigma2))`` on the integers, exactly
    (CKS 2020, Algorithm 3): a discrete Laplace proposal ``Y`` of scale ``t = floor(sigma) +
    1`` is accepted with ``Bernoulli(exp(-(|Y| - sigma2/t)^2 / (2 sigma2)))``."""
    var = _rational("sigma2", sigma2, positive=True)
    rng = _rng(rng)
    if size < 0:
        raise PrivacyParameterError(f"size must be non-negative; got {size}")
    t = math.isqrt(var.numerator // var.denominator) + 1  # floor(sqrt(var)) + 1
    shift = var / t
    out: list[int] = []
    while len(out) < size:
        # the acceptance rate is at least ~0.6 (CKS, Section 5.3): propose what is missing
        for y in sample_discrete_laplace(t, 2 * (size - len(out)) + 1, rng).tolist():
            if bernoulli_exp_neg((abs(y) - shift) ** 2 / (2 * var), rng):
                out.append(y)
                if len(out) == size:
                    break
    return np.array(out, dtype=np.int64)


def discrete_gaussian_pmf(x: NDArray[np.int64], sigma2: float) -> NDArray[np.float64]:
    """``P(x)`` of the discrete Gaussian, normalised over ``|x| <= 40 sigma + 40`` (the rest has
    mass below ``exp(-800)``): for tests and documentation."""
    sigma = math.sqrt(sigma2)
    support = np.arange(-math.ceil(40 * sigma + 40), math.ceil(40 * sigma + 40) + 1)
    total = np.exp(-(support.astype(float) ** 2) / (2 * sigma2)).sum()
    return np.exp(-(np.asarray(x, dtype=float) ** 2) / (2 * sigma2)) / total


def discrete_gaussian_rho(sensitivity: float, sigma2: Rational) -> float:
    """zCDP of ``q(D) + N_Z(0, sigma2)`` for an integer-valued ``q`` of L2 sensitivity
    ``Delta``: ``Delta^2 / (2 sigma2)`` (CKS 2020, Theorem 4)."""
    var = _rational("sigma2", sigma2, positive=True)
    return float(Fraction(sensitivity) ** 2 / (2 * var))


def discrete_laplace_epsilon(sensitivity: int, scale: Rational) -> float:
    """Pure DP of ``q(D) + Lap_Z(scale)`` for an integer-valued ``q`` of L1 sensitivity
    ``Delta``: ``Delta / scale`` (the pmf ratio at shift ``Delta``, CKS 2020, Section 2.2)."""
    b = _rational("scale", scale, positive=True)
    return float(Fraction(sensitivity) / b)
