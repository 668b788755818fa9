"""The fit's fast paths against the plain code they replace, bit for bit and draw for draw.

:func:`~dpquery.algorithms.wide.shrink.em_steps` (the NPMLE prior's EM in one pass a step)
must give numpy's weights to the last bit, and the exact samplers' integer loops
(``discrete._LaplaceDraws``) must ask the generator for the same uniform integers in the same
order as CKS's Algorithms 1-3 written with ``Fraction`` and one function a step: a seed's
release must not change. Every input is seeded; the comparisons are exact, so no test here
fails by chance.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpquery.algorithms.wide import shrink as wide_shrink
from dpquery.algorithms.wide.shrink import _grid, em_steps, npmle_prior, pairwise_sum
from dpquery.privacy import discrete
from dpquery.privacy.discrete import (
    _bernoulli_exp,
    _bernoulli_exp_le1,
    rational_at_least,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    uniform_below,
)
from dpquery.privacy.randomness import AESCounter


def _npmle_numpy(y: np.ndarray, sigma: float, grid: np.ndarray, steps: int) -> np.ndarray:
    """The NPMLE prior's EM as numpy expressions (the code :func:`em_steps` replaces)."""
    values, counts = np.unique(np.asarray(y, dtype=np.float64), return_counts=True)
    like = np.exp(-0.5 * ((values[:, None] - grid[None, :]) / sigma) ** 2)
    pi = np.full(grid.size, wide_shrink._SLAB / grid.size)
    pi[np.argmin(np.abs(grid))] += 1 - wide_shrink._SLAB
    for _ in range(steps):
        mix = (like * pi[None, :]).sum(axis=1)
        mix = np.maximum(mix, 1e-300)
        pi = pi * ((counts / mix)[:, None] * like).sum(axis=0) / counts.sum()
    return pi / pi.sum()


def test_pairwise_sum_is_numpys_row_sum() -> None:
    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 511, 1000, 4097]:
        rows = rng.random((3, n)) * np.exp(8 * rng.normal(size=(3, n)))  # wide magnitudes
        for row in rows:
            assert pairwise_sum(row, 0, n) == row.sum()
        # a window of a longer array, as the kernel reads it
        assert pairwise_sum(rows.ravel(), n, n) == rows[1].sum()


@pytest.mark.parametrize(
    ("seed", "nonnegative", "whole"),
    [(0, True, True), (1, True, False), (2, False, False), (3, False, True)],
)
def test_npmle_prior_is_numpys_em_bit_for_bit(seed: int, nonnegative: bool, whole: bool) -> None:
    rng = np.random.default_rng(seed)
    sigma = float(rng.uniform(3, 60))
    n = 3000
    true = np.where(rng.random(n) < 0.7, 0, np.round(np.abs(rng.standard_cauchy(n)) * sigma))
    y = true + rng.normal(0, sigma, n)
    if whole:  # integer noisy counts: many equal values, grouped
        y = np.round(y)
    if not nonnegative:
        y = y - rng.random(n) * sigma  # deviations from a centre: signed
    y = y[np.abs(y) <= 10 * sigma]
    grid = _grid(0.0 if nonnegative else -14 * sigma, 14 * sigma)
    for steps in (0, 1, 7, 150):
        ours = npmle_prior(y, sigma, grid, steps)
        theirs = _npmle_numpy(y, sigma, grid, steps)
        assert ours.tobytes() == theirs.tobytes()


def test_em_steps_stops_only_at_a_fixed_point() -> None:
    # one value on a grid point: the weights reach a fixed point within a few steps, and
    # the steps skipped after it would not have changed them
    like = np.exp(-0.5 * (np.array([[0.0, 1.0, 2.0]]) - np.array([[0.0, 0.0, 0.0]])) ** 2)
    pi = em_steps(like.T.copy(), np.ones(3), np.full(1, 1.0), 50, 3.0)
    assert pi.tolist() == [1.0]
    grid = np.arange(4.0)
    y = np.array([0.0, 0.0, 3.0, 3.0, 3.0])
    assert npmle_prior(y, 0.01, grid, 5).tobytes() == _npmle_numpy(y, 0.01, grid, 5).tobytes()
    assert npmle_prior(y, 0.01, grid, 500).tobytes() == _npmle_numpy(y, 0.01, grid, 500).tobytes()


# -- the exact samplers: the same draws as the plain algorithms --------------------------------
def _words_array(m: int, rng: np.random.Generator) -> int:
    """:func:`uniform_below` beyond ``2^63`` with the words drawn as one array."""
    bits = (m - 1).bit_length()
    words = -(-bits // 63)
    while True:
        u = 0
        for w in rng.integers(0, 2**63, size=words, dtype=np.int64):
            u = (u << 63) | int(w)
        u >>= 63 * words - bits
        if u < m:
            return u


def _laplace_plain(s: int, t: int, rng: np.random.Generator) -> int:
    """CKS Algorithm 2, one function a step."""
    while True:
        u = uniform_below(t, rng)
        if not _bernoulli_exp_le1(u, t, rng):
            continue
        v = 0
        while _bernoulli_exp_le1(1, 1, rng):
            v += 1
        y = (u + t * v) // s
        negative = uniform_below(2, rng) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _gaussian_plain(sigma2: Fraction, size: int, rng: np.random.Generator) -> list[int]:
    """CKS Algorithm 3 with ``Fraction`` arithmetic."""
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1
    shift = sigma2 / t
    out: list[int] = []
    while len(out) < size:
        y = _laplace_plain(1, t, rng)
        gamma = (abs(y) - shift) ** 2 / (2 * sigma2)
        if _bernoulli_exp(gamma.numerator, gamma.denominator, rng):
            out.append(y)
    return out


def _generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    if seed % 2:
        return np.random.Generator(AESCounter(key=seed)), np.random.Generator(AESCounter(key=seed))
    return np.random.default_rng(seed), np.random.default_rng(seed)


def _same_state(a: np.random.Generator, b: np.random.Generator) -> bool:
    return bool(a.integers(2**62) == b.integers(2**62) and a.random() == b.random())


def test_words_beyond_63_bits_are_the_arrays_draws() -> None:
    for seed in range(2):
        a, b = _generators(seed)
        for m in (2**63 + 1, 3 * 2**70 + 5, 2**200 - 1, 10**40):
            ours = [uniform_below(m, a) for _ in range(50)]
            assert ours == [_words_array(m, b) for _ in range(50)]
        assert _same_state(a, b)


SIGMA2 = [
    Fraction(1),
    Fraction(1, 3),
    Fraction(7, 2),
    rational_at_least(2345.678),  # a mechanism's sigma^2: denominators beyond 2^63 in gamma
    rational_at_least(3.1e5),
    Fraction(3**40, 7**30),
    Fraction(10**30 + 7, 10**29 + 3),
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("sigma2", SIGMA2)
def test_discrete_gaussian_draws_are_the_plain_algorithms(seed: int, sigma2: Fraction) -> None:
    a, b = _generators(seed)
    ours = sample_discrete_gaussian(sigma2, 400, a)
    assert ours.tolist() == _gaussian_plain(sigma2, 400, b)
    assert _same_state(a, b)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("num", "den"), [(1, 1), (3, 1), (1, 3), (10**6, 7), (2**40 + 1, 3)])
def test_discrete_laplace_draws_are_the_plain_algorithms(seed: int, num: int, den: int) -> None:
    a, b = _generators(seed)
    ours = sample_discrete_laplace(num, den, 400, a)
    assert ours.tolist() == [_laplace_plain(den, num, b) for _ in range(400)]
    assert _same_state(a, b)


def test_integers_of_one_reads_nothing() -> None:
    # why the loops skip uniform_below(1): numpy returns 0 without asking the bit generator
    for seed in (0, 1):
        a, b = _generators(seed)
        assert a.integers(1) == 0
        assert _same_state(a, b)
    assert discrete._LaplaceDraws(1, 1, np.random.default_rng(0)).exp_le1(0, 1)


# -- the release's writer: the bytes pandas' to_csv writes ---------------------------------------
@pytest.mark.parametrize(
    "labels",
    [
        [str(j + 1) for j in range(40)],  # a catalogue's numbers
        [f"tt{j:07d}" for j in range(39)] + ["é-ü 名"],  # ids of any text, UTF-8
        [str(j) for j in range(39)] + ['a,"b"'],  # one quoted by the CSV writer: pandas writes
    ],
)
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_raw_writer_writes_pandas_bytes(tmp_path, monkeypatch, labels, suffix) -> None:
    import gzip

    import scipy.sparse as sp

    from dpquery.data import raw_items
    from dpquery.data.items import ItemSets
    from dpquery.data.raw_items import ItemLabels, write_raw_item_sets

    rng = np.random.default_rng(5)
    dense = rng.random((300, len(labels))) < 0.1
    dense[7] = False  # a record of no item
    items = ItemSets(sp.csr_array(dense.astype(np.uint8)))
    item_labels = ItemLabels(tuple(labels), "user", "item")
    assert (raw_items._plain_labels(labels) is None) == any('"' in x for x in labels)
    monkeypatch.setattr(raw_items, "_WRITE_LINES", 97)  # many blocks
    monkeypatch.setattr(raw_items, "_PLAIN_LINES", 89)
    ours, theirs = tmp_path / f"ours{suffix}", tmp_path / f"theirs{suffix}"
    write_raw_item_sets(ours, items, item_labels)
    monkeypatch.setattr(raw_items, "_plain_labels", lambda labels: None)  # pandas formats
    write_raw_item_sets(theirs, items, item_labels)
    read = gzip.open if suffix.endswith(".gz") else open
    with read(ours, "rb") as a, read(theirs, "rb") as b:
        assert a.read() == b.read()
