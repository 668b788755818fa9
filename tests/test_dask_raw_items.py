"""A raw ``user,item`` table on the Dask backend: its lines read in blocks on the workers,
grouped by user there, and the release of the local reader's records, byte for byte, with a
catalogue and with the item universe learned; the local path's errors.

One 2-worker ``LocalCluster`` (processes, on loopback) serves the whole module; the blocks
are made small (``BLOCK_BYTES``) so that most users' lines lie in several blocks.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

import dpquery.data.raw_items as raw_items
from dpquery.backends import DaskBackend
from dpquery.backends.partitions import HeldPart
from dpquery.backends.raw import read_on_cluster
from dpquery.cli import main
from dpquery.data.raw_items import raw_blocks, raw_layout, read_raw_lines
from dpquery.errors import DPQueryError

BLOCK = 2048  # bytes: a 60 KB table in about 30 blocks


def _cluster() -> Iterator[DaskBackend]:
    """A local cluster of 2 worker processes, each under a nanny."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    )  # fmt: skip
    with DaskBackend(distributed.Client(cluster), True, 1, cluster) as b:
        yield b


@pytest.fixture(scope="module")
def backend() -> Iterator[DaskBackend]:
    yield from _cluster()


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(raw_items, "BLOCK_BYTES", BLOCK)


def _ratings(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A ratings table of ``n`` users (1-30 lines each, a head of 8 common movies and a tail
    of 60), its lines shuffled so that a user's lines lie far apart; a few repeated lines,
    a few with no user id and a few of a movie no catalogue lists."""
    rng = np.random.default_rng(seed)
    p = np.r_[np.full(8, 8.0), np.ones(60)]
    rows = []
    for u in range(n):
        for m in rng.choice(68, size=rng.integers(1, 31), p=p / p.sum()):
            rows.append((f"u{u:04d}", f"m{m}", int(rng.integers(1, 6))))
    rows += [("", "m1", 3), ("", "m2", 4), ("u0001", "zz", 5), (" u0002 ", " m3 ", 1)]
    rows += rows[:5]  # repeated lines count once
    table = pd.DataFrame(rows, columns=["userId", "movieId", "rating"])
    return table.sample(frac=1, random_state=seed).reset_index(drop=True)


@pytest.fixture
def table(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / "ratings.csv"
    _ratings().to_csv(path, index=False)
    listed = tmp_path / "movies.txt"
    listed.write_text("\n".join(f"m{m}" for m in range(64)) + "\n")  # m64..m67 unlisted
    return path, listed


def _records(rows: np.ndarray, cols: np.ndarray, ids: list[str]) -> list[tuple[str, ...]]:
    """Records as sorted tuples of item ids, the list sorted: a table's records whatever
    their order."""
    out: dict[int, set[str]] = {}
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        out.setdefault(r, set())
        if c >= 0:
            out[r].add(ids[c])
    return sorted(tuple(sorted(v)) for v in out.values())


def _sets(matrix: Any, ids: list[str]) -> list[tuple[str, ...]]:
    """The records of a sparse matrix as sorted tuples of their item ids."""
    m = matrix.tocoo()
    return [tuple(sorted(ids[c] for c in m.col[m.row == r])) for r in range(m.shape[0])]


def _records(lines: Any, ids: list[str]) -> list[tuple[str, ...]]:
    """The records held in the buckets on the cluster, sorted (the buckets' order is the
    hash's)."""
    return sorted(r for f in lines.buckets for r in _sets(f.result().matrix, ids))


def _records_local(items: Any, ids: list[str]) -> list[tuple[str, ...]]:
    return sorted(_sets(items.matrix, ids))


def test_users_split_over_blocks_are_one_record_each(
    backend: DaskBackend, table: tuple[Path, Path]
) -> None:
    """About 30 blocks, 5 buckets: the records held on the cluster are the local reader's
    (the same multiset of item sets, users without a listed item kept as empty records),
    and the lines and dropped lines are counted as the local reader counts them."""
    path, _ = table
    ids = [f"m{m}" for m in range(64)]
    header, sep, skip = raw_layout(path)
    blocks = raw_blocks(path, header, sep, skip, "userId", "movieId")
    assert len(blocks) > 20
    lines = read_on_cluster(blocks, backend, catalogue=ids, buckets=5, source=str(path),
                            requested=None)  # fmt: skip
    local = read_raw_lines(path)
    items, dropped = local.over(ids)
    assert lines.n == local.n == items.n
    assert lines.lines == local.lines and lines.dropped == dropped
    assert _records(lines, ids) == _records_local(items, ids)


@pytest.mark.parametrize("bound", [1, 3, 50])
def test_the_cut_counts_on_the_cluster_are_the_local_ones(
    backend: DaskBackend, table: tuple[Path, Path], bound: int
) -> None:
    """The selection's counts (each user's distinct items cut to ``s`` by the keyed hash of
    the pair's texts) are the same summed over 4 buckets as in one process, for the same
    key; another key gives other counts (the cut depends on it)."""
    path, _ = table
    header, sep, skip = raw_layout(path)
    blocks = raw_blocks(path, header, sep, skip, "userId", "movieId")
    lines = read_on_cluster(blocks, backend, catalogue=None, buckets=4, source=str(path),
                            requested=None)  # fmt: skip
    local = read_raw_lines(path)
    key = "0123456789abcdef"
    assert lines.cut_counts(bound, key) == local.cut_counts(bound, key)
    if bound == 3:
        assert local.cut_counts(bound, "fedcba9876543210") != local.cut_counts(bound, key)


def _release(args: list[str], out: Path, dask: list[str] | None = None) -> dict:
    report = out.with_suffix(".json")
    assert main([*args, "--out", str(out), "--report", str(report), *(dask or [])]) == 0
    return json.loads(report.read_text())


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("learn", [False, True])
def test_the_release_on_the_cluster_is_the_local_release(
    backend: DaskBackend, table: tuple[Path, Path], tmp_path: Path, learn: bool, relation: str
) -> None:
    """``dpquery synth --backend dask`` on the raw table, with the catalogue and with the
    universe learned, under both relations: the bytes of the local release (and the same
    learned ids), and the same report (the ledger's charges in the same order) apart from
    the backend section, the timings and auto's reason."""
    path, listed = table
    universe = (
        ["--learn-items", "--learn-items-bound", "4"] if learn else ["--item-list", str(listed)]
    )
    common = ["synth", "--data", str(path), *universe, "--epsilon", "4", "--seed", "3",
              "--neighbours", relation, "--head", "4", "--pool", "2000", "--quiet"]  # fmt: skip
    local, dask = tmp_path / "l.transactions.csv", tmp_path / "d.transactions.csv"
    a = _release(common, local)
    b = _release(common, dask, ["--backend", "dask", "--scheduler", backend.address,
                                "--partitions", "3"])  # fmt: skip
    assert dask.read_bytes() == local.read_bytes()
    if learn:
        ids = (tmp_path / "l.items.txt").read_text()
        assert (tmp_path / "d.items.txt").read_text() == ids and ids.strip()
        assert a["release"]["universe"] == b["release"]["universe"]
    assert b["backend"]["partitions"] == 3
    assert "computed on the cluster" in b["release"]["parameters"]["auto"]["reason"]
    for r in (a, b):
        r.pop("backend")
        r["release"].pop("timings")
        r["release"]["parameters"].pop("auto")
    assert a == b


def test_a_gzipped_table_is_read_whole_on_the_cluster(
    backend: DaskBackend, table: tuple[Path, Path], tmp_path: Path
) -> None:
    path, listed = table
    gz = tmp_path / "ratings.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    header, sep, skip = raw_layout(gz)
    assert len(raw_blocks(gz, header, sep, skip, "userId", "movieId")) == 1
    common = ["synth", "--item-list", str(listed), "--epsilon", "1", "--seed", "1", "--quiet"]
    local, dask = tmp_path / "l.transactions.csv", tmp_path / "d.transactions.csv"
    assert main([*common, "--data", str(path), "--out", str(local)]) == 0
    assert main([*common, "--data", str(gz), "--out", str(dask), "--backend", "dask",
                 "--scheduler", backend.address]) == 0  # fmt: skip
    assert dask.read_bytes() == local.read_bytes()


def _bad_inputs(tmp_path: Path, table: tuple[Path, Path]) -> dict[str, tuple[list[str], str]]:
    path, listed = table
    twice = tmp_path / "twice.txt"
    twice.write_text("m1\nm2\nm1\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header_only = tmp_path / "header.csv"
    header_only.write_text("userId,movieId,rating\n")
    return {
        "column": (["--data", str(path), "--item-list", str(listed), "--item-column", "film"],
                   "no item column 'film'"),
        "repeated id": (["--data", str(path), "--item-list", str(twice)],
                        "names item 'm1' twice"),
        "empty file": (["--data", str(empty), "--item-list", str(listed)], "is empty"),
        "header only": (["--data", str(header_only), "--item-list", str(listed)],
                        "has no records (only a header)"),
        "learned, header only": (["--data", str(header_only), "--learn-items"],
                                 "has no records (only a header)"),
    }  # fmt: skip


@pytest.mark.parametrize(
    "case", ["column", "repeated id", "empty file", "header only", "learned, header only"]
)
def test_bad_input_gives_the_local_error(
    backend: DaskBackend, table: tuple[Path, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture, case: str,
) -> None:  # fmt: skip
    """Each bad input: the local run's one-line error, the same on the cluster, a non-zero
    exit and no output file."""
    flags, message = _bad_inputs(tmp_path, table)[case]
    errors = []
    for extra in ([], ["--backend", "dask", "--scheduler", backend.address]):
        out = tmp_path / "s.transactions.csv"
        assert main(["synth", *flags, "--epsilon", "1", "--out", str(out), *extra]) == 2
        assert not out.exists() and not (tmp_path / "s.items.txt").exists()
        err = capsys.readouterr().err
        assert message in err
        errors.append(err)
    assert errors[0] == errors[1]


def _own_file(path: Path, m: int) -> None:
    """A release's own file of ``m`` records over the 64 listed movies: users ``0..m-1``,
    a third of them without a line, some written ``07`` (record 7, as the local reader
    numbers it), a line of an unlisted movie and one without a user; lines shuffled."""
    rng = np.random.default_rng(m)
    lines = []
    for u in range(m):
        if u % 3 == 0:
            continue  # an empty record
        user = f"0{u}" if u % 7 == 0 else str(u)
        lines += [f"{user},m{j}" for j in rng.choice(64, size=rng.integers(1, 6), replace=False)]
    lines += ["5,zz", ",m1"]
    rng.shuffle(lines)
    path.write_text(f"# rows {m} items 64\nuser,item\n" + "\n".join(lines) + "\n")


def test_a_releases_own_file_on_the_cluster_holds_its_m_records(
    backend: DaskBackend, tmp_path: Path
) -> None:
    """A release's own file (first line ``# rows M items D``) on the cluster: M records
    (users without a line are empty records, ``07`` and ``7`` one record), the local
    reader's, in blocks of a few lines; with the ids' texts kept, the same cut counts."""
    own = tmp_path / "own.transactions.csv"
    _own_file(own, 300)
    ids = [f"m{m}" for m in range(64)]
    header, sep, skip = raw_layout(own)
    blocks = raw_blocks(own, header, sep, skip, "user", "item", 256)
    assert skip == 1 and len(blocks) > 5
    lines = read_on_cluster(blocks, backend, catalogue=ids, buckets=3, source=str(own),
                            requested=None, numbered=300)  # fmt: skip
    local = read_raw_lines(own, items_expected=64)
    items, dropped = local.over(ids)
    assert lines.n == local.n == items.n == 300
    assert lines.lines == local.lines and lines.dropped == dropped == 2
    assert _records(lines, ids) == _records_local(items, ids)
    learned = read_on_cluster(blocks, backend, catalogue=None, buckets=3, source=str(own),
                              requested=None, numbered=300)  # fmt: skip
    assert learned.n == 300
    assert learned.cut_counts(2, "0123456789abcdef") == local.cut_counts(2, "0123456789abcdef")


@pytest.mark.parametrize("learn", [False, True])
def test_a_releases_own_file_is_released_on_the_cluster_as_locally(
    backend: DaskBackend, table: tuple[Path, Path], tmp_path: Path, learn: bool
) -> None:
    """A release's own file released again with ``--backend dask``: the local bytes."""
    _, listed = table
    own = tmp_path / "own.transactions.csv"
    _own_file(own, 3000 if learn else 400)
    universe = (
        ["--learn-items", "--learn-items-bound", "4"] if learn else ["--item-list", str(listed)]
    )
    common = ["synth", "--data", str(own), *universe, "--epsilon", "4", "--seed", "3",
              "--head", "4", "--pool", "2000", "--quiet"]  # fmt: skip
    local, dask = tmp_path / "l.transactions.csv", tmp_path / "d.transactions.csv"
    _release(common, local)
    _release(common, dask, ["--backend", "dask", "--scheduler", backend.address])
    assert dask.read_bytes() == local.read_bytes()
    assert local.read_text().startswith("# rows ")


@pytest.mark.parametrize(
    ("first", "line", "message"),
    [("# rows 3 items 64", "7,m1", "its first line says 3 records (users 0..2); user '7' is "
      "not one"),
     ("# rows 3 items 60", "1,m1", "its first line says 60 items, the item list holds 64")],
)  # fmt: skip
def test_a_releases_own_file_gives_the_local_errors_on_the_cluster(
    backend: DaskBackend, table: tuple[Path, Path], tmp_path: Path,
    capsys: pytest.CaptureFixture, first: str, line: str, message: str,
) -> None:  # fmt: skip
    _, listed = table
    own = tmp_path / "own.transactions.csv"
    own.write_text(f"{first}\nuser,item\n0,m1\n{line}\n")
    errors = []
    for extra in ([], ["--backend", "dask", "--scheduler", backend.address]):
        out = tmp_path / "s.transactions.csv"
        args = ["synth", "--data", str(own), "--item-list", str(listed), "--epsilon", "1"]
        assert main([*args, "--out", str(out), *extra]) == 2
        assert not out.exists()
        err = capsys.readouterr().err
        assert message in err
        errors.append(err)
    assert errors[0] == errors[1]


def test_a_block_that_cannot_be_read_is_an_error(backend: DaskBackend, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("userId,movieId\n" + "u1,m1\n" * 2000 + 'u2,"m2\n')  # an open quote
    header, sep, skip = raw_layout(path)
    blocks = raw_blocks(path, header, sep, skip, "userId", "movieId")
    with pytest.raises(DPQueryError, match="cannot read bytes"):
        read_on_cluster(blocks, backend, catalogue=["m1"], buckets=2, source=str(path),
                        requested=None)  # fmt: skip


def test_integer_and_text_user_ids_meet_in_one_record(backend: DaskBackend, tmp_path: Path) -> None:
    """Blocks of integer ids only (held as int64) and blocks with text ids (``007``, ``x``:
    held as text) route and merge a user by its text: ``7`` in both kinds of block is one
    record, ``007`` another; the records are the local reader's."""
    rng = np.random.default_rng(5)
    ints = [(str(u), f"m{rng.integers(20)}") for u in rng.integers(0, 300, 3000)]
    mixed = [(rng.choice(["7", "007", "x", "70", str(rng.integers(300))]), f"m{rng.integers(20)}")
             for _ in range(3000)]  # fmt: skip
    path = tmp_path / "mixed.csv"
    pd.DataFrame(ints + mixed, columns=["user", "item"]).to_csv(path, index=False)
    ids = [f"m{m}" for m in range(20)]
    header, sep, skip = raw_layout(path)
    blocks = raw_blocks(path, header, sep, skip, "user", "item")
    lines = read_on_cluster(blocks, backend, catalogue=ids, buckets=3, source=str(path),
                            requested=None)  # fmt: skip
    items, _ = read_raw_lines(path).over(ids)
    assert lines.n == items.n
    assert _records(lines, ids) == _records_local(items, ids)
    learned = read_on_cluster(blocks, backend, catalogue=None, buckets=3, source=str(path),
                              requested=None)  # fmt: skip
    key = "00112233445566ff"
    assert learned.cut_counts(2, key) == read_raw_lines(path).cut_counts(2, key)


# -- a worker lost after the read: its buckets are made again from the file -----------------
@pytest.fixture
def healing() -> Iterator[DaskBackend]:
    """A 2-worker cluster of its own for each test that kills a worker (each worker under a
    nanny, which starts another in its place, in its own time: on a loaded machine more than
    a minute, so no test waits for it or shares a cluster a kill left short)."""
    yield from _cluster()


def _bits(part: Any) -> tuple[Any, ...]:
    """A held partition's records as they are stored: the CSR arrays with their dtypes."""
    m = part.matrix
    return (m.shape, m.indptr.dtype, m.indices.dtype, m.data.dtype, m.indptr.tobytes(),
            m.indices.tobytes(), m.data.tobytes())  # fmt: skip


@pytest.mark.parametrize("form", ["catalogue", "learned", "own file"])
def test_a_bucket_made_again_is_the_same_records_bit_for_bit(
    healing: DaskBackend, table: tuple[Path, Path], tmp_path: Path, form: str
) -> None:
    """The recipe makes every bucket again (the silent users' bucket of a release's own file
    too; after a learned universe, over the released ids): the same CSR arrays, bit for
    bit, as the read made them."""
    path, _ = table
    ids = [f"m{m}" for m in range(64)]
    numbered = None
    if form == "own file":
        path, numbered = tmp_path / "own.transactions.csv", 300
        _own_file(path, numbered)
    header, sep, skip = raw_layout(path)
    user, item = header[0], header[1]
    blocks = raw_blocks(path, header, sep, skip, user, item)
    lines = read_on_cluster(blocks, healing, catalogue=None if form == "learned" else ids,
                            buckets=3, source=str(path), requested=None,
                            numbered=numbered)  # fmt: skip
    data = lines.over(ids[::-1][:40]) if form == "learned" else lines.data()
    assert len(data.partitions) == (4 if form == "own file" else 3)
    before = [_bits(p.future.result()) for p in data.partitions]  # type: ignore[attr-defined]
    again = lines.recipe.remake(healing, list(range(len(data.partitions))))
    assert [_bits(f.result()) for f in again] == before


class _LostWorker:
    """Kills (SIGKILL) a worker holding some of a raw table's buckets once, right after the
    release's first pass over them, when that pass's counts have been charged and drawn on:
    a machine failing between passes. ``edit`` changes the file first. Only the failure is
    injected: the release itself runs unchanged."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, edit: Any = None) -> None:
        from dpquery.backends.partitioned import PartitionedData

        self.edit, self.data = edit, None
        log = PartitionedData._log

        def logged(data: PartitionedData, record: dict, start: float) -> None:
            log(data, record, start)
            if self.data is None and any(isinstance(p, HeldPart) for p in data.partitions):
                self.data = data
                self.kill(data)

        monkeypatch.setattr(PartitionedData, "_log", logged)

    def kill(self, data: Any) -> None:
        client = data.backend.client
        held = [p.future for p in data.partitions]
        holders = list(client.who_has(held).values())
        # a worker holding some bucket alone (a bucket copied to both workers survives
        # either); both when every bucket is on both
        alone = sorted({ws[0] for ws in holders if len(ws) == 1})
        workers = alone[:1] or sorted({w for ws in holders for w in ws})
        pids = client.run(os.getpid, workers=workers)
        if self.edit is not None:
            self.edit()
        for pid in pids.values():
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while all(f.status == "finished" for f in held):  # the scheduler hears of the loss
            assert time.monotonic() < deadline, "no bucket was lost"
            time.sleep(0.05)
        client.wait_for_workers(1, timeout=120)  # a survivor, or a nanny's new worker


def _universe(learn: bool, listed: Path) -> list[str]:
    return ["--learn-items", "--learn-items-bound", "4"] if learn else ["--item-list", str(listed)]


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
@pytest.mark.parametrize("learn", [False, True])
def test_a_worker_lost_between_passes_changes_no_byte(
    healing: DaskBackend, table: tuple[Path, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, learn: bool, relation: str,
) -> None:  # fmt: skip
    """A worker holding buckets killed after the first pass: its buckets are made again
    from the file and the release goes on. The output, the learned ids and the report (the
    ledger's charges in order, the passes) are those of the undisturbed run with the same
    seed, byte for byte, under both relations, with a catalogue and with the universe
    learned."""
    path, listed = table
    common = ["synth", "--data", str(path), *_universe(learn, listed), "--epsilon", "4",
              "--seed", "3", "--neighbours", relation, "--head", "4", "--pool", "2000",
              "--quiet", "--backend", "dask", "--scheduler", healing.address]  # fmt: skip
    calm, hurt = tmp_path / "c.transactions.csv", tmp_path / "h.transactions.csv"
    a = _release(common, calm)
    lost = _LostWorker(monkeypatch)
    b = _release(common, hurt)
    assert lost.data is not None and lost.data.remade >= 1  # a bucket was made again
    assert hurt.read_bytes() == calm.read_bytes()
    if learn:
        assert (tmp_path / "h.items.txt").read_bytes() == (tmp_path / "c.items.txt").read_bytes()
    for r in (a, b):
        r["release"].pop("timings")
        # the workers connected when the report was written: the cluster's state (the
        # killed worker's replacement may still be starting), not the release's
        assert r["backend"].pop("workers") in (1, 2)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _appended(path: Path) -> None:
    with path.open("a") as f:
        f.write("u9999,m1,5\n")


def _same_size_and_time(path: Path) -> None:
    """One movie id changed for another of the same length, the file's modification time
    put back: only the blocks' fingerprints tell."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    at = data.index(b",m1,")
    data[at + 2 : at + 3] = b"2"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns


@pytest.mark.parametrize(
    ("edit", "why"),
    [(_appended, "bytes when read"), (_same_size_and_time, "are not those read")],
)  # fmt: skip
def test_a_file_changed_before_the_rebuild_is_refused(
    healing: DaskBackend, table: tuple[Path, Path], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, edit: Any, why: str,
) -> None:  # fmt: skip
    """The file changed, then a worker lost: the buckets cannot be made as they were, so
    the release stops with the one-line error (exit 2, no output file), by the client's
    stamp (size, modification time) or by a block's fingerprint on the workers."""
    path, listed = table
    _LostWorker(monkeypatch, lambda: edit(path))
    out = tmp_path / "s.transactions.csv"
    args = ["synth", "--data", str(path), "--item-list", str(listed), "--epsilon", "4",
            "--seed", "3", "--head", "4", "--pool", "2000", "--quiet", "--out", str(out),
            "--backend", "dask", "--scheduler", healing.address]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path} changed since it was read" in err and why in err
    assert "charged so far is spent" in err
    assert not out.exists()


def test_buckets_lost_again_and_again_fail_after_max_resends(
    healing: DaskBackend, table: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Buckets lost every time they are made (injected: each remake's futures cancelled at
    once) are made again ``MAX_RESENDS`` times in a pass, then the pass fails with the
    resends' message."""
    from dpquery.algorithms.wide.counts import AllItemCounts
    from dpquery.backends import partitioned
    from dpquery.backends.raw import BucketRecipe

    path, _ = table
    ids = [f"m{m}" for m in range(64)]
    header, sep, skip = raw_layout(path)
    blocks = raw_blocks(path, header, sep, skip, "userId", "movieId")
    lines = read_on_cluster(blocks, healing, catalogue=ids, buckets=2, source=str(path),
                            requested=None)  # fmt: skip
    data = lines.data()
    remake = BucketRecipe.remake

    def lost_again(recipe: BucketRecipe, backend: Any, buckets: list[int]) -> list[Any]:
        made = remake(recipe, backend, buckets)
        healing.client.cancel(made)
        return made

    monkeypatch.setattr(BucketRecipe, "remake", lost_again)
    healing.client.cancel([lines.buckets[0]])
    with pytest.raises(DPQueryError, match=f"lost with its worker {partitioned.MAX_RESENDS} "
                       "times; is the cluster failing"):  # fmt: skip
        data.count(AllItemCounts(64))
    assert data.remade == partitioned.MAX_RESENDS


@pytest.mark.parametrize(
    ("status", "error", "lost"),
    [("cancelled", None, True), ("error", "killed", True), ("error", "cancelled", True),
     ("error", "own", False), ("finished", None, False)],
)  # fmt: skip
def test_what_a_task_reports_as_lost(status: str, error: str | None, lost: bool) -> None:
    """A task whose input went with a worker reports it as cancelled, or fails with
    ``KilledWorker`` or ``FutureCancelledError``: those are made again; the task's own
    error is raised, and a finished task is taken."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    from dpquery.backends.partitioned import _lost

    exceptions = {"killed": KilledWorker("task", None, 3), "cancelled": CancelledError(),
                  "own": DPQueryError("cannot read bytes")}  # fmt: skip

    class Task:
        def __init__(self) -> None:
            self.status = status

        def exception(self) -> BaseException | None:
            return None if error is None else exceptions[error]

    assert _lost(Task()) is lost
