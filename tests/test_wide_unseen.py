"""The wide release on the extreme shapes it was not tuned on (dpquery.datasets.shapes.UNSEEN;
docs/wide.md, "Shapes it was not tuned on"): the recipes, and each fix of a case that was
worse than the all-zeros table there, tested on that case (checked to fail with the fix
undone, by monkeypatching it away)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dpquery.algorithms.wide import core, fit
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data.items import ItemSets
from dpquery.datasets.shapes import UNSEEN, describe, generate
from dpquery.evaluation.wide import WideMeasures


def test_the_unseen_recipes_have_their_public_shapes():
    stats = {name: describe(generate(name, 0)) for name in UNSEEN if name != "wideshort"}
    assert stats["tiny"]["n"] == 200 and stats["tiny"]["mean_length"] > 100
    assert stats["dense"]["mean_length"] > 1_000  # dense-ish rows of 5,000 items
    assert 0.93 <= stats["common"]["top_item_share"] <= 0.97  # one item in ~95% of records
    assert stats["empty"]["median_length"] == 0  # 90% empty ...
    assert stats["empty"]["p90_length"] > 0 and stats["empty"]["max_length"] > 100  # ... a few long
    assert stats["samelen"]["max_length"] == 40 and stats["samelen"]["median_length"] >= 35
    assert stats["narrowdeep"]["n"] == 100_000 and stats["narrowdeep"]["d"] == 50
    assert stats["uniform"]["top_item_share"] < 0.02  # no head
    two = generate("twocomm", 0).matrix
    # two disjoint communities: no item is held by records of both
    group = np.random.default_rng(0).integers(UNSEEN["twocomm"].groups, size=two.shape[1])
    rows = np.repeat(np.arange(two.shape[0]), np.diff(two.indptr))
    mixed = np.bincount(rows, weights=group[two.indices], minlength=two.shape[0])
    lengths = np.diff(two.indptr)
    assert np.all((mixed == 0) | (mixed == lengths))
    # the other shapes' tables are unchanged by the new recipe fields (drawn only when set)
    assert generate("small", 0).nnz == describe(generate("small", 0))["ones"]


def test_measurable_against_the_hand_computed_threshold():
    # family_threshold(5,000) = sqrt(2 ln 5000) + 1 = 4.127273 + 1
    t = math.sqrt(2 * math.log(5000)) + 1
    assert core.family_threshold(5000) == pytest.approx(5.127273, abs=1e-6)
    y = np.zeros(5000)
    y[7] = t * 2.0 - 1e-9  # sigma 2: just below
    assert not core.measurable(y, 2.0)
    y[7] = t * 2.0
    assert core.measurable(y, 2.0)
    assert not core.measurable(np.zeros(0), 1.0)


def test_no_count_standing_out_keeps_no_item(monkeypatch):
    # 5,000 records, 90% empty, the rest ~100 items cut to 8: no item's cut count reaches 1
    # noise sigma. The prior fitted to pure noise put a spike at its largest draw: with the
    # rule undone, seed 1 released an item held by a few records in about 1.5% of them.
    real = generate("empty", 0)
    warnings.simplefilter("ignore")

    def release() -> dict:
        # the sparse mode at the drawn bound (its probe of the head mode aside)
        model = WideRelease(epsilon=1.0, delta=1e-9, neighbours="add-remove", head=50,
                            seed=1, head_mode="off")  # fmt: skip
        return model.fit(real).parameters

    assert release()["items_kept"] == 0
    monkeypatch.setattr(core, "measurable", lambda y, sigma: True)  # the rule undone
    monkeypatch.setattr(core, "few_stand_out", lambda y, sigma: False)  # (which holds it too)
    assert release()["items_kept"] == 1


def test_few_stand_out_against_hand_computed_values():
    # 200,000 counts: 200,000 Q(4) = 200,000 x 3.167124e-05 = 6.334 noise draws expected
    # past 4 sigma; the family threshold is sqrt(2 ln 200,000) + 1 = 5.940865 sigma
    d, sigma = 200_000, 3.0
    assert core.family_threshold(d) == pytest.approx(5.940865, abs=1e-6)
    y = np.zeros(d)
    y[:6] = 5.940865 * sigma + 1e-3  # 6 stand out: fewer than 6.334
    assert core.measurable(y, sigma) and core.few_stand_out(y, sigma)
    y[6] = y[0]  # 7: not few
    assert not core.few_stand_out(y, sigma)
    # 2,000 counts: 0.063 draws expected past 4 sigma, so one standing out is enough
    y = np.zeros(2000)
    assert core.few_stand_out(y, sigma)  # none: measurable's case
    y[0] = core.family_threshold(2000) * sigma
    assert not core.few_stand_out(y, sigma)


def _one_item_a_record(n: int, d: int, heads: list[int]) -> ItemSets:
    """``n`` records of one item each: item ``i`` in ``heads[i]`` records (no two together),
    every other record an item of its own, held by it alone."""
    rows = np.arange(n)
    cols = np.full(n, -1)
    start = 0
    for i, size in enumerate(heads):
        cols[start : start + size] = i
        start += size
    cols[start:] = len(heads) + rows[start:]
    return ItemSets(sp.csr_array((np.ones(n, dtype=np.uint8), (rows, cols)), shape=(n, d)))


def test_a_noise_draw_beside_few_counts_standing_out_is_not_released(monkeypatch):
    # 2,000 records, 100,000 items: item 0 in 50 records (6 sigma of 8.26), every other item
    # in at most one record. One count stands out of 100,000, fewer than the 3.2 noise
    # draws expected past 4 sigma: with the rule undone, the prior's spike beside item 0
    # lifted a noise draw, and seed 1 released an item held by one record in 45 (item 0
    # itself in 41).
    real = _one_item_a_record(2000, 100_000, [50])
    warnings.simplefilter("ignore")

    def most_released_of_the_rest() -> int:
        model = WideRelease(epsilon=1.0, delta=1e-9, neighbours="add-remove", head=20,
                            head_mode="off", bound=1, pool=20_000, seed=1)  # fmt: skip
        release = model.fit(real)
        return int(np.bincount(release.records.matrix.indices, minlength=real.d)[1:].max())

    assert most_released_of_the_rest() == 0
    monkeypatch.setattr(core, "few_stand_out", lambda y, sigma: False)  # the rule undone
    assert most_released_of_the_rest() > 40


def test_few_kept_items_with_no_pair_standing_out_are_never_together(monkeypatch):
    # 2,000 records of one item, 100,000 items: items 0 and 1 in 150 records each, never
    # together. Both stand out, fewer than the noise draws expected past 4 sigma, and their
    # pair's noisy count does not: with the rule undone, the noisy (head, tail) sizes put
    # both in 44 records of seed 2 (the pair's error 44, the all-zeros table's 0).
    real = _one_item_a_record(2000, 100_000, [150, 150])
    warnings.simplefilter("ignore")

    def together() -> int:
        model = WideRelease(epsilon=1.0, delta=1e-9, neighbours="add-remove", head=20,
                            head_mode="off", bound=4, pool=20_000, seed=2)  # fmt: skip
        release = model.fit(real)
        assert release.parameters["items_kept"] == 2
        m = release.records.matrix
        return int(m[:, [0]].multiply(m[:, [1]]).sum())

    assert together() == 0
    measurable = core.measurable
    # the rule undone: the kept items' one pair taken as standing out
    monkeypatch.setattr(core, "measurable", lambda y, s: y.size == 1 or measurable(y, s))
    assert together() > 0


def test_item_features_are_the_item_columns_of_the_features():
    rng = np.random.default_rng(0)
    c = rng.random(30) * 100
    pairs = np.outer(c, c) / 1000
    np.fill_diagonal(pairs, 0.0)
    pool, _ = fit.head_pool(c, pairs, np.full(31, 1 / 31), 3000, rng)
    full = fit.features(pool, 30)[:, :30]
    items = fit.item_features(pool)
    for a in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(full, a), getattr(items, a))


def test_independent_sizes_against_hand_computed_values():
    # Poisson(2) x Poisson(3) at s = 8: cell (0, 0) is e^-5 over the mass of a + b <= 8
    a = np.arange(9)
    head = np.exp(-2.0) * 2.0**a / np.array([math.factorial(k) for k in a])
    tail = np.exp(-3.0) * 3.0**a / np.array([math.factorial(k) for k in a])
    assert core.poisson_pmf(a, 2.0) == pytest.approx(head, rel=1e-12)
    inside = sum(head[i] * tail[j] for i in a for j in a if i + j <= 8)
    out = core.independent_sizes(2.0, 3.0, 8)
    assert out[0, 0] == pytest.approx(math.exp(-5.0) / inside, rel=1e-12)
    assert out[5, 4] == 0.0 and out.sum() == pytest.approx(1.0)
    assert core.independent_sizes(0.0, 0.0, 4)[0, 0] == 1.0  # nothing held: every record empty


def test_unmeasurable_size_histogram_gives_no_huge_heads(monkeypatch):
    # 3,000 records of two disjoint communities, add/remove at epsilon 1: the bound drawn
    # is 128 and the 129^2 (head, tail) size cells are noise alone. Shrunk, the histogram
    # kept the empty cell, and the tilt toward the head's total gave a tenth of the records
    # heads of ~110 items: seed 1's triples max 1.66x the all-zeros table's (0.95x with the
    # items' own counts as the sizes).
    real = generate("twocomm", 0)
    measures = WideMeasures.of(real, seed=0)
    zeros = measures.reference_scores()["zeros"]["triples"]["max"]
    warnings.simplefilter("ignore")

    def triples_max() -> float:
        # the sparse mode at the drawn bound (its probe of the head mode aside)
        model = WideRelease(epsilon=1.0, delta=1e-9, neighbours="add-remove", head=50,
                            seed=1, head_mode="off")  # fmt: skip
        release = model.fit(real)
        assert release.parameters["s"] == 128
        return measures.scores(release.records)["triples"]["max"]

    assert triples_max() <= zeros
    measurable = core.measurable
    # the fallback undone: the (129 x 129) size histogram taken as measured
    monkeypatch.setattr(core, "measurable", lambda y, s: y.size == 129**2 or measurable(y, s))
    assert triples_max() > zeros


def test_poisson_binomial_against_hand_computed_values():
    # chances 0.1 and 0.2: none 0.9 x 0.8, one 0.1 x 0.8 + 0.9 x 0.2, both 0.1 x 0.2
    assert core.poisson_binomial(np.array([0.1, 0.2])) == pytest.approx([0.72, 0.26, 0.02])
    assert core.poisson_binomial(np.array([0.5, 0.5])) == pytest.approx([0.25, 0.5, 0.25])
    assert core.poisson_binomial(np.zeros(0)).tolist() == [1.0]


def test_a_picked_size_histogram_of_noise_about_the_independent_law_is_the_law(monkeypatch):
    # 2,000 records of about 40 items, replace-one's head mode at epsilon 1: no cell of the
    # picked-size histogram departs from the picks' independent law by the family
    # threshold, and shrunk toward 0 its noisy far cells gave heads of 9-12 picks: seed
    # 11's triples mean 1.006x the all-zeros table's.
    real = generate("samelen", 0)
    measures = WideMeasures.of(real, seed=0)
    zeros = measures.reference_scores()["zeros"]["triples"]["mean"]

    def triples_mean() -> float:
        model = WideRelease(epsilon=1.0, delta=1 / real.n**2, seed=11)
        release = model.fit(real)
        assert release.parameters["mode"] == "head"
        return measures.scores(release.records)["triples"]["mean"]

    assert triples_mean() <= zeros
    measurable = core.measurable
    # the rule undone: the 21 cells' departures taken as standing out
    monkeypatch.setattr(core, "measurable", lambda y, s: y.size == 21 or measurable(y, s))
    assert triples_mean() > zeros


def test_implied_triple_max_against_hand_computed_values():
    # independent given the head size: 10 records of 3 head items, shares 1/2, 1/3, 1/6:
    # 10 * 3 * 2 * 1 * (1/2)(1/3)(1/6) = 5/3 (the pairs, all 0, imply no triple)
    sizes = np.array([5.0, 0.0, 0.0, 10.0])
    c = np.array([30.0, 20.0, 10.0])
    assert core.implied_triple_max(c, np.zeros((3, 3)), sizes) == pytest.approx(5 / 3, rel=1e-12)
    # Kirkwood: three items of 10 records each, every pair in 8 of them, n = 15:
    # 15 * 8^3 / 10^3 = 7.68 (the independent model: 60 / 27 = 2.22)
    pairs = np.full((3, 3), 8.0)
    np.fill_diagonal(pairs, 0.0)
    c = np.full(3, 10.0)
    assert core.implied_triple_max(c, pairs, sizes) == pytest.approx(7.68, rel=1e-12)
    # ... and never more than the smallest pair: every pair in all 10 records gives 15, cut to 10
    pairs = np.full((3, 3), 10.0)
    np.fill_diagonal(pairs, 0.0)
    assert core.implied_triple_max(c, pairs, sizes) == pytest.approx(10.0, rel=1e-12)
    # once one model implies enough, that model's count: the independent 60 / 27 first
    assert core.implied_triple_max(c, pairs, sizes, enough=2.0) == pytest.approx(60 / 27)
    assert core.implied_triple_max(c, pairs, sizes, enough=3.0) == pytest.approx(10.0)
    # a fourth item, rarer and with no pair, changes neither model's largest triple
    c4 = np.array([10.0, 10.0, 10.0, 1.0])
    p4 = np.zeros((4, 4))
    p4[:3, :3] = pairs
    assert core.implied_triple_max(c4, p4, sizes) == pytest.approx(10.0, rel=1e-12)
    assert core.implied_triple_max(np.zeros(3), np.zeros((3, 3)), sizes) == 0.0


def test_short_heads_cuts_long_heads_only_where_no_triple_is_expected():
    # 100 records: 50 empty heads, 30 of one head item, 15 of two, 5 of three; 100 head items
    # of 0.75 records each (shares 0.01): the commonest triple is implied in
    # 5 * 6 * 0.01^3 = 3e-5 records, below ln 2
    sizes = np.array([50.0, 30.0, 15.0, 5.0])
    c = np.full(100, 0.75)
    out = core.short_heads(sizes, c, np.zeros((100, 100)), 100)
    assert out.size == 3 and out.sum() == pytest.approx(100.0)
    # tilted back to the head's 75 items: mean 0.75, and N_a exp(lambda a) of (50, 30, 20)
    assert (out * np.arange(3)).sum() == pytest.approx(75.0, rel=1e-9)
    ratio = (out[1] / out[0]) ** 2 / (out[2] / out[0])  # (0.6 e^l)^2 / (0.4 e^2l) = 0.9
    assert ratio == pytest.approx(0.9, rel=1e-9)
    # where a triple is implied in ln 2 records or more, the sizes are kept as they are
    c = np.array([30.0, 20.0, 10.0])  # 5 * 6 / 36 = 0.83 records, above ln 2 = 0.69
    assert core.implied_triple_max(c, np.zeros((3, 3)), sizes) > math.log(2)
    assert core.short_heads(sizes, c, np.zeros((3, 3)), 100).tolist() == sizes.tolist()
    # no head of 3 items or more: unchanged
    assert core.short_heads(sizes[:3], np.full(100, 0.75), np.zeros((100, 100)), 100).size == 3


def test_no_head_triple_where_none_is_expected(monkeypatch):
    # 5,000 records of 3 items over 10,000 (the wideshort recipe, smaller), add/remove at
    # epsilon 1: 20 items kept, and 7 records drawn with 5 to 8 of them (from noise cells of
    # the size histogram: 2 records at 5 head items, shrunk) made the triples among the 100
    # commonest items 1.5x the all-zeros table's mean error, though the estimates imply no
    # triple in more than 0.58 records. With the long heads cut to 2, the release holds no
    # such triple: exactly the all-zeros table's error.
    from dataclasses import replace

    real = generate(replace(UNSEEN["wideshort"], name="wideshort5k", n=5_000, d=10_000), 0)
    measures = WideMeasures.of(real, seed=0)
    zeros = measures.reference_scores()["zeros"]["triples"]["mean"]
    warnings.simplefilter("ignore")

    def triples_mean() -> float:
        model = WideRelease(epsilon=1.0, delta=1e-9, neighbours="add-remove", head=100,
                            pool=20_000, seed=1)  # fmt: skip
        return measures.scores(model.fit(real).records)["triples"]["mean"]

    assert triples_mean() == zeros
    monkeypatch.setattr(core, "short_heads", lambda sizes, c, pairs, n: sizes)  # undone
    assert triples_mean() > 1.4 * zeros


def test_a_template_in_the_pairs_keeps_the_long_heads():
    # 975 records; 97 head items of 10 records and a template of 3 items of 30, each of its
    # pairs in 25 records. The shares alone imply the template in 25 * 6 * (30 / 1060)^3 =
    # 0.0034 records (below ln 2), its pairs in min(975 * 25^3 / 30^3, 25) = 25: kept.
    sizes = np.array([500.0, 300.0, 150.0, 25.0])
    c = np.concatenate([np.full(97, 10.0), np.full(3, 30.0)])
    pairs = np.zeros((100, 100))
    pairs[97:, 97:] = 25.0
    np.fill_diagonal(pairs, 0.0)
    assert core.implied_triple_max(c, pairs, sizes) == pytest.approx(25.0, rel=1e-12)
    assert core.short_heads(sizes, c, pairs, 975).tolist() == sizes.tolist()
    assert core.short_heads(sizes, c, np.zeros((100, 100)), 975).size == 3  # no pairs: cut
