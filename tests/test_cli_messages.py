"""What a new user reads: ``synth --help`` (the default release's options first, the others
grouped by algorithm), the messages for common mistakes (a header-only table, no budget, an
extra column, an epsilon too large to protect anyone, no coherence rule), the evaluation's
console summary (mean TV per marginal first) and ``privacy synth``'s rho shares."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest

import dpquery
from cli_process import dpquery_cli
from dpquery.algorithms import registry
from dpquery.cli import build_parser, main
from dpquery.cli.release_flags import DEFAULT_PATH
from dpquery.cli.report import describe_coherence
from dpquery.data import Categorical, Domain
from dpquery.evaluation.metrics import error_report
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.privacy.delta import WEAK_EPSILON, WeakBudgetWarning, check_epsilon, default_delta
from dpquery.queries import all_kway_marginals

DOMAIN = Domain((
    Categorical("color", ("red", "green", "blue")),
    Categorical("size", ("S", "M", "L")),
    Categorical("smoker", ("no", "yes")),
))  # fmt: skip
# The options of the default release (auto, and adaptive-projection, which auto runs).
DEFAULT_FLAGS = ("--epsilon", "--delta", "--rho", "--data", "--domain", "--dataset",
                 "--algorithm", "--size", "--compress", "--column-tv", "--out")  # fmt: skip
FIRST_SCREEN = 50  # lines


@pytest.fixture
def files(tmp_path: Path) -> Path:
    table = pd.DataFrame({
        "color": ["red", "green", "blue", "red"] * 10,
        "size": ["S", "M", "L", "M"] * 10,
        "smoker": ["no", "yes", "no", "no"] * 10,
    })  # fmt: skip
    table.to_csv(tmp_path / "people.csv", index=False)
    table.head(0).to_csv(tmp_path / "empty.csv", index=False)
    table.assign(extra=1, notes="x").to_csv(tmp_path / "extra.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    return tmp_path


def synth(files: Path, data: str, *extra: str) -> list[str]:
    return ["synth", "--data", str(files / data), "--domain", str(files / "domain.json"),
            "--out", str(files / "s.csv"), "--seed", "0", *extra]  # fmt: skip


# -- synth --help -------------------------------------------------------------------------
def synth_help(monkeypatch, capsys) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["synth", "--help"])
    return capsys.readouterr().out


def test_synth_help_shows_the_default_release_first(monkeypatch, capsys) -> None:
    text = synth_help(monkeypatch, capsys)
    first = "\n".join(text.splitlines()[:FIRST_SCREEN])
    for flag in DEFAULT_FLAGS:
        assert f"{flag} " in first, flag
    # No option of an algorithm the default does not run is on the first screen.
    for flag in ("--eta", "--oracle", "--epsilon0", "--measurement", "--free-attributes"):
        assert flag not in first, flag


def test_synth_help_groups_the_other_options_by_algorithm(monkeypatch, capsys) -> None:
    text = synth_help(monkeypatch, capsys)
    groups = [f"{name} (--algorithm {name}):" for name in registry.names()
              if name not in DEFAULT_PATH]  # fmt: skip
    for header in groups:
        assert f"\n{header}\n" in text, header
    at = [text.index(header) for header in groups]
    assert at == sorted(at) and text.index("--column-tv") < at[0]
    # Every option is still listed, and still parsed.
    for option in registry.all_options().values():
        assert f"{option.cli_flag} " in text, option.cli_flag
    args = build_parser().parse_args([
        "synth", "--dataset", "adult", "--epsilon", "1", "--out", "x.csv", "--algorithm",
        "dualquery", "--eta", "1.5", "--oracle", "cpsat", "--oracle-gap", "0.1",
    ])  # fmt: skip
    assert (args.eta, args.oracle, args.oracle_gap, args.size) == (1.5, "cpsat", 0.1, None)


# -- messages -----------------------------------------------------------------------------
def test_a_header_only_table_is_named_and_said_plainly(files, capsys) -> None:
    assert main(synth(files, "empty.csv", "--epsilon", "1")) == 2
    err = capsys.readouterr().err
    assert "empty.csv has no records (only a header)" in err
    assert "n must be" not in err and not (files / "s.csv").exists()


@pytest.mark.parametrize("argv", [("synth",), ("privacy", "synth")])
def test_no_budget_says_which_flags_to_pass(files, capsys, argv) -> None:
    if argv == ("synth",):
        args = synth(files, "people.csv")
    else:
        args = ["privacy", "synth", "--domain", str(files / "domain.json"), "--n", "40"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "no privacy budget given: pass --epsilon (e.g. --epsilon 1" in err
    assert "--rho" in err and "not both" not in err


def test_both_budgets_are_refused_as_both(files, capsys) -> None:
    assert main(synth(files, "people.csv", "--epsilon", "1", "--rho", "0.1")) == 2
    assert "not both" in capsys.readouterr().err


def test_an_extra_column_is_named_when_dropped(files, capsys) -> None:
    assert main(synth(files, "extra.csv", "--epsilon", "1", "--quiet")) == 0
    err = capsys.readouterr().err
    assert "extra.csv: column(s) extra, notes are not in the domain: dropped" in err
    assert list(pd.read_csv(files / "s.csv").columns) == list(DOMAIN.names)
    assert main(synth(files, "people.csv", "--epsilon", "1", "--quiet", "--overwrite")) == 0
    assert "not in the domain" not in capsys.readouterr().err


def test_the_api_names_an_extra_column_too(files) -> None:
    frame = pd.read_csv(files / "extra.csv")
    with pytest.warns(UserWarning, match=r"df: column\(s\) extra, notes are not in the domain"):
        synthetic, _ = dpquery.synthesize(frame, DOMAIN, epsilon=1.0, seed=0)
    assert list(synthetic.columns) == list(DOMAIN.names)


@pytest.mark.parametrize(
    ("budget", "warned"),
    [(("--epsilon", "1e9"), True), (("--epsilon", "10"), False), (("--epsilon", "1"), False),
     (("--rho", "100"), True), (("--rho", "0.5"), False)],
)  # fmt: skip
def test_an_epsilon_that_protects_nothing_is_said(files, capsys, budget, warned) -> None:
    assert main(synth(files, "people.csv", *budget, "--quiet")) == 0
    err = capsys.readouterr().err
    assert ("a guarantee this weak protects nothing" in err) == warned, err


def test_check_epsilon_threshold_and_rho_conversion() -> None:
    """Above WEAK_EPSILON = 10 only; a rho is judged by its epsilon at delta = 1/n^2 (CKS):
    rho = 2 at n = 1000 is epsilon 11.69 (below the classic rho + 2 sqrt(rho ln(1/delta)) =
    12.51, which CKS tightens)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_epsilon(WEAK_EPSILON, None, 100) is None
        assert check_epsilon(None, 0.5, 1000) is None
    with pytest.warns(WeakBudgetWarning, match="epsilon=10.5 is above 10"):
        check_epsilon(10.5, None, 100)
    e = zcdp_to_epsilon(2.0, default_delta(1000))
    assert 11.5 < e < 2 + 2 * math.sqrt(2 * math.log(1e6))
    with pytest.warns(WeakBudgetWarning, match=f"epsilon {e:.3g} at delta 1/n"):
        check_epsilon(None, 2.0, 1000)


def test_the_coherence_line_says_none_rather_than_zero_of_zero() -> None:
    none = {"constraints": 0, "incoherent_fraction": 0.0,
            "categorical": {"constraints": 0, "incoherent_fraction": 0.0}}  # fmt: skip
    assert "0 among" not in describe_coherence(none)
    assert "no rule holds on every real record" in describe_coherence(none)
    some = {"constraints": 4, "incoherent_fraction": 0.25,
            "categorical": {"constraints": 0, "incoherent_fraction": 0.0}}  # fmt: skip
    line = describe_coherence(some)
    assert "0.2500 of synthetic records break at least one of 4 rules" in line
    assert "the 0 among" not in line and "none of them is among categorical" in line


# -- evaluation output --------------------------------------------------------------------
def test_the_evaluation_summary_leads_with_mean_tv(files, capsys) -> None:
    assert main(synth(files, "people.csv", "--epsilon", "1", "--evaluate")) == 0
    out = capsys.readouterr().out
    table = out[out.index("NOT PRIVATE") :].splitlines()
    header = next(line for line in table if "what it is" in line)
    assert header.split()[:2] == ["mean", "TV"]  # before max and mean error
    assert not any(line.lstrip().startswith("laplace") for line in table)
    assert "(not shown: the Laplace baseline" in out  # explained, not a row of noise
    ev = json.loads((files / "s.evaluation.json").read_text())
    assert "laplace" in ev["baselines"]  # still in the file
    release = next(line for line in table if line.lstrip().startswith("release "))
    assert float(release.split()[1]) == pytest.approx(ev["errors"]["workload"]["mean_tv"],
                                                      abs=1e-4)  # fmt: skip


def test_error_report_describes_mean_tv_first() -> None:
    w = all_kway_marginals(DOMAIN, 2)
    true = [0.5] * len(w)
    text = error_report(pd.Series(true).to_numpy(), pd.Series(true).to_numpy(), w).describe()
    assert text.splitlines()[0].startswith("mean TV")


def test_privacy_synth_shows_rho_shares_that_add_up() -> None:
    text = dpquery_cli("privacy", "synth", "--dataset", "adult", "--epsilon", "1", "--json")
    assert text.code == 0, text.err
    plan = json.loads(text.out)
    shares = plan["rho_shares"]
    planned = sum(c["rho"] or 0.0 for c in plan["charges"])
    assert shares["planned"] == pytest.approx(planned, rel=1e-12)
    assert shares["planned"] + shares["rest"] == pytest.approx(shares["rho"], rel=1e-12)
    assert math.isclose(shares["planned_share"] + shares["rest_share"], 1.0)
    zcdp = next(g for g in plan["guarantees"] if g["measure"] == "zcdp")
    assert zcdp["rho"] == pytest.approx(planned, rel=1e-12)
    shown = dpquery_cli("privacy", "synth", "--dataset", "adult", "--epsilon", "1")
    assert f"rho shares (zCDP adds rho; the budget is rho={shares['rho']:.6g})" in shown.out
    assert "the rest (" not in shown.out  # no epsilon "rest", which does not add up


# -- the pre-release check ----------------------------------------------------------------
@pytest.mark.realdata
def test_a_small_table_is_warned_before_the_fit(require_dataset, tmp_path, capsys) -> None:
    """The first 84 rows of CPS (5 attributes) at epsilon 1: the release did not beat the
    baselines (mean TV 0.56 against zeros' 0.5, docs/choosing.md); the check says so from
    public quantities (n, the sizes, the plan's noise), before the fit and in the report."""
    from dpquery import datasets
    from dpquery.algorithms.auto import BaselineWarning
    from dpquery.data import encode
    from dpquery.queries import default_workload

    require_dataset("cps")
    table, domain = datasets.load_table("cps")
    small = table.head(84)
    data = encode(small, domain)
    workload = default_workload(domain, data.n, seed=0)
    model = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False)
    plan = model.plan(data, workload)
    assert plan.warning is not None and "median attribute" in plan.warning
    with pytest.warns(BaselineWarning, match="not expected to beat"):
        model.fit(data, workload)
    small.to_csv(tmp_path / "cps84.csv", index=False)
    domain.save(tmp_path / "domain.json")
    args = ["synth", "--data", str(tmp_path / "cps84.csv"), "--domain",
            str(tmp_path / "domain.json"), "--epsilon", "1", "--out", str(tmp_path / "s.csv"),
            "--report", str(tmp_path / "r.json"), "--seed", "0"]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "dpquery synth: warning: at this budget" in err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["release"]["parameters"]["auto"]["warning"] in err


def test_a_comfortable_release_is_not_warned() -> None:
    """Adult (shipped with dpquery, 30,162 records x 15 attributes) at epsilon 1."""
    from dpquery import datasets
    from dpquery.queries import default_workload

    data = datasets.load("adult")
    assert data.domain is not None
    workload = default_workload(data.domain, data.n, seed=0)
    model = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False)
    assert model.plan(data, workload).warning is None
