"""``dpquery evaluate`` on item data: the wide measures beside zeros, indep and uniform."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from cli_process import dpquery_cli
from dpquery.data import ItemSets, write_item_sets
from dpquery.evaluation.wide import wide_evaluation


def _items(n: int, d: int, seed: int, weighted: bool = False) -> ItemSets:
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, d)) < rng.random(d) * 0.5).astype(np.uint8)
    weights = rng.random(n) + 0.1 if weighted else None
    return ItemSets(sp.csr_array(dense), weights)


@pytest.fixture
def files(tmp_path):
    real, synthetic = _items(80, 12, seed=1), _items(30, 12, seed=2, weighted=True)
    coo = real.matrix.tocoo()  # a bare "row item" file: its sizes come from --n and --items
    lines = [f"{i},{j}" for i, j in zip(coo.row, coo.col, strict=True)]
    (tmp_path / "real.txt").write_text("# user,item\n" + "\n".join(lines) + "\n")
    write_item_sets(tmp_path / "s.transactions.csv", synthetic)
    return tmp_path, real, synthetic


def test_evaluate_item_data_console_json_and_page(files):
    pytest.importorskip("matplotlib")
    from test_evaluation_html import check_numbers_match_the_json, parse

    tmp, real, synthetic = files
    r = dpquery_cli(
        "evaluate", "--data", str(tmp / "real.txt"), "--transactions", "--n", "80",
        "--items", "12", "--synthetic", str(tmp / "s.transactions.csv"),
        "--report", str(tmp / "r.json"), "--html", str(tmp / "page.html"),
    )  # fmt: skip
    assert r.code == 0, r.err
    assert "NOT differentially private" in r.out and "NOT PRIVATE" in r.out
    for word in ("one_way", "pairs", "triples", "zeros", "indep", "uniform"):
        assert word in r.out
    report = json.loads((tmp / "r.json").read_text())
    expected = json.loads(json.dumps(wide_evaluation(real, synthetic)))
    assert report == expected and "NOT PRIVATE" in report["note"]
    page = parse((tmp / "page.html").read_text())
    doc = check_numbers_match_the_json(page)
    assert doc["evaluation"] == expected
    keys = {k for k, _ in page.spans}
    assert "evaluation.scores.indep.pairs.max" in keys and "evaluation.note" in keys


def test_evaluate_item_data_from_a_sparse_npz_and_the_header(files):
    tmp, real, _ = files
    sp.save_npz(tmp / "real.npz", sp.csc_matrix(real.matrix))
    r = dpquery_cli("evaluate", "--data", str(tmp / "real.npz"),
                    "--synthetic", str(tmp / "s.transactions.csv"))  # fmt: skip
    assert r.code == 0, r.err
    write_item_sets(tmp / "real.transactions.csv", real)
    synthetic = str(tmp / "s.transactions.csv")
    again = dpquery_cli("evaluate", "--data", str(tmp / "real.transactions.csv"),
                        "--transactions", "--synthetic", synthetic)  # fmt: skip
    assert again.code == 0 and again.out == r.out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workload", "w.npz"], "drop --workload"),
        (["--items", "13"], "d=13 was given but the file's first line says 12"),
    ],
)
def test_evaluate_item_data_refuses_bad_input(files, extra, message):
    tmp, real, _ = files
    write_item_sets(tmp / "real.transactions.csv", real)
    r = dpquery_cli("evaluate", "--data", str(tmp / "real.transactions.csv"), "--transactions",
                    "--synthetic", str(tmp / "s.transactions.csv"), *extra,
                    "--report", str(tmp / "r.json"))  # fmt: skip
    assert r.code != 0 and message in r.err
    assert not (tmp / "r.json").exists()


def test_evaluate_item_data_errors_name_the_file(files):
    tmp, _, _ = files
    write_item_sets(tmp / "narrow.transactions.csv", _items(10, 5, seed=3))
    r = dpquery_cli("evaluate", "--data", str(tmp / "real.txt"), "--transactions",
                    "--synthetic", str(tmp / "narrow.transactions.csv"))  # fmt: skip
    assert r.code != 0 and "real.txt: no '# rows N items D' first line" in r.err
    narrow = str(tmp / "narrow.transactions.csv")
    r = dpquery_cli("evaluate", "--data", str(tmp / "real.txt"), "--transactions", "--n", "80",
                    "--items", "12", "--synthetic", narrow)  # fmt: skip
    assert r.code != 0 and "narrow.transactions.csv: the synthetic records have 5 items" in r.err
    r = dpquery_cli("evaluate", "--dataset", "adult", "--synthetic", "s.csv", "--n", "3",
                    "--workload", "w.npz")  # fmt: skip
    assert r.code != 0 and "--n and --items are the sizes of item data" in r.err
