"""``dpquery synth``: outputs in the input's columns, the JSON report, reproducibility, error
paths, and no partial output when a run fails."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery.algorithms.game.best_response as br_module
import dpquery.pipeline.reports as synth_module
from dpquery.cli import main
from dpquery.data.domain import Binary, Categorical, Domain, Numeric
from dpquery.errors import DPQueryError
from dpquery.oracles import OracleResult, get_oracle
from dpquery.privacy.dualquery import dualquery_pure_epsilon
from dpquery.queries import Workload

DOMAIN = Domain(
    (
        Categorical("color", ("red", "green", "blue")),
        Binary("smoker", ("no", "yes")),
        Numeric.equal_width("age", 0, 100, 5),
        Categorical("size", (1, 2, 3, 4)),
        Binary("e"),
    )
)


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 400
    table = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n, p=[0.6, 0.3, 0.1]),
            "smoker": rng.choice(["no", "yes"], n),
            "age": np.round(rng.uniform(0, 100, n), 1),
            "size": rng.choice([1, 2, 3, 4], n),
            "e": rng.choice([0, 1], n, p=[0.8, 0.2]),
        }
    )
    table.to_csv(tmp_path / "data.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    return tmp_path


def synth_args(tmp: Path, *extra: str, seed: int | None = 0) -> list[str]:
    args = [
        "synth", "--data", str(tmp / "data.csv"), "--domain", str(tmp / "domain.json"),
        "--algorithm", "dualquery", "--workload", "marginals", "--k", "2", "--queries", "60",
        "--eta", "0.5", "--samples", "20", "--quiet", *extra,
    ]  # fmt: skip
    return [*args, "--seed", str(seed)] if seed is not None else args


BUDGET = ("--epsilon", "2", "--delta", "1e-3")


def strict_json(path: Path) -> dict:
    def reject(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(path.read_text(), parse_constant=reject)


def listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


TIMING_KEYS = {"select_s", "respond_s", "observe_s", "mean_seconds", "max_seconds"}


def without_timings(x: object) -> object:
    if isinstance(x, dict):
        return {
            k: without_timings(v) for k, v in x.items() if k not in TIMING_KEYS and k != "timings"
        }
    if isinstance(x, list):
        return [without_timings(v) for v in x]
    return x


# == a normal run ============================================================================


def test_synth_writes_records_in_input_columns_and_a_report(tmp, capsys) -> None:
    out, rep, evf = tmp / "s.csv", tmp / "r.json", tmp / "s.evaluation.json"
    args = synth_args(tmp, *BUDGET, "--out", str(out), "--report", str(rep), "--evaluate")
    args.remove("--quiet")
    assert main(args) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    # the guarantee asked for first, then what ran, then what was written
    assert lines[0] == (
        "privacy: (2, 1.0e-03)-DP (seeded: does not hold against anyone who "
        "knows the seed), bounded DP (replace one record), n public"
    )
    assert lines[1] == "algorithm: dualquery (--algorithm)"
    assert "T=" in lines[2] and lines[3].startswith("wrote ")
    assert lines.index("other accountants (the same run, proved in other measures):") > 3
    assert "NOT PRIVATE" in captured.out  # the label is on the stream of the numbers
    assert "errors as fractions of records" in captured.out
    remaining = strict_json(rep)["release"]["privacy"]["remaining"]
    if remaining > 1e-6 * 2:  # DualQuery's rounds come whole: the rest is said, with why
        assert f"unspent: {remaining:.3g} of epsilon 2" in captured.out
    report = strict_json(rep)
    rel, ev = report["release"], strict_json(evf)
    assert "evaluation" not in report
    p = rel["parameters"]
    assert rel["algorithm"] == "dualquery"
    assert (p["n"], p["d"], p["queries"], p["s"], p["eta"]) == (400, DOMAIN.d, 60, 20, 0.5)
    assert p["mode"] == "budget (largest T)" and p["oracle"] == "heuristic"

    synth = pd.read_csv(out)
    source = pd.read_csv(tmp / "data.csv")
    assert list(synth.columns) == list(source.columns)
    assert p["T"] == rel["records"] == rel["oracle_summary"]["rounds"]
    # n rows sampled from the T released records (n is public), and the report says so
    assert len(synth) == 400 == rel["output"]["rows"]
    assert rel["output"]["released_records"] == p["T"]
    assert rel["output"]["method"].startswith("systematic sampling")
    assert set(synth["color"]) <= {"red", "green", "blue"}
    assert set(synth["smoker"]) <= {"no", "yes"}
    assert set(synth["size"]) <= {1, 2, 3, 4} and set(synth["e"]) <= {0, 1}
    assert synth["age"].between(0, 100).all()

    privacy = rel["privacy"]
    eps = {e["key"]: e["epsilon"] for e in privacy["by_accountant"]}
    pure = dualquery_pure_epsilon(eta=0.5, T=p["T"], s=20, n=400)
    assert eps["basic"] == pytest.approx(pure, rel=1e-12)
    (approx,) = [g for g in privacy["guarantees"] if g["measure"] == "approx"]
    assert approx["epsilon"] <= 2.0 and approx["delta"] == 1e-3
    # published: the data player's time only; steps that read the data: the evaluation's
    assert set(rel["timings"]) == {"respond_s"}
    assert set(ev["timings"]) >= {"true_answers_s", "select_s", "observe_s", "total_s"}
    assert rel["privacy"]["neighbouring"] == "bounded DP (replace one record), n public"
    assert rel["randomness"]["bit_generator"] == "PCG64" and not rel["randomness"]["cryptographic"]
    assert set(ev["errors"]) == {"workload", "fresh_workload"}
    assert set(ev["baselines"]) == {"zeros", "uniform", "laplace"}
    assert "NOT differentially private" in ev["note"]
    for e in [*ev["errors"].values(), *ev["baselines"].values()]:
        assert 0 <= e["mean_error"] <= e["max_error"]


def test_pure_dp_report_is_strict_json(tmp) -> None:
    out, rep = tmp / "s.csv", tmp / "r.json"
    extra = ("--epsilon", "5", "--delta", "0", "--out", str(out), "--report", str(rep))
    assert main(synth_args(tmp, *extra)) == 0
    report = strict_json(rep)  # zCDP proves no pure epsilon: "inf", not a bare Infinity
    assert report["release"]["privacy"]["budget"]["measure"] == "pure"


def test_integer_coded_table_comes_back_integer_coded(tmp) -> None:
    sizes = {"a": 3, "b": 2, "c": 5}
    (tmp / "pgm.json").write_text(json.dumps(sizes))
    rng = np.random.default_rng(1)
    table = pd.DataFrame({k: rng.integers(0, v, 300) for k, v in sizes.items()})
    table.to_csv(tmp / "ints.csv", index=False)
    out = tmp / "s.csv"
    args = [
        "synth", "--data", str(tmp / "ints.csv"), "--domain", str(tmp / "pgm.json"),
        "--algorithm", "dualquery", "--epsilon", "2", "--delta", "1e-3", "--eta", "0.5",
        "--samples", "20", "--queries", "30", "--k", "2", "--seed", "0", "--quiet",
        "--out", str(out), "--workload", "marginals",
    ]  # fmt: skip
    assert main(args) == 0
    synth = pd.read_csv(out)
    assert list(synth.columns) == list(sizes)
    for name, size in sizes.items():
        assert synth[name].dtype.kind == "i"
        assert synth[name].between(0, size - 1).all()


def test_saved_workload_and_parquet_output(tmp) -> None:
    w_path = tmp / "w.npz"
    make = ["workload", "make", "--data", str(tmp / "data.csv"), "--domain"]
    make += [str(tmp / "domain.json"), "--kind", "parities", "--k", "2", "--count", "40"]
    assert main([*make, "--seed", "3", "-o", str(w_path)]) == 0
    out, rep = tmp / "s.parquet", tmp / "r.json"
    evf = tmp / "ev.json"
    args = synth_args(tmp, *BUDGET, "--out", str(out), "--report", str(rep), "--evaluate", str(evf))
    args[args.index("marginals")] = str(w_path)
    assert main(args) == 0
    report = strict_json(rep)
    assert report["release"]["parameters"]["queries"] == len(Workload.load(w_path)) == 40
    assert "fresh_workload" not in strict_json(evf)["errors"]
    assert list(pd.read_parquet(out).columns) == list(pd.read_csv(tmp / "data.csv").columns)


# == reproducibility =========================================================================


def test_same_seed_gives_byte_identical_output(tmp) -> None:
    runs = {}
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        out, rep = tmp / f"{name}.csv", tmp / f"{name}.json"
        extra = ("--free-attributes", "uniform", "--out", str(out), "--report", str(rep))
        assert main(synth_args(tmp, *BUDGET, *extra, seed=seed)) == 0
        runs[name] = (out.read_bytes(), strict_json(rep))
    assert runs["a"][0] == runs["b"][0]
    assert without_timings(runs["a"][1]) == without_timings(runs["b"][1])
    # a different seed: new workload, samples, free bits and numeric draws; ~26 records with
    # a continuous age column cannot coincide
    assert runs["a"][0] != runs["c"][0]
    assert without_timings(runs["a"][1]) != without_timings(runs["c"][1])


# == error paths: exit 2, one line, no output ================================================

ERRORS = {
    "negative epsilon": (("--epsilon", "-1", "--delta", "1e-3"), "epsilon"),
    "zero epsilon": (("--epsilon", "0"), "epsilon"),
    "nan epsilon": (("--epsilon", "nan", "--delta", "1e-3"), "epsilon"),
    "delta above 1": (("--epsilon", "1", "--delta", "2"), "delta"),
    "no budget nor T": ((), "give a budget"),
    "explicit over budget": ((*BUDGET, "--T", "500"), "more than the budget"),
    "budget too small": (("--epsilon", "0.0001", "--delta", "1e-3"), "admits only"),
    "unknown workload kind": ((*BUDGET, "--workload", "bogus"), "workload kind"),
    "marginal-cells without --marginals": ((*BUDGET, "--workload", "marginal-cells"), "marg"),
    "density without epsilon": ((*BUDGET, "--free-attributes", "private-density"), "density"),
    "gap for the heuristic": ((*BUDGET, "--oracle-gap", "3"), "exact oracles"),
    "non-positive time limit": (
        (*BUDGET, "--oracle", "cpsat", "--oracle-time-limit", "0"),
        "must be positive",
    ),
}


def check_clean_failure(tmp: Path, before: dict[str, bytes], capsys, match: str) -> None:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpquery: error: ") and match in lines[0]
    assert listing(tmp) == before  # nothing written, nothing changed, no temporary files


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error_paths(case, tmp, capsys) -> None:
    extra, match = ERRORS[case]
    before = listing(tmp)
    args = synth_args(tmp, *extra, "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"))
    assert main(args) == 2
    check_clean_failure(tmp, before, capsys, match)


@pytest.mark.parametrize(
    ("out", "report", "match"),
    [
        ("s.txt", None, "must end in .csv, .parquet or .npz"),
        ("data.csv", None, "is one of the inputs"),
        ("s.csv", "domain.json", "is one of the inputs"),
        ("s.csv", "s.csv", "name the same file"),
        ("missing/s.csv", None, "not a file in an existing folder"),
    ],
)
def test_bad_outputs(out, report, match, tmp, capsys) -> None:
    before = listing(tmp)
    extra = ["--out", str(tmp / out)] + ([] if report is None else ["--report", str(tmp / report)])
    assert main(synth_args(tmp, *BUDGET, *extra)) == 2
    check_clean_failure(tmp, before, capsys, match)


def test_existing_output_needs_overwrite(tmp, capsys) -> None:
    (tmp / "s.csv").write_text("keep me\n")
    before = listing(tmp)
    args = synth_args(tmp, *BUDGET, "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"))
    assert main(args) == 2
    check_clean_failure(tmp, before, capsys, "already exists")
    # an existing report alone also stops the run before the CSV is written
    (tmp / "s.csv").unlink()
    (tmp / "r.json").write_text("{}\n")
    before = listing(tmp)
    assert main(args) == 2
    check_clean_failure(tmp, before, capsys, "already exists")
    assert main([*args, "--overwrite"]) == 0
    assert strict_json(tmp / "r.json")["release"]["algorithm"] == "dualquery"
    assert len(pd.read_csv(tmp / "s.csv")) > 0


# == failing runs leave no output ============================================================


class InterruptedOracle:
    """The real oracle for two rounds, then Ctrl-C."""

    name = "interrupted"

    def __init__(self) -> None:
        self.inner = get_oracle("heuristic")
        self.calls = 0

    def solve(self, problem, *, seed=None):
        self.calls += 1
        if self.calls == 3:
            raise KeyboardInterrupt
        return self.inner.solve(problem, seed=seed)


def test_interrupted_run_writes_nothing(tmp, monkeypatch, capsys) -> None:
    oracle = InterruptedOracle()
    monkeypatch.setattr(br_module, "get_oracle", lambda name, **kw: oracle)
    before = listing(tmp)
    args = synth_args(tmp, *BUDGET, "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"))
    assert main(args) == 130
    assert oracle.calls == 3
    assert listing(tmp) == before


def test_failure_after_the_release_writes_nothing(tmp, monkeypatch, capsys) -> None:
    def broken_report(*args, **kwargs):
        raise DPQueryError("evaluation failed")

    monkeypatch.setattr(synth_module, "evaluation_report", broken_report)
    before = listing(tmp)
    args = synth_args(tmp, *BUDGET, "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"))
    assert main([*args, "--evaluate"]) == 2
    check_clean_failure(tmp, before, capsys, "evaluation failed")


def test_unserialisable_report_writes_nothing(tmp, monkeypatch) -> None:
    """The report is serialised before anything is written, so the CSV is not left alone."""
    real = synth_module.publishable_report

    def odd_report(*args, **kwargs):
        report = real(*args, **kwargs)
        report["release"]["parameters"]["odd"] = object()
        return report

    monkeypatch.setattr(synth_module, "publishable_report", odd_report)
    before = listing(tmp)
    args = synth_args(tmp, *BUDGET, "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"))
    with pytest.raises(TypeError, match="not JSON serialisable"):
        main(args)
    assert listing(tmp) == before


class LyingOracle:
    """Returns records that break the groups, with nonsense statistics."""

    name = "liar"

    def solve(self, problem, *, seed=None):
        return OracleResult(
            record=np.ones(problem.d),
            objective=float("inf"),
            bound=float("nan"),
            optimal=True,
            seconds=-1.0,
            status="optimal (trust me)",
            timed_out=False,
            free=np.ones(problem.d, dtype=bool),
            oracle="liar",
        )


def test_untrusted_oracle_run_via_cli_is_valid(tmp, monkeypatch) -> None:
    out, rep = tmp / "s.csv", tmp / "r.json"
    args = synth_args(tmp, *BUDGET, "--out", str(out), "--report", str(rep))
    assert main(args) == 0
    honest = strict_json(rep)
    monkeypatch.setattr(br_module, "get_oracle", lambda name, **kw: LyingOracle())
    assert main([*args, "--overwrite"]) == 0
    lied = strict_json(rep)
    assert lied["release"]["privacy"] == honest["release"]["privacy"]
    assert lied["release"]["oracle_summary"]["repaired"] == lied["release"]["records"]
    synth = pd.read_csv(out)
    assert synth.notna().all().all()  # every group decoded to exactly one value
    assert lied["release"]["decode"] == honest["release"]["decode"]


def test_saved_workload_over_another_domain_is_rejected(tmp, capsys) -> None:
    """Same number of bits, different attributes: the queries would mean other things."""
    from dpquery.queries import random_marginal_queries

    other = Domain(tuple(reversed(DOMAIN.attributes)))
    assert other.d == DOMAIN.d
    random_marginal_queries(other, 2, 30, seed=0).save(tmp / "w.npz")
    before = listing(tmp)
    args = synth_args(tmp, *BUDGET, "--out", str(tmp / "s.csv"))
    args[args.index("marginals")] = str(tmp / "w.npz")
    assert main(args) == 2
    check_clean_failure(tmp, before, capsys, "different domain")


# == every algorithm through the same command ================================================

ALGORITHM_RUNS = {
    "dqrs": ("--eta", "0.1", "--samples", "20", *BUDGET),
    "fem": ("--epsilon", "1", "--T", "4", "--samples", "3"),
    "sepfem": ("--epsilon", "1", "--T", "4", "--samples", "3"),
    "mwem": ("--epsilon", "1", "--T", "5"),
    "uniform": ("--epsilon", "1", "--size", "25"),
    "adaptive-projection": ("--epsilon", "1", "--size", "200"),
}


def small_args(tmp: Path, algorithm: str, *extra: str) -> list[str]:
    return [
        "synth", "--data", str(tmp / "data.csv"), "--domain", str(tmp / "domain.json"),
        "--algorithm", algorithm, "--workload", "marginals", "--k", "2", "--queries", "60",
        "--quiet", "--seed", "0", "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"),
        *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("algorithm", sorted(ALGORITHM_RUNS))
def test_every_algorithm_releases_through_synth(algorithm, tmp) -> None:
    assert main(small_args(tmp, algorithm, *ALGORITHM_RUNS[algorithm])) == 0
    table = pd.read_csv(tmp / "s.csv")
    assert list(table.columns[: len(DOMAIN)]) == list(DOMAIN.names)
    report = strict_json(tmp / "r.json")
    assert report["release"]["algorithm"] == algorithm
    budget = report["release"]["privacy"]["budget"]
    assert budget["epsilon"] == 1.0 or budget["epsilon"] == 2.0
    assert report["release"]["privacy"]["spent"] <= budget["epsilon"]
    assert set(table["color"]) <= {"red", "green", "blue"}


@pytest.mark.parametrize(
    ("algorithm", "extra", "match"),
    [
        ("mwem", ("--epsilon", "1", "--samples", "3"), "mwem does not take --samples"),
        ("dualquery", (*BUDGET, "--rho", "0.1"), "dualquery does not take --rho"),
        ("fem", ("--epsilon", "1", "--alpha", "0.1"), "fem does not take --alpha"),
        ("mwem", ("--epsilon", "1", "--oracle", "cpsat"), "mwem does not take --oracle"),
        ("dualquery", (*BUDGET, "--compress", "3"), "dualquery does not take --compress"),
    ],
)
def test_options_an_algorithm_does_not_take_are_refused(algorithm, extra, match, tmp, capsys):
    before = listing(tmp)
    assert main(small_args(tmp, algorithm, *extra)) == 2
    check_clean_failure(tmp, before, capsys, match)


@pytest.mark.parametrize(
    ("algorithm", "extra", "match"),
    [
        ("adaptive-projection", ("--compress", "-1"), "--compress must be"),
        ("auto", ("--column-tv", "2"), "--column-tv must lie strictly between 0 and 1, got 2"),
    ],
)
def test_out_of_range_adaptive_options_are_refused(algorithm, extra, match, tmp, capsys):
    before = listing(tmp)
    assert main(small_args(tmp, algorithm, "--epsilon", "1", *extra)) == 2
    check_clean_failure(tmp, before, capsys, match)


def test_release_on_an_inferred_domain_says_it_is_not_private(tmp, capsys) -> None:
    args = [
        "synth", "--data", str(tmp / "data.csv"), "--infer-domain", "--algorithm", "dualquery",
        "--workload", "marginals",
        "--k", "2", "--queries", "40", "--eta", "0.5", "--samples", "10", "--T", "3",
        "--quiet", "--seed", "0", "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"),
    ]  # fmt: skip
    assert main(args) == 0
    assert "NOT differentially private" in capsys.readouterr().err
    report = strict_json(tmp / "r.json")
    assert "NOT differentially private" in report["release"]["privacy"]["warning"]


def test_fem_reweighted_by_mwem_through_synth(tmp) -> None:
    extra = ("--epsilon", "1", "--T", "4", "--samples", "3", "--reweight", "0.5",
             "--reweight-rounds", "3")  # fmt: skip
    assert main(small_args(tmp, "fem", *extra)) == 0
    report = strict_json(tmp / "r.json")
    release = report["release"]
    assert release["algorithm"] == "reweighted"
    assert release["parameters"]["base"]["T"] == 4 and release["parameters"]["mwem"]["T"] == 3
    assert release["privacy"]["budget"]["epsilon"] == 1.0
    assert release["privacy"]["spent"] <= 1.0
    assert len(pd.read_csv(tmp / "s.csv")) == 400  # n rows drawn from its weighted records
    assert release["output"]["released_records"] == release["records"]


@pytest.mark.parametrize(
    ("algorithm", "extra", "match"),
    [
        ("fem", ("--epsilon", "1", "--reweight-rounds", "3"), "--reweight-rounds needs"),
        ("fem", ("--epsilon", "1", "--T", "4", "--reweight", "1.5"), "--reweight must lie"),
        ("mwem", ("--epsilon", "1", "--reweight", "0.5"), "mwem does not take --reweight"),
    ],
)
def test_bad_reweighting_options_are_refused(algorithm, extra, match, tmp, capsys) -> None:
    before = listing(tmp)
    assert main(small_args(tmp, algorithm, *extra)) == 2
    check_clean_failure(tmp, before, capsys, match)


def _columns_args(tmp: Path, *extra: str) -> list[str]:
    # 1-way marginals of color and smoker only: age, size and e are untouched.
    return [
        "synth", "--data", str(tmp / "data.csv"), "--domain", str(tmp / "domain.json"),
        "--algorithm", "fem", "--epsilon", "1", "--T", "4", "--samples", "3",
        "--workload", "all-marginals", "--k", "1", "--attributes", "color", "smoker",
        "--seed", "0", "--out", str(tmp / "s.csv"), "--report", str(tmp / "r.json"), *extra,
    ]  # fmt: skip


def test_untouched_columns_are_measured_and_reported(tmp, capsys) -> None:
    assert main(_columns_args(tmp)) == 0
    out = capsys.readouterr().out
    report = strict_json(tmp / "r.json")["release"]
    columns = report["columns"]
    assert columns["measured"] == 3 and columns["share"] == 0.01
    assert columns["sources"] == {"color": "workload", "smoker": "workload",
                                  "age": "1-way marginal", "size": "1-way marginal",
                                  "e": "1-way marginal"}  # fmt: skip
    assert "3 no query touches, measured as 1-way marginals (1% of the budget)" in out
    assert report["privacy"]["spent"] <= 1.0


def test_opted_out_columns_say_they_carry_no_information(tmp, capsys) -> None:
    assert main(_columns_args(tmp, "--free-attributes", "uniform")) == 0
    out = capsys.readouterr().out
    sources = strict_json(tmp / "r.json")["release"]["columns"]["sources"]
    assert sources["age"].startswith("not measured (uniform)")
    assert "carries no information about the data" in sources["size"]
    assert "age, size, e not measured: no information about the data" in out
    code = main(_columns_args(tmp, "--free-attributes", "zeros", "--untouched-share", "0.1",
                              "--overwrite"))  # fmt: skip
    assert code != 0
    assert "--untouched-share needs free_attributes left unset" in capsys.readouterr().err
