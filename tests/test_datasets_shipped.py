"""Adult ships with the package: found with no data folder, listed as available; a failed
fetch leaves nothing behind."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import urllib.request

import pytest

from cli_process import dpquery_cli, dpquery_process
from dpquery import datasets
from dpquery.datasets import DataFile
from dpquery.errors import DPQueryError

SHIPPED = ("adult", "adult-pgm")


@pytest.fixture
def fresh_machine(tmp_path, monkeypatch):
    """No $DPQUERY_DATA_DIR and an empty home: only the shipped files can be found."""
    monkeypatch.delenv("DPQUERY_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return {"DPQUERY_DATA_DIR": None, "HOME": str(tmp_path / "home")}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_files_are_the_official_ones(name):
    for f in datasets.info(name).files:
        shipped = datasets.SHIPPED_DIR / f.path
        content = shipped.read_bytes()
        if f.path.endswith(".gz") and not (f.url or "").endswith(".gz"):
            content = gzip.decompress(content)
        assert hashlib.sha256(content).hexdigest() == f.sha256
    license_note = (datasets.SHIPPED_DIR / "adult" / "README.md").read_text()
    assert "CC BY 4.0" in license_note and "Becker" in license_note


def test_shipped_adult_loads_without_a_data_folder(fresh_machine):
    assert datasets.source_of("adult") == "shipped"
    assert datasets.load("adult").n == 30_162
    assert datasets.load("adult-pgm").n == 48_842
    assert datasets.domain("adult-pgm").d == 588
    assert datasets.source_of("kdd99") is None


def test_data_dir_takes_precedence_over_shipped(tmp_path, fresh_machine, monkeypatch):
    (tmp_path / "env" / "adult").mkdir(parents=True)
    src = datasets.SHIPPED_DIR / "adult" / "adult.data.gz"
    (tmp_path / "env" / "adult" / "adult.data.gz").write_bytes(src.read_bytes())
    monkeypatch.setenv("DPQUERY_DATA_DIR", str(tmp_path / "env"))
    assert datasets.source_of("adult") == "$DPQUERY_DATA_DIR"
    assert datasets.source_of("adult-pgm") == "shipped"
    # cps stays missing: nothing is shipped for it
    assert datasets.source_of("cps") is None


def test_datasets_list_on_a_fresh_machine(fresh_machine):
    result = dpquery_cli("datasets", "list", env=fresh_machine)
    assert result.code == 0, result.err
    rows = {line.split()[0]: line for line in result.out.splitlines()}
    for name in SHIPPED:
        assert "available (shipped)" in rows[name]
    for name in set(datasets.DATASETS) - set(SHIPPED):
        assert "missing" in rows[name]


def _failing_download(url, path):
    path.write_bytes(b"half a file")  # a partial download, then the network goes away
    raise urllib.error.URLError("unreachable")


def test_fetch_offline_leaves_no_folder_and_no_partial_file(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "_download", _failing_download)
    dest = tmp_path / "cache" / "dpquery"
    with pytest.raises(DPQueryError, match=r"cannot download .*unreachable"):
        datasets.fetch("kdd99", dest=dest)
    assert list(tmp_path.iterdir()) == []  # not even the cache folder


def test_fetch_is_all_or_nothing(tmp_path, monkeypatch):
    """The second file fails: the first, already downloaded, is removed too; files present
    before the call are kept."""
    good = tmp_path / "server" / "adult.csv"
    good.parent.mkdir()
    good.write_bytes(b"a,b\n1,2\n")
    files = (
        DataFile("adult/one.csv", good.as_uri(), hashlib.sha256(good.read_bytes()).hexdigest()),
        DataFile("other/two.csv", "http://unreachable.invalid/two.csv", "0" * 64),
    )
    info = dataclasses.replace(datasets.info("adult-pgm"), files=files)
    monkeypatch.setitem(datasets.DATASETS, "adult-pgm", info)
    real = datasets._download

    def download(url, path):
        if "unreachable" in url:
            _failing_download(url, path)
        real(url, path)

    monkeypatch.setattr(datasets, "_download", download)
    dest = tmp_path / "dest"
    (dest / "adult").mkdir(parents=True)
    (dest / "adult" / "kept.txt").write_text("mine")
    with pytest.raises(DPQueryError, match="cannot download"):
        datasets.fetch("adult-pgm", dest=dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "adult",
        "adult/kept.txt",
    ]


def test_fetch_offline_from_the_cli(tmp_path, fresh_machine):
    """The real command, with an unreachable URL: one error line, nothing written. In a
    subprocess: urllib keeps the opener (and the proxies it read) of a process's first
    download."""
    home = tmp_path / "home"
    result = dpquery_process(
        "datasets", "fetch", "kdd99", env={**fresh_machine, "http_proxy": "http://127.0.0.1:9"}
    )
    assert result.code != 0
    assert result.err.startswith("dpquery: error: cannot download")
    assert not (home / ".cache").exists()
