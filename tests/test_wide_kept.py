"""The wide release's measured check (docs/wide.md, "The measured warning, and the fill kept
off the kept pairs"): where its noisy counts keep no item, or fewer than ``FEW_KEPT``, it
says so before the fit, in the library (the estimator, ``dpquery.synthesize_items``) and on
the command line; and the tail fill's placement (``core.fill_weights``), which puts no
unpicked item beside two kept ones where the release implies such a triple in fewer than
ln 2 records."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dpquery
from cli_process import dpquery_cli
from dpquery.algorithms.wide import core
from dpquery.algorithms.wide.core import TRIPLE_MEDIAN, fill_weights, tail_fill
from dpquery.algorithms.wide.kept import FEW_KEPT, WideKeptWarning, kept_warning
from dpquery.algorithms.wide.release import WideRelease
from dpquery.data import write_item_sets
from dpquery.data.items import ItemSets
from dpquery.evaluation.wide import WideMeasures
from dpquery.pipeline import ItemMatrix, ReleaseRequest, release
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from test_wide_head_tail import clear_head_table
from test_wide_probe import no_head_table


def test_the_rule_by_hand():
    y = np.array([1018.4, -20.0, 300.0])
    empty = kept_warning(0, y, 2603.2, 710.0, 5260)
    assert empty is not None
    assert "kept no item: every released record is empty (the all-zeros table)" in empty
    assert "clears 2,603 records (49.5% of about 5,260" in empty
    assert "standard deviation is 710 records" in empty and "largest noisy count was 1,018" in empty
    assert "raise epsilon" in empty and "--item-list" in empty
    filled = kept_warning(0, y, 2603.2, 710.0, 5260, filled=True)
    assert filled is not None and "kept no item it measured" in filled and "tail fill" in filled
    two = kept_warning(2, y, 2603.2, 710.0, 5260)
    assert two is not None and "kept only 2 items: every other item is left out" in two
    one = kept_warning(1, y, 2603.2, 710.0, 5260)
    assert one is not None and "kept only 1 item:" in one
    assert FEW_KEPT == 3 and kept_warning(3, y, 2603.2, 710.0, 5260) is None
    assert kept_warning(40, y, 2603.2, 710.0, 5260) is None
    assert "largest noisy count was 0" in str(kept_warning(0, np.zeros(0), 10.0, 2.0, 100))


def two_items_table(seed: int = 0, n: int = 2_000, d: int = 3_000) -> ItemSets:
    """Two items in 90% and 80% of the records, every other in 0.2%."""
    rng = np.random.default_rng(seed)
    dense = rng.random((n, d)) < 0.002
    dense[:, 0] = rng.random(n) < 0.9
    dense[:, 1] = rng.random(n) < 0.8
    return ItemSets(sp.csr_array(dense.astype(np.uint8)))


@pytest.mark.parametrize("head_mode", ["off", "on"])
def test_two_kept_items_are_said_before_the_fit(monkeypatch, head_mode):
    # replace-one, the bound given: at epsilon 0.5 only the two common items clear the keep
    # level in either mode (the others at 0.2%: 4 records against a level of hundreds)
    said: list[bool] = []
    fitted = core.fit.maxent_weights

    def fit_after_the_warning(*args, **kwargs):  # the fit: has the check spoken yet?
        said.append(any(w.category is WideKeptWarning for w in caught))
        return fitted(*args, **kwargs)

    monkeypatch.setattr(core.fit, "maxent_weights", fit_after_the_warning)
    model = WideRelease(epsilon=0.5, bound=8, head_mode=head_mode, neighbours=REPLACE_ONE,
                        seed=0)  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        release = model.fit(two_items_table())
    p = release.parameters
    assert p["items_kept"] == 2 and said == [True]
    [warning] = [w for w in caught if w.category is WideKeptWarning]
    assert "kept only 2 items" in str(warning.message)
    assert p["kept_warning"] == str(warning.message)
    assert release.to_dict()["parameters"]["kept_warning"] == p["kept_warning"]  # the report


def test_a_clear_head_is_not_warned():
    # 12 items in 30% of 700 records, 4,000 in 2%: the head mode keeps the 12 (and some
    # picks of the tail at their shrunk estimates) at epsilon 1; seeded (0, 1)
    data = clear_head_table()
    for seed in (0, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("error", WideKeptWarning)
            release = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, seed=seed).fit(data)
        assert release.parameters["items_kept"] >= 12
        assert "kept_warning" not in release.parameters


def _raw(items: ItemSets) -> pd.DataFrame:
    """``items`` as a raw user x item table (one row per user and item)."""
    m = items.matrix.tocsr()
    return pd.DataFrame({"user": np.repeat(np.arange(items.n), np.diff(m.indptr)),
                         "item": m.indices.astype(np.int64)})  # fmt: skip


def test_an_empty_release_is_said_before_the_fit_in_the_library():
    # CiteULike's shape at epsilon 0.1 (add/remove, auto): the head mode's level is 0.45 of
    # n, under the plan's warning (0.5 of n: the public plan says nothing), and no pick
    # clears it (the top item is in 7% of the records: a false failure needs a noise draw of
    # 5 sigma)
    data = no_head_table(0, n=6_000, d=8_000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        synthetic, release = dpquery.synthesize_items(
            _raw(data), item_list=list(range(data.d)), epsilon=0.1, seed=0
        )
    names = [w.category.__name__ for w in caught]
    assert names.count("WideKeptWarning") == 1 and "WideNoiseWarning" not in names
    assert release.parameters["items_kept"] == 0 and synthetic.empty
    assert "kept no item" in release.parameters["kept_warning"]


def test_an_empty_release_is_said_on_the_command_line(tmp_path):
    path, out = tmp_path / "x.transactions.csv", tmp_path / "s.transactions.csv"
    write_item_sets(path, no_head_table(0, n=6_000, d=8_000))
    r = dpquery_cli("synth", "--data", str(path), "--epsilon", "0.1", "--seed", "0",
                    "--out", str(out), "--quiet")  # fmt: skip
    assert r.code == 0, r.err
    assert r.out == ""  # --quiet: the warning alone, on stderr
    assert "the wide release measured its item counts and kept no item" in r.err
    assert "raise epsilon" in r.err
    assert "stood out of the noise" not in r.err  # said once, before the fit
    assert out.exists() and out.read_text().splitlines()[0].endswith("items 8000")


def test_fill_weights_by_hand():
    # 4 records of 2 kept items (0, 1), 6 of none; each unpicked item put in 0.5 records:
    # the kept pair's records take 4 * 3 / (4 * 3 + 6) of it, 0.33 < ln 2: those records
    # get none; at 2 records an item, 1.33 >= ln 2: the weights stand
    dense = np.zeros((10, 5), dtype=np.uint8)
    dense[:4, :2] = 1
    records = sp.csr_array(dense)
    weight = fill_weights(records, 0.5)
    assert weight.tolist() == [0.0] * 4 + [1.0] * 6
    assert 4 * 3 / 18 * 0.5 < TRIPLE_MEDIAN <= 4 * 3 / 18 * 2.0
    assert fill_weights(records, 2.0).tolist() == [3.0] * 4 + [1.0] * 6
    # every record of 2 items or more: the weights as they are
    assert fill_weights(sp.csr_array(dense[:4]), 0.01).tolist() == [3.0] * 4
    assert fill_weights(sp.csr_array((10, 5), dtype=np.uint8), 0.5).tolist() == [1.0] * 10


def test_a_thin_fill_puts_no_unpicked_item_beside_a_kept_pair():
    rng = np.random.default_rng(5)
    n, d = 3_000, 2_000
    dense = np.zeros((n, d), dtype=np.uint8)
    dense[:300, :3] = 1  # 300 records of the 3 kept items
    dense[300:900, 3] = 1
    records = sp.csr_array(dense)
    out = tail_fill(records, np.arange(4), 0.0005, rng)  # 1.5 records an item
    fill = out.toarray()[:, 4:].sum(axis=1)
    total = round(0.0005 * n * (d - 4))  # less the few dealt twice to one record
    assert fill[:300].sum() == 0 and 0.99 * total <= fill[300:].sum() <= total
    # a thick fill: the kept pairs' records take their share
    out = tail_fill(records, np.arange(4), 0.01, rng)
    assert out.toarray()[:300, 4:].sum() > 0


def test_a_no_head_release_puts_no_unpicked_item_beside_a_kept_pair():
    # the probed head mode on the CiteULike-like table (epsilon 1, add/remove): its kept
    # articles are held together by a few records each and the fill puts each unpicked item
    # in about 4 records, so the rule keeps the fill off the records of 2 kept items or
    # more. Seeded (seeds 20, 21: 24 and 22 items kept, each unpicked item put in 3.3 and
    # 3.6 records; the rule's condition, a kept pair's expected fill below ln 2, holds far:
    # 0.024 and 0.029)
    data = no_head_table(1)
    for seed in (20, 21):
        release = WideRelease(epsilon=1.0, neighbours=ADD_REMOVE, seed=seed).fit(data)
        p = release.parameters
        assert p["mode"] == "head" and p["items_kept"] >= 3 and p["tail_share"] > 0
        out = release.records.matrix.tocsr()
        counts = np.bincount(out.indices, minlength=data.d)
        kept = counts > 3 * p["tail_share"] * out.shape[0] + 5  # the fill's are all alike
        assert kept.sum() == p["items_kept"]
        held = out @ kept.astype(np.int64)  # each record's kept items
        filled = np.diff(out.indptr) - held  # and its unpicked ones
        assert filled[held >= 2].sum() == 0 and filled[held < 2].sum() > 0


def _citeulike() -> ItemSets:
    path = Path(os.environ.get("DPQUERY_EXTRA_DATA_DIR", "extra")) / "items2" / "citeulike-a.csv"
    if not path.exists():
        pytest.skip(f"CiteULike's libraries are not at {path} (docs/wide.md)")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from user_items import read_user_items

    return read_user_items(path)


@pytest.mark.slow
def test_citeulikes_triples_are_not_above_zeros():
    # Statistical (seeded): the held-out table at epsilon 1 (add/remove, auto's probed head
    # mode). With the fill kept off the kept pairs the triples' mean error among the top 100
    # articles was at most 0.9993x the all-zeros table's on every seed measured (0-3, 10-12;
    # 1.00001x on seed 10 before); its margin, 1 to 6 records of the 1,376 zeros' errors
    # add up to, is the kept articles' own triples'. No seed of 7 failed: the per-seed
    # false-failure rate is below 0.35 at 95% (0 of 7), so these 3 fixed seeds say only that
    # the measured releases stand.
    data = _citeulike()
    measures = WideMeasures.of(data, seed=0)
    zeros = measures.reference_scores()["zeros"]["triples"]["mean"]
    for seed in (10, 11, 12):  # as the command releases it (auto, bench_wide_bounds --auto)
        request = ReleaseRequest(source=ItemMatrix(data), algorithm="auto",
                                 options={"epsilon": 1.0}, seed=seed)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("error", WideKeptWarning)  # and no warning: 24-25 kept
            rows = release(request).rows
        got = measures.scores(rows)["triples"]["mean"]
        assert got < zeros, (seed, got / zeros)
