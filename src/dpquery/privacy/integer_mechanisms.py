"""Noise on integer counts from exact discrete samplers: what dpquery publishes as noisy values.

A released noisy value must not be a raw floating-point noise draw (Mironov 2012: the float
``value + Laplace`` can reveal ``value``). These mechanisms take integer counts (e.g. ``n``
times a counting query's answer) and add exact discrete Laplace or discrete Gaussian noise
(:mod:`dpquery.privacy.discrete`, Canonne-Kamath-Steinke 2020). Like every mechanism
they validate, charge the ledger, then draw. The noise scale is rounded *up* to a rational
(:func:`~dpquery.privacy.discrete.rational_at_least`), so the guarantee charged holds.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpquery.privacy import _validate
from dpquery.privacy.costs import ZCDP, PureDP
from dpquery.privacy.discrete import (
    rational_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
)
from dpquery.privacy.errors import PrivacyParameterError
from dpquery.privacy.ledger import Ledger
from dpquery.privacy.mechanisms import _check_ledger
from dpquery.privacy.sampling import _check_rng


def integer_counts(values: ArrayLike) -> NDArray[np.int64]:
    """``values`` as int64, refusing anything that is not a whole number."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    as_float = arr.astype(np.float64)
    if not np.isfinite(as_float).all() or (as_float != np.rint(as_float)).any():
        raise PrivacyParameterError("counts must be whole numbers (integer noise needs them)")
    return as_float.astype(np.int64)


def discrete_laplace_scale(epsilon: float, sensitivity: float) -> Fraction:
    """The public rational scale ``b >= sensitivity / epsilon`` used for ``epsilon``-DP."""
    return rational_at_least(
        _validate.positive("sensitivity", sensitivity) / _validate.positive("epsilon", epsilon)
    )


def discrete_gaussian_sigma2(rho: float, sensitivity: float) -> Fraction:
    """The public rational ``sigma^2 >= sensitivity^2 / (2 rho)`` used for ``rho``-zCDP."""
    s = Fraction(_validate.positive("sensitivity", sensitivity))
    return rational_at_least(float(s * s / (2 * Fraction(_validate.positive("rho", rho)))))


def discrete_laplace_mechanism(
    counts: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "discrete Laplace mechanism",
) -> NDArray[np.int64]:
    """``counts + Lap_Z(b)`` in every coordinate, ``b >= sensitivity/epsilon``: ``epsilon``-DP
    when ``sensitivity`` bounds the L1 change of the count vector (the geometric mechanism,
    Ghosh, Roughgarden and Sundararajan 2009; CKS 2020, Section 2.2)."""
    scale = discrete_laplace_scale(epsilon, sensitivity)
    rng = _check_rng(rng)
    c = integer_counts(counts)
    ledger = _check_ledger(ledger)
    ledger.charge(name, PureDP(epsilon))
    noise = sample_discrete_laplace(scale.numerator, scale.denominator, c.size, rng)
    return c + noise.reshape(c.shape)


def discrete_gaussian_mechanism(
    counts: ArrayLike,
    *,
    rho: float,
    sensitivity: float,
    rng: np.random.Generator,
    ledger: Ledger,
    name: str = "discrete Gaussian mechanism",
) -> NDArray[np.int64]:
    """``counts + N_Z(0, sigma^2)``, ``sigma^2 >= sensitivity^2 / (2 rho)``: ``rho``-zCDP when
    ``sensitivity`` bounds the L2 change of the count vector (CKS 2020, Theorem 4)."""
    sigma2 = discrete_gaussian_sigma2(rho, sensitivity)
    rng = _check_rng(rng)
    c = integer_counts(counts)
    ledger = _check_ledger(ledger)
    ledger.charge(name, ZCDP(rho))
    return c + sample_discrete_gaussian(sigma2, c.size, rng).reshape(c.shape)
