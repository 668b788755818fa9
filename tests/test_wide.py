"""The wide, sparse release (dpquery.algorithms.wide): the contribution bound and its
sensitivities by hand, truncation that reads one record, the ledger, bad bounds, the CLI's
sparse round trip and auto's choice on item data, seeded reproducibility."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from cli_process import dpquery_cli
from dpquery.algorithms import registry
from dpquery.algorithms.wide import measure
from dpquery.algorithms.wide.bound import (
    HISTOGRAM_SENSITIVITY,
    count_sensitivity,
    hash_order,
    pair_sensitivity,
    truncate,
)
from dpquery.algorithms.wide.counts import HeadCounts, ItemCounts
from dpquery.algorithms.wide.release import WideRelease
from dpquery.algorithms.wide.shrink import shrink
from dpquery.data import ItemSets, read_item_sets, write_item_sets
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.budget import budget_rho

# a small, fast release of the sparse mode (its mechanics; the head mode: test_wide_head.py)
SMALL = {"bound": 6, "pair_bound": 4, "head": 12, "pool": 3000, "head_mode": "off"}
FAST = ("--bound", "6", "--head", "20", "--pool", "3000")  # the CLI tests' small release


def _items(n: int, d: int, seed: int, mean: float = 4.0) -> sp.csr_array:
    """Zipf-like sparse records: item j with probability proportional to 1/(j+1)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1)
    p = np.minimum(1.0, p * mean / p.sum())
    return sp.csr_array((rng.random((n, d)) < p).astype(np.uint8))


def _counts(matrix: sp.csr_array) -> np.ndarray:
    return np.bincount(matrix.indices, minlength=matrix.shape[1]).astype(np.int64)


def _pairs(matrix: sp.csr_array) -> np.ndarray:
    X = matrix.astype(np.int64)
    full = (X.T @ X).toarray()
    j, k = np.triu_indices(matrix.shape[1], 1)
    return full[j, k]


# --- sensitivity by hand ---------------------------------------------------------------------
def test_count_sensitivity_with_the_bound_by_hand():
    """Records of at most s items: replacing one moves the count vector by 1_x' - 1_x, of L2
    norm sqrt(|x| + |x'|) when they are disjoint, at most sqrt(2 s); reached by two disjoint
    full records."""
    s = 3
    assert count_sensitivity(s) == pytest.approx(math.sqrt(6), rel=1e-15)
    D = sp.csr_array(np.array([[1, 1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0, 1]], dtype=np.uint8))
    D2 = sp.csr_array(np.array([[0, 0, 0, 1, 1, 1, 0], [1, 0, 1, 0, 0, 0, 1]], dtype=np.uint8))
    diff = _counts(truncate(D, s, 7)) - _counts(truncate(D2, s, 7))
    assert np.linalg.norm(diff) == pytest.approx(math.sqrt(6))
    # A record over the bound is cut to s items first: the change is still sqrt(2 s) at most.
    wide = sp.csr_array(np.array([[1, 1, 1, 1, 1, 1, 1]], dtype=np.uint8))
    empty = sp.csr_array(np.zeros((1, 7), dtype=np.uint8))
    assert np.linalg.norm(_counts(truncate(wide, s, 7))) == pytest.approx(math.sqrt(3))
    rng = np.random.default_rng(0)
    for _ in range(200):  # random neighbours never exceed the bound
        a = sp.csr_array((rng.random((1, 7)) < 0.6).astype(np.uint8))
        b = sp.csr_array((rng.random((1, 7)) < 0.6).astype(np.uint8))
        moved = _counts(truncate(a, s, 3)) - _counts(truncate(b, s, 3))
        assert np.linalg.norm(moved) <= count_sensitivity(s) + 1e-12
    del empty


def test_pair_sensitivity_by_hand():
    """A record of s2 head items holds C(s2, 2) pairs; replacing it by a disjoint one moves
    2 C(s2, 2) pair counts by 1: L2 sqrt(s2 (s2 - 1))."""
    s2 = 4
    assert pair_sensitivity(s2) == pytest.approx(math.sqrt(12), rel=1e-15)
    x = sp.csr_array(np.array([[1, 1, 1, 1, 0, 0, 0, 0]], dtype=np.uint8))
    y = sp.csr_array(np.array([[0, 0, 0, 0, 1, 1, 1, 1]], dtype=np.uint8))
    assert np.linalg.norm(_pairs(x) - _pairs(y)) == pytest.approx(math.sqrt(12))
    assert pair_sensitivity(1) == 1.0  # one pair count at least: never a zero scale


def test_sensitivities_square_to_at_least_the_true_value():
    """The float sensitivity is rounded up: its exact square is never below ``2 s`` or
    ``s2 (s2 - 1)`` (``math.sqrt(6) ** 2 < 6``), so sigma^2 is never below Delta^2 / (2 rho)."""
    for s in range(1, 200):
        assert Fraction(count_sensitivity(s)) ** 2 >= 2 * s
        assert Fraction(pair_sensitivity(s)) ** 2 >= max(s * (s - 1), 1)
        assert count_sensitivity(s) <= math.nextafter(math.sqrt(2 * s), math.inf)
    assert Fraction(HISTOGRAM_SENSITIVITY) ** 2 >= 2


def test_noise_scale_matches_the_charge():
    """sigma^2 >= Delta^2 / (2 rho) (CKS 2020, Thm 4), rounded up by at most 2^-20."""
    rho, s = 0.01, 32
    sigma2 = measure.noise_sigma(rho, count_sensitivity(s)) ** 2
    assert sigma2 >= 2 * s / (2 * rho)
    assert sigma2 == pytest.approx(3200.0, abs=2**-20)


# --- truncation reads one record -------------------------------------------------------------
def test_truncation_of_a_record_reads_no_other_record():
    D = _items(300, 40, 1, mean=9.0)
    dense = D.toarray()
    dense[17] = 1 - dense[17]  # record 17 replaced (a very different set)
    D2 = sp.csr_array(dense)
    s = 4
    T, T2 = truncate(D, s, 12345).toarray(), truncate(D2, s, 12345).toarray()
    others = np.arange(300) != 17
    assert (T[others] == T2[others]).all()
    lengths = D.toarray().sum(axis=1)
    assert (T.sum(axis=1) == np.minimum(lengths, s)).all()
    assert (T <= D.toarray()).all()  # a subset of each record
    # The cut follows the key: another key cuts differently (not a fixed item order).
    assert (truncate(D, s, 99).toarray() != T).any()


def test_hash_order_ranks_within_each_record():
    D = _items(50, 30, 2, mean=6.0)
    rank = hash_order(D, 5)
    for i in range(50):
        r = rank[D.indptr[i] : D.indptr[i + 1]]
        assert sorted(r) == list(range(r.size))


def test_pieces_of_the_table_count_as_the_whole():
    """A piece of the records is cut as the whole table cuts them (the hash reads a record's
    items, not its position), so both counters' counts over disjoint pieces add up to the
    whole table's: what lets workers count partitions."""
    items = ItemSets(_items(200, 30, 3, mean=8.0))
    pieces = [np.arange(0, 200, 3), np.setdiff1d(np.arange(200), np.arange(0, 200, 3))]
    for counter in (ItemCounts(7, 4, 30), HeadCounts(7, 4, 3, np.array([0, 2, 5, 9, 20]))):
        parts = [counter.count(ItemSets(items.matrix[p])) for p in pieces]
        for k, want in enumerate(counter.count(items)):
            assert np.array_equal(parts[0][k] + parts[1][k], want)


# --- shrinkage ---------------------------------------------------------------------------------
def test_shrinkage_keeps_large_counts_and_zeroes_noise():
    rng = np.random.default_rng(0)
    sigma = 50.0
    true = np.concatenate([np.zeros(2000), np.full(20, 5000.0)])
    y = true + rng.normal(0, sigma, true.size)
    est = shrink(y, sigma)
    assert np.abs(est[:2000]).mean() < 0.2 * np.abs(np.maximum(y[:2000], 0)).mean()
    assert np.abs(est[2000:] - y[2000:]).max() < 1e-9  # 100 sigma out: kept as measured
    assert (est >= 0).all()


# --- the ledger ----------------------------------------------------------------------------
def test_plan_lists_every_charge_and_each_reaches_the_ledger_before_its_draw(monkeypatch):
    import dpquery.privacy.integer_mechanisms as im

    matrix = _items(400, 60, 3)
    model = WideRelease(epsilon=1.0, seed=0, **SMALL)
    planned = model.charges(ItemSets(matrix), None)
    budget = Budget.approx(1.0, 1 / 400**2)
    ledger = Ledger(budget)
    seen = []
    draw = im.sample_discrete_gaussian

    def spy(sigma2, size, rng):  # observes; the draw itself is the real one
        seen.append(len(ledger.entries))
        return draw(sigma2, size, rng)

    monkeypatch.setattr(im, "sample_discrete_gaussian", spy)
    model.with_params(epsilon=None).fit(matrix, ledger=ledger)
    charged = [e.charge for e in ledger.entries]
    assert [c.mechanism for c in charged] == [c.mechanism for c in planned] == [
        measure.ITEMS, measure.SIZES, measure.PAIRS,
    ]  # fmt: skip
    assert [c.cost for c in charged] == [c.cost for c in planned]
    assert seen == [1, 2, 3]  # each draw came after its own charge
    assert sum(c.cost.rho for c in charged) == pytest.approx(budget_rho(budget))


@pytest.mark.parametrize(
    ("options", "word"),
    [({"bound": 0}, "bound"), ({"bound": 61}, "bound"), ({"bound": 2.5}, "bound"),
     ({"pair_bound": 0}, "pair_bound"), ({"head": 0}, "head")],
)  # fmt: skip
def test_a_bad_bound_is_refused_by_name_before_any_charge(options, word):
    matrix = _items(100, 60, 4)
    ledger = Ledger(Budget.approx(1.0, 1e-6))
    model = WideRelease(seed=0, **{**SMALL, **options})
    with pytest.raises(DPQueryError, match=word):
        model.fit(matrix, ledger=ledger)
    assert ledger.entries == ()


def test_the_plan_names_what_a_bound_counts():
    items = ItemSets(_items(100, 60, 4))
    with pytest.raises(DPQueryError, match="head must be a whole number of head items;"):
        WideRelease(head=2.5, epsilon=1.0).plan(items)  # type: ignore[arg-type]
    with pytest.raises(DPQueryError, match="bound must be a whole number of items per record"):
        WideRelease(bound=2.5, epsilon=1.0).plan(items)  # type: ignore[arg-type]


def test_a_pure_budget_is_refused_before_any_charge():
    with pytest.raises(DPQueryError, match="pure"):
        WideRelease(epsilon=1.0, delta=0, **SMALL).fit(_items(100, 60, 4))


# --- the release ---------------------------------------------------------------------------
def test_seeded_release_is_reproducible_and_sparse():
    matrix = _items(500, 80, 5)
    a = registry.build("wide", {"epsilon": 1.0, **SMALL}, seed=11).fit(matrix)
    b = registry.build("wide", {"epsilon": 1.0, **SMALL}, seed=11).fit(matrix)
    assert isinstance(a.records, ItemSets)
    assert a.records.n == 500 and a.records.d == 80
    assert (a.records.matrix != b.records.matrix).nnz == 0
    assert a.to_dict()["records"] == 500
    c = registry.build("wide", {"epsilon": 1.0, **SMALL}, seed=12).fit(matrix)
    assert (a.records.matrix != c.records.matrix).nnz > 0


# --- the command line ------------------------------------------------------------------------
@pytest.fixture
def item_file(tmp_path):
    path = tmp_path / "x.transactions.csv"
    write_item_sets(path, ItemSets(_items(600, 1200, 6, mean=5.0)))
    return path


def test_synth_round_trip_of_item_data_and_auto_picks_wide(item_file, tmp_path):
    out = tmp_path / "s.transactions.csv"
    r = dpquery_cli("synth", "--data", str(item_file), "--epsilon", "1", "--seed", "0",
                    "--out", str(out), *FAST, "--neighbours", "replace-one")  # fmt: skip
    assert r.code == 0, r.err
    assert "algorithm: wide, chosen by auto" in r.out
    assert out.read_text().splitlines()[0] == "# rows 600 items 1200"
    synthetic = read_item_sets(out)
    assert (synthetic.n, synthetic.d) == (600, 1200)
    # the same data as a sparse .npz in, a sparse .npz out
    npz, out_npz = tmp_path / "x.npz", tmp_path / "s.npz"
    sp.save_npz(npz, read_item_sets(item_file).matrix)
    r = dpquery_cli("synth", "--data", str(npz), "--epsilon", "1", "--seed", "0",
                    "--out", str(out_npz), *FAST, "--neighbours", "replace-one")  # fmt: skip
    assert r.code == 0, r.err
    assert sp.load_npz(out_npz).shape == (600, 1200)
    assert (sp.csr_array(sp.load_npz(out_npz)) != synthetic.matrix).nnz == 0  # same seed


def test_a_text_file_with_the_item_header_is_item_data_whatever_its_name(item_file, tmp_path):
    """A "row item" file named x.txt (its first line "# rows N items D") is released as item
    data, as its .transactions.csv twin, not read as a one-column raw table."""
    import argparse

    from dpquery.cli.synth import reads_items

    renamed = tmp_path / "ratings.txt"
    renamed.write_bytes(item_file.read_bytes())
    outs = [tmp_path / "a.transactions.csv", tmp_path / "b.transactions.csv"]
    for data, out in zip((item_file, renamed), outs, strict=True):
        r = dpquery_cli("synth", "--data", str(data), "--epsilon", "1", "--seed", "0",
                        "--out", str(out), *FAST, "--neighbours", "replace-one")  # fmt: skip
        assert r.code == 0, r.err
        assert "algorithm: wide" in r.out
    assert outs[0].read_bytes() == outs[1].read_bytes()
    table = tmp_path / "table.txt"
    table.write_text("a,b\n1,2\n")
    args = argparse.Namespace(transactions=False, data=table, out=tmp_path / "s.csv")
    assert not reads_items(args)  # a table's first line is its header


def test_synth_writes_a_wide_dense_csv_only_when_asked(item_file, tmp_path):
    out = tmp_path / "s.csv"
    r = dpquery_cli("synth", "--data", str(item_file), "--epsilon", "1", "--seed", "0",
                    "--out", str(out))  # fmt: skip
    assert r.code != 0
    assert "--dense" in r.err and "s.transactions.csv" in r.err
    assert not out.exists()


def test_synth_refuses_a_bad_bound_by_name(item_file, tmp_path):
    out = tmp_path / "s.transactions.csv"
    r = dpquery_cli("synth", "--data", str(item_file), "--epsilon", "1", "--out", str(out),
                    "--bound", "5000")  # fmt: skip
    assert r.code != 0 and "bound" in r.err
    assert not out.exists()


# --- auto and the Python API -------------------------------------------------------------------
def test_auto_picks_the_wide_release_on_wide_item_data_only():
    from dpquery.algorithms.auto import MAX_ATTRIBUTES, choose

    wide = choose(n=100_000, g=5000, d=5000, workload_kind="conjunction", items=True)
    assert wide.algorithm == "wide" and "5000 binary items" in wide.reason
    # categorical attributes, or item data adaptive-projection handles: not the wide release
    assert choose(n=100_000, g=5000, d=9000, workload_kind="conjunction").algorithm != "wide"
    narrow = choose(n=1000, g=MAX_ATTRIBUTES, d=MAX_ATTRIBUTES, workload_kind="conjunction",
                    items=True)  # fmt: skip
    assert narrow.algorithm == "adaptive-projection"


def test_auto_plans_the_wide_release_on_free_bits():
    from dpquery.data.binary import BinaryData
    from dpquery.queries import Workload

    data = BinaryData.from_dense(_items(300, 1100, 7).toarray())
    workload = Workload.from_lists("conjunction", 1100, [[(0, True)], [(1, True), (2, True)]])
    plan = registry.build("auto", {"epsilon": 1.0}, seed=0, neighbours="replace-one").plan(
        data, workload
    )
    assert plan.choice.algorithm == "wide"
    # n = 300: the sparse mode's counts would be swamped, so the plan is the head mode's
    assert [c.mechanism for c in plan.charges()] == [measure.PICKS] * 20 + [
        measure.HEAD_COUNTS, measure.HEAD_SIZES,
    ]  # fmt: skip


def test_synthesize_takes_and_returns_a_sparse_matrix():
    import dpquery

    matrix = sp.csr_matrix(_items(500, 80, 8))  # the older sparse matrix class is accepted too
    synthetic, release = dpquery.synthesize(matrix, epsilon=1.0, seed=0,
                                            neighbours="replace-one", **SMALL)  # fmt: skip
    assert sp.issparse(synthetic) and synthetic.shape == (500, 80)  # n public: n rows
    assert release.algorithm == "wide"
    more = dpquery.DPSynthesizer(epsilon=1.0, seed=0, options=SMALL, neighbours="replace-one")
    more = more.fit(matrix).sample(50)
    assert more.shape == (50, 80)
    with pytest.raises(DPQueryError, match="wide"):
        dpquery.synthesize(matrix, epsilon=1.0, algorithm="dualquery")
    with pytest.raises(DPQueryError, match=r"drop dtypes=\{'i0': 'int8'\}"):
        dpquery.synthesize(matrix, epsilon=1.0, dtypes={"i0": "int8"})
    with pytest.raises(DPQueryError, match="drop k=2"):
        dpquery.DPSynthesizer(epsilon=1.0, k=2).fit(matrix)


def test_privacy_synth_plans_the_wide_release_with_its_bound():
    import json

    r = dpquery_cli("privacy", "synth", "--n", "600", "--items", "1200", "--epsilon", "1",
                    "--bound", "6", "--head-mode", "off", "--json")  # fmt: skip
    assert r.code == 0, r.err
    plan = json.loads(r.out)
    assert plan["auto"] and plan["bounds"]["s"] == 6
    model = WideRelease(epsilon=1.0, bound=6, head_mode="off")
    expected = model.charges(ItemSets(sp.csr_array((600, 1200), dtype=np.uint8)), None)
    assert [c["mechanism"] for c in plan["charges"]] == [c.mechanism for c in expected]
    assert [c["rho"] for c in plan["charges"]] == pytest.approx([c.cost.rho for c in expected])
    bad = dpquery_cli("privacy", "synth", "--n", "600", "--items", "1200", "--epsilon", "1",
                      "--bound", "5000")  # fmt: skip
    assert bad.code != 0 and "bound" in bad.err


def test_synth_reads_the_free_bits_encode_transactions_writes(item_file, tmp_path):
    """``dpquery encode --transactions`` writes free bits without a domain: item data."""
    encoded = tmp_path / "x.npz"
    r = dpquery_cli("encode", str(item_file), "--transactions", "--n", "600", "--items", "1200",
                    "-o", str(encoded))  # fmt: skip
    assert r.code == 0, r.err
    out = tmp_path / "s.transactions.csv"
    r = dpquery_cli("synth", "--data", str(encoded), "--epsilon", "1", "--seed", "0",
                    "--out", str(out), *FAST)  # fmt: skip
    assert r.code == 0, r.err
    assert "algorithm: wide, chosen by auto" in r.out
    assert read_item_sets(out).d == 1200


def test_synth_says_how_the_item_rows_were_made(item_file, tmp_path, capsys):
    """``rows = n`` of an unweighted release writes the released records themselves."""
    from dpquery.cli import main

    out, report = tmp_path / "s.transactions.csv", tmp_path / "r.json"
    argv = ["synth", "--data", str(item_file), "--epsilon", "1", "--seed", "0", "--out",
            str(out), "--report", str(report), *FAST, "--neighbours", "replace-one"]  # fmt: skip
    assert main(argv) == 0
    assert "wrote 600 rows to" in (said := capsys.readouterr().out)
    assert "the 600 released records over 1200 items\n" in said
    assert json.loads(report.read_text())["release"]["output"]["method"] == "the released records"
    assert main([*argv, "--rows", "300", "--overwrite"]) == 0
    assert "sampled from the 600 synthetic records over 1200 items" in capsys.readouterr().out


def test_choosing_the_item_path_reads_no_bits_of_an_encoded_npz(tmp_path):
    """``reads_items`` decides from the ``.npz``'s small keys, never its ``words``."""
    import argparse
    from unittest import mock

    from dpquery.cli.synth import reads_items
    from dpquery.data.binary import save_binary

    path = tmp_path / "x.npz"
    save_binary(path, ItemSets(_items(50, 30, 1)).to_binary())
    read, real = [], np.lib.npyio.NpzFile.__getitem__

    def spy(self, key):
        read.append(key)
        return real(self, key)

    args = argparse.Namespace(transactions=False, data=path, out=tmp_path / "s.csv")
    with mock.patch.object(np.lib.npyio.NpzFile, "__getitem__", spy):
        assert reads_items(args)  # free bits without a domain: item data
    assert read and "words" not in read
