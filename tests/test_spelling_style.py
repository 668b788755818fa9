"""A column of country names written in one style
(:mod:`dpquery.algorithms.marginal.spelling_style`): the style labels (each a spelling of its
place), a column's places read off its domain (by hand), the style test's statistic and
threshold (by hand), its rates on simulated columns (seeded, rates stated), the restyled
cells (by hand), and a release: the same charges with the step as
without it (post-processing), and a column in the UN's names released in them.

Statistical checks are seeded (deterministic); each states its false-failure rate.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.marginal.spelling_style import (
    FIRST_STYLE,
    STYLE_SIGMAS,
    PlaceColumn,
    column_style,
    place_column,
    restyled,
    style_scores,
)
from dpquery.cli import main
from dpquery.data.domain import Categorical, Domain
from dpquery.data.encode import encode
from dpquery.data.place_names import COUNTRY_NAMES, COUNTRY_STYLES
from dpquery.queries import all_kway_marginals
from dpquery.queries.marginals import AttributeLayout

SLOTS = {slot[0]: slot for slot in COUNTRY_NAMES}


def _countries(case: str = "title", listed_all: bool = True) -> Categorical:
    """Every country spelling, as a learned domain writes a column of country names: the
    first spellings listed, the rest by rule, then the catch-all."""

    def w(x: str) -> str:
        return {"upper": x.upper(), "lower": x.lower()}.get(case, x)

    values = list(dict.fromkeys(w(s) for slot in COUNTRY_NAMES for s in slot))
    first = {w(slot[0]) for slot in COUNTRY_NAMES}
    listed = tuple(v for v in values if v in first) if listed_all else ()
    by_rule = tuple(v for v in values if v not in first)
    return Categorical("country", (*values, "<other>"), other="<other>", by_rule=by_rule,
                       listed=listed)  # fmt: skip


# == the labels, by hand ==========================================================================


def test_each_style_name_is_a_spelling_of_its_place() -> None:
    """Every name of every style is a spelling (not the first) of the slot whose first
    spelling names it; a few by hand from the public lists."""
    for names in COUNTRY_STYLES.values():
        for first, name in names.items():
            assert name in SLOTS[first][1:]
    assert COUNTRY_STYLES["UN M49"]["Syria"] == "Syrian Arab Republic"
    assert COUNTRY_STYLES["UN M49"]["Venezuela"] == "Venezuela (Bolivarian Republic of)"
    assert COUNTRY_STYLES["ISO 3166-1"]["South Korea"] == "Korea, Republic of"
    assert COUNTRY_STYLES["World Bank"]["Egypt"] == "Egypt, Arab Rep."
    assert "Canada" not in COUNTRY_STYLES["UN M49"]  # one spelling: in every style


def test_a_column_of_country_names_by_place() -> None:
    """Title case: 258 places; Syria's two spellings are one place, its UN style the second;
    Canada (one spelling) is the same cell in every style; no released key. Upper case is
    read as upper; a column of US state names, or one with nothing listed, has none."""
    attr = _countries()
    col = place_column(attr)
    assert col is not None and len(col.cells) == len(COUNTRY_NAMES)
    p = next(i for i, c in enumerate(col.cells) if attr.values[c[0]] in SLOTS["Syria"])
    assert {attr.values[c] for c in col.cells[p]} == {"Syria", "Syrian Arab Republic"}
    assert attr.values[col.styles[FIRST_STYLE][p]] == "Syria"
    assert attr.values[col.styles["UN M49"][p]] == "Syrian Arab Republic"
    assert attr.values[col.styles["World Bank"][p]] == "Syrian Arab Republic"
    q = next(i for i, c in enumerate(col.cells) if attr.values[c[0]] == "Canada")
    assert len({col.styles[s][q] for s in col.styles}) == 1
    upper = place_column(_countries("upper"))
    assert upper is not None and len(upper.cells) == len(COUNTRY_NAMES)
    states = Categorical("state", ("Ohio", "Texas", "<other>"), other="<other>",
                         listed=("Ohio", "Texas"))  # fmt: skip
    assert place_column(states) is None
    assert place_column(_countries(listed_all=False)) is None


# == the test, by hand ============================================================================


def _toy() -> PlaceColumn:
    """Three places: 0 and 1 written apart in style "UN M49" (cells 0/1 first, 3/4 the UN's),
    place 2 of one spelling (cell 2); the other styles write none apart."""
    first, un = (0, 1, 2), (3, 4, 2)
    return PlaceColumn(cells=((0, 3), (1, 4), (2,)),
                       styles={FIRST_STYLE: first, "UN M49": un, "ISO 3166-1": first,
                               "World Bank": first})  # fmt: skip


def test_the_statistic_by_hand() -> None:
    """y = (1, -2, 50, 30, 28), sigma 5: the UN's Z = (30 + 28) / (5 sqrt 2) = 8.20; the
    styles that write no place apart score -inf; the UN's style is chosen at 3 sd and at
    8.20, not at 8.21."""
    y = np.array([1.0, -2.0, 50.0, 30.0, 28.0])
    scores = style_scores(y, 5.0, _toy())
    assert scores["UN M49"] == pytest.approx(58 / (5 * math.sqrt(2)))
    assert scores["ISO 3166-1"] == -math.inf and scores["World Bank"] == -math.inf
    assert column_style(y, 5.0, _toy()) == "UN M49"
    assert column_style(y, 5.0, _toy(), z=8.20) == "UN M49"
    assert column_style(y, 5.0, _toy(), z=8.21) == FIRST_STYLE
    assert STYLE_SIGMAS == 3.0


def test_the_first_spellings_written_give_a_negative_score() -> None:
    """The same counts on the first spellings: Z = -1 / (5 sqrt 2), the first spellings
    kept; a style's spellings over 3 sd that hold less than the first spellings (58 against
    70) are not the column's."""
    y = np.array([30.0, 28.0, 50.0, 1.0, -2.0])
    assert style_scores(y, 5.0, _toy())["UN M49"] == pytest.approx(-1 / (5 * math.sqrt(2)))
    assert column_style(y, 5.0, _toy()) == FIRST_STYLE
    y = np.array([40.0, 30.0, 50.0, 30.0, 28.0])
    assert style_scores(y, 5.0, _toy())["UN M49"] > 3
    assert column_style(y, 5.0, _toy()) == FIRST_STYLE


def test_restyled_cells_by_hand() -> None:
    """In the UN's style the listed cells 0 and 1 become 3 and 4 (2 stays), 0 and 1 join the
    cells by rule in place of 3 and 4; the first spellings' style changes nothing."""
    assert restyled(_toy(), "UN M49", (0, 1, 2), (3, 4)) == ((3, 4, 2), (0, 1))
    assert restyled(_toy(), FIRST_STYLE, (0, 1, 2), (3, 4)) == ((0, 1, 2), (3, 4))


# == rates on simulated columns (seeded) ==========================================================


def _simulated(style: str | None, rng: np.random.Generator, sigma: float = 20.0,
               per: float = 19.0, places: int = 120, mixed: bool = False
               ) -> tuple[np.ndarray, PlaceColumn]:  # fmt: skip
    """A country column's noisy 1-way counts: ``places`` of the 258 hold ``per`` records each
    (every place the styles write apart among them), written in ``style`` (None: the first
    spellings; ``mixed``: every other such place in the style, the rest first), noise
    ``sigma``; ``mixed``: one in three of the places the style writes apart in the style,
    the others by their first spelling)."""
    attr = _countries()
    col = place_column(attr)
    assert col is not None
    x = np.zeros(len(attr.values))
    apart = {
        p
        for s in COUNTRY_STYLES
        for p, (a, b) in enumerate(zip(col.styles[s], col.styles[FIRST_STYLE], strict=True))
        if a != b
    }
    chosen = sorted(apart) + [p for p in range(len(col.cells)) if p not in apart]
    own = [p for p in chosen if style is not None and col.styles[style][p] != col.styles[
        FIRST_STYLE][p]]  # fmt: skip
    for p in chosen[:places]:
        # mixed: one in three of the style's places written its way, the rest first
        first = mixed and p in own and own.index(p) % 3 != 0
        write = style if style is not None and not first else FIRST_STYLE
        x[col.styles[write][p]] += per
    return x + rng.normal(0, sigma, x.size), col


def test_no_style_fires_on_a_column_of_first_spellings() -> None:
    """Seeds 0 to 999, 120 places of 19 records (sd 20) in their first spellings: the style
    test fires on none. Each style's Z is at most a standard normal, so the bound is 0.4% a
    draw (three styles), and these draws sit far below it (the first spellings' sum is
    subtracted); the false-failure rate of this test, at most P(Binomial(1000, 0.004) >= 1),
    does not apply: the seeds are fixed, and a Z here is about -6."""
    fired = 0
    for seed in range(1000):
        y, col = _simulated(None, np.random.default_rng(seed))
        fired += column_style(y, 20.0, col) != FIRST_STYLE
    assert fired == 0


def test_pure_noise_fires_below_the_stated_rate() -> None:
    """Seeds 0 to 1999, no record at all (noise alone, sd 20): a style fires in at most 0.4%
    of the draws in expectation (three styles at 0.13%); the test allows 20 of 2,000 (the
    chance of more under the bound, Binomial(2000, 0.004), is below 1e-4)."""
    col = place_column(_countries())
    assert col is not None
    rng = np.random.default_rng(0)
    fired = sum(column_style(rng.normal(0, 20.0, len(_countries().values)), 20.0, col)
                != FIRST_STYLE for _ in range(2000))  # fmt: skip
    assert fired <= 20


@pytest.mark.parametrize("style", list(COUNTRY_STYLES))
def test_a_column_in_each_style_is_found(style: str) -> None:
    """Seeds 0 to 49, a column in ``style``: 120 places of 19 records against a noise sd of
    20 (every place the styles write apart among them). The style is found in at least 45 of
    50 (at 19 records a place, 25 places apart stand about 4 sd: the rate is above 0.97,
    and 45 or fewer of 50 has probability below 1e-3 there); another style is never
    chosen."""
    found = other = 0
    for seed in range(50):
        y, col = _simulated(style, np.random.default_rng(seed))
        got = column_style(y, 20.0, col)
        found += got == style
        other += got not in (style, FIRST_STYLE)
    assert found >= 45 and other == 0


def test_a_mixed_column_keeps_the_first_spellings() -> None:
    """Seeds 0 to 199, 9 of the 25 places the UN names apart written its way and 16 by their
    first spelling: its spellings stand at 1.7 sd (9 x 19 records, sd 20 sqrt 25) and hold
    less than the first spellings (a difference of -133 records, sd 141), so a style is
    taken only when its sum is high: about 10% of draws (its Z at least 3 at a mean of 1.7:
    10%, and then its sum mostly above the first spellings'; ISO 3166-1's list shares 8 of
    the UN's names, so it may be the one). The test allows 35 of 200 (Binomial(200, 0.1) >=
    36 has probability below 1e-4). The places then written by their first spelling are
    kept on their place, under the style's name (``restyled``)."""
    fired = 0
    for seed in range(200):
        y, col = _simulated("UN M49", np.random.default_rng(seed), mixed=True)
        fired += column_style(y, 20.0, col) != FIRST_STYLE
    assert fired <= 35


# == in a release =================================================================================


def _un_table(n_per: int, seed: int) -> pd.DataFrame:
    """The 25 places the UN names apart and 35 more, ``n_per`` records each, written in the
    UN's names; a second column that depends on the first."""
    rng = np.random.default_rng(seed)
    un = COUNTRY_STYLES["UN M49"]
    others = [s[0] for s in COUNTRY_NAMES if s[0] not in un and len(s) == 1][:35]
    names = [un[f] for f in un] + others
    country = np.repeat(names, n_per)
    return pd.DataFrame({"country": country,
                         "flag": (rng.random(country.size) < 0.5).astype(int)})  # fmt: skip


def _fit(data: Any, seed: int, **kw: Any) -> Any:
    workload = all_kway_marginals(data.domain, 2)
    return AdaptiveProjection(epsilon=1.0, seed=seed, progress=False, **kw).fit(data, workload)


def _charges(release: Any) -> list[tuple[str, str]]:
    return [(e.charge.mechanism, repr(e.charge.cost)) for e in release.ledger.entries]


def _written(release: Any, data: Any, domain: Domain) -> pd.Series:
    """The release's country column, as values, counted."""
    layout = AttributeLayout.of_data(data)
    assert int(layout.sizes[0]) == domain.attributes[0].size
    rows = np.asarray(release.records.rows)
    codes = rows[:, : int(layout.sizes[0])].argmax(axis=1) if layout.onehot[0] else rows[:, 0]
    return pd.Series([domain.attributes[0].values[c] for c in codes]).value_counts()


def _shape(table: pd.DataFrame, written: pd.Series) -> float:
    """1 - the total variation distance between the table's and the release's countries."""
    real = table["country"].value_counts(normalize=True)
    mine = written / written.sum()
    idx = real.index.union(mine.index)
    return float(1 - 0.5 * (real.reindex(idx, fill_value=0) - mine.reindex(idx, fill_value=0))
                 .abs().sum())  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_release_in_the_uns_names_with_the_same_charges(seed: int) -> None:
    """60 places of 20 records (1,200), the 25 the UN names apart written its way: the step
    finds the UN's style (noted in the rounds, Z 7 to 8 on these seeds) and the country
    column's shape (1 - TV) is higher than without it (0.40 to 0.60 against 0.18 to 0.45 on
    these seeds: without it each UN name is tested on its own and the first spellings are
    listed), with at most 3% of the records on those places' first spellings (``Syria``),
    which the table never writes (each is then tested by rule at 2.5 sd; one of 25 passes
    with probability about 15% a release: seed 0 keeps 26 records on one). The ledger holds
    the same charges, in the same order, as without it (post-processing: nothing
    charged)."""
    domain = Domain((_countries(), Categorical("flag", (0, 1))))
    table = _un_table(20, seed)
    data = encode(table, domain)
    on = _fit(data, seed)
    off = _fit(data, seed, spelling_style=False)
    assert _charges(on) == _charges(off)
    assert any(r.get("style") == "UN M49" for r in on.rounds)
    assert not any(r.get("round") == "spelling style" for r in off.rounds)
    w_on, w_off = _written(on, data, domain), _written(off, data, domain)
    assert _shape(table, w_on) > _shape(table, w_off)
    un = COUNTRY_STYLES["UN M49"]
    assert sum(int(w_on.get(f, 0)) for f in un) <= 0.03 * int(w_on.sum())


def test_a_column_of_first_spellings_is_released_as_without_the_step() -> None:
    """The same 60 places written by their first spellings (``Syria``): no style passes, so
    the release is the same bytes as with the step off, and nothing is noted."""
    domain = Domain((_countries(), Categorical("flag", (0, 1))))
    table = _un_table(20, 0)
    back = {v: k for k, v in COUNTRY_STYLES["UN M49"].items()}
    table["country"] = table["country"].map(lambda c: back.get(c, c))
    data = encode(table, domain)
    on, off = _fit(data, 0), _fit(data, 0, spelling_style=False)
    assert not any(r.get("round") == "spelling style" for r in on.rounds)
    assert np.array_equal(np.asarray(on.records.rows), np.asarray(off.records.rows))
    assert _charges(on) == _charges(off)


def test_the_step_is_off_under_replace_one_by_default() -> None:
    """Replace-one releases stay as they were: the step is off there unless asked for."""
    assert AdaptiveProjection(epsilon=1.0).spelling_style_on()
    assert not AdaptiveProjection(epsilon=1.0, neighbours="replace-one").spelling_style_on()
    assert AdaptiveProjection(epsilon=1.0, neighbours="replace-one",
                              spelling_style=True).spelling_style_on()  # fmt: skip


def test_the_plan_states_the_step_under_add_remove_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``dpquery privacy synth`` names the style step where it runs (add/remove), not under
    replace-one, where it is off."""
    for relation, named in (("add-remove", True), ("replace-one", False)):
        assert main(["privacy", "synth", "--n", "5000", "--epsilon", "1",
                     "--neighbours", relation]) == 0  # fmt: skip
        assert ("UN M49, ISO 3166-1 or the World Bank's names" in capsys.readouterr().out) is named
