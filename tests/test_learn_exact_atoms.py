"""An atom released by the probe keeps its exact value (docs/learn.md, "Atoms written
exactly"): its bin is the step of the precision holding the value, and the decoder writes
the value itself; every other value follows the learned precision."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dpquery import domain_learning as learning
from dpquery.data import Domain, Numeric, decode, encode
from dpquery.data.records import Records
from dpquery.domain_learning import _atoms, atom_cell, exact_atoms, learn_domain
from dpquery.errors import DomainError
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.partition_selection import Selection

END = 3.270499657768651  # heartfailure_df's study end, in years: 15 decimals


def big_ledger() -> Ledger:
    return Ledger(Budget.zcdp(1e6))


def selection(released: dict[object, int]) -> Selection:
    return Selection(released, Fraction(1), 10, 0.01, 1e-10)


def test_atom_cell_by_hand():
    assert atom_cell(END, 4) == 3.2704
    assert atom_cell(3.2705, 4) == 3.2705  # a multiple of the step: itself
    assert atom_cell(-1.23456, 2) == -1.24  # the step below, on either side of 0
    assert atom_cell(0.1 + 0.2, 1) == 0.3  # 0.30000000000000004: its decimals, not its float
    assert atom_cell(12.5, 0) == 12.0


def test_exact_atoms_read_the_released_keys_alone():
    # the key of the largest noisy count among those rounding to the atom, when it is not a
    # multiple of the step; "3.27050" and "3.2705" are one value
    sel = selection({repr(END): 800, "3.2705": 300, "3.27050": 200, "1.5": 400})
    assert _atoms(sel, 3000, 4) == [1.5, 3.2705]
    assert exact_atoms(sel, [1.5, 3.2705], 4) == {3.2705: END}
    sel = selection({repr(END): 400, "3.2705": 300, "3.27050": 200})
    assert exact_atoms(sel, [3.2705], 4) == {}  # the value on the step holds more
    sel = selection({"3.2705": 800})
    assert exact_atoms(sel, [3.2705], 4) == {}  # nothing finer was released
    assert exact_atoms(None, [0.0], 4) == {}  # the rule at 0's atom: no probe
    # an atom's step taken by another atom: the finer value's would be its bin, so it stays
    sel = selection({repr(END): 800, "3.2704": 700})
    assert exact_atoms(sel, [3.2704, 3.2705], 4) == {}
    sel = selection({"2.25": 800})  # integers: no finer value is kept
    assert exact_atoms(sel, [2.0], 0) == {}
    sel = selection({4.000049: 800, "<missing>": 900})  # a float key (a numeric dtype)
    assert exact_atoms(sel, [4.0], 4) == {4.0: 4.000049}


def spiked(n: int, share: float, seed: int, value: float = END) -> pd.DataFrame:
    """``n`` records, ``share`` of them at ``value`` written in full, the others in
    ``[0, 5)`` written with 4 decimals."""
    rng = np.random.default_rng(seed)
    spike = rng.random(n) < share
    rest = [f"{x:.4f}" for x in rng.uniform(0, 5, n)]
    col = [repr(value) if s else r for s, r in zip(spike, rest, strict=True)]
    return pd.DataFrame({"t": col, "g": rng.choice(["a", "b"], n)})


def test_a_spike_written_with_more_decimals_comes_back_exactly():
    df = spiked(20_000, 0.25, 0)
    dom, report = learn_domain(df, rho=0.05, delta=1e-9, rng=np.random.default_rng(1),
                               ledger=big_ledger())  # fmt: skip
    attr = dom["t"]
    assert isinstance(attr, Numeric) and attr.precision == 4
    assert attr.exact == (END,)
    i = attr.edges.index(3.2704)  # the step holding the value is its bin
    assert attr.edges[i + 1] == 3.2705
    (col,) = [c for c in report.columns if c.name == "t"]
    assert col.noisy["atoms"] == [3.2705] and col.noisy["exact_atoms"] == [END]
    assert repr(END) in col.learned
    records = Records(encode(df, dom).to_dense(), domain=dom)
    out, _ = decode(records, dom, seed=0)
    t = out["t"].to_numpy()
    assert abs((t == END).mean() - 0.25) < 0.01  # the spike, exactly (the real table's share)
    others = t[t != END]
    assert np.allclose(others, np.round(others, 4))  # every other value at the precision
    # the domain's JSON keeps the value exactly, and is read back to the same decoding
    again = Domain.from_dict(json.loads(json.dumps(dom.to_dict())))
    assert again["t"].exact == (END,)
    assert decode(records, again, seed=0)[0].equals(out)


def test_a_spike_on_the_precision_is_learned_as_before():
    """No finer value: no ``exact`` in the attribute nor in its JSON (a reader without the
    key reads the file), and the atom's bin is ``[v, v + step)`` as before."""
    df = spiked(20_000, 0.25, 0, value=3.2705)
    dom, _ = learn_domain(df, rho=0.05, delta=1e-9, rng=np.random.default_rng(1),
                          ledger=big_ledger())  # fmt: skip
    attr = dom["t"]
    assert isinstance(attr, Numeric) and attr.exact == ()
    i = attr.edges.index(3.2705)
    assert attr.edges[i + 1] == 3.2706
    assert "exact" not in json.dumps(dom.to_dict())


def test_the_exact_value_only_when_the_probe_releases_it(monkeypatch):
    """The exact value is a key the probe's partition selection released, with a noisy
    count of at least ATOM_SHARE of the column's: never otherwise. 4,000 records, 80 of
    them (2%) at the spike, at rho 0.05: the probe's threshold is 59 and its noise puts the
    spike's count on either side of ATOM_SHARE's 80; over 20 seeds both outcomes happen (a
    false failure: all 20 on one side, about 2 * 0.5^20 = 2e-6 if each is a fair coin, less
    since the two sides are near even). A spike of 25% is always kept exactly (3 seeds)."""
    probes: list[Selection] = []
    select = learning._select

    def spy(name, col, rho, ctx):  # type: ignore[no-untyped-def]
        sel = select(name, col, rho, ctx)
        if name == "t":
            probes.append(sel)
        return sel

    monkeypatch.setattr(learning, "_select", spy)
    outcomes = set()
    for seed, share in [(s, 0.02) for s in range(20)] + [(s, 0.25) for s in range(3)]:
        rng = np.random.default_rng(seed)
        df = spiked(4_000, 0.0, seed)
        df.loc[rng.permutation(4_000)[: int(share * 4_000)], "t"] = repr(END)
        probes.clear()
        dom, report = learning.learn_domain(df, rho=0.05, delta=1e-9,
                                            rng=np.random.default_rng(100 + seed),
                                            ledger=big_ledger())  # fmt: skip
        (probe,) = probes
        (col,) = [c for c in report.columns if c.name == "t"]
        noisy = probe.released.get(repr(END))
        present = 4_000 - max(col.noisy["missing"], 0)  # the noisy non-missing count (n public)
        kept = noisy is not None and noisy >= learning.ATOM_SHARE * present
        assert (dom["t"].exact == (END,)) is kept
        if share == 0.25:
            assert kept
        else:
            outcomes.add(kept)
    assert outcomes == {True, False}


def test_exact_values_are_checked():
    edges = (0.0, 3.2704, 3.2705, 5.0)
    attr = Numeric("t", edges, decimals=4, exact=(END,))
    assert attr.exact_bins() == {1: END}
    bad = [
        dict(edges=(0.0, 3.2, 3.3, 5.0), decimals=4, exact=(END,)),  # a bin wider than a step
        dict(edges=edges, decimals=4, exact=(END, 3.27041)),  # two in one bin
        dict(edges=edges, decimals=4, exact=(6.0,)),  # outside the range
        dict(edges=(0.0, 3.0, 4.0, 5.0), integer=True, exact=(3.5,)),  # no decimals
        dict(edges=edges, decimals=4, exact=("3.2704",)),  # not a number
        dict(edges=edges, decimals=4, exact=(float("nan"),)),
    ]
    for kwargs in bad:
        with pytest.raises(DomainError, match="exact"):
            Numeric("t", **kwargs)
    obj = {"name": "t", "type": "numeric", "edges": list(edges), "decimals": 4, "exact": END}
    with pytest.raises(DomainError, match="'exact' must be a list"):
        Domain.from_dict({"attributes": [obj]})


def test_the_decoder_writes_the_exact_value_of_its_bin_alone():
    """The bin holding an exact value decodes to it; every other bin draws the values it
    drew without it (the same stream)."""
    edges = (0.0, 3.2704, 3.2705, 5.0)
    plain = Domain((Numeric("t", edges, decimals=4, missing=True),))
    exact = Domain((Numeric("t", edges, decimals=4, missing=True, exact=(END,)),))
    codes = np.random.default_rng(0).integers(0, 4, 500)  # bin 3: missing
    rows = np.zeros((500, 4), dtype=np.uint8)
    rows[np.arange(500), codes] = 1
    a = decode(Records(rows, domain=plain), plain, seed=3)[0]["t"]
    b = decode(Records(rows, domain=exact), exact, seed=3)[0]["t"]
    assert (b[codes == 1] == END).all() and (a[codes == 1] == 3.2704).all()
    assert a[codes != 1].equals(b[codes != 1])
    assert b[codes == 3].isna().all()
    # the layout is the bins': the exact value changes no bit
    assert plain.layout() == exact.layout()


def test_a_release_from_the_raw_table_writes_the_value_exactly(tmp_path):
    """``dpquery synth --data`` on 5,000 records, a quarter at the spike (the probe's
    threshold at epsilon 1 is a few hundred records at most: the spike's 1,250 clear it by
    far): the released CSV holds the value as written, the domain beside it lists it, and
    that domain given back with ``--domain`` releases it again."""
    from dpquery.cli import main

    data, out, again = tmp_path / "t.csv", tmp_path / "s.csv", tmp_path / "s2.csv"
    spiked(5_000, 0.25, 3).to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "1", "--seed", "0",
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    learned = json.loads((tmp_path / "s.domain.json").read_text())
    (t,) = [a for a in learned["attributes"] if a["name"] == "t"]
    assert t["exact"] == [END]
    assert repr(END) in out.read_text()
    released = pd.read_csv(out)["t"]
    # the spike's quarter: seeded, and the band's +-500 records are far more than the
    # release's error on one bin of 5,000 records at epsilon 1
    assert 0.15 < (released == END).mean() < 0.35
    assert main(["synth", "--data", str(data), "--domain", str(tmp_path / "s.domain.json"),
                 "--epsilon", "1", "--seed", "1", "--out", str(again), "--quiet"]) == 0  # fmt: skip
    assert (pd.read_csv(again)["t"] == END).any()
