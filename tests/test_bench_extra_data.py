"""``benchmarks/extra_data.py``: a file of the extra data is read from a bare git snapshot at
its commit, transformed, and written only when its SHA-256 is the manifest's; a mismatch is
an error naming the file and both hashes and leaves nothing behind. No network: the snapshot
is a tiny repository made here."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from tests.conftest import load_benchmark

RAW = b'rownames,name,note\n1,a,"x, y"\n2,b,plain\n'
DROPPED = b'name,note\na,"x, y"\nb,plain\n'  # the first field of each line removed


@pytest.fixture()
def extra(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return load_benchmark("extra_data", monkeypatch)


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture()
def snapshot(tmp_path: Path) -> tuple[Path, str]:
    """A bare snapshot under a root of mirrors (``ROOT/me+tiny/repo``) holding
    ``data/t.csv``; its commit."""
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "t.csv").write_bytes(RAW)
    _git("init", "-q", str(work))
    _git("add", "data/t.csv", cwd=work)
    _git("commit", "-q", "-m", "t", cwd=work)
    gitdir = tmp_path / "mirrors" / "me+tiny" / "repo"
    _git("clone", "-q", "--bare", str(work), str(gitdir))
    return gitdir, _git("rev-parse", "HEAD", cwd=work)


def _entry(extra, commit: str, sha256: str, path: str = "data/t.csv"):  # type: ignore[no-untyped-def]
    return extra.Entry("f", "t.csv", "me/tiny", commit, path, "drop-first-field-per-line", sha256)


def test_a_file_is_written_from_the_snapshot_with_its_hash(extra, snapshot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gitdir, commit = snapshot
    expected = hashlib.sha256(DROPPED).hexdigest()
    out = tmp_path / "out"
    failed = extra.rebuild([_entry(extra, commit, expected)], out, {}, [tmp_path / "mirrors"], None)
    assert failed == {}
    assert (out / "f" / "t.csv").read_bytes() == DROPPED
    assert (out / "READY-f").is_file()
    # --mirror OWNER/NAME=GITDIR names the same snapshot; a file present with its hash is kept
    assert extra.restore(_entry(extra, commit, expected), out, gitdir, None) == "present"


def test_a_wrong_hash_is_a_clear_error_and_leaves_no_file(extra, snapshot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gitdir, commit = snapshot
    wrong, got = "0" * 64, hashlib.sha256(DROPPED).hexdigest()
    out = tmp_path / "out"
    with pytest.raises(extra.ExtraDataError) as err:
        extra.restore(_entry(extra, commit, wrong), out, gitdir, None)
    assert str(out / "f" / "t.csv") in str(err.value)
    assert wrong in str(err.value) and got in str(err.value)
    assert list((out / "f").iterdir()) == []  # neither the file nor its temporary
    failed = extra.rebuild([_entry(extra, commit, wrong)], out, {"me/tiny": gitdir}, [], None)
    assert list(failed) == ["f/t.csv"] and got in failed["f/t.csv"]
    assert not (out / "READY-f").exists()


def test_an_absent_blob_or_snapshot_is_named(extra, snapshot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    gitdir, commit = snapshot
    entry = _entry(extra, commit, "0" * 64, path="data/absent.csv")
    with pytest.raises(extra.ExtraDataError, match="absent from the snapshot"):
        extra.read_source(entry, gitdir)
    with pytest.raises(extra.ExtraDataError, match="fetch github:me/tiny"):
        extra.read_source(entry, None)
    with pytest.raises(extra.ExtraDataError, match="does not hold commit"):
        extra.read_source(_entry(extra, "1" * 40, "0" * 64), gitdir)


def test_the_two_ways_of_dropping_rownames(extra) -> None:  # type: ignore[no-untyped-def]
    # sed's way cuts each line; the csv module's keeps a quoted field with a line break whole
    quoted = b'rownames,a,b\n1,"p\nq",2\n'
    assert extra.drop_first_field_per_line(RAW) == DROPPED
    assert extra.drop_first_column_csv(RAW) == DROPPED
    assert extra.drop_first_field_per_line(quoted) == b'a,b\n"p\n2\n'
    assert extra.drop_first_column_csv(quoted) == b'a,b\n"p\nq",2\n'


def test_the_manifest_is_complete_and_well_formed(extra, capsys) -> None:  # type: ignore[no-untyped-def]
    entries = extra.manifest()
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.folder] = counts.get(e.folder, 0) + 1
        assert len(e.sha256) == 64 and int(e.sha256, 16) >= 0
        assert e.transform in extra.TRANSFORMS or e.transform in extra.RDA
    assert len({(e.folder, e.name) for e in entries}) == len(entries)
    assert list(counts) == list(extra.FOLDERS)  # every folder, in the order written
    assert (counts["seaborn"], counts["corpus"], counts["corpus2"], counts["plotly"]) == (
        22, 22, 18, 40,
    )  # fmt: skip
    assert extra.main(["--list", "--only", "heldout13"]) == 0
    assert capsys.readouterr().out.startswith("github:fivethirtyeight/data @ fcf572c4")
    with pytest.raises(SystemExit):
        extra.main(["--only", "nowhere"])
    assert "unknown folder" in capsys.readouterr().err
