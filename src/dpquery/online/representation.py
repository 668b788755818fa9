"""The vector representation of low-degree polynomials (Small databases, Section 3.1).

A polynomial ``p(y) = sum_{|S| <= t} c_S chi_S(y)`` over ``{-1,1}^m`` of weight at most ``W``
is the non-negative vector ``p_bar`` of length ``2 binom(m, <= t) + 1``:
``p_bar_S = max(0, c_S)/W``, ``p_bar_{-S} = max(0, -c_S)/W`` and a slack entry ``p_bar_0``
making ``||p_bar||_1 = 1``. A query ``y`` is ``y_bar`` with ``y_bar_0 = 0``,
``y_bar_S = chi_S(y)``, ``y_bar_{-S} = -chi_S(y)``; Fact 3.4: ``W <p_bar, y_bar> = p(y)``.

Layout: index 0 is the slack entry, ``1..N`` the positive parts, ``N+1..2N`` the negative
parts, in the order of :func:`monomial_masks` (by size, then lexicographic). Monomials and
queries are bit masks over the ``m`` variables (``n_words = ceil(m/64)`` words each), and for
a query ``y`` with ``-1`` exactly on the set ``Q``, ``chi_S(y) = (-1)^|S cap Q|``: one AND and
one popcount per monomial. Nothing here enumerates ``{-1,1}^m``; the work per query is
``O(binom(m, <= t))``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numba
import numpy as np

from dpquery.errors import DPQueryError

WORD = 64


def n_monomials(m: int, t: int) -> int:
    """``binom(m, <= t) = sum_{i <= t} binom(m, i)``."""
    return sum(math.comb(m, i) for i in range(min(t, m) + 1))


def words_for(m: int) -> int:
    return max(1, (m + WORD - 1) // WORD)


def set_mask(variables: Iterable[int], m: int) -> np.ndarray:
    """The bit mask (``words_for(m)`` uint64 words) of a set of variables in ``[0, m)``."""
    mask = np.zeros(words_for(m), dtype=np.uint64)
    for v in variables:
        if not 0 <= v < m:
            raise DPQueryError(f"variable {v} is outside [0, {m})")
        mask[v // WORD] |= np.uint64(1) << np.uint64(v % WORD)
    return mask


@numba.njit(cache=True)
def _fill_combinations(m: int, j: int, out: np.ndarray) -> None:  # pragma: no cover - jit
    """Write every j-subset of range(m), in lexicographic order, as bit masks into out."""
    idx = np.arange(j)
    row = 0
    while True:
        for w in range(out.shape[1]):
            out[row, w] = 0
        for i in range(j):
            v = idx[i]
            out[row, v // 64] |= np.uint64(1) << np.uint64(v % 64)
        row += 1
        # next combination
        i = j - 1
        while i >= 0 and idx[i] == m - j + i:
            i -= 1
        if i < 0:
            return
        idx[i] += 1
        for r in range(i + 1, j):
            idx[r] = idx[r - 1] + 1


def monomial_masks(m: int, t: int) -> np.ndarray:
    """All monomials ``S subseteq [m]``, ``|S| <= t``, as a ``(binom(m, <= t), n_words)`` uint64
    array ordered by size, then lexicographically."""
    if m < 1 or t < 0:
        raise DPQueryError(f"need m >= 1 variables and degree t >= 0, got m={m}, t={t}")
    t = min(t, m)
    parts = [np.zeros((1, words_for(m)), dtype=np.uint64)]
    for j in range(1, t + 1):
        out = np.empty((math.comb(m, j), words_for(m)), dtype=np.uint64)
        _fill_combinations(m, j, out)
        parts.append(out)
    return np.ascontiguousarray(np.concatenate(parts))


@numba.njit(inline="always")
def _popcount(x: np.uint64) -> np.uint64:  # pragma: no cover - jit
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@numba.njit(cache=True)
def characters(masks: np.ndarray, query: np.ndarray) -> np.ndarray:  # pragma: no cover - jit
    """``chi_S(y) = (-1)^|S cap Q|`` for every monomial ``S`` (as float64 +-1)."""
    out = np.empty(masks.shape[0], dtype=np.float64)
    for i in range(masks.shape[0]):
        c = np.uint64(0)
        for w in range(masks.shape[1]):
            c += _popcount(masks[i, w] & query[w])
        out[i] = -1.0 if c & np.uint64(1) else 1.0
    return out


@numba.njit(cache=True)
def evaluate_coefficients(
    coef: np.ndarray, masks: np.ndarray, query: np.ndarray
) -> float:  # pragma: no cover - jit
    """``sum_S coef_S chi_S(y)`` for the query with -1 on the set ``query``."""
    total = 0.0
    for i in range(masks.shape[0]):
        c = np.uint64(0)
        for w in range(masks.shape[1]):
            c += _popcount(masks[i, w] & query[w])
        if c & np.uint64(1):
            total -= coef[i]
        else:
            total += coef[i]
    return total


def query_vector(masks: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``y_bar`` of length ``2N + 1``: ``(0, chi_S(y), -chi_S(y))`` (Section 3.1)."""
    chi = characters(masks, query)
    return np.concatenate([[0.0], chi, -chi])


def to_pbar(coef: np.ndarray, W: float) -> np.ndarray:
    """``p_bar`` of the polynomial with coefficients ``coef`` (in monomial order), for a
    weight bound ``W >= sum |coef|`` (Section 3.1)."""
    coef = np.asarray(coef, dtype=np.float64)
    weight = float(np.abs(coef).sum())
    if not W > 0 or weight > W * (1 + 1e-12):
        raise DPQueryError(f"the polynomial has weight {weight:.6g}, more than W={W!r}")
    pos, neg = np.maximum(coef, 0.0) / W, np.maximum(-coef, 0.0) / W
    slack = max(0.0, 1.0 - float(pos.sum() + neg.sum()))
    return np.concatenate([[slack], pos, neg])


def from_pbar(pbar: np.ndarray, W: float) -> np.ndarray:
    """The coefficients ``W (p_bar_S - p_bar_{-S})`` represented by ``p_bar``."""
    n = (len(pbar) - 1) // 2
    return W * (pbar[1 : n + 1] - pbar[n + 1 :])


def monomial_index(masks: np.ndarray, monomials: Sequence[Sequence[int]], m: int) -> np.ndarray:
    """Row of each monomial (a set of variables) in ``masks``; error if one is missing."""
    keys = {masks[i].tobytes(): i for i in range(masks.shape[0])}
    out = np.empty(len(monomials), dtype=np.int64)
    for j, mono in enumerate(monomials):
        key = set_mask(mono, m).tobytes()
        if key not in keys:
            raise DPQueryError(f"monomial {tuple(mono)} has degree above the representation's")
        out[j] = keys[key]
    return out
