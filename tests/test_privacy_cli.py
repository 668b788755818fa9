"""``dpquery privacy ...``: the planning commands (no data, no randomness)."""

from __future__ import annotations

import json

import pytest

from dpquery.cli import main

KDD = ["--n", "494021", "--eta", "1.2", "--samples", "1750"]


def run(capsys, *argv):
    code = main(["privacy", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_dualquery_guarantee_one_line_per_accountant(capsys):
    code, out, _ = run(capsys, "dualquery", *KDD, "--T", "170", "--delta", "0.001")
    assert code == 0
    lines = out.splitlines()[1:]  # after the header
    by_key = {
        k: next(line for line in lines if f"[{k}]" in line)
        for k in (
            "basic",
            "advanced-lemma-2.4",
            "advanced-heterogeneous",
            "zcdp-lemma1-standard",
            "zcdp-lemma1-cks",
            "zcdp-br-standard",
            "zcdp-br-cks",
        )
    }
    # the anchors of DualQuery Section 6.2 (hand computations in test_privacy_accounting.py)
    assert "epsilon=122.126" in by_key["basic"]
    assert "epsilon=1.85902" in by_key["advanced-lemma-2.4"]
    assert "epsilon=1.02947" in by_key["advanced-heterogeneous"]
    assert "epsilon=0.995932" in by_key["zcdp-lemma1-standard"]
    assert "epsilon=0.489586" in by_key["zcdp-br-standard"]
    assert "Canonne-Kamath-Steinke" in by_key["zcdp-br-cks"]
    assert "tightest proved" in lines[-1] and "[zcdp-br-cks]" in lines[-1]


def test_dualquery_largest_T(capsys):
    code, out, _ = run(capsys, "dualquery", *KDD, "--epsilon", "1", "--delta", "0.001")
    assert code == 0
    assert "T=15 " in next(line for line in out.splitlines() if "[basic]" in line)
    assert "T=116 " in next(line for line in out.splitlines() if "[advanced-lemma-2.4]" in line)
    assert "T=166 " in next(line for line in out.splitlines() if "[advanced-heterogeneous]" in line)
    assert "T=270 " in next(line for line in out.splitlines() if "[zcdp-br-standard]" in line)


def test_dualquery_json(capsys):
    code, out, _ = run(capsys, "dualquery", *KDD, "--T", "170", "--delta", "0.001", "--json")
    assert code == 0
    data = json.loads(out)
    results = {r["accountant"]: r for r in data["results"]}
    assert results["advanced-lemma-2.4"]["epsilon"] == pytest.approx(1.859019, abs=1e-6)
    assert data["tightest"] == "zcdp-br-cks"


def test_fem_modes(capsys):
    code, out, _ = run(capsys, "fem", "--T", "100", "--epsilon0", "0.01", "--delta", "1e-6")
    assert code == 0
    assert "epsilon=1," in next(line for line in out.splitlines() if "[basic]" in line)
    code, out, _ = run(capsys, "fem", "--epsilon0", "0.01", "--epsilon", "1")
    assert code == 0 and "T=100 " in out  # pure: 100 rounds of 0.01
    assert "cannot certify" in next(line for line in out.splitlines() if "[zcdp-br-cks]" in line)
    code, out, _ = run(capsys, "fem", "--T", "100", "--rho", "0.1")
    assert code == 0
    # Algorithm 1: rho0 = 0.1 / 100 = 0.001, epsilon0 = sqrt(0.002) = 0.0447214
    alg1 = next(line for line in out.splitlines() if "[algorithm-1-standard]" in line)
    assert "epsilon0=0.0447214" in alg1 and "rho0=0.001" in alg1


def test_fem_budget_alone_plans_the_default_scaling(capsys):
    from dpquery.algorithms.game.fem_plan import plan_fem

    code, out, _ = run(capsys, "fem", "--epsilon", "1", "--delta", "1e-9", "--json")
    assert code == 0
    planned = json.loads(out)
    assert planned["parameters"]["epsilon0"] == pytest.approx(0.008)  # c sqrt(1), c = 0.008
    tight = next(r for r in planned["results"] if r["accountant"] == planned["tightest"])
    # What FEM itself plans for this budget (its default accountant is the tightest here).
    assert tight["T"] == plan_fem(n=10, epsilon=1.0, delta=1e-9).T


def test_dqrs(capsys):
    args = ["dqrs", "--n", "50000", "--eta", "0.1", "--samples", "200"]
    code, out, _ = run(capsys, *args, "--T", "30", "--delta", "1e-6")
    assert code == 0 and "[dqrs-printed-standard]" in out and "[zcdp-br-cks]" in out
    code, out, _ = run(capsys, *args, "--epsilon", "1", "--delta", "1e-6", "--json")
    assert code == 0
    assert all("T" in r or "note" in r for r in json.loads(out)["results"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dualquery", *KDD, "--T", "170", "--delta", "1.5"], "--delta must lie"),
        (["dualquery", *KDD, "--delta", "0.001"], "give --T"),
        (["dualquery", *KDD, "--T", "170", "--epsilon", "1"], "not both"),
        (["dualquery", "--n", "0", "--eta", "1", "--samples", "5", "--T", "3"], "n must be"),
        (["dualquery", "--n", "10", "--eta", "-1", "--samples", "5", "--T", "3"], "eta must be"),
        (["fem", "--T", "10"], "give two of"),
        (["fem", "--T", "10", "--epsilon0", "-0.1"], "--epsilon0 must be"),
        (["fem", "--T", "10", "--rho", "0.1", "--delta", "0.01"], "takes no --delta"),
    ],
)
def test_bad_values_are_one_line_errors(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("dpquery: error:") and message in err and err.count("\n") == 1
