"""``dpquery synth`` with its defaults (``--algorithm auto``, the default workload), run as a
user runs it: the command's ``main`` in the test process, and ``dpquery demo`` on a fresh
machine as the real command in a subprocess."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.cli_process import dpquery_cli, dpquery_process
from tests.test_cli_synth import DOMAIN


@pytest.fixture
def files(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 400
    pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n, p=[0.6, 0.3, 0.1]),
            "smoker": rng.choice(["no", "yes"], n),
            "age": np.round(rng.uniform(0, 100, n), 1),
            "size": rng.choice([1, 2, 3, 4], n),
            "e": rng.choice([0, 1], n, p=[0.8, 0.2]),
        }
    ).to_csv(tmp_path / "data.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    return tmp_path


DATA = ("--data", "data.csv", "--domain", "domain.json")


def test_the_default_command_runs_auto_on_the_default_workload(files: Path) -> None:
    result = dpquery_cli("synth", *DATA, "--epsilon", "1", "--out", "s.csv", "--report",
                         "r.json", "--seed", "0", cwd=files)  # fmt: skip
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    # the guarantee asked for (add/remove: delta defaults to 1e-9), then what ran and why
    assert lines[0] == (
        "privacy: (1, 1.0e-09)-DP (seeded: does not hold against anyone who "
        "knows the seed), unbounded DP (add or remove one record), n private"
    )
    assert lines[1].startswith("algorithm: adaptive-projection, chosen by auto: about ")
    assert "(a noisy count) records" in lines[1] and "400" not in result.out
    assert any(x.startswith("wrote ") and "s.csv" in x for x in lines)
    assert "other accountants (the same run, proved in other measures):" in lines
    assert "error" not in result.out.lower()  # evaluation numbers only with --evaluate
    # progress on stderr (not a terminal: plain lines), the share of the budget spent
    assert "adaptive-projection: 100/100 % of budget" in result.err
    release = json.loads((files / "r.json").read_text())["release"]
    assert release["algorithm"] == "adaptive-projection"
    assert release["parameters"]["auto"]["algorithm"] == "adaptive-projection"
    assert "fit adaptive-projection" in release["parameters"]["auto"]["reason"]
    # the default workload: every 3-way marginal of at most n = 400 cells; with 3, 2, 5, 4
    # and 2 values the largest, color x age x size, has 60: all C(5, 3) = 10 of them
    assert release["parameters"]["workload_marginals"] == 10
    table = pd.read_csv(files / "s.csv")
    assert list(table.columns) == list(DOMAIN.names)


def test_quiet_prints_nothing_on_success(files: Path) -> None:
    result = dpquery_cli("synth", *DATA, "--epsilon", "1", "--out", "s.csv", "--seed", "0",
                         "--quiet", "--evaluate", cwd=files)  # fmt: skip
    assert result.code == 0, result.err
    assert (result.out, result.err) == ("", "")
    assert (files / "s.csv").exists() and (files / "s.evaluation.json").exists()


def test_a_budget_too_small_to_beat_the_baselines_is_said_before_the_fit(files: Path) -> None:
    """n = 400 at epsilon 0.01: every attribute's 1-way measurement is noisier than the data
    (docs/choosing.md); said on stderr even with --quiet, and in the report."""
    result = dpquery_cli("synth", *DATA, "--epsilon", "0.01", "--out", "s.csv", "--seed", "0",
                         "--quiet", "--report", "r.json", cwd=files)  # fmt: skip
    assert result.code == 0, result.err
    assert result.out == ""
    (line,) = result.err.splitlines()
    assert line.startswith("dpquery synth: warning: at this budget the noise")
    assert "not expected to beat the uniform or zeros baselines" in line
    auto = json.loads((files / "r.json").read_text())["release"]["parameters"]["auto"]
    assert auto["warning"] in line


@pytest.mark.slow
def test_demo_runs_offline_with_the_default_algorithm(tmp_path: Path) -> None:
    """``make demo`` on a fresh machine: no data folder, an empty home (no cache)."""
    home = tmp_path / "home"
    home.mkdir()
    result = dpquery_process("demo", "--quiet", cwd=tmp_path,
                             env={"DPQUERY_DATA_DIR": None, "HOME": str(home)})  # fmt: skip
    assert result.code == 0, result.err
    out = result.out
    assert "== adult (found: shipped): 15 attributes -> " in out
    # n is private: its exact value only in the NOT PRIVATE part, for the data holder
    assert out.index("the real table: 30,162 records") > out.index("NOT PRIVATE")
    assert out.count("30,162") == 1
    # add/remove neighbours (the default): delta = 1e-9, n private
    assert (
        "== privacy: (1, 1.0e-09)-DP (seeded: does not hold against anyone who knows the "
        "seed), unbounded DP (add or remove one record), n private"
    ) in out
    assert "algorithm: adaptive-projection, chosen by auto:" in out
    assert "NOT PRIVATE" in out
    assert out.index("NOT PRIVATE") > out.index("synthetic rows (a noisy n,")
    assert out.index("the release took") > out.index("NOT PRIVATE")  # a timing of the fit
    assert "(not shown: the Laplace baseline" in out  # explained, not a row of noise
    assert "mean TV" in out and out.index("mean TV") < out.index("max error")
    assert "coherence:" in out and "of records drawn uniformly" in out
    # Plausible records: the release's rows break the real records' rules (numeric attributes
    # by their bins) far less often than uniform records do (the demo's seed is fixed).
    found = re.search(r"coherence: ([\d.]+)% of the synthetic rows .*?; ([\d.]+)% of records", out)
    assert found is not None
    assert float(found[1]) < float(found[2]) / 4
    assert result.err == ""
    assert list(home.iterdir()) == []  # nothing cached, nothing fetched
