"""Small databases, Section 3: Fact 3.4, Fact 2.5 (record polynomials), Algorithm 1 and the
mistake bound of Theorem 3.5, and the full-domain comparator."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpquery.errors import DPQueryError
from dpquery.online import polynomials as P
from dpquery.online.fulldomain import FullDomainMW, full_domain_mistake_bound
from dpquery.online.learner import PolynomialMW, mistake_bound
from dpquery.online.parameters import choose_representation
from dpquery.online.representation import (
    evaluate_coefficients,
    from_pbar,
    monomial_index,
    monomial_masks,
    n_monomials,
    query_vector,
    set_mask,
    to_pbar,
)
from dpquery.online.transform import OnlineQuery


def test_monomial_masks_enumerate_every_low_degree_set() -> None:
    for m, t in [(5, 2), (7, 7), (70, 2)]:
        masks = monomial_masks(m, t)
        assert masks.shape == (n_monomials(m, t), math.ceil(m / 64))
        assert len({row.tobytes() for row in masks}) == masks.shape[0]
        sizes = [sum(bin(int(w)).count("1") for w in row) for row in masks]
        assert max(sizes) == min(t, m) and sizes == sorted(sizes)


@pytest.mark.parametrize(("m", "t"), [(4, 4), (6, 3), (7, 2)])
def test_fact_3_4_identity(m: int, t: int) -> None:
    """W <p_bar, y_bar> = p(y) for random polynomials of degree <= t and weight <= W, on every y."""
    rng = np.random.default_rng(m * 10 + t)
    masks = monomial_masks(m, t)
    for _ in range(5):
        coef = rng.normal(size=masks.shape[0]) * (rng.random(masks.shape[0]) < 0.5)
        W = float(np.abs(coef).sum()) * rng.uniform(1, 3)
        pbar = to_pbar(coef, W)
        assert pbar.min() >= 0 and math.isclose(pbar.sum(), 1.0)
        assert np.allclose(from_pbar(pbar, W), coef)
        for bits in itertools.product((0, 1), repeat=m):
            q = set_mask(np.flatnonzero(bits), m)
            direct = sum(c * (-1) ** sum(bits[v] for v in range(m) if (int(row[0]) >> v) & 1)
                         for c, row in zip(coef, masks, strict=True))  # fmt: skip
            assert math.isclose(W * float(pbar @ query_vector(masks, q)), direct, abs_tol=1e-9)
            assert math.isclose(evaluate_coefficients(coef, masks, q), direct, abs_tol=1e-9)
    with pytest.raises(DPQueryError, match="weight"):
        to_pbar(np.ones(3), 2.0)


def record_polynomial(poly: P.BlockPolynomial, x: np.ndarray) -> dict[tuple[int, ...], float]:
    """p_x(y) = (1 - P(y^x)) / 2, expanded: substitute y_i = 1 where x_i = 0."""
    monomials, coef = poly.expand()
    out: dict[tuple[int, ...], float] = {(): 0.5}
    for mono, c in zip(monomials, coef, strict=True):
        kept = tuple(v for v in mono if x[v])
        out[kept] = out.get(kept, 0.0) - c / 2
    return out


MAKERS = [
    lambda: P.lemma_4_2(6, 2, 3, 0.1),
    lambda: P.interpolated_or(6, 2, 6),
    lambda: P.exact_or(6),
]


@pytest.mark.parametrize("make", MAKERS)
def test_fact_2_5_record_polynomials(make: object) -> None:
    """Every record's p_x is within error/2 of its disjunctions on H_{d,k}, degree <= t and
    weight <= record_weight (exhaustive over records x and queries y)."""
    poly = make()  # type: ignore[operator]
    d, k = poly.d, poly.k
    queries = [S for r in range(k + 1) for S in itertools.combinations(range(d), r)]
    worst_w = 0.0
    for x in itertools.product((0, 1), repeat=d):
        px = record_polynomial(poly, np.array(x))
        assert max((len(s) for s, c in px.items() if abs(c) > 1e-12), default=0) <= poly.degree
        worst_w = max(worst_w, sum(abs(c) for c in px.values()))
        for S in queries:
            value = sum(c * (-1) ** len(set(s) & set(S)) for s, c in px.items())
            truth = float(any(x[i] for i in S))
            assert abs(value - truth) <= float(poly.error) / 2 + 1e-9
    assert worst_w <= poly.record_weight + 1e-9


def play_idc(mw: object, truth: dict[bytes, float], queries: list[np.ndarray], alpha: float,
             rng: np.random.Generator) -> int:  # fmt: skip
    """The IDC game of Definition 3.2 against an adversary that always asks the worst query
    and answers with the largest allowed error alpha/2 in a random direction."""
    mistakes = 0
    while True:
        errors = [abs(mw.value(q) - truth[q.tobytes()]) for q in queries]  # type: ignore[attr-defined]
        worst = int(np.argmax(errors))
        if errors[worst] <= alpha:
            return mistakes
        q = queries[worst]
        mw.update(q, truth[q.tobytes()] + rng.choice((-1, 1)) * alpha / 2)  # type: ignore[attr-defined]
        mistakes += 1


@pytest.mark.parametrize(
    ("d", "k", "alpha", "m"), [(5, 2, 0.2, None), (6, 2, 0.25, 3), (8, 1, 0.3, 8)]
)
def test_mistake_bound_never_exceeded(d: int, k: int, alpha: float, m: int | None) -> None:
    """Algorithm 1 with Theorem 3.5's eta stops making mistakes within B on every query."""
    rng = np.random.default_rng(d)
    rep = choose_representation(d, k, alpha, m=m)
    for trial in range(3):
        rows = rng.random((50, d)) < rng.random(d)
        queries = [
            set_mask(S, d) for r in range(1, k + 1) for S in itertools.combinations(range(d), r)
        ]
        truth = {
            q.tobytes(): float(rows[:, [v for v in range(d) if (int(q[0]) >> v) & 1]].any(1).mean())
            for q in queries
        }
        mw = PolynomialMW(d, rep.t, rep.W, alpha)
        assert mw.B == rep.B == mistake_bound(rep.W, d, rep.t, alpha)
        mistakes = play_idc(mw, truth, queries, alpha, rng)
        assert 0 < mistakes <= mw.B, trial


def test_algorithm_1_first_output_and_update_direction() -> None:
    mw = PolynomialMW(4, 2, 2.0, 0.2)
    q = set_mask([1], 4)
    assert mw.value(q) == pytest.approx(0.0)  # uniform p_bar = the constant 0 polynomial
    assert np.allclose(mw.pbar, 1 / (2 * mw.N + 1))
    mw.update(q, 0.7)  # hypothesis under-estimates: the value must rise
    assert mw.value(q) > 0
    before = mw.value(q)
    mw.update(q, -0.5)
    assert mw.value(q) < before
    assert mw.eta == pytest.approx(0.2 / 8)


def test_full_domain_mw() -> None:
    rng = np.random.default_rng(3)
    d, alpha = 6, 0.2
    rows = (rng.random((500, d)) < 0.3).astype(int)
    mw = FullDomainMW(d, alpha)
    assert mw.B == full_domain_mistake_bound(d, alpha) == math.ceil(4 * d * math.log(2) / alpha**2)
    queries = [OnlineQuery(kind, tuple((b, bool(p)) for b, p in zip(S, pol, strict=True)))
               for kind in ("conjunction", "disjunction")
               for S in itertools.combinations(range(d), 2)
               for pol in itertools.product((0, 1), repeat=2)]  # fmt: skip

    def truth(q: OnlineQuery) -> float:
        hits = np.stack([rows[:, b] == p for b, p in q.literals])
        return float((hits.all(0) if q.kind == "conjunction" else hits.any(0)).mean())

    assert mw.predict(queries[0]) == pytest.approx(0.25)  # uniform over {0,1}^d
    mistakes = 0
    while True:
        errs = [abs(mw.predict(q) - truth(q)) for q in queries]
        i = int(np.argmax(errs))
        if errs[i] <= alpha:
            break
        mw.update(queries[i], truth(queries[i]) + rng.choice((-1, 1)) * alpha / 2)
        mistakes += 1
    assert mistakes <= mw.B


def test_full_domain_refuses_large_d_with_memory_needed() -> None:
    with pytest.raises(DPQueryError, match=r"2\^40 weights = 16\.0 TiB"):
        FullDomainMW(40, 0.1)
    with pytest.raises(DPQueryError, match="max_bytes"):
        FullDomainMW(20, 0.1, max_bytes=2**20)


def test_monomial_index() -> None:
    masks = monomial_masks(5, 2)
    assert monomial_index(masks, [(), (0,), (1, 4)], 5).tolist() == [
        0,
        1,
        6 + 6,
    ]  # pairs in lexicographic order: (1, 4) is the 7th
    with pytest.raises(DPQueryError, match="degree"):
        monomial_index(masks, [(0, 1, 2)], 5)


def test_choose_representation_explains_and_respects_cap() -> None:
    rep = choose_representation(27, 3, 0.05, max_monomials=100_000)
    assert rep.N <= 100_000 and rep.N == n_monomials(27, rep.t)
    assert "Theorem 3.5" in rep.explanation and "exact OR (Fact 4.3" in rep.explanation
    small = choose_representation(6, 2, 0.1)
    assert small.N <= 2**6  # small d: the (near) exact, full-degree polynomial wins on B
    with pytest.raises(DPQueryError, match="max_monomials"):
        choose_representation(200, 3, 0.05, max_monomials=10)
    with pytest.raises(DPQueryError, match="k"):
        choose_representation(5, 6, 0.1)
