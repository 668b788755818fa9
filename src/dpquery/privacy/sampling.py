"""Drawing from a distribution given by log-weights: the engine of the exponential mechanism.

The multiplicative-weights distribution of DualQuery, ``Q^t_q ~ exp(-eta sum_{i<t}
(q(x^i) - q(D)))``, *is* an exponential mechanism (DualQuery, proof of Theorem 4.2), so one
routine serves both: normalise in log space (subtract the maximum, so score ranges of 10^6 and
more neither overflow nor lose the top items), take the cumulative sum of the weights once, and
invert it at ``size`` uniforms with a binary search — ``O(N + size log N)`` for ``N`` items,
instead of ``size * N`` Gumbel variates.

Floating-point caveats (cf. Mironov 2012, "On significance of the least significant bits for
differential privacy"): the probabilities realised are those of float64 weights and uniforms,
not the real-number ideal. Uniforms are multiples of ``2^-53`` and the cumulative sum carries
a relative rounding error of order ``N * 2^-53``, so an item's probability is exact only up to
an additive error of roughly ``ulp(total weight) / total``, and items whose probability is
below about ``1e-16`` (or whose log-weight is more than ~745 below the maximum, which
underflows to zero) may be drawn with probability 0 or with a slightly larger one. The pure-DP
ratio bound therefore holds only up to this additive slack (a ``delta`` of order
``N * 2^-53``), which is far below any ``delta`` used in practice but is not zero.
"""

from __future__ import annotations

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
    logw = np.asarray(log_weights, dtype=np.float64)
    if logw.ndim != 1 or logw.size == 0:
        raise PrivacyParameterError(
            f"log_weights must be a non-empty 1-D array; got shape {logw.shape}"
        )
    if np.isnan(logw).any() or np.isposinf(logw).any():
        raise PrivacyParameterError("log_weights must not contain NaN or +inf")
    if not np.isfinite(logw).any():
        raise PrivacyParameterError("log_weights are all -inf: no item can be drawn")
    return logw


def sample_from_log_weights(
    log_weights: ArrayLike, size: int, rng: np.random.Generator
) -> NDArray[np.intp]:
    """Draw ``size`` indices i.i.d. (with replacement) with ``P(i) ~ exp(log_weights[i])``.

    ``-inf`` entries have weight zero and are never drawn; ``+inf`` and NaN are rejected. This
    function spends no privacy by itself: callers charge the :class:`~dpquery.privacy.Ledger`
    first (as :func:`~dpquery.privacy.mechanisms.exponential_mechanism` does).
    """
    rng = _check_rng(rng)
    k = _validate.integer("size", size, minimum=0)
    logw = check_log_weights(log_weights)
    top = logw.max()
    weights = np.exp(logw - top)  # the top item has weight exactly 1
    cumulative = np.cumsum(weights)
    u = rng.random(k) * cumulative[-1]
    idx = np.searchsorted(cumulative, u, side="right")
    # side="right" skips zero-weight items (equal cumulative values). A product rounded up to
    # the total would land past the end: it goes to the last item with positive weight.
    if idx.size and idx.max() >= logw.size:
        idx = np.minimum(idx, np.flatnonzero(weights > 0)[-1])
    return idx.astype(np.intp, copy=False)
