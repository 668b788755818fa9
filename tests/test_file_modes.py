"""Every file dpquery writes gets the mode the user's umask gives a new file (0644 under
umask 022, 0600 under 077), like ``open(path, "w")``: its atomic writes go through a private
temporary file, which must not pass its 0600 on to the published output."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery import datasets
from dpquery.cli import main
from dpquery.data import Binary, Categorical, Domain, Numeric, encode, save_binary
from dpquery.datasets import DataFile
from dpquery.io import atomic_write_text, current_umask
from dpquery.queries import all_kway_marginals

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 5, integer=True),
    )
)


@pytest.fixture(params=[0o022, 0o077], ids=["umask022", "umask077"])
def umask(request) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def check_modes(folder: Path, names: list[str], umask: int) -> None:
    expected = 0o666 & ~umask
    modes = {name: oct(mode(folder / name)) for name in names}
    assert modes == dict.fromkeys(names, oct(expected))


def test_current_umask_reads_without_changing(umask) -> None:
    assert current_umask() == umask
    assert current_umask() == umask


@pytest.fixture
def table(tmp_path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "smoker": rng.choice(["no", "yes"], n),
            "age": rng.integers(0, 100, n),
        }
    )
    frame.to_csv(tmp_path / "data.csv", index=False)
    return frame


def test_library_writers_honour_the_umask(tmp_path, table, umask) -> None:
    DOMAIN.save(tmp_path / "domain.json")
    save_binary(tmp_path / "data.npz", encode(table, DOMAIN))
    all_kway_marginals(DOMAIN, 1).save(tmp_path / "W.npz")
    atomic_write_text(tmp_path / "note.txt", "x\n")
    check_modes(tmp_path, ["domain.json", "data.npz", "W.npz", "note.txt"], umask)


def test_cli_writers_honour_the_umask(tmp_path, table, umask) -> None:
    DOMAIN.save(tmp_path / "domain.json")
    data = ["--data", str(tmp_path / "data.csv"), "--domain", str(tmp_path / "domain.json")]
    synth = ["synth", *data, "--algorithm", "dualquery", "--workload", "marginals", "--k", "1",
             "--queries", "20", "--eta", "0.5", "--samples", "10", "--epsilon", "1",
             "--seed", "0", "--quiet"]  # fmt: skip
    out = tmp_path
    assert main([*synth, "--out", str(out / "s.csv"), "--report", str(out / "r.json")]) == 0
    assert main([*synth, "--out", str(out / "s.parquet")]) == 0
    assert main(["workload", "make", "--kind", "all-marginals", "--domain",
                 str(out / "domain.json"), "--k", "1", "-o", str(out / "W.npz")]) == 0  # fmt: skip
    assert main(["answer", str(out / "W.npz"), *data, "-o", str(out / "answers.csv")]) == 0
    encode = ["encode", str(out / "data.csv"), "--domain", str(out / "domain.json")]
    assert main([*encode, "-o", str(out / "data.npz"), "--save-domain", str(out / "d2.json")]) == 0
    written = ["s.csv", "r.json", "s.parquet", "W.npz", "answers.csv", "data.npz", "d2.json"]
    evaluate = ["evaluate", *data, "--synthetic", str(out / "s.csv"), "--workload",
                str(out / "W.npz"), "--report", str(out / "e.json")]  # fmt: skip
    pytest.importorskip("matplotlib")
    assert main([*evaluate, "--html", str(out / "page.html")]) == 0
    check_modes(out, [*written, "e.json", "page.html"], umask)


def test_fetched_dataset_files_honour_the_umask(tmp_path, monkeypatch, umask) -> None:
    content = b"income,age\n1,2\n"
    src = tmp_path / "server.csv"
    src.write_bytes(content)
    url, sha = src.as_uri(), hashlib.sha256(content).hexdigest()
    info = dataclasses.replace(datasets.info("cps"), files=(DataFile("cps/f.csv", url, sha),))
    monkeypatch.setitem(datasets.DATASETS, "cps", info)
    datasets.fetch("cps", dest=tmp_path / "dest")
    check_modes(tmp_path / "dest" / "cps", ["f.csv"], umask)
