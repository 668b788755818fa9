"""Columns mixing scientific notation and plain decimals (R's ``write.csv``: ``1.2e-05``
beside ``0.0123``), learned from a raw table (``docs/learn.md``, "Mixed columns: the
exponent where the data writes one"): the magnitude where the form changes is read off
noisy counts already measured (post-processing, no charge), and each released value is
written in the form the data uses at its magnitude.

The learnings are seeded at a rho where the rules' outcomes are far from their thresholds,
so no assertion depends on the draw."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.test_learn_written_forms import _learn

from dpquery import domain_learning
from dpquery.cli import main
from dpquery.data import Domain, Numeric
from dpquery.data.decode import scientific_text
from dpquery.domain_learning import (
    every_value_scientific,
    scientific_threshold,
)
from dpquery.errors import DomainError
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.privacy.quantiles import magnitude_buckets

EXPONENT = re.compile(r"[-+]?\d*\.?\d+[eE][-+]?\d+")


def test_a_value_written_as_the_notation_says() -> None:
    assert scientific_text(1.2e-05, 4) == "1.200e-05"  # every value so, as before
    assert scientific_text(0.0123, 4) == "1.230e-02"
    below = ("below", 1e-4)
    assert scientific_text(1.2e-05, 7, below) == "1.2e-05"  # R's: trailing zeros dropped
    assert scientific_text(0.0123, 7, below) == "0.0123"
    assert scientific_text(0.8598887234341067, 7, below) == "0.8598887"
    assert scientific_text(6.677811814149087e-4, 7, ("below", 1e-3)) == "6.677812e-04"
    assert scientific_text(9.99999999e-5, 3, below) == "0.0001"  # rounded first, then compared
    assert scientific_text(0.0, 7, below) == "0"
    assert scientific_text(-2.5e-7, 7, below) == "-2.5e-07"
    big = ("from", 1e11)
    assert scientific_text(1.5e10, 7, big) == "15000000000"
    assert scientific_text(1.5e11, 7, big) == "1.5e+11"
    assert scientific_text(123.45, 7, big) == "123.45"


def test_every_value_or_mixed() -> None:
    """Every value so when the cells' sum passes 95% of the numbers less 4 sd of the
    difference's noise (sqrt(7 sigma^2 + 0.95^2 sigma_n^2)); here sigma 10 and 20: 4 sd
    is 4 sqrt(700 + 361) = 130.3."""
    bar = 0.95 * 1000 - 4 * (7 * 100 + 0.95**2 * 400) ** 0.5
    assert every_value_scientific([0, 0, 0, int(bar) + 1, 0, 0, 0], 1000, 10, 20)
    assert not every_value_scientific([0, 0, 0, int(bar) - 1, 0, 0, 0], 1000, 10, 20)
    assert not every_value_scientific([0, 0, 160, 0, 0, 0, 0], 1000, 10, 20)


def test_the_threshold_by_hand() -> None:
    """Buckets +-{1, 2, 5} 10^e from 10^-14: the mass below 10^-3 is 160 of 1000, below
    10^-4 50: a share of 0.16 is read below 10^-3, 0.05 below 10^-4; buckets under 2 sd
    (here 20) count nothing; a large share on the large side, from 10^11; of equally near
    powers (no counted mass between), the one nearest the counted mass."""
    b = magnitude_buckets(min_exponent=-14)
    noisy = np.zeros(b.size - 1)

    def put(lo: float, count: float) -> None:
        noisy[int(np.searchsorted(b, lo))] = count

    put(5e-5, 50)  # [5e-5, 1e-4)
    put(2e-4, 110)  # [2e-4, 5e-4)
    put(2e-3, 100)  # [2e-3, 5e-3)
    put(0.1, 740)  # [0.1, 0.2)
    put(1e-9, 19)  # under 2 sd: not counted
    bounds = (0.0, 1.0)
    assert scientific_threshold(b, noisy, bounds, 0.16, 10) == ("below", 1e-3)
    assert scientific_threshold(b, noisy, bounds, 0.05, 10) == ("below", 1e-4)
    # no mass from 10^-12 to 5 10^-5: 0.0 is as near at each of those 8 powers (the largest)
    assert scientific_threshold(b, noisy, bounds, 0.0, 10) == ("below", 1e-5)
    # a thin tail (its buckets under 2 sd, not counted): 0.12 is as near 0 at every power to
    # 10^-4 and farther from 0.38 at 10^-3: the largest, 10^-4
    thin = np.zeros(b.size - 1)
    thin[int(np.searchsorted(b, 1e-5))] = 15
    thin[int(np.searchsorted(b, 5e-4))] = 380
    thin[int(np.searchsorted(b, 0.1))] = 620
    assert scientific_threshold(b, thin, bounds, 0.12, 10) == ("below", 1e-4)
    assert scientific_threshold(b, np.zeros(b.size - 1), bounds, 0.3, 10) == ("below", 1e-4)
    large = magnitude_buckets(min_exponent=-2, max_exponent=14)
    mass = np.zeros(large.size - 1)
    mass[int(np.searchsorted(large, 100))] = 600
    mass[int(np.searchsorted(large, 5e10))] = 100  # [5e10, 1e11): written plain
    mass[int(np.searchsorted(large, 2e11))] = 300
    assert scientific_threshold(large, mass, (0, 1e15), 0.3, 10) == ("from", 1e11)
    # equally near from 10^5 to 10^10 (no mass between): the smallest
    assert scientific_threshold(large, mass, (0, 1e15), 0.4, 10) == ("from", 1e5)


def test_the_notation_in_a_domain() -> None:
    a = Numeric("p", (0.0, 0.5, 1.0), significant=7, notation=["below", 1e-4])  # type: ignore[arg-type]
    assert a.notation == ("below", 1e-4)
    d = Domain((a,))
    back = Domain.from_dict(d.to_dict())
    assert back["p"].notation == ("below", 1e-4)  # type: ignore[union-attr]
    plain = Domain((Numeric("p", (0.0, 1.0), significant=7),)).to_dict()
    assert "notation" not in plain["attributes"][0]  # older readers see the same
    for bad in (["over", 1e-4], ["below", 0], ["below", "x"], ["below"], "below"):
        with pytest.raises(DomainError, match="notation"):
            Numeric("p", (0.0, 1.0), significant=7, notation=bad)  # type: ignore[arg-type]
    with pytest.raises(DomainError, match="needs significant"):
        Numeric("p", (0.0, 1.0), notation=("below", 1e-4))


def _mixed(n: int, seed: int = 0) -> pd.DataFrame:
    """p-values (14% below 10^-4, 38% below 10^-3) written as Python's repr writes them (an
    exponent below 10^-4, two digits), the same with one-digit exponents below 10^-3 (as
    the Rdatasets mirror's CSVs: ``6.677811814149087e-4``), counts written with an exponent
    from 10^11 (a spreadsheet's), and p-values written %.3e throughout."""
    rng = np.random.default_rng(seed)
    p = np.minimum(np.exp(rng.normal(-6, 3, n)), 1.0)
    big = np.round(np.exp(rng.normal(np.log(1e10), 2.5, n)))

    def one_digit(x: float) -> str:
        if x >= 1e-3:
            return repr(float(x))
        m, e = f"{x:.15e}".split("e")
        return f"{m.rstrip('0').rstrip('.')}e{int(e)}"

    return pd.DataFrame({
        "repr": [repr(float(x)) for x in p],
        "js": [one_digit(float(x)) for x in p],
        "sheet": [f"{x:.6e}" if x >= 1e11 else str(int(x)) for x in big],
        "fixed": [f"{x:.3e}" for x in p],
    })  # fmt: skip


@pytest.mark.parametrize("neighbours", [ADD_REMOVE, REPLACE_ONE])
def test_the_threshold_is_learned_and_costs_nothing(
    monkeypatch: pytest.MonkeyPatch, neighbours: str
) -> None:
    """Each mixed column learns where its data writes the exponent (10^-4 for repr's,
    10^-3 for one-digit exponents, from 10^11 for the spreadsheet's); the column written
    %.3e throughout keeps every value so. The ledger, and every bit of the domain but the
    notation, are those of the learning with the notation never read (the rule reads only
    noisy counts already drawn)."""
    df = _mixed(4000)
    domain, _, ledger = _learn(df, neighbours)
    assert domain["repr"].notation == ("below", 1e-4)  # type: ignore[union-attr]
    assert domain["js"].notation == ("below", 1e-3)  # type: ignore[union-attr]
    assert domain["sheet"].notation == ("from", 1e11)  # type: ignore[union-attr]
    assert domain["fixed"].notation is None  # type: ignore[union-attr]
    assert domain["fixed"].significant == 4  # type: ignore[union-attr]
    monkeypatch.setattr(domain_learning, "every_value_scientific", lambda *a: True)
    alike, _, again = _learn(df, neighbours)
    assert [(e.charge.mechanism, e.charge.cost) for e in ledger.entries] == [
        (e.charge.mechanism, e.charge.cost) for e in again.entries
    ]
    for a, b in zip(domain.to_dict()["attributes"], alike.to_dict()["attributes"], strict=True):
        a.pop("notation", None)
        assert a == b


def test_a_release_writes_each_value_in_the_data_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a raw CSV: each released value of a mixed column is written with an exponent
    where the data writes one at that magnitude (below 10^-4 for repr's, 10^-3 for the
    one-digit exponents), plain elsewhere: at least 99% in the data's form (a value's form
    follows its released magnitude exactly: only the learned threshold could miss); the
    column written %.3e throughout is released so throughout; the note says it."""
    data, out = tmp_path / "T.csv", tmp_path / "s.csv"
    _mixed(5000).drop(columns="sheet").to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "2", "--seed", "0", "--out",
                 str(out)]) == 0  # fmt: skip
    err = "".join(capsys.readouterr())
    assert "repr: written in scientific notation below 0.0001 and as plain decimals above" in err
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    for col, t in (("repr", 1e-4), ("js", 1e-3)):
        texts = released[col][released[col] != ""]
        x = pd.to_numeric(texts).abs()
        written = texts.str.fullmatch(EXPONENT.pattern)
        assert ((x < t) & (x > 0) == written).mean() >= 0.99, col
        assert 0.02 < written.mean() < 0.5
    assert released["fixed"].str.fullmatch(r"-?\d\.\d{3}e[-+]\d{2}").all()


def test_the_plan_states_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """``dpquery privacy synth`` states the every-value test and the threshold's candidates,
    at no further charge."""
    import json

    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1", "--json"]) == 0
    sci = json.loads(capsys.readouterr().out)["written_forms"]["scientific"]
    assert sci["every_value"] == {"share": 0.95, "sigmas": 4.0}
    assert sci["otherwise"]["below"][0] == 1e-12 and sci["otherwise"]["below"][-1] == 0.1
    assert sci["otherwise"]["from"][0] == 1e5 and sci["otherwise"]["from"][-1] == 1e16
    assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1"]) == 0
    assert "otherwise only below (or from) the power of ten" in capsys.readouterr().out
