"""``dpquery workload make|show``, ``answer`` and ``evaluate`` on a small table."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.data.domain import Binary, Categorical, Domain
from dpquery.data.encode import encode
from dpquery.evaluation import error_report
from dpquery.queries import Workload, answer
from dpquery.queries.reference import reference_answers


@pytest.fixture
def files(tmp_path):
    domain = Domain(
        (
            Categorical("color", ("red", "green", "blue")),
            Binary("smoker", ("no", "yes")),
            Categorical("size", (1, 2, 3, 4)),
        )
    )
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], 300),
            "smoker": rng.choice(["no", "yes"], 300),
            "size": rng.choice([1, 2, 3, 4], 300),
        }
    )
    table.to_csv(tmp_path / "data.csv", index=False)
    domain.save(tmp_path / "domain.json")
    synth = table.sample(40, random_state=1)
    synth.to_csv(tmp_path / "synth.csv", index=False)
    synth.assign(weight=np.linspace(1, 2, 40)).to_csv(tmp_path / "wsynth.csv", index=False)
    return tmp_path, domain, table, synth


def data_args(tmp) -> list[str]:
    return ["--data", str(tmp / "data.csv"), "--domain", str(tmp / "domain.json")]


def test_make_show_answer_evaluate(files, capsys) -> None:
    tmp, domain, table, synth = files
    w_path = tmp / "w.npz"
    args = ["workload", "make", *data_args(tmp), "--kind", "marginals", "--k", "2"]
    assert main([*args, "--count", "50", "--seed", "0", "-o", str(w_path)]) == 0
    w = Workload.load(w_path)
    assert len(w) == 50 and w.domain == domain

    capsys.readouterr()
    assert main(["workload", "show", str(w_path), "--limit", "3", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    assert first["kind"] == "conjunction" and first["negated"] is False
    # check the first answer by hand from the user-terms description
    mask = np.ones(len(table), bool)
    for attr, value, positive in first["literals"]:
        mask &= (table[attr].astype(str) == str(value)) == positive

    a_path = tmp / "a.csv"
    assert main(["answer", str(w_path), *data_args(tmp), "-o", str(a_path)]) == 0
    err = capsys.readouterr().err
    assert "NOT differentially private" in err
    answers = np.loadtxt(a_path, skiprows=1)
    assert answers[0] == pytest.approx(mask.mean())
    assert main(["answer", str(w_path), *data_args(tmp), "-o", str(tmp / "a.npy")]) == 0
    np.testing.assert_allclose(np.load(tmp / "a.npy"), answers)

    r_path = tmp / "r.json"
    assert main(["evaluate", *data_args(tmp), "--synthetic", str(tmp / "synth.csv"),
                 "--workload", str(w_path), "--report", str(r_path)]) == 0  # fmt: skip
    report = json.loads(r_path.read_text())
    data = encode(table, domain)
    expect = error_report(answer(w, data), answer(w, encode(synth, domain)), w)
    assert report["max_error"] == pytest.approx(expect.max_error)
    assert report["mean_error"] == pytest.approx(expect.mean_error)
    out = capsys.readouterr().out
    assert "max error" in out and out.index("NOT differentially private") < out.index("max error")

    # weighted synthetic records: the weight column is used
    assert main(["evaluate", *data_args(tmp), "--synthetic", str(tmp / "wsynth.csv"),
                 "--workload", str(w_path), "--report", str(tmp / "r2.json")]) == 0  # fmt: skip
    dense = encode(synth, domain).to_dense()
    weighted = reference_answers(w, dense, np.linspace(1, 2, 40))
    expect = error_report(answer(w, data), weighted, w)
    assert json.loads((tmp / "r2.json").read_text())["mean_error"] == pytest.approx(
        expect.mean_error
    )


def test_marginal_cells_and_other_kinds(files) -> None:
    tmp, *_ = files
    base = ["workload", "make", "--domain", str(tmp / "domain.json")]
    assert main([*base, "--kind", "marginal-cells", "--k", "2", "--marginals", "2",
                 "--n", "300", "--seed", "1", "-o", str(tmp / "m.npz")]) == 0  # fmt: skip
    w = Workload.load(tmp / "m.npz")
    assert w.marginals is not None and len(w.marginals) == 3
    for kind in ("parities", "disjunctions"):
        out = tmp / f"{kind}.npz"
        assert main([*base, "--kind", kind, "--k", "3", "--count", "10", "-o", str(out)]) == 0
        assert len(Workload.load(out)) == 10


def test_bad_input_is_one_line_and_writes_nothing(files, capsys) -> None:
    tmp, *_ = files
    base = ["workload", "make", "--domain", str(tmp / "domain.json")]
    assert main([*base, "--kind", "marginals", "-o", str(tmp / "x.npz")]) == 2
    assert "needs --count" in capsys.readouterr().err
    assert main([*base, "--kind", "marginals", "--k", "9", "--count", "3",
                 "-o", str(tmp / "x.npz")]) == 2  # fmt: skip
    assert "k must be between 1 and the 3 attributes, got 9" in capsys.readouterr().err
    assert main([*base, "--kind", "marginal-cells", "--marginals", "2",
                 "-o", str(tmp / "x.npz")]) == 2  # fmt: skip
    assert "needs --n" in capsys.readouterr().err
    assert not (tmp / "x.npz").exists()
    # never overwrite an input
    w = tmp / "w.npz"
    assert main([*base, "--kind", "marginals", "--count", "5", "-o", str(w)]) == 0
    assert main(["answer", str(w), *data_args(tmp), "-o", str(tmp / "data.csv"),
                 "--overwrite"]) == 2  # fmt: skip
    assert "is one of the inputs" in capsys.readouterr().err
    assert main(["answer", str(w), *data_args(tmp), "-o", str(tmp / "a.txt")]) == 2
    assert "must end in .npy or .csv" in capsys.readouterr().err
    assert main([*base, "--kind", "marginals", "--count", "5", "-o", str(w)]) == 2
    assert "already exists" in capsys.readouterr().err
