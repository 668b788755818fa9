"""Compiled evaluation against the brute-force twin, for every query class."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpquery.data.binary import BinaryData
from dpquery.data.domain import Binary, Categorical, Domain
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.queries import (
    LinearQueries,
    Workload,
    answer,
    cached_answers,
    kernels,
    random_parities,
    uniform_answers,
)
from dpquery.queries.reference import reference_answers, reference_linear

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_workload(rng: np.random.Generator, kind: str, d: int, q: int, kmax: int) -> Workload:
    queries = []
    for _ in range(q):
        k = int(rng.integers(0, min(d, kmax) + 1))
        bits = rng.choice(d, k, replace=False)
        signs = np.ones(k, bool) if kind == "parity" else rng.random(k) < 0.5
        queries.append([(int(b), bool(s)) for b, s in zip(bits, signs, strict=True)])
    return Workload.from_lists(kind, d, queries)  # type: ignore[arg-type]


@st.composite
def cases(draw: st.DrawFn) -> tuple[Workload, np.ndarray, np.random.Generator]:
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.sampled_from([1, 2, 63, 64, 65, 130, 200]))
    d = draw(st.integers(1, 10))
    kind = draw(st.sampled_from(["conjunction", "disjunction", "parity"]))
    density = draw(st.sampled_from([0.1, 0.5, 0.9]))
    dense = (rng.random((n, d)) < density).astype(np.uint8)
    return random_workload(rng, kind, d, 25, kmax=7), dense, rng


@SETTINGS
@given(cases())
def test_data_answers_match_brute_force(case: tuple) -> None:
    workload, dense, _ = case
    got = answer(workload, BinaryData.from_dense(dense))
    np.testing.assert_allclose(got, reference_answers(workload, dense), atol=1e-12)


@SETTINGS
@given(cases(), st.sampled_from([1, 2, 3]))
def test_records_answers_match_brute_force(case: tuple, n_classes: int) -> None:
    workload, dense, rng = case
    # few weight classes use the popcount path, many the weighted kernel
    levels = rng.random(n_classes) + 0.1
    weights = (
        levels[rng.integers(0, n_classes, len(dense))]
        if n_classes < 3
        else rng.random(len(dense)) * (rng.random(len(dense)) < 0.8) + 1e-3
    )
    got = answer(workload, Records(dense, weights))
    np.testing.assert_allclose(got, reference_answers(workload, dense, weights), atol=1e-12)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from([0, 1]))
def test_kernel_chunk_boundaries(seed: int, chunk: int, op: int) -> None:
    """Every chunk size gives the same counts (the benchmark's chunk is one of many)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 700)), 8
    data = BinaryData.from_dense((rng.random((n, d)) < 0.5).astype(np.uint8))
    kind = "parity" if op == kernels.OP_XOR else "conjunction"
    w = random_workload(rng, kind, d, 40, kmax=6)
    counts = kernels.count_queries(
        data.words, n, data.tail_mask, w.offsets, w.bits, w.positive, op, chunk, 3
    )
    dense = data.to_dense()
    expect = reference_answers(w, dense) * n
    if kind == "parity":
        expect = (n - expect) / 2  # records with an odd number of bits set
    np.testing.assert_allclose(counts, expect, atol=1e-9)


def test_negation_closure_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    dense = (rng.random((90, 6)) < 0.4).astype(np.uint8)
    for kind in ("conjunction", "disjunction", "parity"):
        w = random_workload(rng, kind, 6, 30, kmax=4)
        closed = w.closed(answer(w, BinaryData.from_dense(dense)))
        assert closed.size == 2 * len(w)
        for i in range(2 * len(w)):
            q, negated = w.closed_query(i)
            value = reference_answers(w.subset(np.array([q])), dense)[0]
            if negated:
                value = (0.0 if kind == "parity" else 1.0) - value
            assert closed[i] == pytest.approx(value, abs=1e-12)


def test_marginal_is_an_average_of_parities() -> None:
    """Barak et al. (DualQuery, Theorem A.2) in 0/1 form: a conjunction with literals
    ``x_j = v_j`` equals ``2^-k Σ_{T ⊆ S} (Π_{j∈T} s_j) p_T`` with ``s_j = -1`` for v_j = 1."""
    rng = np.random.default_rng(11)
    d = 7
    data = BinaryData.from_dense((rng.random((333, d)) < 0.3).astype(np.uint8))
    conj = random_workload(rng, "conjunction", d, 20, kmax=4)
    got = answer(conj, data)
    for i in range(len(conj)):
        lits = conj.literals(i)
        subsets = [T for r in range(len(lits) + 1) for T in itertools.combinations(lits, r)]
        parities = Workload.from_lists("parity", d, [[(b, True) for b, _ in T] for T in subsets])
        signs = np.array([np.prod([-1.0 if p else 1.0 for _, p in T]) for T in subsets])
        value = (signs * answer(parities, data)).sum() / 2 ** len(lits)
        assert got[i] == pytest.approx(value, abs=1e-12)


def _enumerate(domain: Domain) -> np.ndarray:
    """Every record of a small domain (for tests only)."""
    per_attr = []
    for a, off in zip(domain.attributes, domain.offsets, strict=False):
        rows = np.zeros((2 if isinstance(a, Binary) else a.size, domain.d), np.uint8)
        if isinstance(a, Binary):
            rows[1, off] = 1
        else:
            rows[np.arange(a.size), off + np.arange(a.size)] = 1
        per_attr.append(rows)
    return np.array([np.sum(c, axis=0) for c in itertools.product(*per_attr)], dtype=np.uint8)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from(["conjunction", "disjunction", "parity"]))
def test_uniform_answers_match_enumeration(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    domain = Domain(
        (
            Categorical("a", (0, 1, 2)),
            Binary("b"),
            Categorical("c", ("x", "y", "z", "w")),
            Binary("e"),
            Categorical("f", (1, 2)),
        )
    )
    w = random_workload(rng, kind, domain.d, 40, kmax=6)
    w = Workload(w.kind, w.d, w.offsets, w.bits, w.positive, None, domain)
    universe = _enumerate(domain)
    np.testing.assert_allclose(uniform_answers(w), reference_answers(w, universe), atol=1e-12)


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_linear_queries_match_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = 4
    universe = np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.uint8)
    keep = rng.permutation(len(universe))[: int(rng.integers(1, len(universe) + 1))]
    universe = universe[keep]
    queries = LinearQueries(universe, rng.random((7, len(universe))))
    rows = universe[rng.integers(0, len(universe), int(rng.integers(1, 150)))]
    weights = rng.random(len(rows)) + 0.01
    np.testing.assert_allclose(
        queries.answer(BinaryData.from_dense(rows)), reference_linear(queries, rows), atol=1e-12
    )
    np.testing.assert_allclose(
        queries.answer(Records(rows, weights)),
        reference_linear(queries, rows, weights),
        atol=1e-12,
    )


def test_linear_queries_reject_records_outside_universe() -> None:
    universe = np.array([[0, 1], [1, 1]], np.uint8)
    q = LinearQueries(universe, np.array([[0.5, 1.0]]))
    with pytest.raises(DPQueryError, match="outside the queries' universe"):
        q.answer(BinaryData.from_dense(np.array([[0, 0], [1, 1]], np.uint8)))
    with pytest.raises(DPQueryError, match=r"lie in \[0.0, 1.0\]"):
        LinearQueries(universe, np.array([[2.0, 0.0]]))


def test_large_k_and_many_chunks() -> None:
    """k up to 12 over data spanning several word chunks (the general-k path)."""
    rng = np.random.default_rng(5)
    n, d = 64 * (2 * kernels.CHUNK_WORDS + 3) + 5, 14
    dense = (rng.random((n, d)) < 0.85).astype(np.uint8)
    data = BinaryData.from_dense(dense)
    for kind in ("conjunction", "disjunction", "parity"):
        w = random_workload(rng, kind, d, 12, kmax=12)
        got = answer(w, data)
        lits = [w.literals(i) for i in range(len(w))]
        for i, ls in enumerate(lits):  # vectorised per-query check (the brute force is slow here)
            cols = np.array([dense[:, b] == p for b, p in ls]).reshape(len(ls), n)
            if kind == "conjunction":
                expect = cols.all(axis=0).mean()
            elif kind == "disjunction":
                expect = cols.any(axis=0).mean()
            else:
                expect = 1 - 2 * (cols.sum(axis=0) % 2).mean()
            assert got[i] == pytest.approx(expect, abs=1e-12)


def test_answer_errors_name_the_problem(tmp_path) -> None:
    w = random_parities(10, 3, 5, seed=0)
    with pytest.raises(DPQueryError, match="over 10 bits but the data has 4"):
        answer(w, BinaryData.from_dense(np.zeros((3, 4), np.uint8)))
    with pytest.raises(DPQueryError, match="no records"):
        answer(w, BinaryData.from_dense(np.zeros((0, 10), np.uint8)))
    with pytest.raises(DPQueryError, match="BinaryData or Records"):
        answer(w, np.zeros((3, 10)))  # type: ignore[arg-type]


def test_cached_answers_reuse_the_file(tmp_path) -> None:
    rng = np.random.default_rng(0)
    data = BinaryData.from_dense((rng.random((100, 10)) < 0.5).astype(np.uint8))
    w = random_parities(10, 3, 50, seed=1)
    first = cached_answers(w, data, tmp_path)
    (path,) = tmp_path.glob("answers-*.npy")
    assert w.content_hash in path.name
    np.save(path, np.full(len(w), 7.0))  # a cache hit returns the stored file
    assert (cached_answers(w, data, tmp_path) == 7.0).all()
    np.testing.assert_array_equal(first, answer(w, data))
