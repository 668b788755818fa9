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

One public function per sampler, each built on the one before: :func:`bernoulli_exp`
(Algorithm 1), :func:`sample_discrete_laplace` (Algorithm 2), :func:`sample_discrete_gaussian`
(Algorithm 3: discrete Laplace proposals of scale ``t = floor(sigma) + 1``, each accepted with
``Bernoulli(exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)))``). They draw one value at a time in
Python integers: exact for any rational parameter, with no int64 range limit on the
intermediate products. The samplers' loops (:class:`_LaplaceDraws`) keep every rational as an
integer numerator and denominator in lowest terms (what ``Fraction`` keeps, whose arithmetic
cost more than the draws) and ask the generator for the same uniform integers in the same
order as the functions of Algorithms 1 and 2, so a seed gives the same draws (about 1.3 us a
uniform integer, numpy's scalar ``integers``, and some 8 of them a discrete Gaussian draw at
``sigma^2`` near 2,000).

Why not OpenDP's samplers (``opendp`` on PyPI, which implements the same algorithms): they
draw from OpenDP's own operating-system generator, which cannot be seeded from the run's
``numpy.random.Generator``; dpquery's rule is that every random choice flows from one
generator (:mod:`dpquery.privacy.randomness`), and this module keeps it without a compiled
dependency.

Privacy of the mechanisms built on them (:mod:`dpquery.privacy.integer_mechanisms`): integer
queries of L1 sensitivity ``Delta`` plus discrete Laplace noise of scale ``b`` are
``Delta/b``-DP (Ghosh, Roughgarden and Sundararajan 2009; CKS, Section 2.2); of L2
sensitivity ``Delta`` plus discrete Gaussian noise of variance parameter ``sigma^2`` are
``Delta^2 / (2 sigma^2)``-zCDP (CKS Theorem 4, the same as the continuous Gaussian).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from dpquery.privacy import _validate
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.sampling import _check_rng

Rational = Fraction | int

_WORD = 2**63


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


def uniform_below(m: int, rng: np.random.Generator) -> int:
    """A uniform integer in ``{0, ..., m - 1}``, exact for every ``m >= 1`` (module docstring)."""
    if m <= _WORD:
        return int(rng.integers(m))
    return _below_words(m, rng.integers)


def _below_words(m: int, integers: Callable[[int], object]) -> int:
    """:func:`uniform_below` for ``m > 2^63``: 63-bit words, each ``integers(2^63)``. One
    scalar call a word asks the generator for what ``integers(0, 2^63, size=words)`` asks
    (numpy fills an array of bounded 64-bit integers one Lemire draw at a time, as it draws
    a scalar), at a fifth of the array's cost."""
    bits = (m - 1).bit_length()
    words = -(-bits // 63)
    while True:
        u = 0
        for _ in range(words):
            u = (u << 63) | int(integers(_WORD))  # type: ignore[call-overload]
        u >>= 63 * words - bits
        if u < m:
            return u


def bernoulli_rational(p: Fraction, rng: np.random.Generator) -> bool:
    """``Bernoulli(p)`` for a rational ``p`` in ``[0, 1]``: ``U < numerator`` with ``U`` uniform
    in ``{0, ..., denominator - 1}``."""
    return uniform_below(p.denominator, rng) < p.numerator


def bernoulli_exp(gamma: Rational, rng: np.random.Generator) -> bool:
    """``Bernoulli(exp(-gamma))`` exactly for a rational ``gamma >= 0`` (CKS Algorithm 1).

    For ``gamma <= 1``: draw ``A_k ~ Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first
    ``A_k = 0``; the ``K`` at which it stops is odd with probability ``exp(-gamma)`` (the
    alternating series ``sum_k (-gamma)^k / k!``). For ``gamma > 1``: ``floor(gamma)``
    independent ``Bernoulli(exp(-1))`` and one ``Bernoulli(exp(-(gamma - floor(gamma))))``
    must all be 1.
    """
    g = _rational("gamma", gamma, positive=False)
    return _bernoulli_exp(g.numerator, g.denominator, _check_rng(rng))


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


class _LaplaceDraws:
    """CKS Algorithm 2 (``Lap_Z(t/s)``) with its Bernoulli steps written out on integers: the
    same uniform integers asked of the generator in the same order as :func:`uniform_below`,
    :func:`_bernoulli_exp_le1` and :func:`_bernoulli_exp` ask them (so the same draws for a
    seed), without a Python call per step. ``uniform_below(1)`` is always 0 and numpy's
    ``integers(1)`` reads nothing from the bit generator, so that step is skipped."""

    def __init__(self, s: int, t: int, rng: np.random.Generator) -> None:
        self.s, self.t, self.rng = s, t, rng
        self.integers = rng.integers

    def below(self, m: int) -> int:
        """:func:`uniform_below`."""
        return int(self.integers(m)) if m <= _WORD else _below_words(m, self.integers)

    def exp_le1(self, num: int, den: int) -> bool:
        """:func:`_bernoulli_exp_le1`: ``Bernoulli(exp(-num/den))`` for ``num <= den``."""
        k = 1
        if den == 1 and num > 0:  # num == 1: uniform_below(1) = 0 < 1, read from nothing
            k = 2
        below = self.below
        while below(k * den) < num:
            k += 1
        return k % 2 == 1

    def exp(self, num: int, den: int) -> bool:
        """:func:`_bernoulli_exp`: ``Bernoulli(exp(-num/den))``."""
        whole, num = divmod(num, den)
        for _ in range(whole):
            if not self.exp_le1(1, 1):
                return False
        return self.exp_le1(num, den)

    def one(self) -> int:
        """One draw of ``Lap_Z(t/s)``: ``u`` uniform below ``t``, kept with probability
        ``exp(-u/t)``; ``v`` geometric (``Bernoulli(exp(-1))`` until a 0); ``y = floor((u +
        t v) / s)`` with a random sign, the negative zero rejected."""
        s, t, below, exp_le1 = self.s, self.t, self.below, self.exp_le1
        while True:
            u = below(t)
            if not exp_le1(u, t):
                continue
            v = 0
            while exp_le1(1, 1):
                v += 1
            y = (u + t * v) // s
            negative = below(2) == 1
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
    draws = _LaplaceDraws(den, num, rng)
    for i in range(n):
        z = draws.one()
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


def sample_discrete_gaussian(
    sigma2: Rational, size: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """``size`` i.i.d. draws with ``P(x) ~ exp(-x^2 / (2 sigma2))`` on the integers, exactly
    (CKS Algorithm 3): a discrete Laplace proposal ``Y`` of scale ``t = floor(sigma) + 1`` is
    accepted with ``Bernoulli(exp(-(|Y| - sigma2/t)^2 / (2 sigma2)))``."""
    var = _rational("sigma2", sigma2, positive=True)
    n = _validate.integer("size", size, minimum=0)
    rng = _check_rng(rng)
    t = math.isqrt(var.numerator // var.denominator) + 1  # floor(sqrt(var)) + 1
    # gamma = (|y| - var/t)^2 / (2 var) with var = a/b: (|y| b t - a)^2 / (2 a b t^2), in
    # lowest terms as Fraction keeps it (its denominator sets the uniform integers drawn)
    a, b = var.numerator, var.denominator
    bt, den = b * t, 2 * a * b * t * t
    draws = _LaplaceDraws(1, t, rng)
    one, accept, gcd = draws.one, draws.exp, math.gcd
    out = np.empty(n, dtype=np.int64)
    i = 0
    while i < n:
        y = one()
        num = (abs(y) * bt - a) ** 2
        g = gcd(num, den)
        if accept(num // g, den // g):
            out[i] = y
            i += 1
    return out


def discrete_gaussian_pmf(x: NDArray[np.int64], sigma2: float) -> NDArray[np.float64]:
    """``P(x)`` of the discrete Gaussian, normalised over ``|x| <= 40 sigma + 40`` (the rest has
    mass below ``exp(-800)``): for tests and documentation."""
    sigma = math.sqrt(sigma2)
    support = np.arange(-math.ceil(40 * sigma + 40), math.ceil(40 * sigma + 40) + 1)
    total = np.exp(-(support.astype(float) ** 2) / (2 * sigma2)).sum()
    return np.exp(-(np.asarray(x, dtype=float) ** 2) / (2 * sigma2)) / total


def discrete_gaussian_rho(sensitivity: float, sigma2: Rational) -> float:
    """zCDP of ``q(D) + N_Z(0, sigma2)`` for an integer-valued ``q`` of L2 sensitivity
    ``Delta``: ``Delta^2 / (2 sigma2)`` (CKS Theorem 4)."""
    var = _rational("sigma2", sigma2, positive=True)
    return float(Fraction(sensitivity) ** 2 / (2 * var))


def discrete_laplace_epsilon(sensitivity: int, scale: Rational) -> float:
    """Pure DP of ``q(D) + Lap_Z(scale)`` for an integer-valued ``q`` of L1 sensitivity
    ``Delta``: ``Delta / scale`` (the pmf ratio at shift ``Delta``, CKS Section 2.2)."""
    b = _rational("scale", scale, positive=True)
    return float(Fraction(sensitivity) / b)
