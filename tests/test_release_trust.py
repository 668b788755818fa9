"""What a release tells about the data beyond its guarantee, and what its guarantee says.

* The output's dtypes come from the public domain (or declared ``dtypes=``), never from the
  private table: neighbouring tables give the same dtypes and, when they encode alike, the
  same bytes.
* The publishable account carries no timing of a step that reads the private data.
* A failed fit keeps its spend: ``ledger_`` and ``exc.ledger``; a retry is refused.
* A seeded release says, next to its guarantee, that it does not hold against anyone who
  knows the seed; a release over an inferred domain says NOT PRIVATE.
* The same on item data (the wide release), and the CLI shows what a failed fit spent.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import dpquery.algorithms.marginal.adaptive_projection as marginals_module
from dpquery import DPSynthesizer, synthesize
from dpquery.algorithms import registry
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.release import PRIVATE_TIMINGS, PUBLIC_TIMINGS
from dpquery.algorithms.wide import measure as wide_measure
from dpquery.cli import main
from dpquery.data import Domain, ItemSets, encode, infer_domain, write_item_sets
from dpquery.errors import DomainError, DPQueryError, NonPrivateWarning
from dpquery.evaluation.release_report import evaluation_report, publishable_report
from dpquery.privacy import Budget, BudgetExceededError, Ledger, PureDP
from dpquery.privacy.ledger import NOT_PRIVATE, SEEDED
from dpquery.queries import default_workload, random_marginal_queries

CODEBOOK = {
    "color": ["red", "green", "blue"],
    "age": {"min": 0, "max": 100, "bins": 10},
    "size": [1, 2, 3],
}
N = 200


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], N),
        "age": rng.integers(0, 100, N),
        "size": rng.choice([1, 2, 3], N),
    })  # fmt: skip


def neighbour(df: pd.DataFrame, age: float) -> pd.DataFrame:
    """``df`` with one record's age replaced (age 37 in the first row, then ``age``)."""
    out = df.copy()
    out["age"] = out["age"].astype("float64")
    out.loc[0, "age"] = age
    return out


# -- output dtypes: the domain's, never the data's ---------------------------------------------
def test_neighbouring_frames_give_identical_dtypes_and_bytes(df) -> None:
    """37 and 37.5 fall in the same public bin, so the two tables encode to the same bits and
    the same seed must give the same output, byte for byte; pandas makes the second column
    float64, which the output must not copy (it did: int64 against float64)."""
    df.loc[0, "age"] = 37
    a, _ = synthesize(df, CODEBOOK, epsilon=1.0, seed=0)
    b, _ = synthesize(neighbour(df, 37.5), CODEBOOK, epsilon=1.0, seed=0)
    assert a.dtypes.to_dict() == b.dtypes.to_dict()
    assert str(a.dtypes["age"]) == "int64"  # integer bins: the domain says integers
    assert a.to_csv(index=False).encode() == b.to_csv(index=False).encode()


def test_a_missing_value_in_one_record_changes_no_dtype(df) -> None:
    codebook = {**CODEBOOK, "age": {"min": 0, "max": 100, "bins": 10, "missing": True}}
    a, _ = synthesize(df, codebook, epsilon=1.0, algorithm="uniform", seed=0)
    b, _ = synthesize(neighbour(df, np.nan), codebook, epsilon=1.0, algorithm="uniform", seed=0)
    assert a.dtypes.to_dict() == b.dtypes.to_dict()
    assert str(a.dtypes["age"]) == "Int64"  # a declared missing value: the nullable integer
    assert a.to_csv(index=False).encode() == b.to_csv(index=False).encode()


def test_declared_dtypes_are_public_and_checked(df) -> None:
    typed, _ = synthesize(
        df, CODEBOOK, epsilon=1.0, algorithm="uniform", seed=0, dtypes={"color": "category"}
    )
    assert list(typed["color"].cat.categories) == ["red", "green", "blue"]  # the domain's
    with pytest.raises(DomainError, match="would leak"):
        synthesize(df, CODEBOOK, epsilon=1.0, algorithm="uniform", dtypes=df)
    with pytest.raises(DomainError, match="not attributes of the domain"):
        synthesize(df, CODEBOOK, epsilon=1.0, algorithm="uniform", dtypes={"colour": "str"})
    with pytest.raises(DomainError, match="cannot be held"):
        synthesize(df, CODEBOOK, epsilon=1.0, algorithm="uniform", dtypes={"color": "int64"})


def test_the_cli_does_not_read_dtypes_from_a_parquet_footer(df, tmp_path: Path) -> None:
    Domain.from_codebook(CODEBOOK).save(tmp_path / "domain.json")
    df.loc[0, "age"] = 37
    outputs = []
    for name, table in (("a", df), ("b", neighbour(df, 37.5))):
        table.to_parquet(tmp_path / f"{name}.parquet", index=False)
        out = tmp_path / f"{name}.out.parquet"
        argv = ["synth", "--data", str(tmp_path / f"{name}.parquet"), "--domain",
                str(tmp_path / "domain.json"), "--epsilon", "1", "--seed", "0", "--quiet",
                "--out", str(out)]  # fmt: skip
        assert main(argv) == 0
        outputs.append(pd.read_parquet(out))
    assert outputs[0].dtypes.to_dict() == outputs[1].dtypes.to_dict()
    assert str(outputs[0].dtypes["age"]) == "int64"
    pd.testing.assert_frame_equal(outputs[0], outputs[1])


# -- timings: none of a step that reads the private data is published --------------------------
def _timing_keys(report: dict) -> set[str]:
    release = report["release"]
    keys = set(release["timings"])
    for r in release["rounds"]:
        keys |= {k for k in r if k.endswith("_s") or k == "seconds"}
    return keys


def test_the_publishable_report_has_no_timing_of_a_private_step(df) -> None:
    domain = Domain.from_codebook(CODEBOOK)
    data = encode(df, domain)
    workload = default_workload(domain, data.n, k=2, seed=0)
    adaptive = registry.build("adaptive-projection", {"epsilon": 1.0}, seed=0, progress=False)
    game = DualQuery(epsilon=1.0, eta=1.0, samples=10, T=3, seed=0, progress=False)
    for model in (adaptive, game):
        release = model.fit(data, workload)
        report = publishable_report(release)
        # only the data player's time (post-processing of charged outputs) is published
        assert _timing_keys(report) <= PUBLIC_TIMINGS, model.name
        assert not _timing_keys(report) & PRIVATE_TIMINGS
        # the curator still has them, in the NOT PRIVATE evaluation
        evaluation = evaluation_report(release, data, workload, seed=0)
        assert "total_s" in evaluation["timings"] and "true_answers_s" in evaluation["timings"]
    assert (
        "seconds"
        in evaluation_report(adaptive.fit(data, workload), data, workload, seed=0)["timings"][
            "rounds"
        ][0]
    )


# -- a failed fit keeps its spend --------------------------------------------------------------
def _fails_in_round_2():
    """``fit_records`` (the projection after each measurement) raising on its second call:
    round 2 has selected and measured, and charged both, when it fails."""
    real = marginals_module.fit_records
    calls = []

    def fit_records(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("injected failure in round 2")
        return real(*args, **kwargs)

    return mock.patch.object(marginals_module, "fit_records", fit_records)


def test_a_failed_api_fit_still_shows_what_it_spent(df) -> None:
    model = DPSynthesizer(epsilon=1.0, seed=0, progress=False)
    with _fails_in_round_2(), pytest.raises(RuntimeError, match="round 2") as failure:
        model.fit(df, CODEBOOK)
    ledger = model.ledger_
    assert failure.value.ledger is ledger
    mechanisms = [e.charge.mechanism for e in ledger.entries]
    assert mechanisms.count("exponential mechanism (marginal selection)") == 2
    assert 0 < ledger.spent < 1.0
    assert any("privacy spent before the failure" in n for n in failure.value.__notes__)
    assert not hasattr(model, "release_")
    with pytest.raises(DPQueryError, match="last fit failed after spending"):
        model.fit(df, CODEBOOK)  # a retry would spend on the same data again
    assert model.ledger_ is ledger  # nothing new was charged


def test_a_failed_auto_fit_keeps_its_ledger_on_the_estimator(df) -> None:
    domain = Domain.from_codebook(CODEBOOK)
    data = encode(df, domain)
    workload = default_workload(domain, data.n, k=3, seed=0)
    auto = registry.build("auto", {"epsilon": 1.0}, seed=0, progress=False)
    with _fails_in_round_2(), pytest.raises(RuntimeError) as failure:
        auto.fit(data, workload)
    assert auto.ledger_ is failure.value.ledger and auto.ledger_.entries
    with pytest.raises(DPQueryError, match="last fit failed after spending"):
        auto.fit(data, workload)


def test_a_fit_refused_before_any_charge_can_be_retried(df) -> None:
    domain = Domain.from_codebook(CODEBOOK)
    data = encode(df, domain)
    workload = random_marginal_queries(domain, 2, 20, seed=0)
    ledger = Ledger(Budget.approx(1.0, 1e-6))
    ledger.charge("an earlier release", PureDP(0.9))
    model = DualQuery(eta=1.0, samples=10, T=3, seed=0, progress=False)
    with pytest.raises(BudgetExceededError):  # refused before anything is drawn
        model.fit(data, workload, ledger=ledger)
    assert model.ledger_ is ledger and len(ledger.entries) == 1
    # nothing was spent by the failed fit: the same estimator may fit again
    assert model.fit(data, workload).ledger.entries


# -- the guarantee says what it does not cover --------------------------------------------------
def test_a_seeded_release_qualifies_its_guarantee(df) -> None:
    _, seeded = synthesize(df, CODEBOOK, epsilon=1.0, algorithm="uniform", seed=0)
    assert seeded.guarantee.describe().endswith(SEEDED)
    privacy = publishable_report(seeded)["release"]["privacy"]
    assert SEEDED in privacy["seeded"]
    assert all(g["seeded"] for g in privacy["guarantees"] + privacy["by_accountant"])
    _, secure = synthesize(df, CODEBOOK, epsilon=1.0, algorithm="uniform")
    assert "seed" not in secure.guarantee.describe()
    assert "seeded" not in publishable_report(secure)["release"]["privacy"]


def test_an_inferred_domain_makes_every_statement_not_private(df) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        domain = infer_domain(df)
    with pytest.warns(NonPrivateWarning, match="NOT differentially private"):
        _, release = synthesize(df, domain, epsilon=1.0, algorithm="uniform", seed=0)
    assert release.guarantee.describe().startswith(NOT_PRIVATE)
    privacy = release.privacy()
    assert all(g["not_private"] for g in privacy["guarantees"] + privacy["by_accountant"])


def _cli(tmp_path: Path, df: pd.DataFrame, *extra: str) -> tuple[str, dict]:
    df.to_csv(tmp_path / "data.csv", index=False)
    report = tmp_path / "r.json"
    argv = ["synth", "--data", str(tmp_path / "data.csv"), "--algorithm", "uniform",
            "--epsilon", "1", "--out", str(tmp_path / "s.csv"), "--report", str(report),
            "--overwrite", *extra]  # fmt: skip
    return argv, report  # type: ignore[return-value]


def test_the_cli_qualifies_a_seeded_guarantee(df, tmp_path: Path, capsys) -> None:
    Domain.from_codebook(CODEBOOK).save(tmp_path / "domain.json")
    argv, report = _cli(tmp_path, df, "--domain", str(tmp_path / "domain.json"))
    assert main([*argv, "--seed", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("privacy: (1, 2.5e-05)-DP") and SEEDED in first
    privacy = json.loads(report.read_text())["release"]["privacy"]
    assert SEEDED in privacy["seeded"] and all(g["seeded"] for g in privacy["guarantees"])
    assert main(argv) == 0  # unseeded: a secure generator, nothing to qualify
    assert "seed" not in capsys.readouterr().out.splitlines()[0]


def test_the_cli_says_not_private_for_an_inferred_domain(df, tmp_path: Path, capsys) -> None:
    argv, report = _cli(tmp_path, df, "--infer-domain")
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith(f"privacy: {NOT_PRIVATE}")
    assert "NOT differentially private" in captured.err
    privacy = json.loads(report.read_text())["release"]["privacy"]
    assert all(g["not_private"] for g in privacy["guarantees"])


# -- the default path's measurements: exact discrete Gaussian noise -----------------------------
def test_adaptive_projection_measures_with_the_exact_discrete_gaussian() -> None:
    """Every count of a measured marginal is an integer plus integer noise (CKS's exact
    sampler), charged at the Gaussian's rho = 2 / (2 sigma^2). With sigma = 3 on 2,000 cells
    the sample variance is within 20% of sigma^2 and the mean within 0.4 of 0: each bound is
    more than 6 standard deviations away (false-failure rate below 1e-8; the test is seeded)."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=(5_000, 2))
    codes[:, 1] = rng.integers(0, 500, size=5_000)
    sizes = np.array([4, 500])
    ledger = Ledger(Budget.zcdp(1.0))
    true = np.bincount(codes[:, 0] * 500 + codes[:, 1], minlength=2_000)
    fine = {(0, 1): true}  # the marginal's counts, as the counts pass reads them
    x = marginals_module.measure(fine, sizes, (0, 1), 3.0, np.random.default_rng(1), ledger)
    assert np.array_equal(x.y, np.round(x.y))  # float Gaussian noise is never whole
    (entry,) = ledger.entries
    assert entry.charge.cost.rho == pytest.approx(2 / (2 * 3.0**2))
    noise = x.y - true
    assert abs(noise.var() / 9.0 - 1) < 0.2 and abs(noise.mean()) < 0.4


def test_the_html_page_states_the_qualifications_beside_the_guarantee(df) -> None:
    pytest.importorskip("matplotlib")
    from dpquery.evaluation.holder import evaluate_synthetic
    from dpquery.evaluation.html import render_html
    from dpquery.queries import all_kway_marginals

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        inferred = infer_domain(df)
        _, release = synthesize(df, inferred, epsilon=1.0, algorithm="uniform", seed=0)
    data = encode(df, inferred)
    evaluation = evaluate_synthetic(data, release.records, all_kway_marginals(inferred, 1))
    page = render_html(evaluation, publishable_report(release)["release"])
    asked = page.index("Asked for")
    for statement in (NOT_PRIVATE, SEEDED):
        assert asked < page.index(statement) < page.index("<h3>")  # beside the guarantee


# -- the same on item data (the wide release) ---------------------------------------------------
# a small, fast release of the sparse mode (three charges)
WIDE = {"bound": 6, "pair_bound": 4, "head": 12, "pool": 3000, "head_mode": "off"}


@pytest.fixture
def sparse() -> sp.csr_array:
    rng = np.random.default_rng(0)
    p = np.minimum(1.0, 4.0 / np.arange(1, 81))
    return sp.csr_array((rng.random((300, 80)) < p / 2).astype(np.uint8))


def _fails_at_the_pairs(exc: BaseException):
    """The head pairs' measurement raising ``exc``: the items and sizes are charged."""

    def pair_counts(*args, **kwargs):
        raise exc

    return mock.patch.object(wide_measure, "pair_counts", pair_counts)


def test_a_seeded_item_release_qualifies_its_guarantee(sparse) -> None:
    _, seeded = synthesize(sparse, epsilon=1.0, seed=0, **WIDE)
    assert seeded.seeded and seeded.guarantee.describe().endswith(SEEDED)
    privacy = publishable_report(seeded)["release"]["privacy"]
    assert SEEDED in privacy["seeded"] and all(g["seeded"] for g in privacy["guarantees"])
    _, secure = synthesize(sparse, epsilon=1.0, **WIDE)
    assert not secure.seeded and "seeded" not in publishable_report(secure)["release"]["privacy"]


def test_a_failed_item_fit_keeps_its_ledger_and_refuses_a_retry(sparse) -> None:
    model = DPSynthesizer(epsilon=1.0, seed=0, options=WIDE, neighbours="replace-one")
    with _fails_at_the_pairs(RuntimeError("injected")), pytest.raises(RuntimeError) as failure:
        model.fit(sparse)
    ledger = model.ledger_
    assert failure.value.ledger is ledger
    assert [e.charge.mechanism for e in ledger.entries] == [wide_measure.ITEMS, wide_measure.SIZES]
    assert any("privacy spent before the failure" in n for n in failure.value.__notes__)
    with pytest.raises(DPQueryError, match="last fit failed after spending"):
        model.fit(sparse)
    assert len(model.ledger_.entries) == 2  # nothing new was charged


def test_an_item_fit_keeps_its_ledger(sparse) -> None:
    model = DPSynthesizer(epsilon=1.0, seed=0, options=WIDE, neighbours="replace-one").fit(sparse)
    assert model.ledger_ is model.release_.ledger and len(model.ledger_.entries) == 3


def _item_cli(tmp_path: Path, sparse: sp.csr_array) -> tuple[list[str], Path]:
    write_item_sets(tmp_path / "x.transactions.csv", ItemSets(sparse))
    report = tmp_path / "r.json"
    argv = ["synth", "--data", str(tmp_path / "x.transactions.csv"), "--epsilon", "1",
            "--out", str(tmp_path / "s.transactions.csv"), "--report", str(report),
            "--overwrite", "--bound", "6", "--head", "12", "--pool", "3000",
            "--head-mode", "off", "--neighbours", "replace-one"]  # fmt: skip
    return argv, report


def test_the_cli_qualifies_a_seeded_item_release(sparse, tmp_path: Path, capsys) -> None:
    argv, report = _item_cli(tmp_path, sparse)
    assert main([*argv, "--seed", "0"]) == 0
    assert SEEDED in capsys.readouterr().out.splitlines()[0]
    privacy = json.loads(report.read_text())["release"]["privacy"]
    assert SEEDED in privacy["seeded"] and all(g["seeded"] for g in privacy["guarantees"])


@pytest.mark.parametrize("exc", [DPQueryError("injected"), KeyboardInterrupt()])
def test_the_cli_shows_what_a_failed_fit_spent(exc, sparse, tmp_path: Path, capsys) -> None:
    argv, report = _item_cli(tmp_path, sparse)
    with _fails_at_the_pairs(exc):
        assert main(argv) != 0
    err = capsys.readouterr().err
    assert "privacy spent before the failure" in err
    assert not report.exists() and not (tmp_path / "s.transactions.csv").exists()


def test_the_cli_shows_what_a_failed_dense_fit_spent(df, tmp_path: Path, capsys) -> None:
    df.to_csv(tmp_path / "data.csv", index=False)
    Domain.from_codebook(CODEBOOK).save(tmp_path / "domain.json")
    data, domain, out = (str(tmp_path / f) for f in ("data.csv", "domain.json", "s.csv"))
    argv = ["synth", "--data", data, "--domain", domain, "--epsilon", "1", "--out", out]
    with mock.patch.object(marginals_module, "fit_records", side_effect=KeyboardInterrupt):
        assert main(argv) == 130  # interrupted in round 1's projection, after its charges
    assert "privacy spent before the failure" in capsys.readouterr().err


def test_a_failed_report_write_leaves_no_item_output(sparse, tmp_path: Path) -> None:
    """The item path writes its outputs as a group: a failing report leaves no records."""
    argv, report = _item_cli(tmp_path, sparse)
    with mock.patch.object(Path, "write_text", side_effect=OSError("disk full")):
        with pytest.raises(OSError, match="disk full"):
            main([*argv, "--seed", "0"])
    assert not report.exists() and not (tmp_path / "s.transactions.csv").exists()
