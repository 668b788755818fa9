"""Catch-all cells the release's own 1-way measurements cannot tell from empty: zero mass.

A domain that must encode any table has cells that exist for that alone: a categorical
column's catch-all category (``Categorical.other``: every value it does not list) and a
numeric column's missing bin (``Numeric.missing``; a learned domain gives every numeric
column one, ``docs/learn.md``). Real tables rarely put records there, yet a fit to noisy
measurements does: the noise of the 1-way measurement of such a cell is as likely to be
positive as any other, and the records follow it (at 1,000 records, 2 to 3% of a column's
records in an empty ``<other>`` or missing bin; the codebook of the same table has no such
cells).

So, after the last fit, each such cell whose combined noisy 1-way count (the attribute's
1-way measurements and re-measurements, combined by inverse variance:
:func:`~dpquery.algorithms.marginal.one_way.one_way_estimates`) is below ``z`` standard
deviations of its noise is taken as empty, and the released records are conditioned on it:
the records holding such a cell are replaced, in their places, by records drawn uniformly
with replacement from the records left (the record set's distribution conditioned on the event
that no catch-all cell it doubts is taken, at the same number of records). An empty cell's
noise passes ``z = 2`` with probability about 2.3%; a cell holding records keeps them once
their count reaches ``z`` sigma.

Privacy: post-processing (Dwork and Roth 2014, Proposition 2.1; for zCDP Bun and Steinke
2016, Lemma 1.8) of measurements already charged, of the record set fitted to them, and of
the public domain; no data is read and nothing is charged. The cells tested are fixed by the
domain alone. When no cell is doubted, or no record holds one, nothing is drawn: the release
is the one before this step, byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpquery.data.domain import Categorical, Domain, Numeric

DEFAULT_EMPTY_SIGMAS = 2.0
"""A catch-all cell whose combined noisy 1-way count is below this many standard deviations
of its noise is taken as empty."""


def catch_all_cells(
    domain: Domain | None, sizes: Sequence[int] | np.ndarray
) -> list[tuple[int, ...]]:
    """Per attribute of a record layout of ``sizes`` values, the codes of its catch-all
    cells: a categorical attribute's ``other`` category, a numeric attribute's missing bin
    (its last code). Public: the domain alone. An attribute whose size in the layout is not
    its domain size (a free bit), or a layout that is not the domain's, has none."""
    if domain is None or len(domain.attributes) != len(sizes):
        return [() for _ in sizes]
    out: list[tuple[int, ...]] = []
    for attr, size in zip(domain.attributes, sizes, strict=True):
        cells: tuple[int, ...] = ()
        if int(size) == attr.size:
            if isinstance(attr, Categorical) and attr.other is not None:
                cells = (attr.values.index(attr.other),)
            elif isinstance(attr, Numeric) and attr.missing:
                cells = (attr.n_bins,)
        out.append(cells)
    return out


def doubted_cells(
    estimates: Sequence[tuple[np.ndarray, float]], cells: Sequence[Sequence[int]], z: float
) -> list[tuple[int, ...]]:
    """Per attribute, those of its ``cells`` whose noisy count in ``estimates[a]`` (the
    combined 1-way counts and their noise scale ``sigma``) is below ``z sigma``."""
    out = []
    for (y, sigma), mine in zip(estimates, cells, strict=True):
        out.append(tuple(c for c in mine if float(np.asarray(y)[c]) < z * sigma))
    return out


def condition_records(
    X: np.ndarray, doubted: Sequence[Sequence[int]], rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Records ``X`` (``(m, g)`` codes) conditioned on no attribute taking a ``doubted``
    code: the records that take one are replaced by records drawn uniformly, with
    replacement, from the others (``m`` records out). Returns the records and how many
    were replaced; draws nothing when none is (or when every record takes one: nothing to
    condition on, ``X`` is returned as it is)."""
    hit = np.zeros(X.shape[0], dtype=bool)
    for a, codes in enumerate(doubted):
        if codes:
            hit |= np.isin(X[:, a], np.asarray(codes))
    k = int(hit.sum())
    if k == 0 or k == X.shape[0]:
        return X, 0
    out = X.copy()
    out[hit] = X[rng.choice(np.flatnonzero(~hit), size=k, replace=True)]  # in their places
    return out, k


__all__ = ["DEFAULT_EMPTY_SIGMAS", "catch_all_cells", "condition_records", "doubted_cells"]
