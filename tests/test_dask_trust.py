"""What the Dask path shows the world: the same console and report on neighbouring datasets
(no count of partitions read from the data), and a local cluster reachable from this machine
only.

Neighbours here are built so that the only thing that could tell them apart is how the
data was cut: a user's file removed from a folder partitioned by user (one file fewer), and
one record rewritten with more digits in the same bin (more bytes, the same bits).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

import psutil  # a dependency of distributed

import dpquery.backends.partitions as partitions_module
from dpquery.backends import DaskBackend, connect, table_partitions
from dpquery.cli import main
from dpquery.data.domain import Binary, Categorical, Domain, Numeric

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 5),
        Categorical("size", (1, 2, 3, 4)),
    )
)
# A progress line (dpquery.progress): its timing and rate are the clock's, and how many
# lines appear depends on it too; they are the curator's, compared without them.
PROGRESS = re.compile(r"^.+: \d+(?:/\d+)? .+ \[[^\]]*/s\].*\n", re.MULTILINE)


@pytest.fixture(scope="module")
def backend() -> Iterator[DaskBackend]:
    with connect(workers=2) as b:
        yield b


def _published(
    args: list[str], out: Path, report: Path, capsys: pytest.CaptureFixture
) -> tuple[str, str, str]:
    """What one ``dpquery synth`` run shows: stdout, stderr (progress lines aside) and the
    report, with its output path written as OUT."""
    capsys.readouterr()
    assert main([*args, "--out", str(out), "--report", str(report)]) == 0
    shown = capsys.readouterr()
    return (
        shown.out.replace(str(out), "OUT"),
        PROGRESS.sub("", shown.err).replace(str(out), "OUT"),
        report.read_text().replace(str(out), "OUT"),
    )


def _users_in_files(folder: Path, n: int, d: int, without: int, empty_file: bool) -> Path:
    """Transactions partitioned by user, one file per user who has items; ``without``'s
    record is emptied: no file, or with ``empty_file`` a file of one comment line."""
    rng = np.random.default_rng(0)
    folder.mkdir()
    for user in range(n):
        items = rng.choice(d, size=rng.integers(1, 4), replace=False)
        lines = "".join(f"{user} {i}\n" for i in items) if user != without else "# none\n"
        if user != without or empty_file:
            (folder / f"u{user:02d}.txt").write_text(lines)
    return folder


def test_a_user_without_items_is_not_counted_in_the_output(
    backend: DaskBackend, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """40 users, one of them without items, as 40 files (that user's holds no pair) and as
    39 (no file for that user): the same records, and not a character of difference in what
    the run shows."""
    shown = []
    for name, empty_file in (("all", True), ("one_missing", False)):
        folder = _users_in_files(tmp_path / name, 40, 12, 7, empty_file)
        assert len(list(folder.iterdir())) == (40 if empty_file else 39)
        args = ["synth", "--data", str(folder), "--transactions", "--n", "40", "--items", "12",
                "--epsilon", "1", "--seed", "3", "--backend", "dask",
                "--scheduler", backend.address]  # fmt: skip
        out = tmp_path / f"{name}.transactions.csv"
        shown.append(_published(args, out, tmp_path / f"{name}.json", capsys))
    assert shown[0] == shown[1]
    assert "backend: dask, 2 partitions requested on 2 workers" in shown[0][0]


def _table(path: Path, first_age: str) -> None:
    rng = np.random.default_rng(1)
    rows = [
        f"{rng.choice(['red', 'green', 'blue'])},{rng.choice(['no', 'yes'])},"
        f"{rng.integers(0, 100)},{rng.integers(1, 5)}"
        for _ in range(200)
    ]
    rows[0] = f"red,no,{first_age},1"
    path.parent.mkdir()
    path.write_text("color,smoker,age,size\n" + "\n".join(rows) + "\n")


def test_a_table_at_a_block_boundary_is_not_measured_in_the_output(
    backend: DaskBackend,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CSV of exactly one block, and its neighbour whose first record's age has more digits
    (the same bin, so the same bits): one piece against two by default, and the same output."""
    short, long = tmp_path / "short" / "t.csv", tmp_path / "long" / "t.csv"
    _table(short, "42")
    _table(long, "42.000001")
    monkeypatch.setattr(partitions_module, "CSV_BLOCK_BYTES", short.stat().st_size)
    assert [len(table_partitions(p, DOMAIN)) for p in (short, long)] == [1, 2]
    DOMAIN.save(tmp_path / "domain.json")
    shown = []
    for path in (short, long):
        args = ["synth", "--data", str(path), "--domain", str(tmp_path / "domain.json"),
                "--epsilon", "1", "--k", "2", "--seed", "3", "--backend", "dask",
                "--scheduler", backend.address]  # fmt: skip
        out = path.parent / "s.csv"
        shown.append(_published(args, out, path.parent / "r.json", capsys))
    assert shown[0] == shown[1]
    assert "backend: dask, default partitions on 2 workers" in shown[0][0]


def _by_color(folder: Path, blue: str) -> None:
    """A table cut into one file per colour, with a column the domain does not hold: its
    one record of colour ``blue`` (no file for that colour when it is "red")."""
    rng = np.random.default_rng(2)
    rows = [(str(rng.choice(["red", "green"])), i) for i in range(60)] + [(blue, 60)]
    folder.mkdir()
    for color in dict.fromkeys(c for c, _ in rows):
        lines = [f"{c},no,{30 + i % 50},1,{i}" for c, i in rows if c == color]
        (folder / f"{color}.csv").write_text("color,smoker,age,size,id\n" + "\n".join(lines))


def test_a_folder_cut_by_value_is_not_counted_in_the_warnings(
    backend: DaskBackend, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """One record moved from the only file of its colour into another: 3 files against 2,
    and the column the domain does not hold is named once for the folder, not per file."""
    DOMAIN.save(tmp_path / "domain.json")
    shown = []
    for blue in ("blue", "red"):
        folder = tmp_path / blue
        _by_color(folder, blue)
        args = ["synth", "--data", str(folder), "--domain", str(tmp_path / "domain.json"),
                "--epsilon", "1", "--k", "2", "--seed", "3", "--backend", "dask",
                "--partitions", "2", "--scheduler", backend.address]  # fmt: skip
        out = tmp_path / f"{blue}.csv"
        published = _published(args, out, tmp_path / f"{blue}.json", capsys)
        shown.append(tuple(s.replace(str(folder), "DATA") for s in published))
    assert shown[0] == shown[1]
    assert shown[0][1].count("column(s) id are not in the domain") == 1


def _listening() -> set[tuple[int, str, int]]:
    """(pid, address, port) of every listening TCP socket of this process and its children."""
    me = psutil.Process()
    found = set()
    for process in [me, *me.children(recursive=True)]:
        try:
            sockets = process.net_connections(kind="inet")
        except psutil.Error:  # a child that has just ended
            continue
        found |= {(process.pid, s.laddr.ip, s.laddr.port) for s in sockets
                  if s.status == psutil.CONN_LISTEN}  # fmt: skip
    return found


def test_the_local_cluster_listens_on_loopback_only() -> None:
    """The scheduler, its dashboard (workers' memory, tasks, error text), the nannies and the
    worker processes: every socket the local cluster opens is on loopback."""
    before = _listening()
    with connect(workers=2) as started:
        opened = _listening() - before
        dashboard = int(started.client.dashboard_link.split(":")[2].split("/")[0])
    assert dashboard in {port for _, _, port in opened}
    assert {pid for pid, _, _ in opened} - {psutil.Process().pid}  # the workers' too
    exposed = {(ip, port) for _, ip, port in opened if not ipaddress.ip_address(ip).is_loopback}
    assert exposed == set()
