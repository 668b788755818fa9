"""A column of country names written in one style: the style read off the release's 1-way counts.

A learned domain that lists the country names (``dpquery.domain_learning``: the membership
test, or the released keys' rule) lists each place by its first spelling, the usual short
name (``Syria``), and every other spelling by rule (``Syrian Arab Republic``, ``Syria``'s
name in the UN's M49 list): the release tests each on its own
(:data:`~dpquery.algorithms.marginal.empty_cells.VOCABULARY_SIGMAS`, 2.5 sd of its 1-way
noise). A table written in the UN's names holds each of its countries on a second spelling,
with about as many records as the noise sd (19 records a country against 20): each fails
its test on its own, its records are redrawn elsewhere, and the release writes ``Syria``,
which the table never does.

Yet the spellings of one style go together: a column written in the UN's names writes all of
its places that way. The places a style names differently from their first spelling
(:data:`dpquery.data.place_names.COUNTRY_STYLES`: the UN's M49 names, ISO 3166-1's list
form, the World Bank's) are summed: with ``D`` the cells of the style's spellings,

    Z = (sum of y over D) / (sigma sqrt(|D|)),

``y`` the combined noisy 1-way counts (``one_way_estimates``) and ``sigma`` their noise sd,
one for the attribute's cells, which are independent. Where the column writes none of the
style's spellings, ``Z`` is a standard normal: a style with ``Z >= STYLE_SIGMAS`` is a false
one with probability at most ``1 - Phi(3)`` = 0.13%, and one of the three styles at most
0.40%. Where the column writes the style, 17 places of 19 records stand at about 3.9 sd
together (sigma 20) where each stands at 1. The style must also hold more than the first
spellings of the same places (the sum of ``y`` over them, ``F``): a column that writes most
of those places by their first spelling keeps them (this only lowers the false rate).

The style of largest ``Z`` among those that pass is the column's (none: the first
spellings, as before, and the release is the one without this step). In a column of that
style each place's spelling is the style's (:func:`restyled`): it takes the first
spelling's part in the listed members' test
(:func:`~dpquery.algorithms.marginal.empty_cells.doubted_listed`), a plain value that gets
its share of the release's measurements, and the first spelling is tested by rule like any
other spelling (2.5 sd on its own); a spelling that fails its test has its records redrawn
from the others, as before. Giving those records to the place's own spelling instead was
measured and not kept: a place the table lacks gathers the noise of its every spelling.

Privacy: a function of the release's 1-way measurements, already charged, their public noise
scale and public lists, applied to the fitted records: post-processing (Dwork and Roth 2014,
Proposition 2.1; Bun and Steinke 2016, Lemma 1.8). Nothing is drawn or charged; the ledger
is that of the release without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dpquery.data.domain import Categorical, Domain
from dpquery.data.place_names import COUNTRY_NAMES, COUNTRY_STYLES

STYLE_SIGMAS = 3.0
"""A style whose :func:`style_scores` is at least this is the column's (the largest such): a
column that writes none of its spellings passes with probability at most 0.13% a style."""
FIRST_STYLE = "first spellings"
"""The default style: each place by its first spelling (the usual short name)."""
CASES = ("upper", "lower", "title")  # dpquery.domain_learning.CASES, in its order
SEPARATORS = (" ", "-")  # dpquery.domain_learning.SEPARATORS, in its order


def _written(word: str, case: str, sep: str) -> str:
    """``word`` in a writing ``case`` and with its spaces written as ``sep`` (as the learned
    domain writes it: ``dpquery.domain_learning._written``)."""
    cased = {"upper": word.upper(), "lower": word.lower()}.get(case, word)
    return cased if sep == " " else cased.replace(" ", sep)


@dataclass(frozen=True)
class PlaceColumn:
    """A categorical attribute's country names, by place: ``cells[p]`` the codes of place
    ``p``'s spellings in the attribute, ``styles[s][p]`` the code of its spelling in style
    ``s`` (:data:`FIRST_STYLE` first). Public: the domain and public lists alone."""

    cells: tuple[tuple[int, ...], ...]
    styles: Mapping[str, tuple[int, ...]]


def place_column(attr: Categorical) -> PlaceColumn | None:
    """The country names of ``attr`` by place: when its domain lists members of a public
    vocabulary (``Categorical.listed``) and every one is a country name written in one case
    and separator (the first that fits in :data:`CASES` x :data:`SEPARATORS`, as the learning
    writes them), each value that is a spelling of a country in that writing, by place; else
    None (a column of US state names, of codes, a codebook's)."""
    if not attr.listed or not all(isinstance(v, str) for v in attr.listed):
        return None
    for case in CASES:
        for sep in SEPARATORS:
            index = {_written(w, case, sep): i for i, slot in enumerate(COUNTRY_NAMES)
                     for w in slot}  # fmt: skip
            if all(v in index for v in attr.listed):
                return _by_place(attr, index, case, sep)
    return None


def _by_place(attr: Categorical, index: Mapping[str, int], case: str, sep: str) -> PlaceColumn:
    code = {v: c for c, v in enumerate(attr.values) if isinstance(v, str)}
    slots: dict[int, list[int]] = {}
    for v, c in code.items():
        if v in index and v not in (attr.other, attr.missing):
            slots.setdefault(index[v], []).append(c)
    order = sorted(slots)
    cells = []
    styles: dict[str, list[int]] = {FIRST_STYLE: [], **{s: [] for s in COUNTRY_STYLES}}
    for i in order:
        first = COUNTRY_NAMES[i][0]
        mine = tuple(sorted(slots[i]))
        home = code.get(_written(first, case, sep), mine[0])
        cells.append(mine)
        styles[FIRST_STYLE].append(home)
        for s, names in COUNTRY_STYLES.items():
            name = names.get(first)
            styles[s].append(code.get(_written(name, case, sep), home) if name else home)
    return PlaceColumn(tuple(cells), {s: tuple(v) for s, v in styles.items()})


def place_columns(domain: Domain | None, sizes: Sequence[int] | np.ndarray
                  ) -> list[PlaceColumn | None]:  # fmt: skip
    """Per attribute of a record layout of ``sizes`` values, its :func:`place_column` (None
    for the others, and for a layout that is not the domain's). Public: the domain alone."""
    if domain is None or len(domain.attributes) != len(sizes):
        return [None for _ in sizes]
    return [place_column(a) if isinstance(a, Categorical) and int(s) == a.size else None
            for a, s in zip(domain.attributes, sizes, strict=True)]  # fmt: skip


def _apart(column: PlaceColumn, style: str) -> list[tuple[int, int]]:
    """The places ``style`` writes differently from their first spelling: (its cell, the
    first spelling's cell)."""
    return [(a, b) for a, b in zip(column.styles[style], column.styles[FIRST_STYLE],
                                   strict=True) if a != b]  # fmt: skip


def style_scores(y: np.ndarray, sigma: float, column: PlaceColumn) -> dict[str, float]:
    """Per style of :data:`~dpquery.data.place_names.COUNTRY_STYLES`, its ``Z``: the noisy
    counts ``y`` summed over the cells of the places it writes differently from their first
    spelling, in sd of that sum's noise (``sigma sqrt(|D|)``); a style that writes none
    differently scores -inf."""
    y = np.asarray(y, dtype=float)
    out: dict[str, float] = {}
    for s in COUNTRY_STYLES:
        pairs = _apart(column, s)
        if not pairs or sigma <= 0:
            out[s] = -np.inf
            continue
        out[s] = float(sum(y[a] for a, _ in pairs)) / (sigma * np.sqrt(len(pairs)))
    return out


def column_style(y: np.ndarray, sigma: float, column: PlaceColumn,
                 z: float = STYLE_SIGMAS) -> str:  # fmt: skip
    """The column's style: the one of largest :func:`style_scores` among those whose score
    is at least ``z`` and whose spellings' noisy counts sum to more than those of the same
    places' first spellings, else :data:`FIRST_STYLE`."""
    y = np.asarray(y, dtype=float)
    scores = style_scores(y, sigma, column)
    ok = [s for s in scores if scores[s] >= z
          and sum(y[a] - y[b] for a, b in _apart(column, s)) > 0]  # fmt: skip
    return max(ok, key=lambda s: scores[s]) if ok else FIRST_STYLE  # the first of the largest


def restyled(
    column: PlaceColumn, style: str, listed: Sequence[int], vocab: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """An attribute's listed cells and cells by rule (the learned domain's) in ``style``: each
    place's first spelling in ``listed`` replaced by its spelling in the style, which leaves
    ``vocab`` (the cells tested one by one) as the first spelling joins it. The first
    spellings' style: as given."""
    if style == FIRST_STYLE:
        return tuple(listed), tuple(vocab)
    home = dict(zip(column.styles[FIRST_STYLE], column.styles[style], strict=True))
    new_listed = tuple(home.get(c, c) for c in listed)
    moved = {c for c in listed if home.get(c, c) != c}
    now = set(new_listed)
    return new_listed, tuple(sorted({*(c for c in vocab if c not in now), *moved}))


__all__ = [
    "FIRST_STYLE",
    "STYLE_SIGMAS",
    "PlaceColumn",
    "column_style",
    "place_column",
    "place_columns",
    "restyled",
    "style_scores",
]
