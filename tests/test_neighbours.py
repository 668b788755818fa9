"""The neighbouring relation (dpquery.privacy.neighbours): the sensitivities per relation by
hand and on random neighbours of several sizes (n and n + 1 records), the noisy n, the
papers' algorithms refusing add/remove, and a release under add/remove that never tells n:
not on the console, in the report, in the planner or in the output's row count."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpquery.algorithms import registry
from dpquery.algorithms.marginal.adaptive_projection import (
    AdaptiveProjection,
    candidates_of,
    quality_scores,
)
from dpquery.cli import main
from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Budget, Ledger
from dpquery.privacy.neighbours import (
    ADD_REMOVE,
    NOISY_N,
    RELATIONS,
    REPLACE_ONE,
    check_neighbours,
    count_sensitivity,
    describe,
    marginal_sensitivity,
    noisy_n,
    selection_sensitivity,
)
from dpquery.queries.marginals import marginal_counts

PAPERS = ("dualquery", "fem", "sepfem", "dqrs", "mwem")
SIZES = np.array([3, 4, 2, 5])  # four attributes' sizes
SHAPES = (1, 2, 10, 100, 1000)  # n of the random tables


# --- the helpers, by hand ------------------------------------------------------------------
def test_the_sensitivities_by_hand() -> None:
    assert RELATIONS == ("add-remove", "replace-one")
    assert marginal_sensitivity(REPLACE_ONE) == math.sqrt(2)
    assert marginal_sensitivity(ADD_REMOVE) == 1.0
    assert selection_sensitivity(6, REPLACE_ONE) == 12.0
    assert selection_sensitivity(6, ADD_REMOVE) == 6.0
    assert count_sensitivity(ADD_REMOVE) == count_sensitivity(REPLACE_ONE) == 1.0
    assert describe(ADD_REMOVE) == "add/remove one record (n private)"
    assert describe(REPLACE_ONE) == "replace one record (n public)"


@pytest.mark.parametrize("bad", ["add_remove", "replace", "", None, 1])
def test_a_bad_relation_is_named_with_the_accepted_ones(bad: Any) -> None:
    accepted = r"neighbours must be 'add-remove' \(.*\) or 'replace-one' \(.*\); got "
    with pytest.raises(DPQueryError, match=accepted + re.escape(repr(bad))):
        check_neighbours(bad)
    if bad is not None:  # None: the algorithm's own relation
        with pytest.raises(DPQueryError, match=accepted):
            registry.build("auto", {"epsilon": 1.0}, neighbours=bad)
    with pytest.raises(DPQueryError, match=accepted):
        AdaptiveProjection(epsilon=1.0, neighbours=bad).validate()


# --- the sensitivities on random neighbours ------------------------------------------------
def _table(n: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([rng.integers(0, s, size=n) for s in SIZES]).astype(np.int64)


def _neighbours(D: np.ndarray, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """One record added (n + 1 rows), one removed (n - 1), one replaced (n)."""
    added = np.vstack([D, _table(1, rng)])
    removed = np.delete(D, rng.integers(len(D)), axis=0)
    replaced = D.copy()
    replaced[rng.integers(len(D))] = _table(1, rng)[0]
    return [(ADD_REMOVE, added), (ADD_REMOVE, removed), (REPLACE_ONE, replaced)]


MARGINALS = [m for k in (1, 2, 3) for m in itertools.combinations(range(len(SIZES)), k)]


@pytest.mark.parametrize("n", SHAPES)
def test_a_marginal_moves_by_its_relations_sensitivity_on_random_neighbours(n: int) -> None:
    """Adding or removing a record moves one cell of every marginal by 1: L2 exactly 1;
    replacing one moves at most two cells, L2 at most sqrt(2) (reached when the record's
    cell changes)."""
    rng = np.random.default_rng(n)
    reached = False
    for _ in range(20):
        D = _table(n, rng)
        for relation, E in _neighbours(D, rng):
            for r in MARGINALS:
                change = np.linalg.norm(marginal_counts(E, SIZES, r) - marginal_counts(D, SIZES, r))
                if relation == ADD_REMOVE:
                    assert change == pytest.approx(1.0)
                else:
                    assert change <= marginal_sensitivity(REPLACE_ONE) + 1e-12
                    reached |= bool(np.isclose(change, math.sqrt(2)))
    assert reached


@pytest.mark.parametrize("n", SHAPES)
def test_the_selection_score_moves_by_at_most_max_w_under_add_remove(n: int) -> None:
    """AIM's quality, its estimate scaled to the same (noisy) n on both sides, moves by at
    most w_r <= max w_r when a record is added or removed, and by at most 2 w_r when one is
    replaced (the sensitivities the selection uses)."""
    rng = np.random.default_rng(100 + n)
    workload = [(0, 1, 2), (1, 3), (0, 2, 3)]
    table = candidates_of(workload)
    candidates = list(table)
    weights = np.array([table[r] for r in candidates])
    for _ in range(20):
        D = _table(n, rng)
        X = _table(50, rng)  # the records fitted so far (post-processing of past measurements)
        n_hat = max(1, n + int(rng.integers(-5, 6)))  # noisy n: the same on both sides
        sigma = float(rng.uniform(0.5, 5))

        def scores(data: np.ndarray, X: np.ndarray, n_hat: int, sigma: float) -> np.ndarray:
            counts = [marginal_counts(data, SIZES, r) for r in candidates]
            return quality_scores(candidates, weights, counts, X, SIZES, n=n_hat, sigma=sigma)

        base = scores(D, X, n_hat, sigma)
        for relation, E in _neighbours(D, rng):
            change = np.abs(scores(E, X, n_hat, sigma) - base)
            factor = 1.0 if relation == ADD_REMOVE else 2.0
            assert np.all(change <= factor * weights + 1e-9)
            assert change.max() <= selection_sensitivity(weights.max(), relation) + 1e-9


def test_the_noisy_n_is_charged_before_its_draw_at_sensitivity_one() -> None:
    """rho-zCDP of a count of sensitivity 1 (CKS Theorem 4): sigma^2 = 1 / (2 rho); at
    rho = 0.5, sigma = 1, and over 2,000 draws the sample standard deviation is within 10%
    of 1 (a false-failure rate below 1e-6: the estimate's relative standard error is 1.6%)."""
    ledger = Ledger(Budget.zcdp(2000.0))
    rng = np.random.default_rng(0)
    draws = np.array([noisy_n(10_000, 0.5, rng, ledger) for _ in range(2000)])
    assert ledger.entries[0].charge.mechanism == NOISY_N
    assert ledger.entries[0].charge.cost == ZCDP(0.5)
    assert len(ledger.entries) == 2000
    assert abs(draws.std() - 1.0) < 0.1 and abs(draws.mean() - 10_000) < 0.2
    assert noisy_n(1, 1e-6, np.random.default_rng(1), ledger) >= 1  # never below one record


# --- the papers' algorithms keep replace-one -------------------------------------------------
@pytest.mark.parametrize("name", PAPERS)
def test_the_papers_algorithms_refuse_add_remove_by_name(name: str) -> None:
    with pytest.raises(DPQueryError, match=f"{name} is proved for replace-one.*pass "
                       "neighbours='replace-one'"):  # fmt: skip
        registry.build(name, {"epsilon": 1.0}, neighbours="add-remove")
    model = registry.build(name, {"epsilon": 1.0}, neighbours="replace-one")
    assert model.relation == REPLACE_ONE  # type: ignore[attr-defined]
    # without neighbours: their own relation, so existing commands keep working
    assert registry.build(name, {"epsilon": 1.0}).relation == REPLACE_ONE  # type: ignore[attr-defined]
    assert registry.default_neighbours(name) == REPLACE_ONE


@pytest.mark.parametrize("name", ["auto", "adaptive-projection", "wide-dense"])
def test_auto_and_its_releases_default_to_add_remove(name: str) -> None:
    assert registry.default_neighbours(name) == ADD_REMOVE
    assert registry.build(name, {"epsilon": 1.0}).relation == ADD_REMOVE  # type: ignore[attr-defined]


# --- the release on the command line ---------------------------------------------------------
@pytest.fixture(scope="module")
def tables(require_dataset: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Five attributes of adult-pgm, every record (n) and all but the last (n - 1)."""
    require_dataset("adult-pgm")
    from dpquery import datasets

    table, full = datasets.load_table("adult-pgm")
    names = ["workclass", "marital-status", "race", "sex", "income>50K"]
    domain = Domain(tuple(full[a] for a in names))
    folder = tmp_path_factory.mktemp("neighbours")
    domain.save(folder / "domain.json")
    paths = {}
    for label, rows in (("n", table[names]), ("n-1", table[names].iloc[:-1])):
        paths[label] = folder / f"{label}.csv"
        rows.to_csv(paths[label], index=False)
    return {"folder": folder, "paths": paths, "n": len(table), "domain": folder / "domain.json"}


def _synth(tables: dict[str, Any], label: str, tmp: Path, *flags: str) -> tuple[int, Path]:
    out = tmp / f"{label}.csv"
    argv = ["synth", "--data", str(tables["paths"][label]), "--domain", str(tables["domain"]),
            "--epsilon", "1", "--seed", "5", "--out", str(out), "--report",
            str(tmp / f"{label}.json"), *flags]  # fmt: skip
    return main(argv), out


def _mentions(text: str, n: int) -> bool:
    """Whether ``text`` holds ``n`` as a number of its own (``48842`` or ``48,842``)."""
    forms = "|".join(re.escape(f) for f in {f"{n}", f"{n:,}"})
    return re.search(rf"(?<![\d.,])(?:{forms})(?![\d]|[.,]\d)", text) is not None


@pytest.mark.realdata
def test_under_add_remove_no_output_tells_n(
    tables: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default release on tables of n and n - 1 records with the same seed: neither
    exact n appears on stdout, stderr, in the report or as the output's row count (the
    noisy n, sigma about 58 at epsilon 1: the seeded draws are not n or n - 1; a draw would
    equal one of them with probability below 1.5%), and the report names the relation."""
    n = tables["n"]
    for label, size in (("n", n), ("n-1", n - 1)):
        code, out = _synth(tables, label, tmp_path)
        assert code == 0
        printed = capsys.readouterr()
        report = (tmp_path / f"{label}.json").read_text()
        rows = len(pd.read_csv(out))
        for exact in (n, n - 1):
            assert not _mentions(printed.out + printed.err, exact), (label, exact)
            assert not _mentions(report, exact), (label, exact)
            assert rows != exact
        assert abs(rows - size) < 400  # a noisy n: within 7 sigma
        assert printed.out.splitlines()[0].endswith(
            "unbounded DP (add or remove one record), n private"
        )
        privacy = json.loads(report)["release"]["privacy"]
        assert privacy["neighbours"] == ADD_REMOVE
        assert privacy["budget"]["delta"] == 1e-9  # not 1/n^2
        assert json.loads(report)["release"]["parameters"]["noisy_n"] == rows


@pytest.mark.realdata
def test_rows_asked_for_are_written_and_replace_one_writes_n(
    tables: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _synth(tables, "n-1", tmp_path, "--rows", "1234", "--quiet")
    assert code == 0 and len(pd.read_csv(out)) == 1234
    code, out = _synth(tables, "n-1", tmp_path, "--neighbours", "replace-one", "--overwrite")
    assert code == 0 and len(pd.read_csv(out)) == tables["n"] - 1
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].endswith("bounded DP (replace one record), n public")
    report = json.loads((tmp_path / "n-1.json").read_text())
    assert report["release"]["privacy"]["neighbours"] == REPLACE_ONE
    assert report["release"]["parameters"]["n"] == tables["n"] - 1


@pytest.mark.realdata
@pytest.mark.parametrize("name", ["dualquery", "fem", "mwem"])
def test_a_papers_algorithm_with_add_remove_exits_non_zero_and_writes_nothing(
    name: str, tables: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _synth(tables, "n", tmp_path, "--algorithm", name, "--neighbours", "add-remove")
    assert code != 0 and not out.exists() and not (tmp_path / "n.json").exists()
    err = capsys.readouterr().err
    assert f"{name} is proved for replace-one" in err and "--neighbours replace-one" in err


@pytest.mark.realdata
def test_the_planner_names_the_relation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["privacy", "synth", "--dataset", "adult-pgm", "--epsilon", "1"]) == 0
    text = capsys.readouterr().out
    assert "neighbours: add/remove one record (n private)" in text
    assert "the number of records (discrete Gaussian): 1 x" in text
    assert "delta=1e-09" in text
    assert main(["privacy", "synth", "--dataset", "adult-pgm", "--epsilon", "1",
                 "--neighbours", "replace-one", "--json"]) == 0  # fmt: skip
    plan = json.loads(capsys.readouterr().out)
    assert plan["neighbours"] == REPLACE_ONE
    assert all(c["mechanism"] != NOISY_N for c in plan["charges"])


def test_a_learned_domain_refuses_add_remove_before_reading(tmp_path: Path) -> None:
    # 20 records: the learning's noisy n (sd about 41 at epsilon 1) is far below the smallest
    # table one column can be learned from (142), so the table is refused; seeded, so
    # the draw is the same on every run
    csv = tmp_path / "raw.csv"
    pd.DataFrame({"a": ["x", "y"] * 10}).to_csv(csv, index=False)
    argv = ["synth", "--data", str(csv), "--epsilon", "1", "--out", str(tmp_path / "o.csv"),
            "--neighbours", "add-remove", "--seed", "0"]  # fmt: skip
    assert main(argv) != 0 and not (tmp_path / "o.csv").exists()


# --- the estimator ----------------------------------------------------------------------------
@pytest.mark.realdata
def test_the_estimator_under_add_remove_spends_the_noisy_n_first_and_reports_no_n(
    tables: dict[str, Any],
) -> None:
    """1% of rho buys the noisy n, first; the marginals are measured at sensitivity 1 (the
    same sigma costs half of replace-one's rho); the release's guarantee names the relation."""
    from dpquery.data.encode import encode
    from dpquery.queries import random_marginal_queries

    domain = Domain.load(tables["domain"])
    data = encode(pd.read_csv(tables["paths"]["n"]), domain)
    workload = random_marginal_queries(domain, 2, 30, seed=1)
    release = AdaptiveProjection(epsilon=1.0, seed=2, progress=False).fit(data, workload)
    entries = release.ledger.entries
    assert entries[0].charge.mechanism == NOISY_N
    rho = release.ledger.report().guarantees[0].rho
    assert entries[0].charge.cost.rho == pytest.approx(0.01 * 0.0149731, rel=1e-4)  # type: ignore[union-attr]
    assert release.ledger.spent <= 1.0 and rho is not None
    assert "n" not in release.parameters and release.parameters["noisy_n"] != data.n
    sigma = release.parameters["one_way"][0]
    first = entries[1].charge.cost.rho  # type: ignore[union-attr]
    assert first == pytest.approx(1 / (2 * sigma**2), rel=1e-6)  # sensitivity 1, not sqrt(2)
    assert "for add-remove neighbours" in release.guarantee.describe()


def test_the_online_mechanism_refuses_add_remove_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s.db"
    argv = ["online", "--state", str(state), "--epsilon", "1", "--alpha", "0.1", "--k", "2",
            "--neighbours", "add-remove"]  # fmt: skip
    assert main(argv) != 0 and not state.exists()
    assert "online (private multiplicative weights) is proved for replace-one" in (
        capsys.readouterr().err
    )


def test_the_html_page_under_add_remove_shows_no_n() -> None:
    """The data holder's page (NOT PRIVATE) names the relation and leaves n out, from its
    text and its embedded JSON; the output's row count is the noisy n."""
    pytest.importorskip("matplotlib")
    from dpquery.data.encode import encode
    from dpquery.evaluation.holder import evaluate_synthetic
    from dpquery.evaluation.html import render_html
    from dpquery.evaluation.release_report import publishable_report
    from dpquery.queries import all_kway_marginals
    from test_evaluation_html import DOMAIN, small_table

    data = encode(small_table(437, 11), DOMAIN)
    workload = all_kway_marginals(DOMAIN, 2)
    release = registry.build("adaptive-projection", {"epsilon": 1.0}, seed=0,
                             progress=False).fit(data, workload)  # fmt: skip
    evaluation = evaluate_synthetic(data, release.records, workload)
    section = json.loads(json.dumps(publishable_report(release)["release"], default=float))
    text = render_html(evaluation, section)
    assert not _mentions(text, 437) and release.parameters["noisy_n"] != 437
    assert "left out of the data" in text and "private under add/remove" in text
