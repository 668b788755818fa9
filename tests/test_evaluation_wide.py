"""The wide measures (1-way, pairs and triples among frequent items) on hand-checkable tables."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from dpquery.data import ItemSets
from dpquery.errors import DPQueryError
from dpquery.evaluation.wide import WideMeasures, describe_wide, wide_evaluation, wide_scores

# 4 records over 4 items; counts: item 0: 3, item 1: 2, item 2: 2, item 3: 0
REAL = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]], dtype=np.uint8)


def _items(dense, weights=None) -> ItemSets:
    return ItemSets(sp.csr_array(np.asarray(dense, dtype=np.uint8)), weights)


def test_true_answers_by_hand():
    m = WideMeasures.of(_items(REAL), pair_top=3, triple_top=3, triples=10)
    assert m.one_way.tolist() == [0.75, 0.5, 0.5, 0.0]
    assert m.pair_items.tolist() == [0, 1, 2]  # item 1 before item 2: ties go to the lower id
    # pairs (0,1), (0,2), (1,2): records 0-1, records 0 and 2, record 0 alone
    assert m.pairs.tolist() == [0.5, 0.5, 0.25]
    assert m.triples.tolist() == [[0, 1, 2]] and m.triple_answers.tolist() == [0.25]


def test_scores_of_a_release_and_the_references_by_hand():
    real = _items(REAL)
    m = WideMeasures.of(real, pair_top=3, triple_top=3)
    # two records, the first three times as heavy: shares 3/4 and 1/4
    release = _items([[1, 1, 0, 0], [0, 0, 1, 1]], weights=[3.0, 1.0])
    answers = m.answers(release)
    assert answers["one_way"].tolist() == [0.75, 0.75, 0.25, 0.25]
    assert answers["pairs"].tolist() == [0.75, 0.0, 0.0]
    assert answers["triples"].tolist() == [0.0]
    s = m.scores(release)
    assert s["one_way"] == {"max": 0.25, "mean": 0.75 / 4, "count": 4}
    assert s["pairs"] == {"max": 0.5, "mean": (0.25 + 0.5 + 0.25) / 3, "count": 3}
    assert s["triples"] == {"max": 0.25, "mean": 0.25, "count": 1}
    ref = m.reference_scores()
    assert ref["zeros"]["one_way"] == {"max": 0.75, "mean": 1.75 / 4, "count": 4}
    assert ref["indep"]["one_way"]["max"] == 0.0
    # indep pairs: 0.375, 0.375, 0.25 against 0.5, 0.5, 0.25
    assert ref["indep"]["pairs"] == {"max": 0.125, "mean": 0.25 / 3, "count": 3}
    assert ref["indep"]["triples"]["max"] == pytest.approx(0.25 - 0.1875)
    assert ref["uniform"]["triples"]["max"] == pytest.approx(0.125)
    assert ref["uniform"]["one_way"]["max"] == 0.5


def test_triples_are_seeded_distinct_and_match_brute_force():
    rng = np.random.default_rng(4)
    dense = (rng.random((300, 30)) < rng.random(30) * 0.6).astype(np.uint8)
    real = _items(dense)
    m = WideMeasures.of(real, pair_top=12, triple_top=10, triples=50, seed=3)
    assert len({tuple(t) for t in m.triples.tolist()}) == 50
    assert set(m.triples.ravel()) <= set(m.pair_items[:10].tolist())
    again = WideMeasures.of(real, pair_top=12, triple_top=10, triples=50, seed=3)
    assert np.array_equal(m.triples, again.triples)
    assert not np.array_equal(m.triples, WideMeasures.of(real, triples=50, seed=4).triples)
    brute = [dense[:, list(t)].all(axis=1).mean() for t in m.triples]
    assert np.allclose(m.triple_answers, brute)
    pairs = [(dense[:, i] & dense[:, j]).mean() for i, j in itertools.combinations(m.pair_items, 2)]
    assert np.allclose(m.pairs, pairs)
    # the weighted path agrees with the unweighted one when every weight is the same
    even = m.answers(ItemSets(real.matrix, np.full(real.n, 2.0)))
    assert all(np.allclose(even[k], v) for k, v in m.answers(real).items())


def test_all_triples_when_there_are_fewer_than_asked():
    m = WideMeasures.of(_items(np.eye(5, dtype=np.uint8)), triple_top=4, triples=2000)
    assert len(m.triples) == 4  # C(4, 3)
    assert len(WideMeasures.of(_items(np.eye(2, dtype=np.uint8))).triples) == 0


def test_evaluation_is_labelled_and_checks_shapes():
    real = _items(REAL)
    ev = wide_evaluation(real, real)
    assert "NOT PRIVATE" in ev["note"]
    assert set(ev["scores"]) == {"synthetic", "zeros", "indep", "uniform"}
    assert ev["scores"]["synthetic"]["pairs"]["max"] == 0.0
    assert wide_scores(real, real)["triples"]["max"] == 0.0
    text = describe_wide(ev)
    assert text.startswith("NOT PRIVATE") and "indep" in text and "triples" in text
    with pytest.raises(DPQueryError, match="3 items, the data 4"):
        wide_scores(real, _items(REAL[:, :3]))
    with pytest.raises(DPQueryError, match="cannot be weighted"):
        WideMeasures.of(_items(REAL, weights=[1.0, 1.0, 1.0, 1.0]))
