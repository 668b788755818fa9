"""The full-domain comparator: multiplicative weights over all ``2^d`` records (Hardt and
Rothblum 2010, as the IDC of Gupta, Roth, Ullman 2012).

The hypothesis is a distribution over ``{0,1}^d``; a mistake on query ``q`` with estimate ``a``
multiplies ``w_x`` by ``exp(-eta q(x))`` if the hypothesis over-estimates (``a < <w, q>``) and
by ``exp(eta q(x))`` otherwise, ``eta = alpha/2``; the KL potential starts at ``d ln 2`` and
drops by ``eta alpha - eta^2 = alpha^2/4`` per mistake, so ``B = 4 d ln 2 / alpha^2``.
Memory is two float64 arrays of ``2^d`` entries; :class:`FullDomainMW` refuses a ``d`` whose
arrays exceed ``max_bytes`` and says how much it would need.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dpquery.errors import DPQueryError
from dpquery.online.transform import OnlineQuery

DEFAULT_MAX_BYTES = 2**31
BYTES_PER_RECORD = 16  # log-weight and weight, float64 each


def _fmt_bytes(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if b < 1024 or unit == "EiB":
            return f"{b:.1f} {unit}"
        b /= 1024
    return f"{b:.1f} EiB"  # pragma: no cover


def full_domain_bytes(d: int) -> int:
    return BYTES_PER_RECORD * 2**d


def full_domain_mistake_bound(d: int, alpha: float) -> int:
    """``B = 4 log|X| / alpha^2`` with ``|X| = 2^d``."""
    return math.ceil(4 * d * math.log(2) / (alpha * alpha))


@numba.njit(cache=True)
def _value(w: np.ndarray, pos: np.uint64, neg: np.uint64) -> float:  # pragma: no cover - jit
    total = 0.0
    for x in range(w.shape[0]):
        ux = np.uint64(x)
        if (ux & pos) == pos and (ux & neg) == 0:
            total += w[x]
    return total


@numba.njit(cache=True)
def _step(
    logw: np.ndarray, pos: np.uint64, neg: np.uint64, flip: bool, step: float
) -> None:  # pragma: no cover - jit
    for x in range(logw.shape[0]):
        ux = np.uint64(x)
        q = 1.0 if ((ux & pos) == pos and (ux & neg) == 0) else 0.0
        if flip:
            q = 1.0 - q
        logw[x] -= step * q


def _masks(query: OnlineQuery) -> tuple[np.uint64, np.uint64, bool]:
    """``q = conj(pos, neg)`` or ``1 - conj`` (``flip``): a disjunction is one minus the
    conjunction of its complemented literals."""
    pos = neg = 0
    complement = query.kind == "disjunction"
    for b, p in query.literals:
        if p != complement:
            pos |= 1 << b
        else:
            neg |= 1 << b
    return np.uint64(pos), np.uint64(neg), complement != query.negated


class FullDomainMW:
    """MW over ``{0,1}^d`` (record ``x`` = integer with bit ``j`` = attribute bit ``j``)."""

    def __init__(self, d: int, alpha: float, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        need = full_domain_bytes(d) if d < 200 else math.inf
        if d > 62 or need > max_bytes:
            raise DPQueryError(
                f"full-domain PMW over d={d} bits needs 2^{d} weights = "
                f"{_fmt_bytes(float(need))}, more than max_bytes={_fmt_bytes(max_bytes)}; "
                f"use the polynomial representation"
            )
        self.d, self.alpha = d, float(alpha)
        self.eta = self.alpha / 2
        self.B = full_domain_mistake_bound(d, self.alpha)
        self.logw = np.full(2**d, -d * math.log(2))
        self.w = np.exp(self.logw)
        self.updates = 0

    def predict(self, query: OnlineQuery) -> float:
        pos, neg, flip = _masks(query)
        v = float(_value(self.w, pos, neg))
        return 1.0 - v if flip else v

    def update(self, query: OnlineQuery, a: float) -> None:
        sign = 1.0 if a < self.predict(query) else -1.0
        pos, neg, flip = _masks(query)
        _step(self.logw, pos, neg, flip, self.eta * sign)
        self.updates += 1
        self._refresh()

    def _refresh(self) -> None:
        top = float(self.logw.max())
        w = np.exp(self.logw - top)
        total = float(w.sum())
        self.logw -= top + math.log(total)
        self.w = w / total

    @property
    def state(self) -> np.ndarray:
        return self.logw

    def set_state(self, logw: np.ndarray, updates: int) -> None:
        logw = np.asarray(logw, dtype=np.float64)
        if logw.shape != self.logw.shape:
            raise DPQueryError(f"stored weights have shape {logw.shape}, not {self.logw.shape}")
        self.logw = logw.copy()
        self.updates = int(updates)
        self._refresh()

    @property
    def nbytes(self) -> int:
        return int(self.logw.nbytes + self.w.nbytes)

    def describe(self) -> str:
        return (
            f"full-domain MW (Hardt-Rothblum): 2^{self.d} weights, eta={self.eta:g}, B={self.B:,}"
        )
