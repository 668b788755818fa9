"""Drawing from a distribution given by log-weights: the engine of the exponential mechanism.

The multiplicative-weights distribution of DualQuery, ``Q^t_q ~ exp(-eta sum_{i<t}
(q(x^i) - q(D)))``, *is* an exponential mechanism (DualQuery, proof of Theorem 4.2), so one
routine serves both.

Exactness. A float64 sampler (normalise, exponentiate, cumulative sum, invert at a float
uniform) realises the ideal probabilities only up to an additive ``N 2^-53`` per draw (Ilvento
2020, "Implementing the exponential mechanism with base-2 differential privacy"), which over
``T`` draws is a total-variation allowance ``T N 2^-53``: for FEM on adult-pgm at epsilon 1
(T = 1,783, N = 948,858) ``1.9e-7``, hundreds of times the ``delta = 4.2e-10`` reported. So
:func:`sample_from_log_weights` samples *exactly* from ``P(i) ~ exp(-gamma_i)``, ``gamma_i =
max(log w) - log w_i`` (the float64 values, each an exact rational), by rejection:

1. propose ``i`` with probability ``V_i / sum V`` for integer weights
   ``V_i = floor(2^B exp(-gamma_i) (1 + 2^-40)) + 1 >= 2^B exp(-gamma_i)`` (``B`` keeps the
   sum below ``2^63``): an exact integer cumulative sum inverted at a uniform integer;
2. accept with probability ``a_i = 2^B exp(-gamma_i) / V_i <= 1``, deciding ``U < a_i`` for a
   uniform ``U`` in ``[0, 1)`` (64 bits at a time): from float64 when ``U`` is more than
   ``2^-38`` (relative) from ``a_i``, otherwise exactly, with ``exp`` from :mod:`decimal`
   (correctly rounded) at increasing precision and more bits of ``U`` until decided.

Then ``P(i) ~ V_i a_i = 2^B exp(-gamma_i)``: the output has the ideal distribution for the
computed ``gamma``, with no allowance at all. The proof needs the proposal to dominate, i.e.
numpy's ``exp`` within a relative ``2^-40`` of the truth (it is within a few ulps, ``2^-50``);
everything else is integer or rational arithmetic. Acceptance is ``>= 1 - N 2^-B - 2^-39``
(``1 - 2^-21`` at ``N = 2^20``), so the cost is one integer cumulative sum instead of a float
one (``benchmarks/bench_privacy.py``).

What remains is the rounding of the log-weights themselves (``epsilon * score / (2
sensitivity)``, the maximum and ``max - log w`` in float64, three roundings of relative
``2^-53`` on magnitudes up to ``2M``, ``M = max |log w|``): it moves each ``gamma_i`` by at
most ``3 * 2^-52 M < 2^-50 M`` on each neighbour, so the realised mechanism is exactly
``(epsilon + 2^-48 M)``-DP (the log-ratio bound adds the error of ``gamma_i`` and of the
normaliser on both neighbours): an epsilon slack below ``4e-12`` for ``M <= 1000`` and no
delta.

``-inf`` log-weights have weight zero and are never drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Context, Decimal
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpquery.privacy import _validate
from dpquery.privacy.errors import PrivacyParameterError


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (see dpquery.rng.make_rng); got {rng!r}"
        )
    return rng


def check_log_weights(log_weights: ArrayLike) -> NDArray[np.float64]:
    """Validate log-weights (1-D, non-empty, no NaN or +inf, not all -inf) as float64."""
    return _checked(log_weights)[0]


def _checked(log_weights: ArrayLike) -> tuple[NDArray[np.float64], bool]:
    """The float64 log-weights and whether all are finite (one pass when they are)."""
    logw = np.asarray(log_weights, dtype=np.float64)
    if logw.ndim != 1 or logw.size == 0:
        raise PrivacyParameterError(
            f"log_weights must be a non-empty 1-D array; got shape {logw.shape}"
        )
    if np.isfinite(logw).all():
        return logw, True
    if np.isnan(logw).any() or np.isposinf(logw).any():
        raise PrivacyParameterError("log_weights must not contain NaN or +inf")
    if not np.isfinite(logw).any():
        raise PrivacyParameterError("log_weights are all -inf: no item can be drawn")
    return logw, False


MARGIN = 2.0**-40  # proposal inflation; numpy's exp is within ~2^-50 (relative) of exp
DECIDE = 2.0**-38  # float decisions closer than this (relative) to a_i are made exactly


def proposal_bits(n_items: int) -> int:
    """``B``: the largest with ``n_items (2^B (1 + 2^-40) + 1) < 2^63``."""
    return max(1, 61 - math.ceil(math.log2(n_items + 1)))


def sample_from_log_weights(
    log_weights: ArrayLike, size: int, rng: np.random.Generator
) -> NDArray[np.intp]:
    """Draw ``size`` indices i.i.d. (with replacement) with ``P(i) ~ exp(log_weights[i])``,
    exactly for the float64 log-weights given (module docstring).

    ``-inf`` entries have weight zero and are never drawn; ``+inf`` and NaN are rejected. This
    function spends no privacy by itself: callers charge the :class:`~dpquery.privacy.Ledger`
    first (as :func:`~dpquery.privacy.mechanisms.exponential_mechanism` does).
    """
    rng = _check_rng(rng)
    k = _validate.integer("size", size, minimum=0)
    logw, finite = _checked(log_weights)
    top = float(logw.max())
    bits = proposal_bits(logw.size)
    # e_i = 2^B exp(-gamma_i) (1 + 2^-40), gamma_i = top - logw_i (0 at -inf or underflow);
    # V_i = floor(e_i) + 1 >= 2^B exp(-gamma_i): the product's one rounding is inside the
    # margin, and every finite log-weight keeps V_i >= 1 while -inf gets 0
    e = logw - top
    np.exp(e, out=e)
    e *= math.ldexp(1 + MARGIN, bits)
    V = e.astype(np.int64)
    V += 1
    if not finite:
        V[np.isneginf(logw)] = 0
    cumulative = np.cumsum(V)  # exact: the total is below 2^63
    out = np.empty(k, dtype=np.intp)
    pending = np.arange(k)
    while pending.size:
        u = rng.integers(cumulative[-1], size=pending.size)
        idx = np.searchsorted(cumulative, u, side="right")
        accept = _accept(idx, logw, top, e, V, bits, rng)
        out[pending[accept]] = idx[accept]
        pending = pending[~accept]
    return out


def _accept(
    idx: NDArray[np.intp], logw: NDArray[np.float64], top: float, e: NDArray[np.float64],
    V: NDArray[np.int64], bits: int, rng: np.random.Generator,
) -> NDArray[np.bool_]:  # fmt: skip
    """``U < a_i = 2^B exp(-gamma_i) / V_i`` for uniform 64-bit ``U``, one per proposal
    (``e`` holds ``2^B exp(-gamma_i) (1 + 2^-40)`` in float64)."""
    a = e[idx] / V[idx] / (1 + MARGIN)  # within ~2^-40 (relative) of a_i

    def exactly(j: int, u: int) -> bool:
        i = int(idx[j])  # gamma_i is the same float as -(logw_i - top) above
        return _accept_exactly(u, float(top - logw[i]), int(V[i]), bits, rng)

    return _below(a, exactly, rng)


def _below(
    a: NDArray[np.float64], exactly: Callable[[int, int], bool], rng: np.random.Generator
) -> NDArray[np.bool_]:
    """``U_j < a_j`` for fresh uniforms ``U_j`` (64 bits each), from float64 when ``U_j`` is
    more than ``2^-38`` (relative) from the float ``a_j``, else by ``exactly(j, first bits)``."""
    u = rng.integers(0, 2**64, size=a.size, dtype=np.uint64, endpoint=False)
    uf = np.ldexp(u.astype(np.float64), -64)
    below = uf < a * (1 - DECIDE)
    for j in np.flatnonzero(~below & (uf < a * (1 + DECIDE))).tolist():  # ~2^-37 each
        below[j] = exactly(j, int(u[j]))
    return below


def bernoulli_exp_neg(gamma: ArrayLike, rng: np.random.Generator) -> NDArray[np.bool_]:
    """One ``Bernoulli(exp(-gamma_j))`` per entry, exactly, for float64 ``gamma_j >= 0`` (each
    an exact rational): the comparison of a uniform with ``exp(-gamma_j)`` above."""
    rng = _check_rng(rng)
    g = np.asarray(gamma, dtype=np.float64)
    if not (np.isfinite(g).all() and (g >= 0).all()):
        raise PrivacyParameterError("gamma must be finite and non-negative")
    flat = g.ravel()

    def exactly(j: int, u: int) -> bool:
        return _accept_exactly(u, float(flat[j]), 1, 0, rng)

    return _below(np.exp(-flat), exactly, rng).reshape(g.shape)


def _accept_exactly(u: int, gamma: float, V: int, bits: int, rng: np.random.Generator) -> bool:
    """Whether the uniform ``U`` whose first 64 bits are ``u`` lies below
    ``a = 2^bits exp(-gamma) / V``: bracket ``exp(-gamma)`` by the neighbours of its correctly
    rounded :mod:`decimal` value and ``U`` by its known bits, refining both until they part."""
    known, precision = 64, 40
    while True:
        context = Context(prec=precision)
        e = context.exp(Decimal(-gamma))  # correctly rounded: within half an ulp
        scale = Fraction(2**bits, V)
        a_lo = Fraction(context.next_minus(e)) * scale
        a_hi = Fraction(context.next_plus(e)) * scale
        if Fraction(u + 1, 2**known) <= a_lo:
            return True
        if Fraction(u, 2**known) >= a_hi:
            return False
        u = (u << 64) | int(rng.integers(0, 2**64, dtype=np.uint64, endpoint=False))
        known, precision = known + 64, precision + 20
