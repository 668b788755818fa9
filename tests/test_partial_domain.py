"""A partial codebook: a public domain for some of a raw table's columns, the others learned
privately (``learn_domain(public=...)``, ``synth --domain PARTIAL.json --learn-rest``,
``synthesize(..., learn_rest=True)``, ``domain learn --domain``). The public columns are
taken as they are: nothing is read or spent on them, and the learned columns share the
learning's rho among themselves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery
from cli_process import dpquery_cli
from dpquery.data import Domain
from dpquery.domain_learning import PUBLIC_RULE, column_rho, learn_domain
from dpquery.errors import DPQueryError
from dpquery.privacy import Budget, Ledger

N = 3000
CODEBOOK = {
    "wage": {"min": 0, "max": 200, "bins": 10, "missing": True, "out_of_range": "clip"},
    "state": {"values": ["CA", "NY", "TX", "WA", "other"], "missing": "other"},
}


def table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    wage = np.round(rng.lognormal(3, 0.5, N), 2)
    wage[rng.random(N) < 0.05] = np.nan
    state = rng.choice(["CA", "NY", "TX", "WA"], N, p=[0.4, 0.3, 0.2, 0.1]).astype(object)
    job = rng.choice(["clerk", "nurse", "teacher"], N, p=[0.5, 0.3, 0.2]).astype(object)
    return pd.DataFrame({"wage": wage, "children": rng.poisson(1.5, N), "state": state,
                         "job": job})  # fmt: skip


def learn(df: pd.DataFrame, public: Domain | None, neighbours: str = "replace-one", **kw):
    ledger = Ledger(Budget.zcdp(0.2))
    domain, report = learn_domain(df.astype(str).where(df.notna()), rho=0.2, delta=1e-9,
                                  rng=np.random.default_rng(3), ledger=ledger,
                                  neighbours=neighbours, public=public, **kw)  # fmt: skip
    return domain, report, ledger


@pytest.mark.parametrize("neighbours", ["replace-one", "add-remove"])
def test_public_columns_are_kept_and_cost_nothing(neighbours: str) -> None:
    public = Domain.from_codebook(CODEBOOK)
    domain, report, ledger = learn(table(), public, neighbours)
    assert domain.names == ("wage", "children", "state", "job")  # the table's order
    for name in CODEBOOK:
        assert domain[name] == public[name]
    columns = {c.name: c for c in report.columns}
    assert {n for n, c in columns.items() if c.rule == PUBLIC_RULE} == set(CODEBOOK)
    assert all(columns[n].rho == 0 and columns[n].delta_tail == 0 for n in CODEBOOK)
    charged = " ".join(e.charge.mechanism for e in ledger.entries)
    assert "wage" not in charged and "state" not in charged
    # the two learned columns share the learning (after the noisy n under add/remove):
    # 0.2 / 2 each under replace-one, 0.95 * 0.2 / 2 under add/remove
    share = column_rho(0.2, 2, neighbours == "add-remove")
    assert share == pytest.approx((0.95 if neighbours == "add-remove" else 1.0) * 0.2 / 2)
    assert 0 < columns["job"].rho <= share and 0 < columns["children"].rho <= share
    assert columns["job"].rho == pytest.approx(share, rel=1e-6)  # a text column: all of it


def test_public_columns_are_never_read() -> None:
    """Whatever the public columns hold, the learning draws and returns the same."""
    public = Domain.from_codebook(CODEBOOK)
    df = table()
    scrambled = df.assign(wage="not a number", state=np.where(np.arange(N) % 2, "Mars", None))
    a, ra, la = learn(df, public)
    b, rb, lb = learn(scrambled, public)
    assert a.to_dict() == b.to_dict() and ra.to_dict() == rb.to_dict()
    assert [e.charge for e in la.entries] == [e.charge for e in lb.entries]


def test_bad_partial_domains_are_named() -> None:
    df = table()
    with pytest.raises(DPQueryError, match=r"names \['height'\], which the table does not"):
        learn(df, Domain.from_codebook({"height": {"min": 0, "max": 2, "bins": 2}}))
    rest = {"children": {"min": 0, "max": 9, "bins": 9}, "job": {"values": ["clerk", "nurse"]}}
    everything = Domain.from_codebook({**CODEBOOK, **rest})
    with pytest.raises(DPQueryError, match="covers every column of the table: there is nothing"):
        learn(df, everything)
    with pytest.raises(DPQueryError, match=r"\['state'\] are both in the public domain"):
        learn(df, Domain.from_codebook(CODEBOOK), types={"state": "categorical:CA|NY"})


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("partial")
    table().to_csv(folder / "T.csv", index=False)
    (folder / "partial.json").write_text(json.dumps(CODEBOOK))
    return folder


def synth(*argv: str, code: int = 0) -> str:
    result = dpquery_cli("synth", *argv)
    assert result.code == code, result.err
    return result.out if code == 0 else result.err


def test_cli_learns_the_rest_and_writes_the_whole_domain(files: Path) -> None:
    out = files / "s.csv"
    console = synth("--data", str(files / "T.csv"), "--domain", str(files / "partial.json"),
                    "--learn-rest", "--epsilon", "2", "--seed", "1", "--out", str(out),
                    "--report", str(files / "r.json"))  # fmt: skip
    assert "(2 of them from the public domain given, at no cost)" in console
    written = Domain.load(out.with_suffix(".domain.json"))
    given = Domain.from_codebook(CODEBOOK)
    assert written["wage"] == given["wage"] and written["state"] == given["state"]
    assert written.names == ("wage", "children", "state", "job")
    rows = pd.read_csv(out)
    assert list(rows.columns) == ["wage", "children", "state", "job"]
    assert set(rows["state"].dropna()) <= {"CA", "NY", "TX", "WA", "other"}
    report = json.loads((files / "r.json").read_text())["release"]
    mechanisms = [m["mechanism"] for m in report["privacy"]["per_mechanism"]]
    learned = [m for m in mechanisms if m.startswith("domain learning: ")]
    assert any("job" in m for m in learned) and any("children" in m for m in learned)
    # a public numeric column gets decoding weights (charged), never a learned bound
    assert not any("state" in m for m in learned)
    assert all("wage" not in m or "within-bin" in m for m in learned)
    # the API gives the same rows from the same seed
    frame, _ = dpquery.synthesize(pd.read_csv(files / "T.csv"), str(files / "partial.json"),
                                  epsilon=2, seed=1, learn_rest=True)  # fmt: skip
    frame.to_csv(files / "api.csv", index=False)
    assert (files / "api.csv").read_bytes() == out.read_bytes()


def test_learn_rest_needs_a_partial_domain(files: Path) -> None:
    out = files / "x.csv"
    err = synth("--data", str(files / "T.csv"), "--learn-rest", "--epsilon", "1", "--out",
                str(out), code=2)  # fmt: skip
    assert "--learn-rest learns the columns a partial domain leaves out" in err
    assert not out.exists() and not out.with_suffix(".domain.json").exists()
    with pytest.raises(DPQueryError, match="learn_rest learns the columns"):
        dpquery.synthesize(table(), epsilon=1, learn_rest=True)


def test_the_partial_domain_is_never_overwritten(files: Path) -> None:
    before = (files / "partial.json").read_text()
    out = files / "partial.csv"  # its learned domain would be partial.domain.json, not it
    (files / "partial.domain.json").write_text(before)
    err = synth("--data", str(files / "T.csv"), "--domain", str(files / "partial.domain.json"),
                "--learn-rest", "--epsilon", "1", "--out", str(out), code=2)  # fmt: skip
    assert "is one of the inputs; refusing to overwrite it" in err and not out.exists()
    assert (files / "partial.domain.json").read_text() == before
    result = dpquery_cli("domain", "learn", "--data", str(files / "T.csv"), "--epsilon", "0.5",
                         "--domain", str(files / "partial.json"), "--out",
                         str(files / "partial.json"))  # fmt: skip
    assert result.code == 2 and "is one of the inputs" in result.err
    assert (files / "partial.json").read_text() == before


def test_domain_learn_and_the_plan_take_a_partial_domain(files: Path) -> None:
    result = dpquery_cli("domain", "learn", "--data", str(files / "T.csv"), "--epsilon", "0.5",
                         "--domain", str(files / "partial.json"), "--seed", "2", "--out",
                         str(files / "whole.json"))  # fmt: skip
    assert result.code == 0, result.err
    assert "from the public domain  [public domain; rho=0]" in result.out
    assert Domain.load(files / "whole.json").names == ("wage", "children", "state", "job")
    plan = dpquery_cli("privacy", "synth", "--n", str(N), "--epsilon", "1", "--domain",
                       str(files / "partial.json"), "--learn-rest")  # fmt: skip
    assert plan.code == 0, plan.err
    assert "the 2 columns of" in plan.out and "(wage, state) are public" in plan.out
    bad = dpquery_cli("privacy", "synth", "--n", str(N), "--epsilon", "1", "--learn-rest")
    assert bad.code == 2 and "--learn-rest plans a domain learned" in bad.err
