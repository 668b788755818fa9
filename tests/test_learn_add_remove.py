"""The domain learned under add/remove neighbours (``n`` private): every mechanism of the
learning on random neighbouring tables of ``n`` and ``n + 1`` records, the noisy ``n`` charged
first and read by the rules, and ``dpquery synth`` / ``dpquery domain learn`` on raw tables of
``n`` and ``n + 1`` rows that print, write and report no exact ``n``."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.domain_learning import (
    LEARNING_NOISY_N_SHARE,
    _read,
    learn_budget,
    learn_domain,
    learn_within,
    sub_bin_counts,
)
from dpquery.errors import DPQueryError
from dpquery.pipeline.learning import run_budget
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.privacy.delta import ADD_REMOVE_DELTA
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N, REPLACE_ONE
from dpquery.privacy.partition_selection import (
    discrete_gaussian_tail,
    partition_delta,
    select_partitions,
)
from dpquery.privacy.quantiles import (
    bucket_counts,
    magnitude_buckets,
    quantile_scores,
    signed_log_grid,
)

VALUES = np.array([0.0, 0.0, 40.0, 3.0, 7.5, 55.0, 1e4, -2.0])


def big_ledger() -> Ledger:
    return Ledger(Budget.zcdp(1e6))


def add_one(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """``x`` with one random record added at a random place (its add/remove neighbour)."""
    return np.insert(x, int(rng.integers(x.size + 1)), rng.choice([*VALUES, 1e6, 0.25]))


# --- each mechanism's sensitivity on neighbours of n and n + 1 records --------------------------
def test_quantile_scores_move_by_at_most_max_alpha_on_an_added_record():
    """OpenDP's bound: ``max(alpha, 1 - alpha) <= 1`` per added record, atoms removed or not
    (whether a record is an atom depends on it and the public atoms alone)."""
    rng = np.random.default_rng(20)
    cands = signed_log_grid(decimals=1)
    atoms = np.array([0.0, 40.0])
    for _ in range(200):
        n = int(rng.integers(1, 60))
        x = rng.choice(VALUES, size=n)
        y = add_one(rng, x)
        for alpha in (0.01, 0.3, 0.5, 0.9):
            bound = max(alpha, 1 - alpha) + 1e-12
            assert (
                np.abs(quantile_scores(x, cands, alpha) - quantile_scores(y, cands, alpha)).max()
                <= bound
            )
            a = quantile_scores(x[~np.isin(x, atoms)], cands, alpha)
            b = quantile_scores(y[~np.isin(y, atoms)], cands, alpha)
            assert np.abs(a - b).max() <= bound


def test_histograms_move_by_one_on_an_added_record():
    """The bounds' buckets, a column's profile (missing, numbers), its precision histogram,
    its partition selection's key counts and the within-bin histogram: one record adds one
    count, L1 and L2 sensitivity 1 (the sensitivity they are calibrated for under add/remove,
    ``tests/test_learn_l2.py``)."""
    rng = np.random.default_rng(21)
    edges = magnitude_buckets()
    attr = Numeric("x", (-5.0, 0.0, 10.0, 100.0, 1e4))
    for _ in range(200):
        n = int(rng.integers(1, 60))
        x = rng.choice(VALUES, size=n)
        y = add_one(rng, x)
        diff = bucket_counts(y, edges) - bucket_counts(x, edges)
        assert np.abs(diff).sum() == 1
        diff = sub_bin_counts(attr, y, 4) - sub_bin_counts(attr, x, 4)
        assert np.abs(diff).sum() == 1
        col = pd.Series([*(str(v) for v in x), None, "text"][: n + int(rng.integers(3))],
                        dtype=object)  # fmt: skip
        more = pd.concat([col, pd.Series([rng.choice(["7.25", None, "abc", "3"])], dtype=object)],
                         ignore_index=True)  # fmt: skip
        a, b = _read(col), _read(more)
        profile = np.array([b.missing - a.missing, b.numbers.size - a.numbers.size])
        assert np.sqrt((profile**2).sum()) <= 1.0
        assert np.abs(b.decimals - a.decimals).sum() <= 1
        keys = set(a.keys) | set(b.keys)
        assert sum(abs(b.keys.get(k, 0) - a.keys.get(k, 0)) for k in keys) == 1


def test_partition_selection_on_an_added_record():
    """D holds a five times and b four times; D' is D with one record of a new key c added,
    D'' with one a added. The exact release probabilities satisfy
    ``P[E | D] <= e^eps P[E | D'] + delta`` both ways, at the eps and delta the module proves
    (the added key's release is the tail event; the others, a count moved by 1)."""
    rho, tail = 0.5, 1e-3
    sel = select_partitions({"a": 5}, rho=rho, delta_tail=tail, rng=np.random.default_rng(22),
                            ledger=big_ledger())  # fmt: skip
    tau, s2 = sel.tau, float(sel.sigma2)
    delta_conv = 1e-2
    eps = zcdp_to_epsilon(rho, delta_conv)
    delta = delta_conv + partition_delta(tail, eps)
    pairs = [
        (discrete_gaussian_tail(tau - 5, s2), discrete_gaussian_tail(tau - 6, s2)),  # a added
        (0.0, discrete_gaussian_tail(tau - 1, s2)),  # c added: its release is the tail
    ]
    for p, q in pairs:
        assert p <= math.exp(eps) * q + delta and q <= math.exp(eps) * p + delta
        assert 1 - p <= math.exp(eps) * (1 - q) + delta and 1 - q <= math.exp(eps) * (1 - p) + delta


# --- the noisy n: charged first, read by the rules, never reported exactly ----------------------
def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    wage = np.round(rng.lognormal(3, 0.5, n), 2).astype(object)
    wage[rng.random(n) < 0.05] = None
    return pd.DataFrame({
        "wage": [None if w is None else str(w) for w in wage],
        "kids": rng.poisson(1.5, n).astype(str),
        "state": rng.choice(["CA", "NY", "TX"], n, p=[0.5, 0.3, 0.2]),
    })  # fmt: skip


def test_the_noisy_n_is_charged_first_and_read_on_neighbouring_tables():
    big = _table(2001)
    small = big.iloc[:2000].reset_index(drop=True)  # its add/remove neighbour
    reports = []
    for df in (small, big):
        ledger = Ledger(Budget.zcdp(0.5))
        _, report = learn_domain(df, rho=0.5, delta=1e-9, rng=np.random.default_rng(23),
                                 ledger=ledger, neighbours=ADD_REMOVE)  # fmt: skip
        first = ledger.entries[0].charge
        assert first.mechanism == NOISY_N and first.cost.rho == pytest.approx(
            LEARNING_NOISY_N_SHARE * 0.5
        )
        assert report.noisy_n_rho == pytest.approx(LEARNING_NOISY_N_SHARE * 0.5)
        assert report.rho <= 0.5 and report.neighbours == ADD_REMOVE
        body = report.to_dict()
        assert "n" not in body and body["noisy_n"] == report.n and body["neighbours"] == ADD_REMOVE
        assert "n=" not in report.describe() and "n private" in report.describe()
        reports.append(report)
    # the same seed draws the same noise: the noisy counts are one apart, and not the exact ones
    assert reports[1].n - reports[0].n == 1 and reports[0].n != 2000
    # the rules read the noisy n: a text column's rule states the noisy non-missing count
    for report in reports:
        rule = next(c.rule for c in report.columns if c.name == "state")
        present = int(re.search(r"x (\d+) -", rule).group(1))  # type: ignore[union-attr]
        assert present == report.n - max(report.columns[2].noisy["missing"], 0)


def test_replace_one_reports_the_public_n_as_before():
    df = _table(500)
    _, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(24),
                             ledger=big_ledger(), neighbours=REPLACE_ONE)  # fmt: skip
    assert list(report.to_dict()) == ["n", "rho", "delta_tail", "columns"]
    assert report.n == 500 and report.noisy_n_rho == 0.0
    assert report.describe().startswith("domain learned from n=500 records:")


def test_the_small_table_refusal_reads_the_noisy_n():
    df = pd.DataFrame({"sex": ["0", "1"] * 100, "age": [str(20 + i % 60) for i in range(200)]})
    b = learn_budget(1.0, 1e-9)
    ledger = Ledger(b.ledger_budget)
    with pytest.raises(DPQueryError, match=r"about [\d,]+ records \(a noisy count\) are too few"):
        learn_domain(df, rho=0.1 * b.rho, delta=b.delta_tail, ledger=ledger,
                     rng=np.random.default_rng(15), neighbours=ADD_REMOVE)  # fmt: skip
    assert [e.charge.mechanism for e in ledger.entries] == [NOISY_N]  # nothing else drawn


def test_within_weights_read_the_given_n():
    df = _table(3000)
    domain, _ = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(25),
                             ledger=big_ledger(), types={"wage": "numeric"})  # fmt: skip
    table = df.assign(wage=pd.to_numeric(df["wage"]))
    sub = Domain((domain["wage"],))
    _, public = learn_within(
        sub, table, rho=0.01, rng=np.random.default_rng(0), ledger=big_ledger()
    )
    _, tiny = learn_within(sub, table, rho=0.01, rng=np.random.default_rng(0), ledger=big_ledger(),
                           n=10)  # fmt: skip
    assert public.sub_bins and not tiny.sub_bins  # 10 records: no sub-bin beats the noise


def test_the_run_budget_under_add_remove_reads_no_n():
    budget = run_budget({"epsilon": 1.0, "delta": None, "rho": None}, None, 0.4, add_remove=True)
    assert budget.delta == ADD_REMOVE_DELTA


# --- the command line on raw tables of n and n + 1 rows -----------------------------------------
N = 2347


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("raw-ar")
    table = _table(N + 1, seed=7)
    paths = {}
    for label, rows in (("n", N), ("n+1", N + 1)):
        paths[label] = folder / f"{label}.csv"
        table.iloc[:rows].to_csv(paths[label], index=False)
    return paths


def _exact(text: str, n: int) -> bool:
    """Whether ``text`` holds ``n`` as a number (with or without thousands separators)."""
    return bool(re.search(rf"(?<![\d.]){n}(?![\d])|(?<![\d.]){n:,}(?![\d])", text))


@pytest.mark.parametrize("label, n", [("n", N), ("n+1", N + 1)])
def test_synth_on_a_raw_table_reveals_no_exact_n(raw, tmp_path, capsys, label, n):
    out, rep = tmp_path / "s.csv", tmp_path / "r.json"
    code = main(["synth", "--data", str(raw[label]), "--epsilon", "2", "--seed", "3",
                 "--out", str(out), "--report", str(rep)])  # fmt: skip
    assert code == 0
    console = capsys.readouterr()
    lines = console.out.splitlines()
    assert "unbounded DP (add or remove one record), n private" in lines[0]
    assert f"{ADD_REMOVE_DELTA:.1e}" in lines[0]
    report = json.loads(rep.read_text())
    assert report["release"]["privacy"]["neighbours"] == ADD_REMOVE
    assert report["release"]["domain"]["neighbours"] == ADD_REMOVE
    names = [m["mechanism"] for m in report["release"]["privacy"]["per_mechanism"]]
    assert names[0] == f"domain learning: {NOISY_N}"
    assert f"release: {NOISY_N}" in names
    domain_file = out.with_suffix(".domain.json")
    for text in (console.out, console.err, rep.read_text(), domain_file.read_text()):
        assert not _exact(text, n)
    assert len(pd.read_csv(out)) != n  # a noisy number of rows
    Domain.load(domain_file)


@pytest.mark.parametrize("label, n", [("n", N), ("n+1", N + 1)])
def test_domain_learn_reveals_no_exact_n(raw, tmp_path, capsys, label, n):
    out, rep = tmp_path / "d.json", tmp_path / "r.json"
    code = main(["domain", "learn", "--data", str(raw[label]), "--epsilon", "1", "--seed", "3",
                 "--out", str(out), "--report", str(rep)])  # fmt: skip
    assert code == 0
    console = capsys.readouterr()
    assert "n private" in console.out
    summary = json.loads(rep.read_text())
    assert summary["budget"]["delta"] == ADD_REMOVE_DELTA
    assert summary["learned"]["neighbours"] == ADD_REMOVE
    for text in (console.out, console.err, rep.read_text(), out.read_text()):
        assert not _exact(text, n)
    # replace-one is one flag away, with the public n and its 1/n^2
    code = main(["domain", "learn", "--data", str(raw[label]), "--epsilon", "1", "--seed", "3",
                 "--neighbours", "replace-one", "--out", str(out), "--report", str(rep),
                 "--overwrite"])  # fmt: skip
    assert code == 0
    summary = json.loads(rep.read_text())
    assert summary["learned"]["n"] == n and summary["budget"]["delta"] == 1 / n**2
    capsys.readouterr()


# --- replace-one is one flag away and unchanged -------------------------------------------------
PINNED = {
    # digests taken with the atoms' peak rule and (synth) the second partition selection's
    # pool; before them, and unchanged by add/remove learning: 313dff32..., dfc37b8e...,
    # 2e3b588f...; same table, same seeds. "domain learn" again with the bound across 0
    # (domain_learning.across_zero): before it, 16ee0cda..., whose children (Poisson counts,
    # none below 0) had a lower bound of -2,000 from one noisy bucket; now codes 0..4. The
    # synth's records changed (deliberately) with the release's empty catch-all cells
    # (docs/learn.md; it was d87efd54... before, 720e7a33... with whole records redrawn),
    # its domain did not. Both domains now say '"density": "linear"' for the learned wage
    # (Numeric.density; without that key they are 623f0232... and 1a7e815c..., byte for
    # byte); the synth is the same bytes (its wage has decoding weights). Both domains now
    # say '"texts": "missing"' for the learned wage (Numeric.texts, so that a domain given
    # back reads the table as the learning did; without that key the synth's domain is
    # aa81a596..., byte for byte, and 'domain learn' writes the domain synth encodes with).
    # "domain learn" again with the band rule of a large table (domain_learning.narrow_band,
    # _fine_run): its wage's bounds [10, 50] are a band, narrowed by a finer histogram (which
    # kept them) and cut on cells of 0.1 (17 bins, not the grid's 14); before, cc62e74c...
    # all three again with the US state codes' vocabulary (domain_learning.VOCABULARIES): the
    # state column's CA, NY, TX and WA are codes, and the other 55 are listed by rule (the
    # release tests each); before, 49e38aa3..., da8f77d6... and 0de15751...
    # "domain learn" again with a large table's top codes added by rule
    # (domain_learning.ENDS_BY_RULE): the children's codes 3 and 4 (the bucket [2, 5)) are
    # listed as by_rule, nothing else; before, ff3f8b56... The synth and its domain are the
    # same bytes.
    # All three again with a catch-all of numbers written as missing
    # (domain_learning.numbers_codes, Categorical.other_missing): both domains gain
    # '"other_missing": true' for the children's codes and nothing else, and the synth's 47
    # `<other>` children are empty cells, every other cell the same; before, f4aa678a...,
    # f9e1106d... and ec1f69dd...
    "domain learn": "64fbb4031148134978726f5b871d4138",
    "synth": "7a3837e2938d1f1169e20a9192a6ebf8",
    "synth domain": "d9047d777dd7293ed4372e56f0419f05",
}


def _pinned_table(path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 3000
    wage = np.round(rng.lognormal(3, 0.5, n), 2)
    wage[rng.random(n) < 0.05] = np.nan
    state = rng.choice(["CA", "NY", "TX", "WA"], n, p=[0.4, 0.3, 0.2, 0.1]).astype(object)
    state[rng.random(n) < 0.05] = None
    job = rng.choice(["clerk", "nurse", "teacher"], n, p=[0.5, 0.3, 0.2]).astype(object)
    pd.DataFrame({"wage": wage, "children": rng.poisson(1.5, n), "state": state,
                  "job": job}).to_csv(path, index=False)  # fmt: skip
    return path


def test_replace_one_is_byte_identical_with_the_same_seed(tmp_path, capsys):
    data = _pinned_table(tmp_path / "T.csv")
    out = tmp_path / "d.json"
    assert main(["domain", "learn", "--neighbours", "replace-one", "--data", str(data),
                 "--epsilon", "0.5", "--seed", "3", "--out", str(out)]) == 0  # fmt: skip
    synth = tmp_path / "s.csv"
    assert main(["synth", "--data", str(data), "--epsilon", "2", "--seed", "3", "--neighbours",
                 "replace-one", "--out", str(synth)]) == 0  # fmt: skip
    capsys.readouterr()
    digests = {
        "domain learn": hashlib.md5(out.read_bytes()).hexdigest(),
        "synth": hashlib.md5(synth.read_bytes()).hexdigest(),
        "synth domain": hashlib.md5(synth.with_suffix(".domain.json").read_bytes()).hexdigest(),
    }
    assert digests == PINNED


# --- the quantiles' exponential mechanism at its add/remove sensitivity ---------------------------
def test_quantile_sensitivity_by_relation_by_hand():
    """1 under replace-one (a value moved across a candidate); ``max(alpha, 1 - alpha)`` under
    add/remove: 1/2 at the median, 15/16 at alpha = 1/16 and 15/16, 0.7 at 0.3."""
    from dpquery.privacy.errors import PrivacyParameterError
    from dpquery.privacy.quantiles import quantile_sensitivity

    assert quantile_sensitivity(0.5, add_remove=True) == 0.5
    assert quantile_sensitivity(1 / 16, add_remove=True) == 15 / 16
    assert quantile_sensitivity(15 / 16, add_remove=True) == 15 / 16
    assert quantile_sensitivity(0.3, add_remove=True) == pytest.approx(0.7, abs=1e-15)
    assert quantile_sensitivity(0.5) == quantile_sensitivity(1 / 16) == 1.0
    with pytest.raises(PrivacyParameterError, match=r"alpha must be in \[0, 1\], got 1.5"):
        quantile_sensitivity(1.5, add_remove=True)


def test_private_quantiles_under_add_remove_draw_at_their_sensitivity_and_charge_the_same():
    """At alpha = 1/2 the add/remove draw at ``epsilon = 1`` has log-weights ``score * 1 / (2 *
    1/2) = score``: the replace-one draw's at ``epsilon = 2`` (``score * 2 / 2``), the same
    floats, so a seeded draw is the same candidate; the charge is ``epsilon^2 / 8`` per draw
    (1/8 for one draw at 1, 1/2 at 2: Cesar and Rogers 2021), unchanged by the relation."""
    from dpquery.privacy.quantiles import private_quantiles

    x = np.random.default_rng(40).normal(50, 20, 300)
    cands = signed_log_grid(decimals=0)
    cands = cands[(cands >= 0) & (cands <= 100)]
    for seed in range(20):
        a_ledger, r_ledger = big_ledger(), big_ledger()
        a = private_quantiles(x, cands, [0.5], epsilon=1.0, rng=np.random.default_rng(seed),
                              ledger=a_ledger, add_remove=True)  # fmt: skip
        r = private_quantiles(x, cands, [0.5], epsilon=2.0, rng=np.random.default_rng(seed),
                              ledger=r_ledger)  # fmt: skip
        assert a[0] == r[0]
        assert a_ledger.spent == pytest.approx(1 / 8, rel=1e-12)
        assert r_ledger.spent == pytest.approx(1 / 2, rel=1e-12)
    # replace-one is the default and unchanged: add_remove=False gives the same draws
    b = private_quantiles(x, cands, [0.25, 0.5], epsilon=0.3, rng=np.random.default_rng(1),
                          ledger=big_ledger())  # fmt: skip
    c = private_quantiles(x, cands, [0.25, 0.5], epsilon=0.3, rng=np.random.default_rng(1),
                          ledger=big_ledger(), add_remove=False)  # fmt: skip
    assert (b == c).all()


def _em_log_probs(x: np.ndarray, cands: np.ndarray, alpha: float, eps: float, sens: float):
    """The exact log-probabilities of the exponential mechanism's candidates."""
    w = quantile_scores(x, cands, alpha) * (eps / (2 * sens))
    return w - (w.max() + np.log(np.exp(w - w.max()).sum()))


def test_the_quantiles_mechanism_is_dp_and_bounded_range_on_n_and_n_plus_one_records():
    """On random neighbouring tables of ``n`` and ``n + 1`` values, the exact output
    distributions of the draw at ``max(alpha, 1 - alpha)`` differ by a log-ratio of at most
    ``epsilon`` at every candidate (``epsilon``-DP) and the log-ratios span at most
    ``epsilon`` (``epsilon``-bounded range, Durfee and Rogers 2019: ``epsilon^2 / 8``-zCDP).
    The check can fail: at half that sensitivity some pair exceeds ``epsilon``. Exact
    arithmetic on the probabilities (no sampling), so no false failures."""
    from dpquery.privacy.quantiles import quantile_sensitivity

    rng = np.random.default_rng(41)
    cands = signed_log_grid(decimals=1)
    cands = cands[(cands >= -10) & (cands <= 2e4)]
    eps, worst_half = 0.7, 0.0
    for _ in range(300):
        x = rng.choice(VALUES, size=int(rng.integers(1, 60)))
        y = add_one(rng, x)
        for alpha in (1 / 16, 0.3, 0.5, 0.9, 15 / 16):
            s = quantile_sensitivity(alpha, add_remove=True)
            ratio = _em_log_probs(x, cands, alpha, eps, s) - _em_log_probs(y, cands, alpha, eps, s)
            assert np.abs(ratio).max() <= eps + 1e-9
            assert ratio.max() - ratio.min() <= eps + 1e-9
            half = _em_log_probs(x, cands, alpha, eps, s / 2)
            half = half - _em_log_probs(y, cands, alpha, eps, s / 2)
            worst_half = max(worst_half, float(half.max() - half.min()))
    assert worst_half > eps  # a sensitivity too small is caught


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_a_learnings_quantiles_use_the_relations_score_sensitivity(monkeypatch, relation):
    """Every quantile draw of a learning (numbers and dates) asks for the sensitivity of the
    learning's relation: ``max(alpha, 1 - alpha)`` under add/remove, 1 under replace-one
    (whose releases are unchanged, byte for byte)."""
    import dpquery.privacy.quantiles as qu

    seen: list[tuple[float, bool]] = []
    real = qu.quantile_sensitivity

    def spy(alpha: float, add_remove: bool = False) -> float:
        seen.append((alpha, add_remove))
        return real(alpha, add_remove)

    monkeypatch.setattr(qu, "quantile_sensitivity", spy)
    rng = np.random.default_rng(42)
    n = 4000
    day = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
    df = pd.DataFrame({"wage": np.round(rng.lognormal(3, 0.6, n), 2).astype(str),
                       "day": day.strftime("%Y-%m-%d")})  # fmt: skip
    _, report = learn_domain(df, rho=1.0, delta=1e-9, rng=np.random.default_rng(43),
                             ledger=big_ledger(), neighbours=relation)  # fmt: skip
    assert {c.kind for c in report.columns} == {"numeric", "date"}
    assert len(seen) >= 2 * 15
    assert {a for _, a in seen} == {relation == ADD_REMOVE}
