"""Polynomials approximating OR on inputs of low Hamming weight (Small databases, Section 4).

Conventions of the paper: ``OR_d : {-1,1}^d -> {-1,1}`` with ``-1`` = TRUE, ``|y|`` = number of
``-1`` entries, ``H_{d,k} = {y : |y| <= k}``; the weight of ``p = sum_S c_S chi_S`` is
``w(p) = sum_S |c_S|`` and its non-constant weight ``w*(p) = sum_{S != {}} |c_S|``.

Constructions (all coefficients computed exactly, as :class:`fractions.Fraction`):

* :func:`exact_or` -- Fact 4.3: ``p_d(y) = 2 prod_i (1 + y_i)/2 - 1`` computes ``OR_d``.
* :func:`fact_4_4` -- the univariate ``q`` with ``q(0) = 0`` and ``|q(x) - 1| <= gamma/2`` on
  ``x in {1..K}``, from a Chebyshev polynomial (derivation in its docstring).
* :func:`lemma_4_1`, :func:`lemma_4_2`, :func:`interpolated_or` -- the block ("OR of ORs")
  constructions: ``1 - 2 q(m - Z(y))`` with ``Z`` the sum of the exact inner ORs of ``m``
  blocks.

**Block polynomials in closed form.** Let the blocks be ``B_1..B_m`` and
``u_b(y) = 1 - prod_{i in B_b} (1 + y_i)/2``, the 0/1 indicator "block b holds a TRUE". The
inner exact OR is ``p_{B_b} = 1 - 2 u_b`` (Fact 4.3), so ``m - Z(y) = 2 J(y)`` with
``J = sum_b u_b`` the number of blocks holding a TRUE, and the paper's polynomial is
``1 - 2 g(J)`` with ``g(J) = q(2J)``. Because the ``u_b`` are 0/1 valued, Newton's forward
difference formula gives, *as functions on the cube*,

    g(J) = sum_j (Delta^j g)(0) * binom(J, j) = sum_j a_j e_j(u_1, ..., u_m),

with ``e_j`` the elementary symmetric polynomial (``e_j(u) = binom(J, j)`` for 0/1 inputs) and
``a_j = sum_i (-1)^(j-i) binom(j, i) g(i)``. The ``u_b`` depend on disjoint variables, so
``1 - 2 sum_j a_j e_j(u(y))`` is multilinear in ``y``: it *is* the unique multilinear
polynomial computing the paper's composition, whose degree and weight can only be smaller than
the paper's term-by-term bounds (reducing ``y_i^2 = 1`` merges terms). Two observations:

1. ``a_j = 0`` for ``j > deg q`` (differences of a degree-``r`` polynomial), and
2. on ``H_{d,k}`` at most ``k`` blocks hold a TRUE, so ``binom(J, j) = 0`` for ``j > k``:
   the terms ``j > k`` may be dropped without changing any value on ``H_{d,k}``.

Hence the degree is the total size of the ``min(deg q, k, m)`` largest blocks. With ``g`` the
exact step ``g(J) = [J >= 1]`` (``a_j = (-1)^(j+1)``, inclusion-exclusion) the polynomial is
*exact* on ``H_{d,k}``: the interpolation variant of the paper's Section 6 ("Practical
considerations").

**Coefficients.** ``u_b = (1 - 2^-s) - 2^-s sum_{{} != T subseteq B_b} chi_T`` (``s = |B_b|``).
A monomial ``chi_S`` touches the set ``A`` of blocks it meets; its coefficient is

    c_S = [S = {}] - 2 prod_{b in A} (-2^-s_b) sum_{j >= |A|} a_j E_{j - |A|}(rest),

where ``E_i(rest)`` is the ``i``-th elementary symmetric function of ``(1 - 2^-s_b)`` over the
blocks not in ``A``. With a balanced partition there are at most two block sizes, so
coefficients, weight and degree are sums over ``(a_1, a_2)`` = (touched blocks of each size):
exact and cheap for any ``d`` (:meth:`BlockPolynomial.groups`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from itertools import combinations, product

import numpy as np

from dpquery.errors import DPQueryError


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise DPQueryError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_gamma(gamma: float) -> Fraction:
    if not isinstance(gamma, int | float | Fraction) or not 0 < gamma < 2:
        raise DPQueryError(f"gamma must be a number in (0, 2), got {gamma!r}")
    return Fraction(gamma)


# -- Fact 4.4 ---------------------------------------------------------------------------
def chebyshev_values(r: int, z: Fraction) -> list[Fraction]:
    """``T_0(z), ..., T_r(z)`` exactly, by ``T_{i+1} = 2 z T_i - T_{i-1}``."""
    values = [Fraction(1), z]
    while len(values) <= r:
        values.append(2 * z * values[-1] - values[-2])
    return values[: r + 1]


def chebyshev_power_coefficients(r: int) -> list[int]:
    """Coefficients of ``T_r`` in the power basis (``T_r(z) = sum_i coef[i] z^i``)."""
    prev, cur = [1], [0, 1]
    if r == 0:
        return prev
    for _ in range(r - 1):
        nxt = [0] * (len(cur) + 1)
        for i, c in enumerate(cur):
            nxt[i + 1] += 2 * c
        for i, c in enumerate(prev):
            nxt[i] -= c
        prev, cur = cur, nxt
    return cur


@dataclass(frozen=True)
class UnivariateOR:
    """The polynomial ``q`` of Fact 4.4 for the range ``{1..K}`` and error ``gamma``.

    ``coefficients[i]`` is the exact coefficient of ``x^i``; ``error`` the exact
    ``max_{x in 1..K} |q(x) - 1|``; ``degree_bound`` the degree the closed-form bound of the
    derivation asks for (``degree <= degree_bound``).
    """

    K: int
    gamma: Fraction
    degree: int
    coefficients: tuple[Fraction, ...]
    error: Fraction
    degree_bound: int

    def __call__(self, x: int | Fraction) -> Fraction:
        """``q(x)`` exactly (Horner)."""
        acc = Fraction(0)
        for c in reversed(self.coefficients):
            acc = acc * x + c
        return acc


def fact_4_4(K: int, gamma: float) -> UnivariateOR:
    """Fact 4.4 (via Thaler, Ullman, Vadhan 2012): ``q`` with ``q(0) = 0`` and
    ``|q(x) - 1| <= gamma/2`` for every integer ``x in {1..K}``, degree ``O(sqrt(K) log(1/gamma))``.

    Derivation. The affine map ``phi(x) = (2x - (K+1)) / (K-1)`` sends ``[1, K]`` onto
    ``[-1, 1]`` and ``0`` to ``phi(0) = -(1 + 2/(K-1))``, just outside. Let

        q(x) = 1 - T_r(phi(x)) / T_r(phi(0)).

    Then ``q(0) = 0``; on ``[1, K]``, ``|T_r| <= 1`` so ``|q(x) - 1| <= 1/|T_r(phi(0))|``; and
    ``|T_r(1 + delta)| = cosh(r arccosh(1 + delta))``, so ``r = ceil(arccosh(2/gamma) /
    arccosh(1 + 2/(K-1)))`` suffices; as ``arccosh(1 + delta) ~ sqrt(2 delta)`` this is
    ``r ~ sqrt((K-1)/4) ln(4/gamma) = O(sqrt(K) log(1/gamma))`` (item 1). Item 2: the
    coefficients of ``T_r`` are at most ``3^r`` in absolute value and ``phi`` has
    coefficients ``O(1)``, so ``|c_i| <= 2^{O(r)}``.

    Only the integer points ``1..K`` matter, so we take the *smallest* ``r`` whose exact error
    on them is ``<= gamma/2`` (never more than the bound above). ``K = 1`` gives ``q(x) = x``.
    """
    K = _check_int("K", K, 1)
    g = _check_gamma(gamma)
    if K == 1:
        return UnivariateOR(1, g, 1, (Fraction(0), Fraction(1)), Fraction(0), 1)
    phi_a, phi_b = Fraction(2, K - 1), Fraction(-(K + 1), K - 1)  # phi(x) = phi_a x + phi_b
    bound = math.ceil(math.acosh(2 / float(g)) / math.acosh(1 + 2 / (K - 1)))
    r_max = max(bound, 1) + 1
    at_zero = chebyshev_values(r_max, phi_b)
    at_points = [chebyshev_values(r_max, phi_a * x + phi_b) for x in range(1, K + 1)]
    for r in range(1, r_max + 1):
        err = max(abs(v[r]) for v in at_points) / abs(at_zero[r])
        if err <= g / 2:
            break
    else:  # pragma: no cover - the bound guarantees the loop breaks
        raise AssertionError("Chebyshev degree bound violated")
    # power-basis coefficients of T_r(phi_a x + phi_b), scaled by -1/T_r(phi(0)), plus 1
    t = chebyshev_power_coefficients(r)
    coef = [Fraction(0)] * (r + 1)
    for i, ti in enumerate(t):
        if ti == 0:
            continue
        for j in range(i + 1):  # (phi_a x + phi_b)^i = sum_j binom(i,j) phi_a^j x^j phi_b^(i-j)
            coef[j] += ti * math.comb(i, j) * phi_a**j * phi_b ** (i - j)
    scale = -1 / at_zero[r]
    coefficients = [c * scale for c in coef]
    coefficients[0] += 1
    return UnivariateOR(K, g, r, tuple(coefficients), err, max(bound, 1))


# -- block constructions -----------------------------------------------------------------
def balanced_blocks(d: int, m: int) -> tuple[int, ...]:
    """Sizes of ``m`` contiguous blocks partitioning ``d`` variables as evenly as possible
    (the first ``d mod m`` blocks are one larger)."""
    d = _check_int("d", d, 1)
    m = _check_int("m", m, 1)
    if m > d:
        raise DPQueryError(f"cannot split d={d} variables into m={m} non-empty blocks")
    q, r = divmod(d, m)
    return tuple([q + 1] * r + [q] * (m - r))


def newton_coefficients(values: list[Fraction]) -> list[Fraction]:
    """``a_j = (Delta^j g)(0) = sum_i (-1)^(j-i) binom(j, i) g(i)`` for ``j < len(values)``."""
    return [
        sum(((-1) ** (j - i) * math.comb(j, i) * values[i] for i in range(j + 1)), Fraction(0))
        for j in range(len(values))
    ]


@dataclass(frozen=True)
class CoefficientGroup:
    """Monomials touching ``a1`` blocks of the larger size and ``a2`` of the smaller one: they
    all share ``coefficient``; there are ``count`` of them, of degree at most ``max_degree``."""

    a1: int
    a2: int
    coefficient: Fraction
    count: int
    max_degree: int


@dataclass(frozen=True)
class BlockPolynomial:
    """``P(y) = 1 - 2 sum_{j <= J_max} a_j e_j(u(y))`` over the blocks ``block_sizes`` (see the
    module docstring); approximates ``OR_d`` to ``error`` on inputs of Hamming weight
    ``<= k`` (``k = d``: every input).

    ``name`` says which construction built it (Fact 4.3, Lemma 4.1, Lemma 4.2, interpolation).
    """

    name: str
    d: int
    k: int
    block_sizes: tuple[int, ...]
    newton: tuple[Fraction, ...]  # a_0..a_{J_max}
    error: Fraction
    outer: UnivariateOR | None = None

    @property
    def m(self) -> int:
        return len(self.block_sizes)

    @cached_property
    def _sizes(self) -> tuple[int, int, int, int]:
        s1 = self.block_sizes[0]
        n1 = sum(1 for s in self.block_sizes if s == s1)
        n2 = self.m - n1
        s2 = self.block_sizes[-1] if n2 else s1
        return s1, n1, s2, n2

    def groups(self) -> Iterator[CoefficientGroup]:
        """Every group of equal coefficients (zero ones skipped); see the module docstring."""
        s1, n1, s2, n2 = self._sizes
        v1, v2 = 1 - Fraction(1, 2**s1), 1 - Fraction(1, 2**s2)
        j_max = len(self.newton) - 1
        for a1 in range(min(n1, j_max) + 1):
            for a2 in range(min(n2, j_max - a1) + 1):
                a, r1, r2 = a1 + a2, n1 - a1, n2 - a2
                tail = Fraction(0)
                for j in range(a, j_max + 1):
                    if self.newton[j] == 0:
                        continue
                    i = j - a
                    e_i = sum(
                        (
                            math.comb(r1, i1) * math.comb(r2, i - i1) * v1**i1 * v2 ** (i - i1)
                            for i1 in range(max(0, i - r2), min(i, r1) + 1)
                        ),
                        Fraction(0),
                    )
                    tail += self.newton[j] * e_i
                coef = -2 * Fraction(-1, 2**s1) ** a1 * Fraction(-1, 2**s2) ** a2 * tail
                if a == 0:
                    coef += 1
                if coef == 0:
                    continue
                count = (
                    math.comb(n1, a1) * math.comb(n2, a2) * (2**s1 - 1) ** a1 * (2**s2 - 1) ** a2
                )
                yield CoefficientGroup(a1, a2, coef, count, a1 * s1 + a2 * s2)

    @cached_property
    def degree(self) -> int:
        return max((g.max_degree for g in self.groups()), default=0)

    @cached_property
    def weight_exact(self) -> Fraction:
        """``w(P) = sum_S |c_S|``, exactly."""
        return sum((g.count * abs(g.coefficient) for g in self.groups()), Fraction(0))

    @property
    def weight(self) -> float:
        return float(self.weight_exact)

    @cached_property
    def constant(self) -> Fraction:
        """``c_{}``, the constant coefficient."""
        return next((g.coefficient for g in self.groups() if g.a1 == g.a2 == 0), Fraction(0))

    @property
    def record_weight(self) -> float:
        """``W = (|1 - c_{}| + w*(P)) / 2``: a bound on the weight of every record polynomial
        ``p_x(y) = (1 - P(y^x)) / 2`` (Fact 2.5).

        Derivation: ``f_x(y) = (1 - OR_d(y^x)) / 2`` with ``y^x_i = y_i`` if ``x_i = 1`` and
        ``1`` (FALSE) otherwise; ``y^x`` has Hamming weight ``<= |y| <= k`` so ``p_x`` is within
        ``error/2`` of ``f_x`` on ``H_{d,k}``. Substituting ``y_i = 1`` maps ``chi_T`` to
        ``chi_{T cap x}``, so the coefficient of ``chi_U`` (``U != {}``) in ``p_x`` is
        ``-(1/2) sum_{T cap x = U} c_T`` and the constant is
        ``(1 - c_{} - sum_{T != {}, T cap x = {}} c_T) / 2``; the triangle inequality bounds the
        total by ``(|1 - c_{}| + w*(P)) / 2``, at most ``(1 + w(P)) / 2``.
        """
        c0 = self.constant
        return float((abs(1 - c0) + self.weight_exact - abs(c0)) / 2)

    @property
    def n_terms(self) -> int:
        """Number of monomials with a non-zero coefficient."""
        return sum(g.count for g in self.groups())

    @cached_property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.block_sizes)]).astype(np.int64)

    def value_at_blocks(self, J: int) -> Fraction:
        """``P`` on any input where exactly ``J`` blocks hold a TRUE (``J <= J_max``)."""
        return 1 - 2 * sum((a * math.comb(J, j) for j, a in enumerate(self.newton)), Fraction(0))

    def expand(self, max_terms: int = 2_000_000) -> tuple[list[tuple[int, ...]], np.ndarray]:
        """Every monomial (as a sorted tuple of variables) and its coefficient (float64).

        Refuses polynomials with more than ``max_terms`` monomials.
        """
        if self.n_terms > max_terms:
            raise DPQueryError(
                f"{self.name} has {self.n_terms:,} monomials, more than max_terms={max_terms:,}"
            )
        s1, _, _, _ = self._sizes
        coef_of = {(g.a1, g.a2): g.coefficient for g in self.groups()}
        blocks = [tuple(range(self.starts[b], self.starts[b + 1])) for b in range(self.m)]
        nonempty = [
            [sub for r in range(1, len(blk) + 1) for sub in combinations(blk, r)] for blk in blocks
        ]
        monomials: list[tuple[int, ...]] = []
        values: list[float] = []
        j_max = len(self.newton) - 1
        for a in range(min(j_max, self.m) + 1):
            for touched in combinations(range(self.m), a):
                a1 = sum(1 for b in touched if self.block_sizes[b] == s1)
                c = coef_of.get((a1, a - a1))
                if c is None:
                    continue
                cf = float(c)
                for parts in product(*(nonempty[b] for b in touched)):
                    monomials.append(tuple(v for part in parts for v in part))
                    values.append(cf)
        return monomials, np.array(values, dtype=np.float64)

    def describe(self) -> str:
        return (
            f"{self.name}: d={self.d}, m={self.m} blocks (sizes {min(self.block_sizes)}.."
            f"{max(self.block_sizes)}), degree {self.degree}, weight {self.weight:.6g}, "
            f"error {float(self.error):.3g} on Hamming weight <= {self.k}"
        )


def _block_polynomial(
    name: str, d: int, k: int, m: int, g_values: list[Fraction], outer: UnivariateOR | None
) -> BlockPolynomial:
    newton = newton_coefficients(g_values)
    while len(newton) > 1 and newton[-1] == 0:
        newton.pop()
    # error on inputs with J = 0..J_max blocks TRUE: OR = 1 at J = 0, -1 otherwise
    err = max(abs((1 - 2 * g) - (1 if J == 0 else -1)) for J, g in enumerate(g_values))
    return BlockPolynomial(name, d, k, balanced_blocks(d, m), tuple(newton), err, outer)


def exact_or(d: int) -> BlockPolynomial:
    """Fact 4.3: ``p_d(y) = 2 prod_i (1 + y_i)/2 - 1 = OR_d(y)``, weight ``3 - 2^(2-d) < 3``."""
    d = _check_int("d", d, 1)
    return _block_polynomial("exact OR (Fact 4.3)", d, d, 1, [Fraction(0), Fraction(1)], None)


def interpolated_or(d: int, k: int, m: int) -> BlockPolynomial:
    """``OR_d`` *exactly* on ``H_{d,k}``: the block composition with the outer OR interpolated
    on ``J in {0..min(k, m)}`` (``a_j = (-1)^(j+1)``, inclusion-exclusion over the blocks; Small
    databases, Section 6). Degree: the ``min(k, m)`` largest blocks."""
    d, k, m = _check_int("d", d, 1), _check_int("k", k, 1), _check_int("m", m, 1)
    j_max = min(k, m, d)
    values = [Fraction(0)] + [Fraction(1)] * j_max
    return _block_polynomial(f"interpolated OR (m={m})", d, min(k, d), m, values, None)


def _chebyshev_block(name: str, d: int, k: int, m: int, gamma: float) -> BlockPolynomial:
    j_max = min(k, m)
    q = fact_4_4(2 * k, gamma)  # m - Z = 2J takes values in {0, 2, .., 2k}
    values = [q(2 * J) for J in range(j_max + 1)]
    return _block_polynomial(name, d, k, m, values, q)


def lemma_4_1(d: int, m: int, gamma: float) -> BlockPolynomial:
    """Lemma 4.1: ``1 - 2 q_m(m - Z(y))`` gamma-approximates ``OR_d`` on *all* inputs, with
    ``q_m`` from Fact 4.4 for the range ``{1..2m}`` (``m - Z`` takes values ``0, 2, .., 2m``)."""
    d, m = _check_int("d", d, 1), _check_int("m", m, 1)
    balanced_blocks(d, m)
    return _chebyshev_block(f"Lemma 4.1 (m={m})", d, m, m, gamma)


def lemma_4_2(d: int, k: int, m: int, gamma: float) -> BlockPolynomial:
    """Lemma 4.2: ``1 - 2 q_k(m - Z(y))`` gamma-approximates ``OR_d`` on ``H_{d,k}``, with
    ``q_k`` from Fact 4.4 for the range ``{1..2k}``: on ``H_{d,k}`` at most ``k`` blocks hold a
    TRUE, so ``m - Z`` lies in ``{0, 2, .., 2k}``. Terms ``e_j`` with ``j > k`` vanish there and
    are dropped (module docstring), so the degree is at most ``min(deg q_k, k)`` blocks."""
    d, k, m = _check_int("d", d, 1), _check_int("k", k, 1), _check_int("m", m, 1)
    balanced_blocks(d, m)
    return _chebyshev_block(f"Lemma 4.2 (m={m})", d, min(k, d), m, gamma)


def or_values(y: np.ndarray) -> np.ndarray:
    """``OR_d`` on rows of ``y`` in ``{-1, 1}`` (-1 = TRUE): -1 if any entry is -1, else 1."""
    return np.where((np.asarray(y) == -1).any(axis=-1), -1.0, 1.0)
