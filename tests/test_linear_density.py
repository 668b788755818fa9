"""A learned numeric bin without decoding weights decodes from a linear density through its
neighbours' (``Numeric.density = "linear"``, :func:`dpquery.data.decode.linear_slopes`):
the slopes by hand, the quantile, each bin's mass, edges, precision and atoms kept, seeded
and reproducible, the JSON round trip, and a release from a raw table whose records and
charges are the same with the uniform decoding (post-processing: nothing charged), under
both relations.

Every check is deterministic (fixed seeds) except the shape test, whose bound states its
false-failure rate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpquery.domain_learning as learning
from dpquery import synthesize
from dpquery.data.decode import (
    LINEAR_BLEND,
    bin_supports,
    decode,
    linear_quantile,
    linear_slopes,
)
from dpquery.data.domain import Domain, DomainError, Numeric
from dpquery.data.encode import encode
from dpquery.data.records import Records


def _rows(domain: Domain, codes: list[int]) -> np.ndarray:
    """One-hot rows of a one-attribute domain: record r in bin ``codes[r]``."""
    rows = np.zeros((len(codes), domain.d), np.uint8)
    rows[np.arange(len(codes)), codes] = 1
    return rows


# == by hand ======================================================================================


def test_slopes_by_hand() -> None:
    a, b = np.arange(4.0), np.arange(1.0, 5.0)  # four bins of width 1
    flat = np.zeros(4, dtype=bool)
    # densities 10, 20, 30, 40: a slope of 10 everywhere (ends one-sided), beta = 10 / d
    assert np.allclose(linear_slopes(np.array([10.0, 20, 30, 40]), a, b, flat),
                       [1.0, 0.5, 1 / 3, 0.25])  # fmt: skip
    # a peak: flat at the top (minmod of +20 and -20), the ends' one side clipped to 2
    three = (np.arange(3.0), np.arange(1.0, 4.0), np.zeros(3, dtype=bool))
    assert np.allclose(linear_slopes(np.array([10.0, 30, 10]), *three), [2.0, 0.0, -2.0])
    # on a run the gentler side: +10 and +30 -> 10, beta = 10 * 1 / 20
    assert np.allclose(linear_slopes(np.array([10.0, 20, 50]), *three), [1.0, 0.5, 0.6])
    # unequal widths: densities 1 (over [0, 10)), 5 ([10, 12)), 4 ([12, 14)); the middle's
    # sides are (5 - 1) / 6 and (4 - 5) / 2: opposite signs, flat
    beta = linear_slopes(np.array([10.0, 10, 8]), np.array([0.0, 10, 12]),
                         np.array([10.0, 12, 14]), np.zeros(3, dtype=bool))  # fmt: skip
    assert beta[1] == 0.0
    assert np.isclose(beta[0], min(2.0, (5 - 1) / 6 * 10 / 1))  # 0.667
    # an empty bin stays flat; so does a lone bin
    assert linear_slopes(np.array([0.0, 5, 5]), *three)[0] == 0.0
    assert linear_slopes(np.array([7.0]), np.zeros(1), np.ones(1), np.zeros(1, bool))[0] == 0.0


def test_an_atom_is_flat_and_no_neighbour() -> None:
    income = Numeric("income", (0, 1, 100, 1000, 2000), integer=True, out_of_range="clip")
    a, b, atom = bin_supports(income)
    assert atom.tolist() == [True, False, False, False]
    assert a.tolist() == [0, 1, 100, 1000] and b.tolist() == [1, 100, 1000, 2001]
    # 900 records at 0: bin [1, 100) takes its slope from [100, 1000) alone, not from the atom
    beta = linear_slopes(np.array([900.0, 99, 450, 100]), a, b, atom)
    assert beta[0] == 0.0
    d1, d2 = 99 / 99, 450 / 900
    assert np.isclose(beta[1], (d2 - d1) / (550 - 50.5) * 99 / d1)


def test_the_quantile_inverts_the_linear_cdf() -> None:
    u = np.linspace(0, 1, 101)[:-1]
    assert np.array_equal(linear_quantile(u, np.zeros_like(u)), u)  # exactly the uniform
    for beta in (-2.0, -0.7, 0.3, 2.0):
        t = linear_quantile(u, np.full_like(u, beta))
        assert np.allclose(t + beta * (t * t - t) / 2, u)
        assert (t >= 0).all() and (t <= 1).all() and (np.diff(t) > 0).all()


# == the decoding ===========================================================================


def _domain(density: str) -> Domain:
    x = Numeric("x", (0, 1, 10, 20, 40, 100), integer=True, missing=True, out_of_range="clip",
                density=density)  # type: ignore[arg-type]  # fmt: skip
    return Domain((x,))


CODES = [0] * 300 + [1] * 50 + [2] * 400 + [3] * 500 + [4] * 200 + [5] * 30


def _decoded(density: str, seed: int = 3) -> pd.Series:
    domain = _domain(density)
    out, _ = decode(Records(_rows(domain, CODES), domain=domain), seed=seed)
    return out["x"]


def test_each_bin_keeps_its_records_edges_precision_and_atoms() -> None:
    x = _decoded("linear")
    again = encode(pd.DataFrame({"x": x}), _domain("uniform")).to_dense().argmax(axis=1)
    assert again.tolist() == CODES  # every value in its own bin: each bin's mass kept
    assert x.isna().sum() == 30 and str(x.dtype) == "Int64"  # the missing bin stays missing
    assert (x[:300] == 0).all()  # the atom [0, 1) decodes to 0
    assert (x.dropna() >= 0).all() and (x.dropna() <= 100).all()


def test_seeded_reproducible_and_the_uniform_unchanged() -> None:
    assert _decoded("linear").equals(_decoded("linear"))
    assert not _decoded("linear").equals(_decoded("linear", seed=4))
    # the same uniforms drawn: only values inside tilted bins move, the atom's and the
    # missing ones stay where the uniform decoding puts them
    lin, uni = _decoded("linear"), _decoded("uniform")
    assert lin[:300].equals(uni[:300]) and lin[-30:].isna().all() and uni[-30:].isna().all()
    assert not lin.equals(uni)


def test_flat_masses_decode_as_the_uniform() -> None:
    # integers in [0, 4), [4, 8) and the closed [8, 12] (5 values): 40, 40 and 50 records
    # are equal densities, so every beta is 0 and t = u
    domain = Domain((Numeric("x", (0, 4, 8, 12), integer=True, density="linear"),))
    codes = [0] * 40 + [1] * 40 + [2] * 50
    lin, _ = decode(Records(_rows(domain, codes), domain=domain), seed=1)
    plain = Domain((Numeric("x", (0, 4, 8, 12), integer=True),))
    uni, _ = decode(Records(_rows(plain, codes), domain=plain), seed=1)
    assert lin["x"].equals(uni["x"])


def test_a_rising_density_tilts_the_values_up() -> None:
    # bins [0, 10), [10, 20), [20, 30) of 10,000, 20,000 and 30,000 records: the middle
    # bin's beta is 0.5 (slope 1,000 a unit, density 2,000), blended to 0.25, so its lower
    # half holds (1 - 0.25 / 4) / 2 = 0.46875 of its 20,000 values (sd 0.0035); uniform
    # would hold 0.5, 8.9 sd away. A false failure (beyond 6 sd) has probability about 2e-9.
    assert LINEAR_BLEND == 0.5
    domain = Domain((Numeric("x", (0.0, 10.0, 20.0, 30.0), decimals=3, density="linear"),))
    codes = [0] * 10_000 + [1] * 20_000 + [2] * 30_000
    out, _ = decode(Records(_rows(domain, codes), domain=domain), seed=8)
    middle = out["x"].to_numpy()[10_000:30_000]
    assert ((middle >= 10) & (middle < 20)).all()
    share = 0.46875
    assert abs(np.mean(middle < 15) - share) < 6 * math.sqrt(share * (1 - share) / 20_000)


def test_weights_take_precedence_over_the_density() -> None:
    within = ((1.0, 0.0), (0.0, 1.0))
    domain = Domain((Numeric("x", (0.0, 2.0, 4.0), decimals=1, within=within,
                             density="linear"),))  # fmt: skip
    out, _ = decode(Records(_rows(domain, [0] * 100 + [1] * 900), domain=domain), seed=2)
    x = out["x"].to_numpy()
    assert (x[:100] < 1).all() and (x[100:] >= 3).all()


def test_density_round_trips_through_json_and_a_bad_one_is_named(tmp_path: Path) -> None:
    domain = _domain("linear")
    domain.save(tmp_path / "d.json")
    assert '"density": "linear"' in (tmp_path / "d.json").read_text()
    again = Domain.load(tmp_path / "d.json")
    assert again["x"].density == "linear"  # type: ignore[union-attr]
    assert again.layout() == _domain("uniform").layout()  # not part of the layout
    _domain("uniform").save(tmp_path / "u.json")
    assert "density" not in (tmp_path / "u.json").read_text()  # older readers see the same
    bad = "must be one of 'uniform', 'linear', 'cells', got 'cubic'"
    with pytest.raises(DomainError, match=bad):
        Numeric("x", (0, 1), density="cubic")  # type: ignore[arg-type]


# == a release from a raw table ===================================================================


def _raw(n: int = 1000) -> pd.DataFrame:
    """A small raw table (1,000 records: the decoding weights draw nothing at this size)."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "sex": rng.integers(0, 2, n), "age": rng.integers(18, 90, n),
        "income": np.round(rng.lognormal(10, 1, n)),
    }).astype(str)  # fmt: skip


def _charges(release) -> list[tuple[str, str]]:
    return [(e.charge.mechanism, repr(e.charge.cost)) for e in release.ledger.entries]


@pytest.mark.parametrize("neighbours", [None, "replace-one"])
def test_the_same_records_and_charges_as_the_uniform_decoding(
    neighbours: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The density is post-processing of the released records: the ledger holds the same
    charges, and each released value lies in the same learned bin, as with the uniform
    decoding; only values inside bins move."""
    lin_out, lin = synthesize(_raw(), epsilon=1.0, seed=5, neighbours=neighbours)
    monkeypatch.setattr(learning, "LEARNED_DENSITY", "uniform")
    uni_out, uni = synthesize(_raw(), epsilon=1.0, seed=5, neighbours=neighbours)
    assert _charges(lin) == _charges(uni)
    domain, plain = lin.records.domain, uni.records.domain
    assert domain["age"].density == "linear"  # type: ignore[union-attr]
    assert plain["age"].density == "uniform"  # type: ignore[union-attr]
    assert domain.layout() == plain.layout()
    bins = encode(lin_out, domain).to_dense()
    assert np.array_equal(bins, encode(uni_out, domain).to_dense())
    assert lin_out["sex"].equals(uni_out["sex"])
    assert not lin_out["age"].equals(uni_out["age"])
