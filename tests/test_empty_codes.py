"""Codes a learned domain added by rule (``Categorical.by_rule``) that a release's own 1-way
measurements cannot tell from empty (:mod:`dpquery.algorithms.marginal.empty_cells`): the
codes the learning names (by hand, from the public buckets), the domain field (checked, and
kept through a JSON round trip; a codebook has none), the run tested from the highest code
down (by hand), and adaptive-projection with the step: the same charges as without it
(post-processing), no record in an empty code on neighbouring tables of ``n`` and ``n + 1``
records under add/remove and of one record replaced under replace-one, a code holding
records kept, and a release whose domain lists no such code unchanged byte for byte. The
codes below the data's bounds (``by_rule_low``) and below or between a code column's keys
(``codes_below``), by hand, and their run tested from the lowest up (``ruled_low_cells``).

Every randomised check is seeded, so each run is deterministic; none is statistical.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.marginal.empty_cells import (
    RULED_HALF_SIGMAS,
    RULED_SIGMAS,
    doubted_run,
    ruled_cells,
    ruled_low_cells,
    ruled_sigmas_of,
)
from dpquery.data.binary import BinaryData
from dpquery.data.domain import Categorical, Domain, DomainError, Numeric
from dpquery.data.encode import encode
from dpquery.domain_learning import by_rule_low, by_rule_top
from dpquery.privacy.neighbours import NOISY_N
from dpquery.privacy.quantiles import magnitude_buckets
from dpquery.queries import all_kway_marginals
from dpquery.queries.marginals import AttributeLayout

CODES = (1, 2, 3, 4, 5, 6, 7, 8)
LOW_SEEDS = (13, 39)


def _domain(by_rule: tuple[int, ...] = (6, 7, 8)) -> Domain:
    """``code`` over 1..8 and a catch-all, its codes 6..8 (by default) added by rule; ``x``
    numeric without a missing bin; ``flag`` a pair of codes."""
    return Domain(
        (
            Categorical("code", (*CODES, "<other>"), other="<other>", by_rule=by_rule),
            Numeric("x", (0.0, 10.0, 20.0, 30.0, 40.0), out_of_range="clip"),
            Categorical("flag", (0, 1)),
        )
    )


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` records whose codes are 1..5 only (about a fifth each: 160 of 800, some 5
    sigma of the 1-way noise); ``flag`` depends on the code."""
    rng = np.random.default_rng(seed)
    code = rng.integers(1, 6, n)
    return pd.DataFrame({
        "code": code,
        "x": rng.uniform(0, 40, n).round(1),
        "flag": np.where(code <= 2, rng.integers(0, 2, n), 1),
    })  # fmt: skip


def _code_column(data: BinaryData, rows: np.ndarray) -> np.ndarray:
    """The code index (0 for code 1, ..., 8 for <other>) of each of the 0/1 ``rows``."""
    layout = AttributeLayout.of_data(data)
    s = int(layout.starts[0])
    return rows[:, s : s + int(layout.sizes[0])].argmax(axis=1)


def _fit(data: BinaryData, seed: int, **kw: Any):
    """A release of ``data`` (add/remove). The releases with and without the step below
    leave the 1-way shrinkage out (``shrinkage=False``): their seeds were fixed, by the
    records noise put in an empty code, before it came, and it changes the fit (so where
    records go, and the rounds' annealing that reads the fit)."""
    workload = all_kway_marginals(data.domain, 2)
    return AdaptiveProjection(epsilon=1.0, seed=seed, progress=False, **kw).fit(data, workload)


def _charges(release) -> list[tuple[str, str]]:
    return [(e.charge.mechanism, repr(e.charge.cost)) for e in release.ledger.entries]


# == by hand ======================================================================================


def test_the_learning_names_the_codes_above_its_top_buckets_first() -> None:
    """Magnitude buckets 0, 1, 2, 5, 10, 20, ...: codes 1..19 (PUMS's education read from the
    bucket [10, 20)) list 11..19; codes 1..4 (the bucket [2, 5)) list 3 and 4; a 0/1 flag
    (the bucket [1, 2)) and codes 0..10 (the bucket [10, 20) holding 10 alone) none; the
    catch-all and the missing category never."""
    buckets = magnitude_buckets(min_exponent=0)
    educ = Categorical("educ", (*range(1, 20), "<other>", "<missing>"), missing="<missing>",
                       other="<other>")  # fmt: skip
    assert by_rule_top(educ, buckets).by_rule == tuple(range(11, 20))
    race = Categorical("race", (1, 2, 3, 4, "<other>"), other="<other>")
    assert by_rule_top(race, buckets).by_rule == (3, 4)
    flag = Categorical("flag", (0, 1, "<other>"), other="<other>")
    assert by_rule_top(flag, buckets).by_rule == ()
    assert by_rule_top(Categorical("c", (*range(11), "<o>"), other="<o>"), buckets).by_rule == ()


def test_the_cells_named_are_the_domains_by_rule_codes_highest_first() -> None:
    """code's 6, 7, 8 are its codes 5, 6, 7, tested from 8 down; no other attribute has
    any; a layout that is not the domain's, or no domain, none."""
    sizes = AttributeLayout.of_data(encode(_table(50), _domain())).sizes
    assert list(sizes) == [9, 4, 2]
    assert ruled_cells(_domain(), sizes) == [(7, 6, 5), (), ()]
    assert ruled_cells(_domain(()), sizes) == [(), (), ()]
    assert ruled_cells(None, sizes) == [(), (), ()]
    assert ruled_cells(_domain(), sizes[:2]) == [(), ()]


def test_the_run_stops_at_the_first_code_that_reaches_z_sigma() -> None:
    """sigma 3, z 2 (6): from the highest, 2 and -4 are doubted and 7 ends the run, so the
    1 below it is not; a first code of 6 ends it at once. The release's z for these codes is
    1 (measured: docs/learn.md)."""
    assert RULED_SIGMAS == 1.0
    y = np.array([100.0, 1.0, 7.0, -4.0, 2.0])
    assert doubted_run([(y, 3.0)], [(4, 3, 2, 1)], 2.0) == [(4, 3)]
    assert doubted_run([(np.array([6.0, 0.0]), 3.0)], [(0, 1)], 2.0) == [()]
    assert doubted_run([(y, 3.0)], [()], 2.0) == [()]


# == the domain's field ===========================================================================


def test_a_json_round_trip_keeps_by_rule_and_a_codebook_has_none(tmp_path) -> None:
    """The field is written only when there are such codes, read back, and given again to a
    release names the same cells; a codebook's domain lists none."""
    domain = _domain()
    obj = domain.to_dict()
    assert obj["attributes"][0]["by_rule"] == [6, 7, 8]
    assert "by_rule" not in obj["attributes"][2]
    path = tmp_path / "d.json"
    domain.save(path)
    back = Domain.load(path)
    assert back["code"].by_rule == (6, 7, 8) and back["flag"].by_rule == ()
    sizes = AttributeLayout.of_data(encode(_table(50), back)).sizes
    assert ruled_cells(back, sizes) == ruled_cells(domain, sizes)
    book = Domain.from_codebook({"code": {"values": list(CODES)}, "flag": [0, 1]})
    assert all(not getattr(a, "by_rule", ()) for a in book.attributes)


@pytest.mark.parametrize(
    ("by_rule", "match"),
    [((9,), "by_rule values"), (("<other>",), "by_rule values"), ((7, 6), "in the order")],
)
def test_a_bad_by_rule_is_named(by_rule: tuple[Any, ...], match: str) -> None:
    with pytest.raises(DomainError, match=match):
        Categorical("code", (*CODES, "<other>"), other="<other>", by_rule=by_rule)


def test_a_bad_by_rule_in_a_file_is_named() -> None:
    obj = _domain().to_dict()
    obj["attributes"][0]["by_rule"] = "678"
    with pytest.raises(DomainError, match="'by_rule' must be a list"):
        Domain.from_dict(obj)


# == in a release ===============================================================================


@pytest.mark.parametrize("seed", [9, 12, 20])
def test_no_record_in_an_empty_code_and_the_same_charges(seed: int) -> None:
    """800 records, none holding codes 6 to 8: the release holds none there, and its ledger
    holds the same charges, in the same order, as the release without the step
    (post-processing: nothing charged). Each empty code passes 1 sigma (RULED_SIGMAS) with
    probability about 16%, ending the run: these seeds are fixed (without the step they put
    15, 24 and 23 records there; of seeds 0 to 39, 19 put some there and 10 of those none
    with the step)."""
    data = encode(_table(800, seed), _domain())
    on = _fit(data, seed, shrinkage=False)
    off = _fit(data, seed, empty_cells=None, shrinkage=False)
    codes = _code_column(data, np.asarray(on.records.rows))
    assert not np.isin(codes, [5, 6, 7]).any()
    before = _code_column(data, np.asarray(off.records.rows))  # without it, noise put records
    assert np.isin(before, [5, 6, 7]).sum() >= 10
    assert _charges(on) == _charges(off)
    assert len(on.records.rows) == len(off.records.rows)


def test_neighbouring_tables_of_n_and_n_plus_one_under_add_remove() -> None:
    """Add one record (n = 800 and 801, add/remove, the default): both releases make the
    same charges with and without the step and hold no record in an empty code; the step
    reads no count of the data (the codes tested are the domain's, the test reads the noisy
    1-way measurements). The seeds are fixed: without the step 6 and 14 records there."""
    table = _table(801, 1)
    for t in (table.iloc[:800], table):
        data = encode(t.reset_index(drop=True), _domain())
        on = _fit(data, 9, shrinkage=False)
        off = _fit(data, 9, empty_cells=None, shrinkage=False)
        assert _charges(on) == _charges(off)
        codes = _code_column(data, np.asarray(on.records.rows))
        assert not np.isin(codes, [5, 6, 7]).any()
        before = _code_column(data, np.asarray(off.records.rows))
        assert np.isin(before, [5, 6, 7]).sum() >= 5
    assert _charges(on)[0][0] == NOISY_N  # the noisy n first: add/remove


def test_neighbouring_tables_with_one_record_replaced_under_replace_one() -> None:
    """Replace one record (n = 800 both, replace-one): both releases make the same charges
    with and without the step and hold no record in an empty code. The seeds are fixed:
    without the step 12 and 11 records there."""
    table = _table(800, 2)
    other = table.copy()
    other.loc[0, "code"] = 5 if table.loc[0, "code"] != 5 else 4
    for t in (table, other):
        data = encode(t, _domain())
        on = _fit(data, 2, neighbours="replace-one")
        off = _fit(data, 2, empty_cells=None, neighbours="replace-one")
        assert _charges(on) == _charges(off)
        assert NOISY_N not in [mechanism for mechanism, _ in _charges(on)]  # n is public
        codes = _code_column(data, np.asarray(on.records.rows))
        assert not np.isin(codes, [5, 6, 7]).any()
        assert np.isin(_code_column(data, np.asarray(off.records.rows)), [5, 6, 7]).sum() >= 10


def test_a_code_holding_records_ends_the_run_and_is_kept() -> None:
    """Codes 4 to 8 listed, 4 and 5 holding about 160 records each (5 sigma): the run stops
    at 5, so the release keeps about a fifth of its records at each of 4 and 5."""
    data = encode(_table(800, 3), _domain((4, 5, 6, 7, 8)))
    codes = _code_column(data, np.asarray(_fit(data, 3).records.rows))
    assert 0.12 < (codes == 3).mean() < 0.28 and 0.12 < (codes == 4).mean() < 0.28


def test_a_release_whose_domain_lists_no_such_code_is_unchanged() -> None:
    """The same domain without by_rule (a codebook's): the records are the same bytes as
    with a listed code that no noise doubts (code 1, about 160 records, listed alone)."""
    data = encode(_table(600, 6), _domain(()))
    plain = _fit(data, 6)
    held = _fit(encode(_table(600, 6), _domain((1,))), 6)
    assert np.array_equal(np.asarray(plain.records.rows), np.asarray(held.records.rows))


# == a release from a raw table ===================================================================


def test_a_small_raw_tables_learned_domain_file_lists_the_codes(tmp_path) -> None:
    """A 1,000-record raw table (a small table: integer codes by range), released by the
    command line: the domain written beside the output lists, for each code column, the
    codes above its top bucket's first (race's 1..4 from the bucket [2, 5): 3 and 4), and
    loading it gives the release the same cells again."""
    from dpquery.cli import main

    rng = np.random.default_rng(0)
    n = 1000
    raw = pd.DataFrame({
        "sex": rng.integers(0, 2, n), "age": rng.integers(18, 90, n),
        "race": rng.choice([1, 2, 3, 4], n, p=[0.5, 0.2, 0.2, 0.1]),
    })  # fmt: skip
    data, out = tmp_path / "t.csv", tmp_path / "s.csv"
    raw.to_csv(data, index=False)
    argv = ["synth", "--data", str(data), "--epsilon", "1", "--seed", "3", "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    learned = Domain.load(tmp_path / "s.domain.json")
    race = learned["race"]
    assert isinstance(race, Categorical) and race.by_rule
    assert race.by_rule == tuple(v for v in race.values if isinstance(v, int) and v > 2)
    assert learned["sex"].by_rule == ()


def test_a_run_of_half_points_is_tested_at_its_own_sigmas() -> None:
    """Half-lattice points added by rule (floats) are tested at :data:`RULED_HALF_SIGMAS`,
    integer codes at :data:`RULED_SIGMAS`; a layout that is not the domain's gets the latter.
    A count of 1.5 sd is kept at 1 sd and doubted at 2.5 sd, in the same call."""
    half = Categorical("rating", (4.0, 4.5, 5.0, 5.5, 6.0, "<other>"), other="<other>",
                       by_rule=(5.5, 6.0))  # fmt: skip
    code = Categorical("kids", (0, 1, 2, 3, "<other>"), other="<other>", by_rule=(3,))
    domain = Domain([half, code])
    assert ruled_sigmas_of(domain, [6, 5]) == [RULED_HALF_SIGMAS, RULED_SIGMAS]
    assert ruled_sigmas_of(domain, [6]) == [RULED_SIGMAS]
    assert RULED_SIGMAS < 1.5 < RULED_HALF_SIGMAS
    y = np.array([50.0, 50.0, 50.0, 0.0, 1.5, 0.0])  # sigma 1: the point 6.0 at 1.5 sd
    cells = ruled_cells(domain, [6, 5])
    assert cells[0] == (4, 3)
    estimates = [(y, 1.0), (np.array([9.0, 9.0, 9.0, 1.5, 0.0]), 1.0)]
    run = doubted_run(estimates, cells, ruled_sigmas_of(domain, [6, 5]))
    assert run == [(4, 3), ()]  # 6.0 and 5.5 doubted; the code 3 kept (1.5 >= 1)


# == the codes below the data's bounds ==========================================================


def test_the_learning_names_the_codes_below_the_bounds_before_the_rule_at_0() -> None:
    """Codes 0..19 whose bounds before the rule at 0 began at 1 (UCI Adult's
    ``education-num``): 0 is added by rule, beside the top bucket's; at 2, 0 and 1. A small
    table's codes from 1 to its bounds are the ones its bounds missed: 0 alone. No code when
    the bounds began at 0 or are unknown, or when every code would be."""
    buckets = magnitude_buckets(min_exponent=0)
    num = Categorical("num", (*range(20), "<other>"), other="<other>")
    top = by_rule_top(num, buckets)
    assert by_rule_low(top, 1.0, small=False).by_rule == (0, *range(11, 20))
    assert by_rule_low(top, 2.0, small=False).by_rule == (0, 1, *range(11, 20))
    assert by_rule_low(top, 5.0, small=True).by_rule == (0, *range(11, 20))
    assert by_rule_low(num, 0.0, small=False).by_rule == ()
    assert by_rule_low(num, None, small=False).by_rule == ()
    flag = Categorical("flag", (0, 1, "<other>"), other="<other>")
    assert by_rule_low(flag, 5.0, small=False).by_rule == ()  # every code: none
    one = Categorical("c", (1, 2, 3, "<other>"), other="<other>")
    assert by_rule_low(one, 1.0, small=False).by_rule == ()  # from 1: nothing below


def _low_domain(by_rule: tuple[int, ...] = (0, 7, 8)) -> Domain:
    """``code`` over 0..8 and a catch-all, 0 and 7, 8 added by rule (by default)."""
    return Domain(
        (
            Categorical("code", (0, *CODES, "<other>"), other="<other>", by_rule=by_rule),
            Numeric("x", (0.0, 10.0, 20.0, 30.0, 40.0), out_of_range="clip"),
            Categorical("flag", (0, 1)),
        )
    )


def test_the_low_cells_are_the_codes_below_every_code_not_by_rule_lowest_first() -> None:
    """0 and 1 listed with 7 and 8 (code indices 0, 1 and 7, 8): the low run is (0, 1), the
    top run (8, 7); a code listed between codes not listed (4) is in the top run's list, as
    before; every code listed: all in the top run."""
    sizes = AttributeLayout.of_data(encode(_table(50), _low_domain())).sizes
    d = _low_domain((0, 1, 7, 8))
    assert ruled_low_cells(d, sizes) == [(0, 1), (), ()]
    assert ruled_cells(d, sizes) == [(8, 7), (), ()]
    d = _low_domain((0, 4, 8))
    assert ruled_low_cells(d, sizes) == [(0,), (), ()]
    assert ruled_cells(d, sizes) == [(8, 4), (), ()]
    d = _low_domain(tuple(range(9)))
    assert ruled_low_cells(d, sizes) == [(), (), ()]
    assert ruled_cells(d, sizes)[0] == tuple(range(8, -1, -1))
    assert ruled_low_cells(_domain(), sizes[:2]) == [(), ()]
    assert ruled_low_cells(None, sizes) == [(), (), ()]


@pytest.mark.parametrize("seed", [LOW_SEEDS[0], LOW_SEEDS[1]])
def test_no_record_in_an_empty_code_below_the_data_and_the_same_charges(seed: int) -> None:
    """800 records of codes 1..5, the domain's 0 added by rule below them (and 7, 8 above):
    the release holds none at 0, and the same charges as without the step. The seeds are
    fixed ones where noise put records at 0 without the step (of seeds 0 to 39, 9 did, and
    4 of those put none there with it: an empty code whose noise passes 1 sigma, about 16%,
    keeps the records its noise gave it)."""
    data = encode(_table(800, seed), _low_domain())
    on = _fit(data, seed, shrinkage=False)
    off = _fit(data, seed, empty_cells=None, shrinkage=False)
    assert (_code_column(data, np.asarray(off.records.rows)) == 0).sum() >= 4
    assert not (_code_column(data, np.asarray(on.records.rows)) == 0).any()
    assert _charges(on) == _charges(off)


def _probe(keys: dict[str, int], sigma2: int = 100) -> Any:
    from fractions import Fraction

    from dpquery.privacy.partition_selection import Selection

    return Selection(released=keys, sigma2=Fraction(sigma2), tau=300, rho=0.01, delta_tail=0.0)


def test_codes_below_and_between_the_released_keys_by_hand() -> None:
    """Keys 4..7 and 9..16 (noise sd 10 each) holding noisy 30,000 of 30,600 present (profile
    sd 20): 600 left out against 1 sd of sqrt(12 x 100 + 2 x 400) = 44.7: codes 0 to 3 and 8
    are added by rule (0 to 3 the low run, 8 with the top run's list). 30,640 present (40
    left out): none. A key of 0: only the gaps (none here); a smallest key past KEYS_BELOW
    (10): none below."""
    from dpquery.domain_learning import KEYS_BELOW, _categorical, codes_below

    counts = {str(k): 2_500 for k in (4, 5, 6, 7, *range(9, 17))}
    sel = _probe(counts)
    attr, learned = _categorical("num", sel)
    released = sum(counts.values())
    out, said = codes_below(attr, learned, sel, released + 600, 20.0)
    assert out.values[:18] == (*range(17), "<other>")
    assert out.by_rule == (0, 1, 2, 3, 8)
    assert "codes 0, 1, 2, 3, 8 beside its keys by rule" in said
    assert ruled_low_cells(Domain([out]), [out.size]) == [(0, 1, 2, 3)]
    assert ruled_cells(Domain([out]), [out.size]) == [(8,)]
    assert codes_below(attr, learned, sel, released + 40, 20.0)[0] == attr
    zero = {str(k): 1000 for k in range(0, 5)}
    a0, l0 = _categorical("z", _probe(zero))
    assert codes_below(a0, l0, _probe(zero), 10_000, 20.0)[0] == a0
    far = {str(k): 1000 for k in range(KEYS_BELOW + 1, KEYS_BELOW + 5)}
    af, lf = _categorical("f", _probe(far))
    assert codes_below(af, lf, _probe(far), 10_000, 20.0)[0] == af
    one = {str(k): 1000 for k in range(1, 5)}
    a1, l1 = _categorical("o", _probe(one))
    got = codes_below(a1, l1, _probe(one), 10_000, 20.0)[0]
    assert got.values[0] == 0 and got.by_rule == (0,)
