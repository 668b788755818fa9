"""Bad inputs the real ``dpquery`` command must turn into one clear line (no traceback, no
numpy advice, no partial output): truncated or pickled ``.npz`` files, a non-UTF-8 domain,
empty workloads, a folder given as an output file, a reused inferred domain, and ``encode``'s
usage."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from cli_process import Result, dpquery_cli
from dpquery.data import Categorical, Domain, Numeric
from dpquery.errors import DomainError, DPQueryError, NonPrivateWarning
from dpquery.queries import Workload, all_kway_marginals
from dpquery.queries import workload as workload_module

DOMAIN = Domain((Categorical("color", ("red", "blue")), Numeric.equal_width("age", 0, 100, 4)))


@pytest.fixture
def files(tmp_path):
    pd.DataFrame({"color": ["red", "blue", "red"], "age": [3, 50, 99]}).to_csv(
        tmp_path / "people.csv", index=False
    )
    DOMAIN.save(tmp_path / "domain.json")
    all_kway_marginals(DOMAIN, 1).save(tmp_path / "W.npz")
    return tmp_path


def one_line_error(result: Result, *fragments: str) -> None:
    assert result.code == 2, (result.code, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpquery: error: "), result.err
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_truncated_npz_workload_and_data(files):
    raw = (files / "W.npz").read_bytes()
    (files / "T.npz").write_bytes(raw[: len(raw) // 2])
    result = dpquery_cli("workload", "show", "T.npz", cwd=files)
    one_line_error(result, "T.npz", "not a dpquery workload file", "truncated")
    result = dpquery_cli("answer", "W.npz", "--data", "T.npz", "-o", "A.npy", cwd=files)
    one_line_error(result, "T.npz", "not a dpquery binary data file", "truncated")
    assert not (files / "A.npy").exists()


def test_pickled_npz_is_refused_without_numpy_advice(files):
    (files / "P.npz").write_bytes(pickle.dumps({"meta": 1}))
    show = ["workload", "show", "P.npz"]
    for argv in (show, ["answer", "W.npz", "--data", "P.npz", "-o", "A.npy"]):
        result = dpquery_cli(*argv, cwd=files)
        one_line_error(result, "P.npz", "pickled")
        assert "allow_pickle" not in result.err and "unsafely" not in result.err


def test_non_utf8_domain_json(files):
    (files / "bad.json").write_bytes(b'{"color": 2, "note": "caf\xe9"}')
    result = dpquery_cli("encode", "people.csv", "--domain", "bad.json", cwd=files)
    one_line_error(result, "bad.json", "not UTF-8", "0xe9")
    with pytest.raises(DomainError, match="not UTF-8"):
        Domain.load(files / "bad.json")
    with pytest.raises(DomainError, match="is a folder, not a JSON file"):
        Domain.load(files)


def test_empty_workloads_are_refused_when_written_and_read(files):
    result = dpquery_cli(
        "workload", "make", "--domain", "domain.json", "--kind", "marginals", "--k", "1",
        "--count", "0", "-o", "E.npz", cwd=files,
    )  # fmt: skip
    one_line_error(result, "E.npz", "no queries")
    assert not (files / "E.npz").exists()
    # A file holding an empty workload (written by hand) fails at load, not deep inside.
    empty = Workload("conjunction", DOMAIN.d, np.zeros(1, np.int64), np.zeros(0, np.int64),
                     np.zeros(0, bool), None, DOMAIN)  # fmt: skip
    meta = {"format": workload_module._FORMAT_NAME, "version": workload_module.FORMAT_VERSION,
            "kind": "conjunction", "d": DOMAIN.d, "domain": DOMAIN.to_dict(),
            "content_hash": empty.content_hash}  # fmt: skip
    np.savez(files / "E.npz", meta=np.array(json.dumps(meta)), offsets=empty.offsets,
             bits=empty.bits, positive=empty.positive)  # fmt: skip
    for argv in (
        ["answer", "E.npz", "--data", "people.csv", "--domain", "domain.json", "-o", "A.npy"],
        ["synth", "--data", "people.csv", "--domain", "domain.json", "--workload", "E.npz",
         "--epsilon", "1", "--delta", "1e-7", "--out", "S.csv"],
    ):  # fmt: skip
        one_line_error(dpquery_cli(*argv, cwd=files), "E.npz", "no queries")
    assert not (files / "A.npy").exists() and not (files / "S.csv").exists()
    with pytest.raises(DPQueryError, match="no queries"):
        empty.save(files / "E2.npz")


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_a_folder_as_output_gets_one_consistent_message(files, overwrite):
    (files / "out.csv").mkdir()
    commands = [
        ["workload", "make", "--domain", "domain.json", "--kind", "all-marginals", "--k", "1",
         "-o", "out.csv"],
        ["answer", "W.npz", "--data", "people.csv", "--domain", "domain.json", "-o", "out.csv"],
        ["synth", "--data", "people.csv", "--domain", "domain.json", "--epsilon", "1",
         "--delta", "1e-3", "--out", "out.csv"],
    ]  # fmt: skip
    for argv in commands:
        result = dpquery_cli(*argv, *overwrite, cwd=files)
        one_line_error(result, "cannot write out.csv")
        assert "folder" in result.err and "pass --overwrite" not in result.err
    assert list((files / "out.csv").iterdir()) == []


def test_a_saved_inferred_domain_keeps_its_warning(files):
    first = dpquery_cli(
        "encode", "people.csv", "--infer-domain", "--save-domain", "inferred.json", cwd=files
    )
    assert first.code == 0, first.err
    assert "NOT differentially private" in first.err
    assert json.loads((files / "inferred.json").read_text())["non_private"] is True
    again = dpquery_cli("encode", "people.csv", "--domain", "inferred.json", cwd=files)
    assert again.code == 0, again.err
    assert again.err.startswith("dpquery: WARNING: inferred.json:")
    assert "NOT differentially private" in again.err and "Traceback" not in again.err
    assert "NON-PRIVATE" in again.out
    with pytest.warns(NonPrivateWarning, match="NOT differentially private"):
        Domain.load(files / "inferred.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Domain.load(files / "domain.json")  # a public domain loads silently


def test_encode_usage_names_the_table_once(files):
    result = dpquery_cli("encode", "--help")
    assert result.code == 0
    usage = result.out.split("\n\n")[0]
    assert "DATA" in usage and "--data" not in usage and "--dataset" not in usage
    result = dpquery_cli("encode", "people.csv", "--data", "people.csv", cwd=files)
    assert result.code == 2 and "unrecognized arguments: --data" in result.err


def test_a_damaged_answer_cache_is_recomputed(files):
    (files / "cache").mkdir()
    argv = ["answer", "W.npz", "--data", "people.csv", "--domain", "domain.json",
            "--cache-dir", "cache", "-o", "A.npy", "--overwrite"]  # fmt: skip
    assert dpquery_cli(*argv, cwd=files).code == 0
    (entry,) = (files / "cache").iterdir()
    good = np.load(files / "A.npy")
    entry.write_bytes(entry.read_bytes()[:20])  # truncated
    result = dpquery_cli(*argv, cwd=files)
    assert result.code == 0, result.err
    assert np.array_equal(np.load(files / "A.npy"), good)
    assert np.array_equal(np.load(entry), good)  # the entry was rewritten


ITEMS = ("--n", "100", "--items", "50", "--epsilon", "1")


@pytest.mark.parametrize("text", ["", "# rows 100 items 50\n", "# a comment\n\n"])
def test_an_item_file_without_records_is_refused(files, text):
    """Its sizes alone would release 100 empty records: refused, naming the file, nothing
    written (the local path, the Dask path before a cluster starts, and encode)."""
    (files / "X.transactions.csv").write_text(text)
    (files / "people.txt").write_text(text)
    said = "holds no records (no 'row item' lines): is it the right file?"
    runs = {
        "X.transactions.csv": ["synth", "--data", "X.transactions.csv", *ITEMS],
        "people.txt": ["synth", "--data", "people.txt", "--transactions", *ITEMS],
    }
    backends = ("local", "dask") if text == "" else ("local",)  # dask refuses as local does
    for name, argv in runs.items():
        for backend in backends:
            result = dpquery_cli(*argv, "--backend", backend, "--out", "S.transactions.csv",
                                 cwd=files)  # fmt: skip
            one_line_error(result, f"{name} {said}")
    result = dpquery_cli("encode", "people.txt", "--transactions", "--n", "100", "--items",
                         "50", "-o", "x.npz", cwd=files)  # fmt: skip
    one_line_error(result, f"people.txt {said}")
    assert not (files / "S.transactions.csv").exists() and not (files / "x.npz").exists()


def test_a_line_with_a_third_value_says_one_thing(files):
    (files / "people.txt").write_text("1 2\n3 4\n7 5 0.5\n")
    result = dpquery_cli("synth", "--data", "people.txt", "--transactions", *ITEMS,
                         "--out", "S.transactions.csv", cwd=files)  # fmt: skip
    one_line_error(result, "people.txt: line 3 holds 3 values ('7 5 0.5'); expected 'row item' "
                   "(two integers) on every line, or 'row item weight' on every line of a "
                   "weighted file")  # fmt: skip
    assert "fields" not in result.err and not (files / "S.transactions.csv").exists()


@pytest.mark.parametrize(
    "backend", ["local", pytest.param("dask", marks=pytest.mark.slow)]
)  # on dask the workers read the lines, cut into two ranges of users; the client says it
def test_duplicate_lines_are_said_to_the_curator_not_in_the_report(files, backend):
    if backend == "dask":
        pytest.importorskip("distributed")
    (files / "people.txt").write_text("0 1\n0 1\n2 3\n0 1\n2 3\n1 1\n91 4\n91 4\n")
    result = dpquery_cli("synth", "--data", "people.txt", "--transactions", "--n", "100",
                         "--items", "50", "--epsilon", "20", "--out", "S.transactions.csv",
                         "--report", "R.json", "--quiet", "--backend", backend,
                         *(["--partitions", "2"] if backend == "dask" else []),
                         cwd=files)  # fmt: skip
    assert result.code == 0, result.err
    assert ("dpquery: warning: people.txt: 4 duplicate (row, item) lines counted once (not "
            "private: read from the data, for the curator)") in result.err  # fmt: skip
    assert result.err.count("duplicate") == 1, result.err
    assert result.err.count("protects nothing") == 1, result.err  # said once, not per layer
    assert "duplicate" not in (files / "R.json").read_text()  # the report is publishable


def test_a_reader_that_leaves_early_stops_the_command_quietly() -> None:
    """``dpquery privacy synth ... | head -0``: the pipe closed before the plan is printed
    ends the command with 141 (128 + SIGPIPE, as a shell reports it), not a traceback. The
    read end is closed before the interpreter has started (it takes over 0.1 s to import),
    so the first write finds it closed."""
    import os
    import subprocess
    import sys

    from cli_process import _MAIN, _SRC

    env = dict(os.environ, PYTHONPATH=_SRC)
    proc = subprocess.Popen(
        [sys.executable, "-c", _MAIN, "privacy", "synth", "--n", "3000", "--epsilon", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader leaves before a line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err
