"""The wide release on generated item tables of other shapes (dpquery.datasets.shapes): the
small shape (n = 700, d = 9,000, records of ~150 items), where the noise of the item counts
swamps all but the commonest items. The fitted records are checked against the noisy
counts they were fitted to, the release is never worse than the all-zeros table there, and
auto says so before the fit (docs/wide.md, "Shapes")."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

from cli_process import dpquery_cli
from dpquery.algorithms import registry
from dpquery.algorithms.wide import core, measure
from dpquery.algorithms.wide.release import WideRelease, noise_warning
from dpquery.data import read_item_sets, write_item_sets
from dpquery.datasets.shapes import SHAPES, describe, generate
from dpquery.evaluation.wide import MEASURES, WideMeasures


@pytest.fixture(scope="module")
def small():
    return generate("small", 0)


def test_shapes_are_reproducible_and_of_their_public_shape(small):
    again = generate("small", 0)
    assert (again.matrix != small.matrix).nnz == 0
    assert (generate("small", 1).matrix != small.matrix).nnz > 0
    stats = describe(small)
    assert (stats["n"], stats["d"]) == (700, 9000)
    assert 120 <= stats["mean_length"] <= 180  # ~150 items a record
    assert 55 <= stats["median_length"] <= 90  # median ~70
    assert 280 <= stats["p90_length"] <= 420  # 90th percentile ~320
    assert 0.2 <= stats["top_item_share"] <= 0.6  # power-law popularity
    npm = describe(generate("npm", 0))
    assert npm["median_length"] <= 8 and npm["max_length"] <= SHAPES["npm"].cap


@pytest.mark.parametrize(("epsilon", "seed"), [(1.0, 1), (1.0, 0), (0.1, 0)])
@pytest.mark.parametrize("head_mode", ["auto", "off"])
def test_fitted_counts_stay_within_the_noise_of_the_measurements(small, monkeypatch, epsilon,
                                                                 seed, head_mode):  # fmt: skip
    # sparse mode: seed 1 at epsilon 1 put one rare item (true share 0.02) in every record
    # before the fit's check; the head mode (auto here) fits the picked items' counts
    noisy = {"y": np.zeros(small.d)}
    item_counts, head_counts = measure.item_counts, measure.head_counts
    pick_head = measure.pick_head

    def keep(*args, **kwargs):
        noisy["y"] = item_counts(*args, **kwargs)
        return noisy["y"]

    def picks(*args, **kwargs):
        noisy["picked"] = pick_head(*args, **kwargs)
        return noisy["picked"]

    def keep_head(*args, **kwargs):
        y = head_counts(*args, **kwargs)
        noisy["y"][noisy["picked"]] = y
        return y

    monkeypatch.setattr(measure, "item_counts", keep)
    monkeypatch.setattr(measure, "pick_head", picks)
    monkeypatch.setattr(measure, "head_counts", keep_head)
    with warnings.catch_warnings():
        warnings.simplefilter("error", core.WideFitWarning)
        release = registry.build(
            "wide",
            {"epsilon": epsilon, "delta": 1 / small.n**2, "head_mode": head_mode},
            seed=seed,
        ).fit(small)
    assert release.parameters["mode"] == ("head" if head_mode == "auto" else "sparse")
    fitted = np.bincount(release.records.matrix.indices, minlength=small.d)
    sigma = release.parameters["sigma_items"]
    excess = (fitted - noisy["y"]) / np.sqrt(sigma**2 + np.maximum(noisy["y"], 1.0))
    assert excess.max() < core.FIT_EXCESS_LIMIT
    assert release.parameters["fit_excess_sigmas"] == pytest.approx(max(excess.max(), 0.0))
    # no item in more records than its count could explain: at most a few sigma above it
    assert fitted.max() <= max(noisy["y"].max(), 0) + core.FIT_EXCESS_LIMIT * sigma


def test_the_guard_flags_a_fit_far_above_its_counts():
    import scipy.sparse as sp

    records = sp.csr_array(np.ones((100, 3), dtype=np.uint8))  # every item in every record
    assert core.fit_excess(records, np.array([100, 100, 100]), 5.0) == 0.0
    # (100 - 10) / sqrt(5^2 + 10): the noise's deviation and the records' own draw
    assert core.fit_excess(records, np.array([100, 10, 100]), 5.0) == pytest.approx(90 / 35**0.5)
    # a huge budget's tiny sigma: rounding to whole records is no fault
    assert core.fit_excess(records, np.array([99.6, 100.2, 100]), 1e-6) < 0.1


@pytest.mark.parametrize("epsilon", [1.0, 0.1])
def test_never_worse_than_the_all_zeros_table_on_the_small_shape(small, epsilon):
    measures = WideMeasures.of(small, seed=0)
    zeros = measures.reference_scores()["zeros"]
    release = registry.build("wide", {"epsilon": epsilon, "delta": 1 / small.n**2},
                             seed=10).fit(small)  # fmt: skip
    scores = measures.scores(release.records)
    for m in MEASURES:
        for stat in ("max", "mean"):
            assert scores[m][stat] <= zeros[m][stat], (m, stat)


def test_the_plan_says_when_noise_swamps_the_counts():
    def plan(n, epsilon):
        shape = types.SimpleNamespace(n=n, d=9000)
        return WideRelease(epsilon=epsilon, delta=1 / n**2).plan(shape)

    assert plan(700, 1.0).parameters.mode == "head"  # the sparse mode's counts: swamped
    assert noise_warning(plan(700, 1.0), 700) is None  # the head mode stands out there
    assert "no item can" in noise_warning(plan(700, 0.1), 700)
    assert "all-zeros" in noise_warning(plan(700, 0.1), 700)
    assert plan(196_708, 1.0).parameters.mode == "sparse"
    for epsilon in (1.0, 0.1):  # npm_words' n: the release beat the references there
        assert noise_warning(plan(196_708, epsilon), 196_708) is None


def test_auto_warns_before_the_fit_and_says_the_release_is_empty(small, tmp_path):
    data = tmp_path / "small.transactions.csv"
    write_item_sets(data, small)
    out = tmp_path / "s.transactions.csv"
    r = dpquery_cli("synth", "--data", str(data), "--epsilon", "0.1", "--seed", "0",
                    "--pool", "3000", "--out", str(out), "--quiet")  # fmt: skip
    assert r.code == 0, r.err
    assert "no item can stand out of the noise" in r.err
    assert "every released record is empty" in r.err
    assert read_item_sets(out, allow_empty=True).nnz == 0


def test_auto_plan_carries_the_warning_on_item_data(small):
    from dpquery.queries import Workload

    data = small.to_binary()
    workload = Workload.from_lists("conjunction", small.d, [[(0, True)], [(1, True), (2, True)]])
    plan = registry.build("auto", {"epsilon": 0.1}, seed=0).plan(data, workload)
    assert plan.choice.algorithm == "wide"
    assert plan.warning is not None and "all-zeros" in plan.warning
    plan = registry.build("auto", {"epsilon": 1.0}, seed=0).plan(data, workload)
    assert plan.inner.parameters.mode == "head" and plan.warning is None
