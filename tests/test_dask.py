"""The Dask backend: bit-exact answers and identical releases against the local backend,
how inputs are cut into partitions, and the CLI's backend options and error paths.

One 2-worker ``LocalCluster`` (processes, on loopback) serves the whole module.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed")

import dpquery.backends.cluster as cluster_module
import dpquery.queries.counts as counts_module
from dpquery import datasets
from dpquery.algorithms.auto import Auto
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.untouched import MECHANISM
from dpquery.algorithms.wide.counts import AllItemCounts, HeadCounts, ItemCounts, PickedSizes
from dpquery.algorithms.wide.release import WideRelease
from dpquery.backends import DaskBackend, PartitionedData, table_partitions
from dpquery.backends.partitions import (
    FramePart,
    TransactionPart,
    biased_bits_partitions,
    count_partition,
    frame_partitions,
    transaction_partitions,
)
from dpquery.cli import main
from dpquery.data.binary import BinaryData, save_binary
from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.data.encode import encode, from_sparse, read_pairs, read_table
from dpquery.data.items import ItemSets, write_item_sets
from dpquery.errors import DPQueryError
from dpquery.privacy.neighbours import NOISY_N
from dpquery.queries import generators as gen
from dpquery.queries.counts import MarginalCounts
from dpquery.queries.evaluate import answer_data, fold_counts
from dpquery.queries.marginals import AttributeLayout, attribute_codes, marginal_counts
from dpquery.queries.workload import Workload

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 5),
        Categorical("size", (1, 2, 3, 4)),
    )
)


@contextmanager
def _cluster() -> Iterator[DaskBackend]:
    """A local cluster of 2 single-threaded worker processes on loopback."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )  # fmt: skip
    with DaskBackend(distributed.Client(cluster), True, 1, cluster) as b:
        yield b


@pytest.fixture(scope="module")
def backend() -> Iterator[DaskBackend]:
    with _cluster() as b:
        yield b


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n, p=[0.6, 0.3, 0.1]),
            "smoker": rng.choice(["no", "yes"], n),
            "age": np.round(rng.uniform(0, 100, n), 1),
            "size": rng.choice([1, 2, 3, 4], n),
        }
    )


def _workloads(domain: Domain, count: int, seed: int = 0) -> list[Workload]:
    return [
        gen.random_marginal_queries(domain, 2, count, seed),
        gen.random_parities(domain.d, 3, count, seed, domain),
        gen.random_disjunctions(domain.d, 2, count, seed, domain),
    ]


# -- partitions, without a cluster ------------------------------------------------------
@pytest.mark.parametrize("rows, pieces", [(997, 1), (997, 2), (997, 7), (30, 400)])
def test_csv_byte_ranges_hold_every_row_once(tmp_path: Path, rows: int, pieces: int) -> None:
    table = _table(rows)
    table.to_csv(tmp_path / "t.csv", index=False)
    parts = table_partitions(tmp_path / "t.csv", DOMAIN, pieces)
    assert len(parts) == pieces  # ranges shorter than a line are empty, not dropped
    (w,) = _workloads(DOMAIN, 40)[:1]
    whole = encode(read_table(tmp_path / "t.csv", DOMAIN), DOMAIN)
    results = [count_partition(p, (w,), DOMAIN.d) for p in parts]
    assert sum(r.rows for r in results) == rows
    assert np.array_equal(sum(r.counts[0] for r in results), fold_counts(w, whole))


def test_default_partitions_follow_row_groups(tmp_path: Path) -> None:
    _table(1000).to_parquet(tmp_path / "a.parquet", row_group_size=300)
    _table(500, 1).to_csv(tmp_path / "b.csv.gz", index=False)
    parts = table_partitions(tmp_path, DOMAIN)
    assert [type(p).__name__ for p in parts] == ["ParquetPart"] * 4 + ["FilePart"]
    assert sum(p.rows() for p in parts) == 1500


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    with pytest.raises(DPQueryError, match="does not exist"):
        table_partitions(tmp_path / "nope.csv", DOMAIN)
    with pytest.raises(DPQueryError, match="holds no table files"):
        table_partitions(tmp_path, DOMAIN)
    with pytest.raises(DPQueryError, match="partitions must be a positive integer, got 0"):
        table_partitions(tmp_path, DOMAIN, 0)


# -- answers on the cluster -------------------------------------------------------------
def test_files_and_frames_match_local(backend: DaskBackend, tmp_path: Path) -> None:
    table = _table(3000)
    table.iloc[:1000].to_parquet(tmp_path / "a.parquet", row_group_size=256)
    table.iloc[1000:2000].to_csv(tmp_path / "b.csv", index=False)
    table.iloc[2000:].to_csv(tmp_path / "c.csv.gz", index=False)
    local = encode(table, DOMAIN)
    workloads = _workloads(DOMAIN, 300)
    expected = [answer_data(w, local) for w in workloads]
    for data, asked in (
        (PartitionedData.from_table(tmp_path, DOMAIN, backend, partitions=9), 9),
        (PartitionedData.from_frame(table, DOMAIN, backend, 5), 5),
        (PartitionedData.from_binary(local, backend, 4), 4),
    ):
        got = data.answers_many(workloads)
        assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
        assert data.n == 3000
        assert np.array_equal(data.column_counts(), local.column_counts())
        assert len(data.partitions) > 1
        assert data.describe()["partitions"] == asked  # the count asked for, not the pieces


def test_answers_ride_on_the_next_pass(backend: DaskBackend) -> None:
    """Answers asked for ahead are made in the next counting pass (a marginal counts pass,
    or another workload's answers pass) and then served with no pass of their own, equal to
    the local answers."""
    table = _table(900, seed=2)
    local = encode(table, DOMAIN)
    w1, w2, w3 = _workloads(DOMAIN, 40)[:3]
    data = PartitionedData.from_frame(table, DOMAIN, backend, 3)
    data.answers_later([w1, w2])
    counter = MarginalCounts(AttributeLayout.of_data(local), ((0,), (1, 2)))
    got = data.count(counter)
    assert all(np.array_equal(g, c) for g, c in zip(got, counter.count(local), strict=True))
    passes = len(data.passes)
    assert data.passes[-1]["pass"] == "counts"
    assert data.passes[-1]["queries"] == len(w1) + len(w2)
    for w, answers in zip((w1, w2), data.answers_many([w1, w2]), strict=True):
        assert np.array_equal(answers, answer_data(w, local))
    assert len(data.passes) == passes  # served, not counted again
    data.answers_later([w3])
    assert np.array_equal(data.answers(w1), answer_data(w1, local))
    assert len(data.passes) == passes  # w1 is known: no pass, w3 still pending
    assert np.array_equal(data.answers(w3), answer_data(w3, local))
    assert [p["pass"] for p in data.passes[passes:]] == ["answers"]


def test_domain_errors_reach_the_caller(backend: DaskBackend, tmp_path: Path) -> None:
    table = _table(100)
    table.loc[57, "color"] = "purple"
    table.to_csv(tmp_path / "t.csv", index=False)
    data = PartitionedData.from_table(tmp_path / "t.csv", DOMAIN, backend, partitions=3)
    with pytest.raises(DPQueryError, match="purple"):
        data.answers(_workloads(DOMAIN, 5)[0])


def _write_transactions(tmp_path: Path, n: int, d: int) -> tuple[list[Path], np.ndarray]:
    rng = np.random.default_rng(1)
    dense = (rng.random((n, d)) < 0.08).astype(np.uint8)
    dense[rng.random(n) < 0.3] = 0  # users without items exist only through n
    paths = []
    for k, users in enumerate(np.array_split(rng.permutation(n), 3)):  # by user, shuffled
        rows, cols = np.nonzero(dense[np.sort(users)])
        pairs = np.column_stack([np.sort(users)[rows], cols])
        paths.append(tmp_path / f"t{k}.txt")
        np.savetxt(paths[-1], rng.permutation(pairs), fmt="%d")
    return paths, dense


def test_transactions_by_user_match_local(backend: DaskBackend, tmp_path: Path) -> None:
    n, d = 700, 30
    paths, dense = _write_transactions(tmp_path, n, d)
    local = from_sparse(sp.csr_array(dense))
    data = PartitionedData.from_transactions(paths, n=n, d=d, backend=backend)
    for w in (
        gen.random_disjunctions(d, 3, 200, 0),  # all-zero users satisfy these: exercised
        gen.random_parities(d, 2, 200, 0),
    ):
        assert np.array_equal(data.answers(w), answer_data(w, local))
    assert data.n == n


def test_transactions_split_user_is_an_error(backend: DaskBackend, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("0 1\n3 2\n")
    (tmp_path / "b.txt").write_text("3 4\n")
    data = PartitionedData.from_transactions(
        [tmp_path / "a.txt", tmp_path / "b.txt"], n=5, d=6, backend=backend
    )
    with pytest.raises(DPQueryError, match=r"user\(s\) \[3\] appear in more than one"):
        data.answers(gen.random_parities(6, 1, 4, 0))


def test_biased_bits_generated_per_partition(backend: DaskBackend) -> None:
    n, d = 20_000, 200
    data = PartitionedData.biased_bits(n, d, backend, 4, seed=5)
    parts, bias = biased_bits_partitions(n, d, 4, seed=5)
    w = gen.random_parities(d, 2, 50, 0)
    local = sum(count_partition(p, (w,), d).counts[0] for p in parts)
    answers = data.answers(w)
    assert np.array_equal(answers, 1.0 - 2.0 * local / n)
    # The bits follow their biases: 5 standard deviations of a frequency over 20,000 rows.
    assert np.abs(data.column_counts() / n - bias).max() < 5 * np.sqrt(0.25 / n)


@pytest.mark.realdata
def test_kdd99_partitions_bit_exact(
    backend: DaskBackend, tmp_path: Path, require_dataset: Callable[[str], Path]
) -> None:
    require_dataset("kdd99")
    table, domain = datasets.load_table("kdd99")
    third = len(table) // 3
    table.iloc[:third].to_parquet(tmp_path / "p0.parquet", row_group_size=40_000)
    table.iloc[third : 2 * third].to_csv(tmp_path / "p1.csv", index=False)
    table.iloc[2 * third :].to_parquet(tmp_path / "p2.parquet")
    local = encode(table, domain)
    workloads = _workloads(domain, 2000)
    data = PartitionedData.from_table(tmp_path, domain, backend, partitions=6)
    for w, got in zip(workloads, data.answers_many(workloads), strict=True):
        assert np.array_equal(got, answer_data(w, local))  # bit for bit, not approximately
    assert data.n == local.n


# -- the CLI ----------------------------------------------------------------------------
# DualQuery through the command on the first 60,000 records of KDD99 (all 41 attributes);
# the whole table's command is in the benchmark.
KDD_SYNTH_ROWS = 60000
KDD_SYNTH = (
    "synth", "--algorithm", "dualquery", "--workload", "marginals",
    "--k", "3", "--queries", "500",
    "--epsilon", "1", "--delta", "1e-6", "--T", "8", "--samples", "30", "--eta", "0.5",
    "--seed", "11", "--quiet",
)  # fmt: skip


def _strip_timings(report: dict) -> dict:
    report = json.loads(json.dumps(report))
    report.pop("backend")
    report["release"].pop("timings")  # backend_s (dask) and the other times differ
    report["release"].pop("oracle_summary")
    for r in report["release"]["rounds"]:
        for key in [k for k in r if k.endswith("_s") or k == "seconds"]:
            r.pop(key)
    return report


@pytest.mark.realdata
def test_synth_dask_equals_local(
    backend: DaskBackend, tmp_path: Path, require_dataset: Callable[[str], Path]
) -> None:
    require_dataset("kdd99")
    table, domain = datasets.load_table("kdd99")
    table.iloc[:KDD_SYNTH_ROWS].to_parquet(tmp_path / "k.parquet", index=False)
    domain.save(tmp_path / "domain.json")
    synth = [*KDD_SYNTH, "--data", str(tmp_path / "k.parquet"),
             "--domain", str(tmp_path / "domain.json")]  # fmt: skip
    out = {b: (tmp_path / f"{b}.csv", tmp_path / f"{b}.json") for b in ("local", "dask")}
    assert main([*synth, "--out", str(out["local"][0]), "--report", str(out["local"][1])]) == 0
    dask_args = ["--backend", "dask", "--scheduler", backend.address, "--partitions", "3"]
    evaluation = tmp_path / "dask.evaluation.json"
    assert main([*synth, *dask_args, "--out", str(out["dask"][0]),
                 "--report", str(out["dask"][1]), "--evaluate", str(evaluation)]) == 0  # fmt: skip
    assert out["local"][0].read_bytes() == out["dask"][0].read_bytes()
    local, dask = (json.loads(out[b][1].read_text()) for b in ("local", "dask"))
    assert dask["backend"]["name"] == "dask" and dask["backend"]["partitions"] == 3
    # the cluster's time on the private data is for the curator: in the evaluation only
    assert "backend_s" not in dask["release"]["timings"]
    assert json.loads(evaluation.read_text())["timings"]["backend_s"] > 0
    assert local["backend"]["name"] == "local"
    assert _strip_timings(local) == _strip_timings(dask)


# adaptive-projection (the default release) on real data: a slice of KDD99 (its first ten
# attributes, 8,000 rows) keeps the suite fast; the full-size command is in the benchmark.
KDD_COLUMNS = 10
KDD_ROWS = 8000


@pytest.mark.realdata
def test_kdd99_default_release_from_row_groups_and_byte_ranges(
    backend: DaskBackend, tmp_path: Path, require_dataset: Callable[[str], Path]
) -> None:
    require_dataset("kdd99")
    table, full = datasets.load_table("kdd99")
    domain = Domain(tuple(full[a] for a in full.names[:KDD_COLUMNS]))
    table = table.iloc[:KDD_ROWS][list(domain.names)]
    table.to_parquet(tmp_path / "k.parquet", row_group_size=KDD_ROWS // 4, index=False)
    table.to_csv(tmp_path / "k.csv", index=False)
    domain.save(tmp_path / "domain.json")
    common = ["synth", "--domain", str(tmp_path / "domain.json"), "--epsilon", "1",
              "--seed", "3", "--quiet"]  # fmt: skip
    local = tmp_path / "local.csv"
    assert main([*common, "--data", str(tmp_path / "k.parquet"), "--out", str(local)]) == 0
    dask = ["--backend", "dask", "--scheduler", backend.address, "--partitions", "4"]
    for source in ("k.parquet", "k.csv"):  # 4 row groups; 4 byte ranges
        out, report = tmp_path / f"{source}.csv", tmp_path / f"{source}.json"
        assert main([*common, *dask, "--data", str(tmp_path / source), "--out", str(out),
                     "--report", str(report)]) == 0  # fmt: skip
        assert out.read_bytes() == local.read_bytes(), source
        written = json.loads(report.read_text())
        assert written["release"]["algorithm"] == "adaptive-projection"
        assert written["backend"]["partitions"] == 4


@pytest.mark.realdata
def test_adult_pgm_default_release_on_the_cluster(
    backend: DaskBackend, tmp_path: Path, require_dataset: Callable[[str], Path]
) -> None:
    """The built-in dataset cut into 4 in-memory partitions (2-way workload, 2,000 records
    fitted: the full-size command is in the benchmark)."""
    require_dataset("adult-pgm")
    common = ["synth", "--dataset", "adult-pgm", "--epsilon", "1", "--seed", "3", "--k", "2",
              "--size", "2000", "--quiet"]  # fmt: skip
    assert main([*common, "--out", str(tmp_path / "local.csv")]) == 0
    assert main([*common, "--out", str(tmp_path / "dask.csv"), "--backend", "dask",
                 "--scheduler", backend.address, "--partitions", "4"]) == 0  # fmt: skip
    assert (tmp_path / "dask.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    _table(2000).to_csv(tmp_path / "data.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    w = gen.random_marginal_queries(DOMAIN, 2, 100, 0)
    w.save(tmp_path / "w.npz")
    return tmp_path


def _answer_args(tmp: Path, out: str, *extra: str) -> list[str]:
    return ["answer", str(tmp / "w.npz"), "--data", str(tmp / "data.csv"), "--domain",
            str(tmp / "domain.json"), "-o", str(tmp / out), *extra]  # fmt: skip


def test_answer_on_scheduler_equals_local(backend: DaskBackend, files: Path) -> None:
    assert main(_answer_args(files, "local.npy")) == 0
    extra = ("--backend", "dask", "--scheduler", backend.address, "--partitions", "5")
    assert main(_answer_args(files, "dask.npy", *extra)) == 0
    assert np.array_equal(np.load(files / "local.npy"), np.load(files / "dask.npy"))


def test_answer_starts_a_local_cluster(files: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(_answer_args(files, "a.npy", "--backend", "dask", "--partitions", "2")) == 0
    assert "dask: 2 partitions requested on 2 workers" in capsys.readouterr().out
    assert main(_answer_args(files, "b.npy")) == 0
    assert np.array_equal(np.load(files / "a.npy"), np.load(files / "b.npy"))


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--scheduler", "tcp://127.0.0.1:1"), "need --backend dask"),
        (("--partitions", "3"), "need --backend dask"),
        (("--backend", "dask", "--partitions", "0"), "got 0"),
        (("--backend", "dask", "--scheduler", "nonsense"), "'nonsense' is not a Dask scheduler"),
        (("--backend", "dask", "--scheduler", "tcp://127.0.0.1:1"), "cannot connect"),
        (("--backend", "dask", "--cache-dir", "."), "--cache-dir works with the local"),
    ],
)
def test_cli_backend_errors(
    files: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    extra: tuple[str, ...],
    message: str,
) -> None:
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT_S", 1.0)  # a refused port fails fast
    assert main(_answer_args(files, "a.npy", *extra)) != 0
    assert message in capsys.readouterr().err
    assert not (files / "a.npy").exists()


def test_synth_refuses_infer_domain_on_dask(files: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["synth", "--data", str(files / "data.csv"), "--infer-domain", "--epsilon", "1",
            "--backend", "dask", "--out", str(files / "s.csv")]  # fmt: skip
    assert main(args) != 0
    assert "--backend dask needs --domain" in capsys.readouterr().err
    assert not (files / "s.csv").exists()


def test_npz_input_partitions(backend: DaskBackend, files: Path) -> None:
    local = encode(read_table(files / "data.csv", DOMAIN), DOMAIN)
    save_binary(files / "data.npz", local)
    args = ["answer", str(files / "w.npz"), "--data", str(files / "data.npz"), "-o",
            str(files / "a.npy"), "--backend", "dask", "--scheduler", backend.address]  # fmt: skip
    assert main(args) == 0
    assert np.array_equal(np.load(files / "a.npy"), answer_data(Workload.load(files / "w.npz"),
                                                                local))  # fmt: skip


def test_default_synth_on_the_cluster_is_the_local_release(
    backend: DaskBackend, files: Path
) -> None:
    """``auto`` on partitioned data keeps adaptive-projection, its counts computed on the
    cluster in one pass, and writes the bytes the local backend writes."""
    common = ["synth", "--data", str(files / "data.csv"), "--domain", str(files / "domain.json"),
              "--epsilon", "2", "--k", "2", "--seed", "0", "--quiet"]  # fmt: skip
    assert main([*common, "--out", str(files / "l.csv"), "--report", str(files / "l.json")]) == 0
    dask = ["--backend", "dask", "--scheduler", backend.address, "--partitions", "3"]
    assert main([*common, *dask, "--out", str(files / "s.csv"),
                 "--report", str(files / "r.json")]) == 0  # fmt: skip
    assert (files / "s.csv").read_bytes() == (files / "l.csv").read_bytes()
    report = json.loads((files / "r.json").read_text())
    release = report["release"]
    assert release["algorithm"] == "adaptive-projection"
    assert "computed on the cluster" in release["parameters"]["auto"]["reason"]
    [counts] = [p for p in report["backend"]["passes"] if p["pass"] == "counts"]
    assert counts["counter"] == "MarginalCounts" and counts["cells"] > 0
    assert "answers" not in [p["pass"] for p in report["backend"]["passes"]]  # none read them
    local = json.loads((files / "l.json").read_text())
    for r in (local, report):
        r["release"]["parameters"].pop("auto")
    assert _strip_timings(local) == _strip_timings(report)
    # the curator's evaluation reads the true answers, made in the release's counts pass
    assert main([*common, *dask, "--out", str(files / "e.csv"), "--report", str(files / "e.json"),
                 "--evaluate", str(files / "e.evaluation.json")]) == 0  # fmt: skip
    assert (files / "e.csv").read_bytes() == (files / "l.csv").read_bytes()
    passes = json.loads((files / "e.json").read_text())["backend"]["passes"]
    assert [p["pass"] for p in passes] == ["rows", "counts"]  # the answers rode on the counts
    assert passes[1]["queries"] > 0
    assert (files / "e.evaluation.json").exists()


def test_marginal_counts_on_the_cluster_equal_local(backend: DaskBackend, tmp_path: Path) -> None:
    table = _table(3000)
    table.iloc[:1500].to_parquet(tmp_path / "a.parquet", row_group_size=400)
    table.iloc[1500:].to_csv(tmp_path / "b.csv", index=False)
    local = encode(table, DOMAIN)
    layout = AttributeLayout.of_data(local)
    counter = MarginalCounts(layout, ((0,), (2, 3), (0, 1, 3), (3,)))
    expected = counter.count(local)
    for data in (
        PartitionedData.from_table(tmp_path, DOMAIN, backend, partitions=7),
        PartitionedData.from_frame(table, DOMAIN, backend, 3),
    ):
        got = data.count(counter)
        assert [g.dtype for g in got] == [np.int64] * 4
        assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    # the same counts as the mechanism's own (float) marginal counts on the codes
    codes = attribute_codes(local, layout)
    assert np.array_equal(expected[2], marginal_counts(codes, layout.sizes, (0, 1, 3)))


def test_marginal_counts_add_users_without_items(backend: DaskBackend, tmp_path: Path) -> None:
    n, d = 400, 12
    paths, dense = _write_transactions(tmp_path, n, d)
    local = from_sparse(sp.csr_array(dense))
    data = PartitionedData.from_transactions(paths, n=n, d=d, backend=backend)
    counter = MarginalCounts(AttributeLayout.of_data(local), ((0, 5), (3,), (1, 2, 11)))
    for got, want in zip(data.count(counter), counter.count(local), strict=True):
        assert np.array_equal(got, want)


def test_counts_past_the_client_limit_are_refused(
    backend: DaskBackend, files: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:  # fmt: skip
    monkeypatch.setattr(counts_module, "MAX_COUNT_CELLS", 50)
    data = PartitionedData.from_frame(_table(100), DOMAIN, backend, 2)
    counter = MarginalCounts(AttributeLayout.of(DOMAIN.d, DOMAIN.onehot_groups), ((0, 2, 3),))
    with pytest.raises(DPQueryError, match="needs 60 count cells, more than the 50"):
        data.count(counter)
    assert not data.passes  # refused before the pass
    args = ["synth", "--data", str(files / "data.csv"), "--domain", str(files / "domain.json"),
            "--epsilon", "1", "--backend", "dask", "--scheduler", backend.address,
            "--out", str(files / "s.csv")]  # fmt: skip
    assert main(args) != 0
    assert "adaptive-projection's candidates needs" in capsys.readouterr().err
    assert not (files / "s.csv").exists()


def test_a_failed_pass_spends_nothing(backend: DaskBackend, tmp_path: Path) -> None:
    """The counts are read before the first charge: a pass that fails leaves the ledger
    empty."""
    table = _table(300)
    table.loc[250, "color"] = "purple"
    table.to_csv(tmp_path / "t.csv", index=False)
    data = PartitionedData.from_table(tmp_path / "t.csv", DOMAIN, backend, partitions=3)
    workload = gen.random_marginal_queries(DOMAIN, 2, 20, 0)
    model = AdaptiveProjection(epsilon=1.0, seed=0, progress=False, neighbours="replace-one")
    with pytest.raises(DPQueryError, match="purple"):
        model.fit(data, workload)
    assert model.ledger_ is not None and not model.ledger_.entries
    # under add/remove the noisy n, which the candidates read, is drawn first: it alone
    model = AdaptiveProjection(epsilon=1.0, seed=0, progress=False)
    with pytest.raises(DPQueryError, match="purple"):
        model.fit(data, workload)
    assert [e.charge.mechanism for e in model.ledger_.entries] == [NOISY_N]  # type: ignore[union-attr]


def test_the_answers_pass_is_made_for_the_algorithms_that_read_them(backend: DaskBackend) -> None:
    """Without ``true_answers``, ``fit`` on partitioned data computes ``q(D)`` in a pass of
    its own only for an algorithm that reads them (DualQuery), not for the default release;
    either way the release is the local one."""
    table = _table(600, seed=3)
    local = encode(table, DOMAIN)
    workload = gen.random_marginal_queries(DOMAIN, 2, 30, 0)
    data = PartitionedData.from_frame(table, DOMAIN, backend, 3)
    for model, passes in (
        (Auto(epsilon=1.0, seed=2, progress=False), ["rows", "counts"]),
        (DualQuery(eta=0.5, T=3, samples=10, seed=4, progress=False), ["answers"]),
    ):  # fmt: skip
        before = len(data.passes)
        got = model.fit(data, workload)
        assert [p["pass"] for p in data.passes[before:]] == passes
        expected = model.fit(local, workload)
        assert np.array_equal(got.records.rows, expected.records.rows)


@dataclass(frozen=True)
class _KillsItsWorkerOnce(FramePart):
    """A partition whose first load kills the worker process running it (SIGKILL), as a
    machine failing mid-pass would; the marker file makes it happen once."""

    marker: Path = Path()

    def load(self) -> BinaryData:
        if not self.marker.exists():
            self.marker.write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        return super().load()


def test_a_worker_killed_mid_pass_changes_nothing(tmp_path: Path) -> None:
    """A worker dies while counting; its nanny restarts it, the lost partition is sent again
    and the pass completes: the release and the ledger are those of the local run."""
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    table = _table(2000, seed=4)
    local = encode(table, DOMAIN)
    workload = gen.random_marginal_queries(DOMAIN, 2, 60, 1)
    model = AdaptiveProjection(epsilon=1.0, seed=7, progress=False)
    expected = model.fit(local, workload)
    parts = frame_partitions(table, DOMAIN, 4)
    marker = tmp_path / "killed"
    parts[1] = _KillsItsWorkerOnce(parts[1].table, DOMAIN, marker)  # type: ignore[attr-defined]
    try:
        with _cluster() as b:  # its own: a worker dies
            data = PartitionedData(tuple(parts), b, DOMAIN.d, DOMAIN)
            got = model.fit(data, workload)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert marker.read_text() == "killed"  # the worker did die mid-pass
    assert np.array_equal(got.records.rows, expected.records.rows)
    assert [e.charge for e in got.ledger.entries] == [e.charge for e in expected.ledger.entries]
    assert [p["pass"] for p in data.passes] == ["rows", "counts"]


# -- the wide release on item data ------------------------------------------------------------
WIDE = {"bound": 6, "pair_bound": 4, "head": 12, "pool": 3000}  # a small, fast release


def _item_table(n: int, d: int, seed: int = 0) -> ItemSets:
    """Power-law item counts, records of 0 to a dozen items (some empty: they exist only
    through n), more than the bound s = 6 in some records so that the cut matters."""
    rng = np.random.default_rng(seed)
    p = np.minimum(1.0, 3.0 / np.arange(1, d + 1))
    dense = rng.random((n, d)) < p
    dense[rng.random(n) < 0.2] = False
    return ItemSets(sp.csr_array(dense.astype(np.uint8)))


def test_wide_counters_on_the_cluster_equal_local(backend: DaskBackend, tmp_path: Path) -> None:
    """Both wide counters, on a file cut into user ranges, on files partitioned by user and
    on item sets cut into ranges of records, give the counts of the whole table in one
    process (users without items included)."""
    items = _item_table(500, 40)
    write_item_sets(tmp_path / "x.transactions.csv", items)
    rng = np.random.default_rng(3)
    paths = []
    for k, users in enumerate(np.array_split(rng.permutation(items.n), 2)):
        rows = np.sort(users)
        coo = items.matrix[rows].tocoo()
        paths.append(tmp_path / f"u{k}.txt")
        np.savetxt(paths[-1], np.column_stack([rows[coo.row], coo.col]), fmt="%d")
    counters = (
        ItemCounts(key=99, s=6, d=40),
        HeadCounts(99, 6, 4, np.arange(0, 40, 3)),
        AllItemCounts(40),
        PickedSizes(np.arange(0, 40, 3)),
        PickedSizes(np.arange(0, 40, 3), 5),  # with add/remove's tail total
    )  # the head mode's two
    ranges = PartitionedData.from_transactions(
        [tmp_path / "x.transactions.csv"], n=500, d=40, backend=backend, partitions=3
    )
    files = PartitionedData.from_transactions(paths, n=500, d=40, backend=backend)
    for data in (ranges, files, PartitionedData.from_items(items, backend, 3)):
        for counter in counters:
            got, want = data.count(counter), counter.count(items)
            assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    assert [p["counter"] for p in data.passes] == [
        "ItemCounts", "HeadCounts", "AllItemCounts", "PickedSizes", "PickedSizes",
    ]  # fmt: skip


def test_counters_together_are_each_counter_alone(backend: DaskBackend) -> None:
    """Counters whose inputs are known together (the head's counts and the top-up's length
    ranks; the picks' sizes and pairs) counted in one pass give each counter's own vectors,
    in one process and on the cluster."""
    from dpquery.algorithms.wide.counts import LengthCounts, PickedPairs
    from dpquery.queries.counts import Together

    items = _item_table(500, 40)
    data = PartitionedData.from_items(items, backend, 3)
    picked = np.arange(0, 40, 5)
    for parts in [
        (HeadCounts(99, 6, 4, np.arange(0, 40, 3)), LengthCounts(np.array([0, 1, 4, 6, 40]))),
        (PickedSizes(picked, 5), PickedPairs(picked)),
    ]:
        want = [v for c in parts for v in c.count(items)]
        together = Together(parts)
        for got in (together.count(items), data.count(together)):
            assert len(got) == len(want)
            assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    assert [p["counter"] for p in data.passes] == [
        "HeadCounts+LengthCounts", "PickedSizes+PickedPairs"
    ]  # fmt: skip
    with pytest.raises(ValueError, match="same kind of records"):  # items beside bits
        Together((PickedSizes(picked, 5), SimpleNamespace(cells=list, count=list)))


def test_a_pass_payload_is_one_copy_sent_again_when_lost(
    backend: DaskBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass's counter is scattered as one copy (never broadcast: a worker killed during a
    broadcast's copy left the scheduler retrying it). Injected failures: the first scatter
    fails as a connection closed by a dying worker (tried again), and the copy made is then
    lost (cancelled at once, as when its one holder dies); the pass sends it again and its
    counts are the whole table's."""
    items = _item_table(300, 30, seed=2)
    data = PartitionedData.from_items(items, backend, 3)
    data.count(AllItemCounts(30))  # the partitions sent before the failures are injected
    client = backend.client
    plain = client.scatter
    calls: list[dict[str, Any]] = []

    def failing(values: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        if len(calls) == 1:
            raise OSError("connection closed")  # a worker died while it received the copy
        futures = plain(values, **kwargs)
        if len(calls) == 2:
            client.cancel(futures)  # the one copy lost with its holder
        return futures

    monkeypatch.setattr(client, "scatter", failing)
    counter = ItemCounts(key=5, s=4, d=30)
    got = data.count(counter)
    assert np.array_equal(got[0], counter.count(items)[0])
    assert len(calls) >= 3  # tried again, then sent again once lost
    assert not any(kw.get("broadcast") for kw in calls)


@pytest.mark.realdata
def test_wide_release_on_the_cluster_is_the_local_release(
    backend: DaskBackend, tmp_path: Path, real_data_dir: Path
) -> None:
    """npm_words' first 4,000 users over its 500 most frequent words, through the command:
    ``--backend dask --partitions 3`` writes the bytes and the report of the local run."""
    path = real_data_dir / "wide/npm_words.transactions.csv.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent (npm_words, see data/wide/README.md)")
    pairs = read_pairs(path)
    keep = (pairs.rows < 4000) & (pairs.items < 500)
    source = tmp_path / "npm.txt"  # no first line: the sizes come from --n and --items
    np.savetxt(source, np.column_stack([pairs.rows[keep], pairs.items[keep]]), fmt="%d")
    common = ["synth", "--data", str(source), "--transactions", "--n", "4000", "--items",
              "500", "--epsilon", "1", "--seed", "5", "--head", "40", "--pool", "3000",
              "--bound", "32", "--head-mode", "off", "--quiet"]  # fmt: skip
    out = {b: (tmp_path / f"{b}.transactions.csv", tmp_path / f"{b}.json") for b in ("l", "d")}
    assert main([*common, "--out", str(out["l"][0]), "--report", str(out["l"][1])]) == 0
    assert main([*common, "--out", str(out["d"][0]), "--report", str(out["d"][1]),
                 "--backend", "dask", "--scheduler", backend.address,
                 "--partitions", "3"]) == 0  # fmt: skip
    assert out["d"][0].read_bytes() == out["l"][0].read_bytes()
    local, dask = (json.loads(out[b][1].read_text()) for b in ("l", "d"))
    assert local["backend"] == {"name": "local", "partitions": 1}
    assert dask["backend"]["partitions"] == 3
    assert [(p["pass"], p["counter"], p["cells"]) for p in dask["backend"]["passes"]] == [
        ("counts", "ItemCounts", 500),
        # the top-up's lengths (add/remove: 0, 1, ..., 384, 500) ride on the head's pass
        ("counts", "HeadCounts+LengthCounts", 33 * 33 + 40 * 39 // 2 + 19),
    ]  # fmt: skip
    assert "computed on the cluster" in dask["release"]["parameters"]["auto"]["reason"]
    for r in (local, dask):
        r.pop("backend")
        r["release"].pop("timings")
        r["release"]["parameters"].pop("auto")
    assert local == dask


def test_a_folder_of_item_files_on_the_cluster_is_the_local_release(
    backend: DaskBackend, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Users split over three files of a folder (shuffled, one with the sizes line): the
    release of the one file they came from, byte for byte; a folder is refused locally."""
    items = _item_table(400, 25, seed=3)
    write_item_sets(tmp_path / "all.transactions.csv", items)
    (tmp_path / "parts").mkdir()
    coo = items.matrix.tocoo()
    rng = np.random.default_rng(4)
    for k, users in enumerate(np.array_split(rng.permutation(items.n), 3)):
        mine = np.isin(coo.row, users)
        lines = [f"{r} {c}" for r, c in rng.permutation(np.column_stack([coo.row, coo.col])[mine])]
        first = ["# rows 400 items 25"] if k == 1 else []
        (tmp_path / "parts" / f"p{k}.txt").write_text("\n".join(first + lines) + "\n")
    common = ["synth", "--epsilon", "1", "--seed", "1", "--bound", "6", "--head", "12",
              "--pool", "3000", "--quiet"]  # fmt: skip
    local, dask = tmp_path / "l.transactions.csv", tmp_path / "d.transactions.csv"
    assert (
        main([*common, "--data", str(tmp_path / "all.transactions.csv"), "--out", str(local)]) == 0
    )
    folder = ["--data", str(tmp_path / "parts"), "--transactions"]
    report = tmp_path / "d.json"
    assert main([*common, *folder, "--out", str(dask), "--report", str(report), "--backend",
                 "dask", "--scheduler", backend.address]) == 0  # fmt: skip
    assert dask.read_bytes() == local.read_bytes()
    # one partition per file were made; the report has the count asked for (one per worker)
    assert json.loads(report.read_text())["backend"]["partitions"] == 2
    assert main([*common, *folder, "--out", str(tmp_path / "x.transactions.csv")]) == 2
    assert "is a folder: item files partitioned by user are read" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--partitions", "2"), "need --backend dask"),
        (("--backend", "dask", "--algorithm", "dualquery"), "use --backend local"),
        (("--backend", "dask", "--domain", "d.json"), "item data needs no domain"),
    ],
)
def test_item_backend_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture, extra: tuple[str, ...], message: str
) -> None:
    write_item_sets(tmp_path / "x.transactions.csv", _item_table(50, 10))
    args = ["synth", "--data", str(tmp_path / "x.transactions.csv"), "--epsilon", "1",
            "--out", str(tmp_path / "s.transactions.csv"), *extra]  # fmt: skip
    assert main(args) != 0
    assert message in capsys.readouterr().err
    assert not (tmp_path / "s.transactions.csv").exists()


def test_an_item_npz_on_the_cluster_is_the_local_release(
    backend: DaskBackend, tmp_path: Path
) -> None:
    """A sparse ``.npz`` is read by the client and its ranges of records sent to the
    workers: the bytes of the local release, and the wide release's two passes."""
    sp.save_npz(tmp_path / "x.npz", _item_table(300, 20, seed=6).matrix)
    common = ["synth", "--data", str(tmp_path / "x.npz"), "--epsilon", "1", "--seed", "2",
              "--head", "8", "--pool", "2000", "--head-mode", "off", "--quiet"]  # fmt: skip
    local, dask = tmp_path / "l.transactions.csv", tmp_path / "d.transactions.csv"
    assert main([*common, "--out", str(local)]) == 0
    assert main([*common, "--out", str(dask), "--report", str(tmp_path / "r.json"),
                 "--backend", "dask", "--scheduler", backend.address,
                 "--partitions", "3"]) == 0  # fmt: skip
    assert dask.read_bytes() == local.read_bytes()
    report = json.loads((tmp_path / "r.json").read_text())["backend"]
    assert report["partitions"] == 3
    # the sparse mode without --bound: the record lengths' ranks first (the private bound)
    assert [p["counter"] for p in report["passes"]] == ["LengthCounts", "ItemCounts", "HeadCounts"]


@dataclass(frozen=True)
class _KillsItsWorkerInPassTwo(TransactionPart):
    """A user range whose second load (the head counts' pass, after the item counts have
    been charged and drawn) kills the worker process running it (SIGKILL), once."""

    marker: Path = Path()

    def load_items(self) -> tuple[ItemSets, np.ndarray, int]:
        loads = self.marker.with_suffix(".loads")
        with loads.open("a") as fh:
            fh.write("x")
        if len(loads.read_text()) == 2 and not self.marker.exists():
            self.marker.write_text("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        return super().load_items()


def test_a_worker_killed_in_the_wide_release_changes_nothing(tmp_path: Path) -> None:
    """A worker dies during the second pass; Dask runs its task again and the release and
    the ledger are those of the local run."""
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    items = _item_table(600, 30, seed=2)
    write_item_sets(tmp_path / "x.transactions.csv", items)
    expected = WideRelease(epsilon=1.0, seed=4, **WIDE, head_mode="off").fit(items)
    parts = list(transaction_partitions([tmp_path / "x.transactions.csv"], 600, 30, 3))
    p = parts[1]
    parts[1] = _KillsItsWorkerInPassTwo(p.path, p.n, p.d, p.users, tmp_path / "killed")  # type: ignore[attr-defined]
    try:
        with _cluster() as b:  # its own: a worker dies
            data = PartitionedData(tuple(parts), b, 30, declared_n=600)
            got = WideRelease(epsilon=1.0, seed=4, **WIDE, head_mode="off").fit(data)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert (tmp_path / "killed").read_text() == "killed"  # the worker did die mid-pass
    assert (got.records.matrix != expected.records.matrix).nnz == 0
    assert [e.charge for e in got.ledger.entries] == [e.charge for e in expected.ledger.entries]
    assert [p["counter"] for p in data.passes] == ["ItemCounts", "HeadCounts"]


# -- the partition readers say what read_table says ----------------------------------------------
def _write(table: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".parquet":
        table.to_parquet(path, index=False)
    else:
        table.to_csv(path, index=False)  # gzipped for .csv.gz


def _dask_synth(backend: DaskBackend, folder: Path, source: str, *extra: str) -> list[str]:
    DOMAIN.save(folder / "domain.json")
    return ["synth", "--data", str(folder / source), "--domain", str(folder / "domain.json"),
            "--epsilon", "1", "--k", "2", "--quiet", "--out", str(folder / "s.csv"),
            "--backend", "dask", "--scheduler", backend.address, *extra]  # fmt: skip


@pytest.mark.parametrize(
    "source, extra",
    [("e.csv", ()), ("e.csv", ("--partitions", "3")), ("e.parquet", ()), ("e.csv.gz", ())],
)
def test_a_header_only_table_is_named_on_dask(
    backend: DaskBackend, tmp_path: Path, capsys: pytest.CaptureFixture, source: str,
    extra: tuple[str, ...],
) -> None:  # fmt: skip
    _write(_table(10).iloc[:0], tmp_path / source)
    assert main(_dask_synth(backend, tmp_path, source, *extra)) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / source} has no records (only a header): there is nothing to release" in err
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("source", ["x.csv", "x.parquet", "x.csv.gz"])
def test_an_extra_column_is_named_on_dask(
    backend: DaskBackend, tmp_path: Path, capsys: pytest.CaptureFixture, source: str
) -> None:
    table = _table(300)
    table.insert(1, "extra", 1)
    table["notes"] = "private free text"
    _write(table, tmp_path / source)
    assert main(_dask_synth(backend, tmp_path, source, "--partitions", "2")) == 0
    err = capsys.readouterr().err
    assert err.count(f"{tmp_path / source}: column(s) extra, notes are not in the domain: "
                     "dropped, not released") == 1  # fmt: skip
    assert list(pd.read_csv(tmp_path / "s.csv").columns) == list(DOMAIN.names)


def test_untouched_columns_charge_nothing_before_the_counts_pass(
    backend: DaskBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an attribute no query touches, the default release on partitioned data is
    adaptive-projection alone (it measures every 1-way marginal itself, after its counts
    pass; the columns pipeline does not wrap it): the local release, and a counts pass that
    fails (injected) leaves the ledger untouched."""
    table = _table(600, seed=5)
    workload = gen.marginal_cells(DOMAIN, [("color", "smoker"), ("age",)])  # "size" untouched
    expected = Auto(epsilon=1.0, seed=2).fit(encode(table, DOMAIN), workload)
    data = PartitionedData.from_frame(table, DOMAIN, backend, 3)
    answers = data.answers(workload)
    got = Auto(epsilon=1.0, seed=2).fit(data, workload, true_answers=answers)
    assert got.algorithm == "adaptive-projection"
    assert np.array_equal(got.records.rows, expected.records.rows)
    assert [e.charge for e in got.ledger.entries] == [e.charge for e in expected.ledger.entries]
    assert MECHANISM not in {e.charge.mechanism for e in got.ledger.entries}

    def fails(self: PartitionedData, counter: object) -> list[np.ndarray]:
        raise DPQueryError("injected: the counts pass failed")

    monkeypatch.setattr(PartitionedData, "count", fails)
    model = Auto(epsilon=1.0, seed=2)
    with pytest.raises(DPQueryError, match="injected"):
        model.fit(data, workload, true_answers=answers)
    ledger = model.ledger_  # add/remove: the noisy n alone, drawn before the counts pass
    assert ledger is not None and [e.charge.mechanism for e in ledger.entries] == [NOISY_N]
