"""Choosing the representation ``(m, t, W)`` for ``(d, k, alpha)`` (Theorems 3.1, 3.5, 1.3).

The learner needs a degree ``t`` and weight ``W`` such that ``P_{t,W}(d)`` is an
``(alpha_I / 4)``-approximation of the disjunction family on ``H_{d,k}`` (Theorem 3.5); by
Fact 2.5 a polynomial ``P`` that ``gamma``-approximates ``OR_d`` on ``H_{d,k}`` gives one with
``gamma/2`` error, degree ``deg P`` and ``W = record_weight(P)``, so ``gamma <= alpha_I / 2``.

Cost of a choice: time and memory per query grow with ``N = binom(d, <= t)``; the mistake
bound ``B = 16 W^2 log(2N + 1) / alpha_I^2`` (Theorem 3.5) drives the privacy cost (the data
size needed grows like ``sqrt(B)``, Theorem 3.3). We scan every block count ``m`` in
``1..d`` and both outer polynomials (exact interpolation, Lemma 4.2's Chebyshev ``q``) and
keep the candidate with the smallest ``B`` among those with ``N <= max_monomials`` (ties: the
smaller ``N``). ``m = 1`` is the exact OR of Fact 4.3 (``t = d``: all ``2^d`` monomials).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpquery.errors import DPQueryError
from dpquery.online.learner import mistake_bound
from dpquery.online.polynomials import BlockPolynomial, interpolated_or, lemma_4_2
from dpquery.online.representation import n_monomials

DEFAULT_MAX_MONOMIALS = 2**22


@dataclass(frozen=True)
class Representation:
    """A chosen ``(m, t, W)`` with the polynomial that proves it and the resulting bound."""

    d: int  # number of query variables (the paper's m in Section 3)
    k: int
    alpha: float  # the IDC's alpha (alpha_I)
    polynomial: BlockPolynomial
    t: int
    W: float
    N: int
    B: int
    explanation: str

    @property
    def m(self) -> int:
        """Number of blocks of the OR-of-ORs construction."""
        return self.polynomial.m


def candidates(d: int, k: int, alpha: float) -> list[BlockPolynomial]:
    """Every block polynomial considered: for each ``m``, exact interpolation and (when it
    could lower the degree) Lemma 4.2 with ``gamma = alpha / 2``."""
    out: list[BlockPolynomial] = []
    seen: set[tuple[int, tuple[int, ...], str]] = set()
    for m in range(1, d + 1):
        polys = [interpolated_or(d, k, m)]
        if m > 1:
            polys.append(lemma_4_2(d, k, m, alpha / 2))
        for p in polys:
            key = (p.degree, p.block_sizes, str(p.newton))
            if key not in seen:
                seen.add(key)
                out.append(p)
    return out


def choose_representation(
    d: int,
    k: int,
    alpha: float,
    *,
    max_monomials: int = DEFAULT_MAX_MONOMIALS,
    m: int | None = None,
) -> Representation:
    """The representation for ``d`` query variables, disjunctions of width ``<= k`` and IDC
    accuracy ``alpha`` (see the module docstring); ``m`` forces the number of blocks."""
    if not 1 <= k <= d:
        raise DPQueryError(f"need 1 <= k <= d={d}, got k={k}")
    if not 0 < alpha < 1:
        raise DPQueryError(f"alpha must lie in (0, 1), got {alpha!r}")
    pool = candidates(d, k, alpha)
    if m is not None:
        pool = [p for p in pool if p.m == m]
        if not pool:
            raise DPQueryError(f"m must be a number of blocks in 1..{d}, got {m!r}")
    scored = []
    for p in pool:
        N = n_monomials(d, p.degree)
        W = max(p.record_weight, 1e-12)
        scored.append((mistake_bound(W, d, p.degree, alpha), N, p, W))
    feasible = [s for s in scored if s[1] <= max_monomials]
    if not feasible:
        smallest = min(scored, key=lambda s: s[1])
        raise DPQueryError(
            f"every representation for d={d}, k={k} needs more than max_monomials="
            f"{max_monomials:,} monomials (the smallest: {smallest[1]:,}, degree "
            f"{smallest[2].degree}); raise max_monomials or lower k"
        )
    B, N, poly, W = min(feasible, key=lambda s: (s[0], s[1]))
    exact = next((s for s in scored if s[2].m == 1), None)
    lines = [
        f"d={d} query variables, k={k}, IDC alpha={alpha:g} (polynomial error <= {alpha / 2:g})",
        f"chose {poly.describe()}",
        f"  -> t={poly.degree}, W={W:.6g} (record weight, Fact 2.5), N=binom({d},<={poly.degree})"
        f"={N:,} monomials, mistake bound B={B:,} (Theorem 3.5)",
        f"  rule: smallest B among {len(feasible)} of {len(scored)} candidates with "
        f"N <= max_monomials={max_monomials:,}",
    ]
    if exact is not None and exact[2] is not poly:
        verdict = "too many monomials" if exact[1] > max_monomials else "larger B"
        lines.append(
            f"  exact OR (Fact 4.3, m=1): t={d}, N={exact[1]:,}, B={exact[0]:,} ({verdict})"
        )
    cheaper = [s for s in feasible if s[1] < N]
    if cheaper:
        c = min(cheaper, key=lambda s: (s[1], s[0]))
        lines.append(
            f"  fastest alternative: {c[2].name}, t={c[2].degree}, N={c[1]:,}, W={c[3]:.4g}, "
            f"B={c[0]:,}"
        )
    return Representation(d, k, alpha, poly, poly.degree, W, N, B, "\n".join(lines))


def theorem_1_3_bounds(d: int, k: int, C: float = 1.0) -> dict[str, float]:
    """The degree and weight bounds of Theorem 1.3 (unknown constant ``C``, default 1):
    ``t <= min(d^(1 - 1/(C sqrt k)), d / log^0.995 d)`` and ``W <= d^0.01``."""
    return {
        "degree_sqrt_k": d ** (1 - 1 / (C * math.sqrt(k))),
        "degree_log": d / math.log(d) ** 0.995 if d > 2 else float(d),
        "weight": d**0.01,
    }
