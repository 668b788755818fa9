"""Small databases, Section 4: Fact 4.3, Fact 4.4, Lemmas 4.1/4.2 and the interpolation
variant, checked exhaustively on small d and on sampled inputs for large d."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from dpquery.errors import DPQueryError
from dpquery.online import polynomials as P
from dpquery.online.representation import evaluate_coefficients, set_mask


def all_inputs(d: int) -> np.ndarray:
    """Every y in {-1,1}^d (rows), and the -1 set of each as a mask."""
    return np.array(list(itertools.product((1, -1), repeat=d)), dtype=np.int8)


def evaluate_expansion(poly: P.BlockPolynomial, ys: np.ndarray) -> np.ndarray:
    monomials, coef = poly.expand()
    masks = np.array([set_mask(mono, poly.d) for mono in monomials]).reshape(len(monomials), -1)
    return np.array(
        [evaluate_coefficients(coef, masks, set_mask(np.flatnonzero(y == -1), poly.d)) for y in ys]
    )


def check_against_or(poly: P.BlockPolynomial, ys: np.ndarray) -> None:
    """The explicit expansion's degree, weight and error agree with the closed forms."""
    monomials, coef = poly.expand()
    assert max(len(m) for m in monomials) == poly.degree
    assert math.isclose(float(np.abs(coef).sum()), poly.weight, rel_tol=1e-9)
    weight = (np.asarray(ys) == -1).sum(axis=1)
    inside = ys[weight <= poly.k]
    err = np.abs(evaluate_expansion(poly, inside) - P.or_values(inside))
    assert err.max() <= float(poly.error) + 1e-9
    assert float(poly.error) <= 1e-12 or err.max() >= float(poly.error) - 1e-9  # attained


@pytest.mark.parametrize("K", [1, 2, 3, 4, 6, 10, 20, 40])
@pytest.mark.parametrize("gamma", [0.5, 0.1, 1 / 400])
def test_fact_4_4(K: int, gamma: float) -> None:
    q = P.fact_4_4(K, gamma)
    assert q(0) == 0
    assert all(abs(q(x) - 1) <= Fraction(gamma) / 2 for x in range(1, K + 1))
    assert q.error == max(abs(q(x) - 1) for x in range(1, K + 1))
    assert q.degree <= q.degree_bound
    # the closed form: arccosh(2/gamma)/arccosh(1 + 2/(K-1)) ~ sqrt(K) log(1/gamma)
    if K > 1:
        assert q.degree_bound <= math.ceil(math.sqrt(K) * math.log(4 / gamma)) + 1
    # a smaller degree would not do (minimality of the search)
    if q.degree > 1 and K > 1:
        phi0 = Fraction(-(K + 1), K - 1)
        r = q.degree - 1
        worst = max(
            abs(P.chebyshev_values(r, Fraction(2 * x - K - 1, K - 1))[r]) for x in range(1, K + 1)
        )
        assert worst / abs(P.chebyshev_values(r, phi0)[r]) > Fraction(gamma) / 2


def test_chebyshev_power_coefficients() -> None:
    z = np.linspace(-1, 1, 9)
    for r in range(8):
        coef = P.chebyshev_power_coefficients(r)
        assert np.allclose(np.polynomial.polynomial.polyval(z, coef), np.cos(r * np.arccos(z)))


@pytest.mark.parametrize("d", [1, 2, 5, 8])
def test_fact_4_3_exact_or(d: int) -> None:
    p = P.exact_or(d)
    ys = all_inputs(d)
    assert np.array_equal(evaluate_expansion(p, ys), P.or_values(ys))
    assert p.degree == d and p.weight == pytest.approx(3 - 2 ** (2 - d)) and p.weight <= 3


@pytest.mark.parametrize(("d", "k", "m"), [(6, 2, 3), (8, 2, 4), (8, 3, 8), (9, 2, 2), (10, 3, 5)])
def test_interpolated_or_is_exact_on_low_weight(d: int, k: int, m: int) -> None:
    p = P.interpolated_or(d, k, m)
    ys = all_inputs(d)
    check_against_or(p, ys)
    assert p.error == 0
    assert p.degree == sum(sorted(p.block_sizes, reverse=True)[: min(k, m)])


@pytest.mark.parametrize(
    ("d", "k", "m", "gamma"), [(8, 2, 4, 0.1), (9, 3, 9, 0.05), (10, 2, 5, 1 / 400), (7, 1, 7, 0.2)]
)
def test_lemma_4_2_exhaustive(d: int, k: int, m: int, gamma: float) -> None:
    p = P.lemma_4_2(d, k, m, gamma)
    assert p.error <= Fraction(gamma)
    check_against_or(p, all_inputs(d))
    # degree: the min(deg q, k) largest blocks, at most the paper's deg(q) * ceil(d/m)
    assert p.degree <= min(p.outer.degree, k) * max(p.block_sizes)  # type: ignore[union-attr]


@pytest.mark.parametrize(("d", "m", "gamma"), [(8, 2, 0.1), (9, 3, 0.05), (10, 5, 0.25)])
def test_lemma_4_1_on_all_inputs(d: int, m: int, gamma: float) -> None:
    p = P.lemma_4_1(d, m, gamma)
    assert p.k == m and p.error <= Fraction(gamma)
    ys = all_inputs(d)
    err = np.abs(evaluate_expansion(p, ys) - P.or_values(ys))
    assert err.max() <= gamma + 1e-9  # every Boolean input, not only low weight


def test_lemma_4_2_wrong_outside_low_weight() -> None:
    """Lemma 4.2 promises nothing above weight k; with many blocks it really fails there."""
    p = P.interpolated_or(8, 2, 8)
    ys = all_inputs(8)
    heavy = ys[(ys == -1).sum(axis=1) == 3]
    assert np.abs(evaluate_expansion(p, heavy) - P.or_values(heavy)).max() > 0.5


def test_sampled_inputs_large_d() -> None:
    """d = 30: random inputs of weight <= k (seeded; deterministic)."""
    rng = np.random.default_rng(7)
    d, k = 30, 3
    for p in (P.lemma_4_2(d, k, 10, 0.05), P.interpolated_or(d, k, 15)):
        assert p.n_terms <= 2_000_000
        ys = np.ones((300, d), dtype=np.int8)
        for row in ys:
            row[rng.choice(d, size=rng.integers(0, k + 1), replace=False)] = -1
        err = np.abs(evaluate_expansion(p, ys) - P.or_values(ys))
        assert err.max() <= float(p.error) + 1e-9


def test_value_at_blocks_matches_structure() -> None:
    p = P.lemma_4_2(12, 3, 4, 0.1)
    ys = all_inputs(12)
    ys = ys[(ys == -1).sum(axis=1) <= 3][:400]
    J = np.array([sum((y[s:e] == -1).any() for s, e in itertools.pairwise(p.starts)) for y in ys])
    expect = np.array([float(p.value_at_blocks(int(j))) for j in J])
    assert np.allclose(evaluate_expansion(p, ys), expect)


def test_bad_parameters() -> None:
    with pytest.raises(DPQueryError, match="m=9"):
        P.balanced_blocks(8, 9)
    with pytest.raises(DPQueryError, match="gamma"):
        P.fact_4_4(4, 3.0)
    with pytest.raises(DPQueryError, match="max_terms"):
        P.exact_or(30).expand(max_terms=1000)
