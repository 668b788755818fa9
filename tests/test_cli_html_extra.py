"""``dpquery evaluate --html`` without matplotlib (the ``report`` extra): a clear error before
any work, exit 2, nothing printed on stdout and no file written."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.data import Categorical, Domain, Numeric
from dpquery.queries import all_kway_marginals

DOMAIN = Domain(
    (Categorical("sex", ("F", "M")), Numeric.equal_width("age", 0, 100, 4, integer=True))
)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"sex": rng.choice(["F", "M"], 50), "age": rng.integers(0, 100, 50)})
    table.to_csv(tmp_path / "real.csv", index=False)
    table.to_csv(tmp_path / "synthetic.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    all_kway_marginals(DOMAIN, 1).save(tmp_path / "W.npz")
    return tmp_path


def test_evaluate_html_without_matplotlib_fails_first(files, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    before = sorted(p.name for p in files.iterdir())
    argv = ["evaluate", "--data", str(files / "real.csv"), "--domain", str(files / "domain.json"),
            "--synthetic", str(files / "synthetic.csv"), "--workload", str(files / "W.npz"),
            "--report", str(files / "E.json"), "--html", str(files / "page.html")]  # fmt: skip
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no errors computed and printed before the failure
    assert "pip install 'dpquery[report]'" in err and "matplotlib" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in files.iterdir()) == before
    # Without --html the same command needs no matplotlib.
    assert main(argv[:-2]) == 0
    assert (files / "E.json").exists()
