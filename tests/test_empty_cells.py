"""Catch-all cells a release's own 1-way measurements cannot tell from empty
(:mod:`dpquery.algorithms.marginal.empty_cells`): the cells a domain names (by hand), the
test against the noise (by hand), the conditioning of the records (nothing drawn when no
record holds such a cell), and adaptive-projection with the step: the same charges as
without it (post-processing), no record in an empty catch-all cell on neighbouring tables of
``n`` and ``n + 1`` records under add/remove, a catch-all cell holding records kept, and a
bad ``empty_cells`` named.

Every randomised check is seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.marginal.empty_cells import (
    catch_all_cells,
    condition_records,
    doubted_cells,
)
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.data.encode import encode
from dpquery.errors import DPQueryError
from dpquery.privacy.neighbours import NOISY_N
from dpquery.queries import all_kway_marginals
from dpquery.queries.marginals import AttributeLayout

DOMAIN = Domain(
    (
        Categorical("kind", ("a", "b", "c", "<other>"), other="<other>"),
        Numeric("x", (0.0, 10.0, 20.0, 30.0, 40.0), missing=True, out_of_range="clip"),
        Categorical("flag", (0, 1)),
        Binary("bit"),
    )
)


def _table(n: int, seed: int = 0, other: float = 0.0) -> pd.DataFrame:
    """``n`` records, none of them in ``kind``'s catch-all (unless ``other`` of them, as a
    share) or ``x``'s missing bin; ``flag`` depends on ``kind``."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]).astype(object)
    kind[rng.random(n) < other] = "zzz"  # not listed: encodes to <other>
    return pd.DataFrame({
        "kind": kind,
        "x": rng.uniform(0, 40, n).round(1),
        "flag": np.where(kind == "a", rng.integers(0, 2, n), 1),
        "bit": rng.integers(0, 2, n),
    })  # fmt: skip


def _codes(data: BinaryData, rows: np.ndarray) -> np.ndarray:
    """The ``(m, g)`` attribute codes of 0/1 ``rows`` in ``data``'s layout."""
    layout = AttributeLayout.of_data(data)
    out = np.empty((rows.shape[0], layout.g), dtype=np.int64)
    for a in range(layout.g):
        s = int(layout.starts[a])
        if layout.onehot[a]:
            out[:, a] = rows[:, s : s + int(layout.sizes[a])].argmax(axis=1)
        else:
            out[:, a] = rows[:, s]
    return out


def _fit(data: BinaryData, seed: int, **kw: Any):
    workload = all_kway_marginals(data.domain, 2)
    return AdaptiveProjection(epsilon=1.0, seed=seed, progress=False, **kw).fit(data, workload)


def _charges(release) -> list[tuple[str, str]]:
    return [(e.charge.mechanism, repr(e.charge.cost)) for e in release.ledger.entries]


# == by hand ======================================================================================


def test_the_catch_all_cells_are_the_domains_other_category_and_missing_bin() -> None:
    """kind's <other> is its code 3; x's missing bin follows its 4 bins (code 4); flag has
    none; the free bit (size 2 in the layout, 1 in the domain) has none."""
    sizes = AttributeLayout.of_data(encode(_table(50), DOMAIN)).sizes
    assert list(sizes) == [4, 5, 2, 2]
    assert catch_all_cells(DOMAIN, sizes) == [(3,), (4,), (), ()]
    assert catch_all_cells(None, sizes) == [(), (), (), ()]  # free bits: no domain
    assert catch_all_cells(DOMAIN, sizes[:3]) == [(), (), ()]  # not the domain's layout


def test_a_cell_is_doubted_below_z_sigma_of_its_noise() -> None:
    """sigma 3, z 2: a noisy count of 5 (< 6) is doubted, 6 and 40 are not; cells not named
    are never doubted (the -9 of a listed category)."""
    estimates = [(np.array([100.0, -9.0, 5.0]), 3.0), (np.array([50.0, 6.0]), 3.0),
                 (np.array([1.0, 40.0]), 3.0)]  # fmt: skip
    assert doubted_cells(estimates, [(2,), (1,), (1,)], 2.0) == [(2,), (), ()]
    assert doubted_cells(estimates, [(2,), (1,), (1,)], 14.0) == [(2,), (1,), (1,)]


def test_a_doubted_value_is_redrawn_from_the_others_for_its_attribute_alone() -> None:
    """Row 1 holds attribute 0's doubted code, row 3 attribute 1's: each gets, for that
    attribute alone, a value some row without the code holds (every other value untouched,
    in its place), five rows in, five out."""
    X = np.array([[0, 0], [3, 0], [1, 1], [0, 4], [2, 1]])
    out, k = condition_records(X, [(3,), (4,)], np.random.default_rng(0))
    assert k == 2 and out.shape == X.shape
    assert np.array_equal(out[[0, 2, 4]], X[[0, 2, 4]])
    assert out[1, 1] == X[1, 1] and out[3, 0] == X[3, 0]
    assert out[1, 0] in {0, 1, 2} and out[3, 1] in {0, 1}
    assert not np.isin(out[:, 0], [3]).any() and not np.isin(out[:, 1], [4]).any()


def test_a_record_keeps_its_other_attributes_so_other_marginals_are_unmoved() -> None:
    """Doubted codes of one attribute, held by records of one kind only (the biased subset
    that redrawing whole records would remove): every other attribute's 1-way counts are
    exactly as before."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 3, 2_000), rng.integers(0, 4, 2_000)])
    X[X[:, 0] == 2, 1] = 3  # attribute 1's code 3 only where attribute 0 is 2
    out, k = condition_records(X, [(), (3,)], np.random.default_rng(0))
    assert k == int((X[:, 1] == 3).sum()) > 0
    assert np.array_equal(out[:, 0], X[:, 0])
    assert not (out[:, 1] == 3).any()


def test_nothing_is_drawn_when_no_record_holds_a_doubted_cell() -> None:
    """No record in a doubted cell (or every record in one: nothing to condition on): the
    records come back as they are and the generator is not touched."""
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    X = np.array([[0, 1], [1, 0]])
    for doubted in ([(), ()], [(2,), (3,)], [(0, 1), ()]):
        out, k = condition_records(X, doubted, rng)
        assert k == 0 and out is X
    assert rng.bit_generator.state == state


# == in a release ===============================================================================


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_no_record_in_an_empty_catch_all_cell_and_the_same_charges(seed: int) -> None:
    """800 records, none in <other> or the missing bin: the release holds none there (the
    1-way noise sigma is about 30 records, so an empty cell passes 2 sigma with probability
    2.3%; these seeds are fixed: seed 2 stopped putting any record there without the step
    once the pairs' selection weight became 1.5 under add/remove), and its ledger holds the
    same charges, in the same order, as the release without the step (post-processing:
    nothing charged)."""
    data = encode(_table(800, seed), DOMAIN)
    on, off = _fit(data, seed), _fit(data, seed, empty_cells=None)
    codes = _codes(data, np.asarray(on.records.rows))
    assert not (codes[:, 0] == 3).any() and not (codes[:, 1] == 4).any()
    before = _codes(data, np.asarray(off.records.rows))  # without it, noise put records there
    assert (before[:, 0] == 3).any() or (before[:, 1] == 4).any()
    assert _charges(on) == _charges(off)
    assert len(on.records.rows) == len(off.records.rows)


def test_neighbouring_tables_of_n_and_n_plus_one_under_add_remove() -> None:
    """Add one record (n = 800 and 801, add/remove, the default): both releases make the
    same charges, with and without the step, and hold no record in an empty catch-all
    cell; the step reads no count of the data (the cells tested are the domain's, the test
    reads the noisy 1-way measurements)."""
    table = _table(801, 3)
    for t in (table.iloc[:800], table):
        data = encode(t.reset_index(drop=True), DOMAIN)
        on, off = _fit(data, 12), _fit(data, 12, empty_cells=None)
        assert _charges(on) == _charges(off)
        codes = _codes(data, np.asarray(on.records.rows))
        assert not (codes[:, 0] == 3).any() and not (codes[:, 1] == 4).any()
        before = _codes(data, np.asarray(off.records.rows))  # 10 to 19 records there
        assert (before[:, 0] == 3).sum() >= 10 and (before[:, 1] == 4).sum() >= 10
    assert _charges(on)[0][0] == NOISY_N  # the noisy n first: add/remove


def test_a_catch_all_cell_holding_records_is_kept() -> None:
    """A quarter of the records are not listed (<other>, about 200 of 800: some 7 sigma): the
    release keeps about that share there."""
    data = encode(_table(800, 4, other=0.25), DOMAIN)
    codes = _codes(data, np.asarray(_fit(data, 4).records.rows))
    assert 0.15 < (codes[:, 0] == 3).mean() < 0.35


def test_a_release_without_catch_all_cells_is_unchanged() -> None:
    """A domain without <other> or a missing bin: the step tests no cell, the records are
    the same bytes as with it off."""
    domain = Domain((Categorical("kind", ("a", "b", "c")), Numeric("x", (0.0, 20.0, 40.0)),
                     Categorical("flag", (0, 1)), Binary("bit")))  # fmt: skip
    data = encode(_table(600, 6), domain)
    on, off = _fit(data, 6), _fit(data, 6, empty_cells=None)
    assert np.array_equal(np.asarray(on.records.rows), np.asarray(off.records.rows))


@pytest.mark.parametrize("bad", [-1.0, "2", True, float("inf")])
def test_a_bad_empty_cells_is_named(bad: object) -> None:
    with pytest.raises(DPQueryError, match="empty_cells"):
        AdaptiveProjection(epsilon=1.0, empty_cells=bad).validate()  # type: ignore[arg-type]


# == a release from a raw table ===================================================================


def _raw(n: int = 1000) -> pd.DataFrame:
    """A raw table of ``n`` records written as text: two flags, an age, a code, an income;
    no missing value and nothing beyond what the records hold."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "sex": rng.integers(0, 2, n), "married": rng.integers(0, 2, n),
        "age": rng.integers(18, 90, n), "race": rng.choice([1, 2, 3, 4], n, p=[.5, .2, .2, .1]),
        "income": np.round(rng.lognormal(10, 1, n)),
    }).astype(str)  # fmt: skip


def _in_catch_all(out: pd.DataFrame) -> int:
    return int(sum((out[c].astype(str) == "<other>").sum() + out[c].isna().sum() for c in out))


@pytest.mark.parametrize("seed", [4, 7])
def test_a_small_raw_release_puts_no_record_in_an_empty_catch_all_cell(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 1,000-record raw table (a small table: the domain is learned, every numeric column
    gets a missing bin and every code an <other>), add/remove: with the step no released
    value is <other> or missing; without it (no cell named) these seeds put 27 and 53 there
    (the domain learned at add/remove's L2 1; the small table's release compresses at
    ``SMALL_COMPRESS``; seeds 3 to 8 put none with the step, 0 to 82 without it; those
    counts are of releases without the 1-way shrinkage, which came after them and changes
    the fit, so it is off in both). The charges are the same either way."""
    import dpquery.algorithms.marginal.adaptive_projection as ap
    from dpquery import synthesize

    monkeypatch.setattr(ap, "ADD_REMOVE_SHRINKAGE", None)
    on_out, on = synthesize(_raw(), epsilon=1.0, seed=seed)
    monkeypatch.setattr(ap, "catch_all_cells", lambda domain, sizes: [() for _ in sizes])
    off_out, off = synthesize(_raw(), epsilon=1.0, seed=seed)
    assert _in_catch_all(on_out) == 0
    assert _in_catch_all(off_out) >= 10
    assert _charges(on) == _charges(off)
