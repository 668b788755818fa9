"""The multiplicative-weights IDC over low-weight polynomials (Small databases, Algorithm 1).

The hypothesis is the vector ``p_bar`` of :mod:`dpquery.online.representation`, kept as
log-weights (so that long runs neither underflow nor lose entries) with a cached coefficient
vector ``W (p_bar_S - p_bar_{-S})`` for the ``O(N)`` evaluation of each query.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dpquery.errors import DPQueryError
from dpquery.online.representation import evaluate_coefficients, monomial_masks, n_monomials


def mistake_bound(W: float, m: int, t: int, alpha: float) -> int:
    """Theorem 3.5: ``B = 16 W^2 log(2 binom(m, <= t) + 1) / alpha^2`` (rounded up).

    Proof sketch (the paper's): the potential ``KL(p_bar_D || p_bar^(t))`` starts at most at
    ``log(2N + 1)`` (uniform start) and drops by ``>= alpha^2 / 16 W^2`` per mistake (Lemma 3.7
    with ``eta = alpha / 4W``), and never goes negative.
    """
    if not (W > 0 and alpha > 0):
        raise DPQueryError(f"need W > 0 and alpha > 0, got W={W!r}, alpha={alpha!r}")
    return math.ceil(16 * W * W * math.log(2 * n_monomials(m, t) + 1) / (alpha * alpha))


@numba.njit(cache=True)
def _mw_step(
    logw: np.ndarray, masks: np.ndarray, query: np.ndarray, step: float
) -> None:  # pragma: no cover - jit
    """``log p_bar_I -= step * y_bar_I``: ``y_bar_S = chi_S(y)``, ``y_bar_{-S} = -chi_S(y)``."""
    n = masks.shape[0]
    for i in range(n):
        c = np.uint64(0)
        for w in range(masks.shape[1]):
            x = masks[i, w] & query[w]
            x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
            x = (x & np.uint64(0x3333333333333333)) + (
                (x >> np.uint64(2)) & np.uint64(0x3333333333333333)
            )
            x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
            c += (x * np.uint64(0x0101010101010101)) >> np.uint64(56)
        chi = -1.0 if c & np.uint64(1) else 1.0
        logw[1 + i] -= step * chi
        logw[1 + n + i] += step * chi


class PolynomialMW:
    """Algorithm 1, ``U^MW_alpha``, over monomials of degree ``<= t`` in ``m`` variables with
    weight bound ``W``: ``eta = alpha / 4W``, mistake bound :func:`mistake_bound`.

    ``value(query)`` is ``W <p_bar, y_bar>`` (Fact 3.4) for the query with ``-1`` on the set
    ``query`` (a bit mask); ``update(query, a)`` is one round of Algorithm 1.
    """

    def __init__(self, m: int, t: int, W: float, alpha: float) -> None:
        self.m, self.t, self.W, self.alpha = int(m), int(t), float(W), float(alpha)
        self.eta = self.alpha / (4 * self.W)
        self.B = mistake_bound(self.W, self.m, self.t, self.alpha)
        self.masks = monomial_masks(self.m, self.t)
        self.N = int(self.masks.shape[0])
        # the first output of Algorithm 1: uniform, "representing the constant 0 polynomial"
        self.logw = np.full(2 * self.N + 1, -math.log(2 * self.N + 1))
        self.updates = 0
        self._refresh()

    def _refresh(self) -> None:
        # normalise in log space (logsumexp) and cache the coefficients W (p_S - p_-S)
        top = float(self.logw.max())
        p = np.exp(self.logw - top)
        total = float(p.sum())
        self.logw -= top + math.log(total)
        p /= total
        self.pbar = p
        self.coef = self.W * (p[1 : self.N + 1] - p[self.N + 1 :])

    def value(self, query: np.ndarray) -> float:
        """``W <p_bar, y_bar>``: the hypothesis polynomial at the query."""
        return float(evaluate_coefficients(self.coef, self.masks, query))

    def update(self, query: np.ndarray, a: float) -> None:
        """One update of Algorithm 1 with the answer estimate ``a``: ``r = y_bar`` if
        ``a < W <p_bar, y_bar>`` else ``-y_bar``; ``p_bar_I <- exp(-eta r_I) p_bar_I``;
        normalise."""
        if not math.isfinite(a):
            raise DPQueryError(f"the answer estimate must be finite, got {a!r}")
        sign = 1.0 if a < self.value(query) else -1.0
        _mw_step(self.logw, self.masks, query, self.eta * sign)
        self.updates += 1
        self._refresh()

    def set_state(self, logw: np.ndarray, updates: int) -> None:
        logw = np.asarray(logw, dtype=np.float64)
        if logw.shape != self.logw.shape or not np.isfinite(logw).all():
            raise DPQueryError(
                f"stored hypothesis has shape {logw.shape}, expected {self.logw.shape}"
            )
        self.logw = logw.copy()
        self.updates = int(updates)
        self._refresh()

    @property
    def nbytes(self) -> int:
        return int(self.masks.nbytes + self.logw.nbytes + self.pbar.nbytes + self.coef.nbytes)
