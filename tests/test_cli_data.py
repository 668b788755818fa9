"""The data commands of the CLI: ``dpquery --version``, ``datasets list|info|fetch``,
``encode``. Run in-process through ``dpquery.cli.main`` (plus one real subprocess)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery import __version__, datasets
from dpquery.cli import main
from dpquery.data import Binary, Categorical, Domain, Numeric, encode, load_binary
from dpquery.datasets import DataFile
from dpquery.errors import NonPrivateWarning

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric("age", (0, 18, 65, 120), integer=True),
    )
)
TABLE = pd.DataFrame(
    {
        "color": ["red", "blue", "green", "red"],
        "smoker": ["no", "yes", "no", "no"],
        "age": [3, 40, 70, 18],
    }
)


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A table and its public domain in a fresh working folder."""
    monkeypatch.chdir(tmp_path)
    TABLE.to_csv(tmp_path / "people.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpquery: error: ")
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_version_in_a_real_process():
    exe = Path(sys.executable).with_name("dpquery")
    if not exe.exists():
        pytest.skip(f"the dpquery entry point is not installed next to {sys.executable}")
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dpquery {__version__}"


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["encode", "--help"], ["datasets", "--help"], ["datasets", "list", "--help"],
     ["datasets", "info", "--help"], ["datasets", "fetch", "--help"]],
)  # fmt: skip
def test_help_everywhere(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "usage: dpquery" in capsys.readouterr().out


def test_usage_errors_exit_2(capsys):
    for argv in (["encode"], ["datasets"], ["nope"], ["datasets", "info"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "usage:" in capsys.readouterr().err


# -- encode -------------------------------------------------------------------------------
def test_encode_prints_summary_and_writes_nothing(files, capsys):
    before = sorted(p.name for p in files.iterdir())
    code, out, err = run(capsys, "encode", "people.csv", "--domain", "domain.json")
    assert code == 0, err
    assert "n = 4" in out and "d = 7 bits" in out and "one-hot groups = 2" in out
    assert "color" in out and "NON-PRIVATE" not in out + err
    assert sorted(p.name for p in files.iterdir()) == before


def test_encode_writes_npz_on_request(files, capsys):
    code, _, err = run(capsys, "encode", "people.csv", "--domain", "domain.json", "-o", "p.npz")
    assert code == 0, err
    data = load_binary(files / "p.npz")
    assert np.array_equal(data.words, encode(TABLE, DOMAIN).words)
    assert data.domain == DOMAIN


def test_encode_pgm_domain(files, capsys):
    (files / "codes.csv").write_text("a,b\n0,2\n1,0\n")
    (files / "pgm.json").write_text('{"a": 2, "b": 3}')
    code, out, _ = run(capsys, "encode", "codes.csv", "--domain", "pgm.json", "-o", "c.npz")
    assert code == 0 and "d = 5 bits" in out
    assert load_binary(files / "c.npz").to_dense().tolist() == [[1, 0, 0, 0, 1], [0, 1, 1, 0, 0]]


@pytest.mark.parametrize(
    ("table", "domain", "fragments"),
    [
        ("color,smoker,age\npink,no,3\npink,no,4\n", None,
         ["column 'color'", "2 value(s)", "'pink'"]),
        ("color,smoker,age\nred,,3\n", None, ["column 'smoker'", "missing value"]),
        ("color,smoker,age\nred,no,121\n", None, ["column 'age'", "121", "clip"]),
        ("color,smoker,age\nred,no,old\n", None, ["column 'age'", "not numbers", "'old'"]),
        ("color,age\nred,3\n", None, ["no column(s) ['smoker']"]),
        (None, '{"attributes": [{"name": "a", "type": "ordinal"}]}', ["type must be"]),
        (None, '{"attributes": [{"name": "a", "type": "numeric", "edges": [0, 2, 1]}]}',
         ["edges must increase"]),
        (None, '{"attributes": [{"name": "a", "type": "binary", "colour": 1}]}',
         ["unknown keys ['colour']"]),
        (None, '{"attributes": [{"name": "a", "type": "categorical", "values": [1, 1]}]}',
         ["lists the value 1 twice"]),
        (None, "{oops", ["not valid JSON"]),
    ],
)  # fmt: skip
def test_encode_bad_inputs_fail_in_one_line_and_write_nothing(
    files, capsys, table, domain, fragments
):
    if table is not None:
        (files / "people.csv").write_text(table)
    if domain is not None:
        (files / "domain.json").write_text(domain)
    before = sorted(p.name for p in files.iterdir())
    code, _, err = run(
        capsys, "encode", "people.csv", "--domain", "domain.json", "-o", "out.npz",
        "--save-domain", "used.json",
    )  # fmt: skip
    assert_one_line_error(code, err, *fragments)
    assert not (files / "out.npz").exists() and not (files / "used.json").exists()
    assert sorted(p.name for p in files.iterdir()) == before


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["people.csv"], ["--domain DOMAIN.json", "--infer-domain"]),
        (["people.csv", "--domain", "absent.json"], ["absent.json", "does not exist"]),
        (["absent.csv", "--domain", "domain.json"], ["absent.csv", "does not exist"]),
        (["people.csv", "--domain", "domain.json", "--infer-domain"], ["not both"]),
        (["people.csv", "--domain", "domain.json", "-o", "no/such/dir/x.npz"], ["does not exist"]),
        (["people.csv", "--domain", "domain.json", "-o", "."], ["folder"]),
        (["people.csv", "--domain", "domain.json", "-o", "people.csv"], ["refusing to overwrite"]),
        (["people.csv", "--domain", "domain.json", "-o", "domain.json"], ["refusing to overwrite"]),
        (["people.csv", "--domain", "domain.json", "--save-domain", "people.csv"],
         ["refusing to overwrite"]),
        (["people.csv", "--infer-domain", "--save-domain", "./people.csv"],
         ["refusing to overwrite"]),
        (["people.csv", "--domain", "domain.json", "-o", "x.npz", "--save-domain", "x.npz"],
         ["both name"]),
        (["people.csv", "--transactions", "--n", "3"], ["--transactions needs --n"]),
    ],
)  # fmt: skip
def test_encode_argument_errors(files, capsys, args, fragments):
    before = {p.name: p.read_bytes() for p in files.iterdir()}
    code, _, err = run(capsys, "encode", *args)
    assert_one_line_error(code, err, *fragments)
    after = {p.name: p.read_bytes() for p in files.iterdir()}
    assert after == before  # nothing written, the inputs untouched


def test_encode_infer_domain_warns_on_stderr(files, capsys):
    (files / "raw.csv").write_text("code,city,v\n1,A,0.5\n2,,1.5\n,B,2.5\n3,A,\n")
    code, out, err = run(
        capsys, "encode", "raw.csv", "--infer-domain", "--save-domain", "inferred.json",
        "-o", "raw.npz",
    )  # fmt: skip
    assert code == 0, err
    assert "WARNING" in err and "NOT differentially private" in err
    assert "NON-PRIVATE" in out and "n = 4" in out
    with pytest.warns(NonPrivateWarning):
        inferred = Domain.load(files / "inferred.json")
    assert inferred.non_private
    assert load_binary(files / "raw.npz").domain == inferred
    # the saved (non-private) domain reads the same file again, and still warns
    code, out, err = run(capsys, "encode", "raw.csv", "--domain", "inferred.json")
    assert code == 0, err
    assert "n = 4" in out and "NON-PRIVATE" in out
    assert "WARNING" in err and "NOT differentially private" in err


def test_encode_transactions(files, capsys):
    (files / "tx.txt").write_text("# user item\n0 2\n2 0\n2 1\n")
    code, out, err = run(
        capsys, "encode", "tx.txt", "--transactions", "--n", "3", "--items", "4", "-o", "tx.npz"
    )
    assert code == 0, err
    assert "n = 3" in out and "d = 4 bits" in out and "one-hot groups = 0" in out
    dense = load_binary(files / "tx.npz").to_dense()
    assert dense.tolist() == [[0, 0, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0]]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("0 9\n", "item index(es) outside [0, 4)"), ("3 0\n", "row index(es) outside [0, 3)"),
     ("0 x\n", "integer 'row item' pairs")],
)  # fmt: skip
def test_encode_bad_transactions(files, capsys, text, fragment):
    (files / "tx.txt").write_text(text)
    code, _, err = run(
        capsys, "encode", "tx.txt", "--transactions", "--n", "3", "--items", "4", "-o", "tx.npz"
    )
    assert_one_line_error(code, err, fragment)
    assert not (files / "tx.npz").exists()


# -- datasets -----------------------------------------------------------------------------
@pytest.fixture
def empty_data_dir(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("DPQUERY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(datasets, "SHIPPED_DIR", tmp_path / "shipped")
    return tmp_path / "data"


def test_datasets_list_without_data(empty_data_dir, capsys):
    code, out, _ = run(capsys, "datasets", "list")
    assert code == 0
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(datasets.DATASETS)
    assert all("missing" in line for line in lines)
    assert "494,021" in out


@pytest.mark.realdata
def test_datasets_list_with_data(require_dataset, capsys):
    for name in datasets.DATASETS:
        require_dataset(name)
    code, out, _ = run(capsys, "datasets", "list")
    assert code == 0
    assert all(" available " in line for line in out.strip().splitlines())


def test_datasets_info(empty_data_dir, capsys, tmp_path):
    code, out, _ = run(
        capsys, "datasets", "info", "kdd99", "--save-domain", str(tmp_path / "k.json")
    )
    assert code == 0
    assert "kdd99:" in out and "rows: 494,021" in out
    assert "41 attributes, 396 bits, 41 one-hot groups" in out
    assert "kddcup.data_10_percent.gz" in out
    assert Domain.load(tmp_path / "k.json") == datasets.domain("kdd99")


def test_datasets_info_errors(empty_data_dir, capsys):
    code, _, err = run(capsys, "datasets", "info", "netflix")
    assert_one_line_error(code, err, "unknown dataset 'netflix'")
    code, _, err = run(capsys, "datasets", "info", "adult-pgm")  # its domain ships with the data
    assert_one_line_error(code, err, "DPQUERY_DATA_DIR", "adult-pgm")


def test_datasets_fetch(tmp_path, capsys, monkeypatch):
    content = b"income,age,marital,race,sex\n1000,20,1,1,2\n"
    src = tmp_path / "cps.csv"
    src.write_bytes(content)
    good = DataFile("census_cps/hdmm_CPS.csv.gz", src.as_uri(), hashlib.sha256(content).hexdigest())
    bad = dataclasses.replace(good, sha256="f" * 64)
    dest = tmp_path / "dest"
    monkeypatch.setitem(
        datasets.DATASETS, "cps", dataclasses.replace(datasets.info("cps"), files=(bad,))
    )
    code, _, err = run(capsys, "datasets", "fetch", "cps", "--dest", str(dest))
    assert_one_line_error(code, err, "sha256", "does not match")
    assert not (dest / "census_cps" / "hdmm_CPS.csv.gz").exists()
    monkeypatch.setitem(
        datasets.DATASETS, "cps", dataclasses.replace(datasets.info("cps"), files=(good,))
    )
    code, out, err = run(capsys, "datasets", "fetch", "cps", "--dest", str(dest))
    assert code == 0, err
    assert str(dest / "census_cps" / "hdmm_CPS.csv.gz") in out
    code, _, err = run(capsys, "datasets", "fetch", "acs", "--dest", str(dest))
    assert_one_line_error(code, err, "no official download", "by hand")


def test_encode_saved_domain_json_is_the_full_format(files, capsys):
    code, _, _ = run(
        capsys, "encode", "people.csv", "--domain", "domain.json", "--save-domain", "copy.json"
    )
    assert code == 0
    obj = json.loads((files / "copy.json").read_text())
    assert [a["type"] for a in obj["attributes"]] == ["categorical", "binary", "numeric"]
    assert Domain.from_dict(obj) == DOMAIN


def test_online_and_fetch_agree_on_how_to_get_a_dataset(capsys, tmp_path, monkeypatch):
    """A dataset with no official download: 'online' must not send the user to 'fetch',
    and 'fetch' must say the same thing 'online' said."""
    monkeypatch.setenv("DPQUERY_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(datasets, "SHIPPED_DIR", tmp_path / "shipped")
    code, _, online_err = run(capsys, "online", "--dataset", "adult-mwem", "--state",
                              str(tmp_path / "s.db"), "--epsilon", "1", "--alpha", "0.1",
                              "--k", "2")  # fmt: skip
    assert_one_line_error(code, online_err, "no official download")
    assert "datasets fetch" not in online_err
    code, _, fetch_err = run(capsys, "datasets", "fetch", "adult-mwem")
    assert_one_line_error(code, fetch_err, "no official download")
    how = datasets.info("adult-mwem").how_to_get()
    assert how in online_err and how in fetch_err
