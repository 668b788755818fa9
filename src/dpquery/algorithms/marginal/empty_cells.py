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
deviations of its noise is taken as empty, and that attribute's values are conditioned on
it: a record holding such a cell gets, for that attribute alone, the value of a record drawn
uniformly with replacement from those that hold none (the attribute's distribution in the
record set conditioned on the cell being empty; the record's other attributes are kept).
Redrawing whole records instead would condition every attribute on the event that no doubted
cell of any attribute is taken: on a table of many columns that event selects a biased subset
(on KDD Cup 99, 6% of the records, mostly of one protocol, moved its 1-way TV by 0.027). An
empty cell's
noise passes ``z = 2`` with probability about 2.3%; a cell holding records keeps them once
their count reaches ``z`` sigma.

A learned domain also has cells that exist by a rule rather than by a noisy count of their
own: a small table's integer codes are every integer of its private bounds, whose top bucket
(``[10, 20)`` for PUMS's education, coded 1 to 16) holds records as a whole, not code by code,
so up to nine codes past the data come with it. The learning lists the codes above the first
code of that bucket (``Categorical.by_rule``, kept in the domain's JSON: public). They are
tested from the highest down, each below :data:`RULED_SIGMAS` sigma taken as empty, stopping
at the first that reaches it (:func:`ruled_cells`, :func:`doubted_run`): the codes past the
data are the highest, and a code below one that holds records lies inside the data's range.
The doubted codes join the catch-all cells' and are conditioned on in the same way. Codes a
rule added below the data's bounds (a lower bound taken to 0: UCI Adult's ``education-num``,
1 to 16, coded from 0) are a run of their own, tested from the lowest up in the same way
(:func:`ruled_low_cells`).

A learned categorical also lists as added by rule the members of a public vocabulary (single
letters, days of the week, months: ``dpquery.domain_learning.VOCABULARIES``) that its
released keys hold one member of. Such values are text, the integer codes numbers: the kind
is read off the domain's JSON. They are unordered, so each is tested on its own
(:func:`vocabulary_cells`, :func:`doubted_cells` at :data:`VOCABULARY_SIGMAS`): a member no
record holds passes with the probability that its noise reaches that many sigma, a member
that holds records keeps them once their count reaches it.

A learned domain may list a public vocabulary's members that no selection released
(``Categorical.listed``: the country names of a column of countries, the 254 places of a
column holding 125 of them). Their 1-way noise gives an absent member records as often as
not (at 0 noise sd, 0.4 sd of records on average: 17% of a release's countries on a table
of 125 countries, 5 to 7% of its states on a table of 51), while the members the table holds
have few records each (14 to 22 of 1,097 a state: one noise sd), so that no fixed threshold
in sd keeps the ones and drops the others (2.5 sd took most states as empty). The listed
members of an attribute are many draws of one kind, so their empty share is estimated from
their own noisy counts (empirical Bayes, Robbins 1956; the prior's nonparametric maximum
likelihood estimate, Kiefer and Wolfowitz 1956, by EM over a grid as in Jiang and Zhang
2009, Koenker and Mizera 2014): a member whose posterior probability of holding no record
is at least one half (the posterior median of its count is 0: the estimate of least
expected absolute error, which is what the column's shape reads) is taken as empty
(:func:`listed_cells`, :func:`null_posteriors`, :func:`doubted_listed`).

Privacy: post-processing (Dwork and Roth 2014, Proposition 2.1; for zCDP Bun and Steinke
2016, Lemma 1.8) of measurements already charged, of the record set fitted to them, and of
the public domain; no data is read and nothing is charged. The cells tested are fixed by the
domain alone. When no cell is doubted, or no record holds one, nothing is drawn: the release
is the one before this step, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dpquery.algorithms.marginal.shrinkage import level_posteriors, npmle_prior, two_group_prior
from dpquery.data.domain import Categorical, Domain, Numeric

DEFAULT_EMPTY_SIGMAS = 2.0
"""A catch-all cell whose combined noisy 1-way count is below this many standard deviations
of its noise is taken as empty."""

RULED_SIGMAS = 1.0
"""A code added by rule (:func:`ruled_cells`) whose combined noisy 1-way count is below this
many standard deviations of its noise is taken as empty, the run from the highest code
stopping at the first that reaches it. Lower than :data:`DEFAULT_EMPTY_SIGMAS`: such a code
lies in a bounds bucket that holds records, and the codes just below the data's end hold
few (PUMS's education 15 and 16: 24 and 13 records, about 1 and 0.6 sd of the release's
1-way noise), which 2 sd took as empty too (``docs/learn.md``, measured)."""

RULED_HALF_SIGMAS = 2.0
"""The :data:`RULED_SIGMAS` of a run of half-lattice points added by rule (a rating of whole
numbers and halves, coded by ``dpquery.domain_learning._half_codes``: floats). Their
bounds' bucket ``[5, 10)`` adds the nine points 5.5 to 9.5 past a rating's 5.0 at once, and
at 1 sd each an empty point passes with probability 16%, so the run kept some of them (and
every point below the first that passed) in most releases: 0.2 to 4.5% of airbnb's ratings
above its largest, 5.0, on 6 of the 8 seeds (0 to 9) that coded it on halves; none at 2 or
2.5 sd. Where the points past 5 hold records (LAhomes' baths, 5% of them on 5.5 to 9.5, 2 to
20 a point), 2 sd costs their KS a little (0.053 to 0.059 mean over seeds 12 to 15, the same
on 10 and 11) and 2.5 sd more (0.040 to 0.060 on seeds 10 and 11): an empty point passes
with probability 2.3% at 2 sd (about one run in five keeps one)."""
VOCABULARY_SIGMAS = 2.5
"""A value added by a public vocabulary (:func:`vocabulary_cells`) whose combined noisy
1-way count is below this many standard deviations of its noise is taken as empty, each
value tested on its own. An empty member passes with probability about 0.6% (titanic's
port lists 25 letters by rule: about one run in seven keeps one); a member holding records
is lost when its count falls below it (titanic's Q, 77 records, about 3.4 sd of the
release's noise of 22). Tuned on titanic, seeds 0 to 9, among 1 to 3 (``docs/learn.md``,
"Public vocabularies")."""

LISTED_GRID_STEP = 0.5
"""The prior of a listed member's count (:func:`null_posteriors`) is estimated on the grid 0,
``s sigma``, ``2 s sigma``, ... past the largest noisy count: a count under half a step is
not told from 0 at that noise."""
LISTED_ITERATIONS = 500
"""EM iterations of the prior's estimate (a fixed number: the rule reads no clock)."""
LISTED_NULL = 0.5
"""A listed member whose posterior probability of holding no record is at least this is
taken as empty (one half: its posterior median count is 0)."""
LISTED_PRIOR = "npmle"
"""The prior :func:`null_posteriors` reads: ``"npmle"`` (the nonparametric estimate) or
``"two-group"`` (a point mass at 0 and one level,
:func:`~dpquery.algorithms.marginal.shrinkage.two_group_prior`: measured and not kept,
``docs/learn.md``, "Phantoms at the noise floor: a prior of two groups")."""
LISTED_SIGMAS: float | None = None
"""None: the empirical-Bayes rule above; a number: a listed member whose noisy count is
below this many sd is taken as empty instead (a fixed threshold, measured against the rule
in ``docs/learn.md``)."""


def _is_code(value: object) -> bool:
    """Whether a value added by rule is an integer code (a number), not a vocabulary's
    member (text)."""
    return not isinstance(value, str)


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


def _low_codes(attr: Categorical) -> set[object]:
    """The integer codes an attribute lists as added by rule below every code it does not
    (``dpquery.domain_learning.by_rule_low``: the codes below the data's bounds); none when
    every code is added by rule."""
    ruled = set(attr.by_rule)
    codes = [v for v in attr.values if _is_code(v) and v not in (attr.other, attr.missing)]
    kept = [v for v in codes if v not in ruled]
    if not kept:
        return set()
    first = min(kept)  # type: ignore[type-var]
    return {v for v in codes if v in ruled and v < first}  # type: ignore[operator]


def _by_rule_cells(
    domain: Domain | None, sizes: Sequence[int] | np.ndarray, codes: bool, low: bool = False
) -> list[tuple[int, ...]]:
    """Per attribute, the codes of the values its domain lists as added by rule that are
    integer codes (``codes``) or vocabulary members (not ``codes``), highest first; with
    ``low``, the integer codes below every code not added by rule alone, lowest first (and
    without it, those are left out)."""

    def cells(attr: Categorical) -> tuple[int, ...]:
        below = _low_codes(attr) if codes else set()
        mine = [attr.values.index(v) for v in attr.by_rule
                if _is_code(v) == codes and (v in below) == low]  # fmt: skip
        return tuple(sorted(mine, reverse=not low))

    return _categorical_cells(domain, sizes, cells)


def _categorical_cells(
    domain: Domain | None, sizes: Sequence[int] | np.ndarray,
    cells: Callable[[Categorical], tuple[int, ...]],
) -> list[tuple[int, ...]]:  # fmt: skip
    """Per attribute of a record layout of ``sizes`` values, ``cells`` of each categorical
    attribute whose size in the layout is its domain size; none for the others, or for a
    layout that is not the domain's. Public: the domain alone."""
    if domain is None or len(domain.attributes) != len(sizes):
        return [() for _ in sizes]
    return [cells(attr) if int(size) == attr.size and isinstance(attr, Categorical) else ()
            for attr, size in zip(domain.attributes, sizes, strict=True)]  # fmt: skip


def ruled_cells(domain: Domain | None, sizes: Sequence[int] | np.ndarray) -> list[tuple[int, ...]]:
    """Per attribute of a record layout of ``sizes`` values, the codes of the integer codes
    its domain lists as added by rule (``Categorical.by_rule``, numbers), highest first: the
    order :func:`doubted_run` tests them in; those below every code not added by rule are
    :func:`ruled_low_cells`' instead. Public: the domain alone. An attribute whose size in
    the layout is not its domain size, or a layout that is not the domain's, has none."""
    return _by_rule_cells(domain, sizes, codes=True)


def ruled_low_cells(
    domain: Domain | None, sizes: Sequence[int] | np.ndarray
) -> list[tuple[int, ...]]:
    """Per attribute of a record layout of ``sizes`` values, the codes of the integer codes
    its domain lists as added by rule below every code it does not (the codes below the
    data's bounds, ``dpquery.domain_learning.by_rule_low``), lowest first: the order
    :func:`doubted_run` tests them in, as :func:`ruled_cells` tests the top run from the
    highest. Public: the domain alone."""
    return _by_rule_cells(domain, sizes, codes=True, low=True)


def vocabulary_cells(
    domain: Domain | None, sizes: Sequence[int] | np.ndarray
) -> list[tuple[int, ...]]:
    """Per attribute of a record layout of ``sizes`` values, the codes of the vocabulary
    members its domain lists as added by rule (``Categorical.by_rule``, text), each tested
    on its own by :func:`doubted_cells`. Public: the domain alone; none where
    :func:`ruled_cells` has none for a layout that is not the domain's."""
    return _by_rule_cells(domain, sizes, codes=False)


def listed_cells(domain: Domain | None, sizes: Sequence[int] | np.ndarray) -> list[tuple[int, ...]]:
    """Per attribute of a record layout of ``sizes`` values, the codes of the values its
    domain took from a public vocabulary without a selection (``Categorical.listed``), tested
    together by :func:`doubted_listed`. Public: the domain alone; none for a layout that is
    not the domain's, or an attribute whose size in it is not its domain size."""
    return _categorical_cells(
        domain, sizes, lambda attr: tuple(attr.values.index(v) for v in attr.listed)
    )


def null_posteriors(
    y: np.ndarray, sigma: float, step: float = LISTED_GRID_STEP,
    iterations: int = LISTED_ITERATIONS,
) -> np.ndarray:  # fmt: skip
    """Per noisy count ``y[c] = x[c] + N(0, sigma^2)``, the posterior probability that
    ``x[c] = 0`` under the prior of the ``x`` estimated from all of ``y``: the nonparametric
    maximum likelihood estimate (Kiefer and Wolfowitz 1956) over the grid 0, ``step sigma``,
    ... (the first point past ``max(y)``), by ``iterations`` EM steps from the uniform prior
    (Jiang and Zhang 2009; :func:`~dpquery.algorithms.marginal.shrinkage.npmle_prior`).
    Deterministic: a function of ``y`` and ``sigma`` alone."""
    y = np.asarray(y, dtype=float)
    if y.size == 0 or sigma <= 0:
        return np.zeros(y.size)
    if LISTED_PRIOR == "two-group":
        pi0, mu = two_group_prior(y, sigma, iterations)
        return np.asarray(1.0 - level_posteriors(y, sigma, pi0, mu))
    _, like, w = npmle_prior(y, sigma, step, iterations)
    post = like * w
    return np.asarray(post[:, 0] / post.sum(axis=1))


def doubted_listed(
    estimates: Sequence[tuple[np.ndarray, float]], cells: Sequence[Sequence[int]],
    sigmas: float | None = None,
) -> list[tuple[int, ...]]:  # fmt: skip
    """Per attribute, those of its listed ``cells`` the release takes as empty: with
    ``sigmas`` None (:data:`LISTED_SIGMAS`), those whose posterior probability of holding no
    record (:func:`null_posteriors` over the attribute's listed cells together) is at least
    :data:`LISTED_NULL`; with a number, those whose noisy count is below that many sd."""
    out: list[tuple[int, ...]] = []
    for (y, sigma), mine in zip(estimates, cells, strict=True):
        if not mine:
            out.append(())
            continue
        counts = np.asarray(y, dtype=float)[list(mine)]
        if sigmas is not None:
            out.append(tuple(c for c, v in zip(mine, counts, strict=True) if v < sigmas * sigma))
            continue
        p0 = null_posteriors(counts, float(sigma))
        out.append(tuple(c for c, p in zip(mine, p0, strict=True) if p >= LISTED_NULL))
    return out


def ruled_sigmas_of(domain: Domain | None, sizes: Sequence[int] | np.ndarray) -> list[float]:
    """Per attribute of a record layout of ``sizes`` values, the ``z`` its run of codes added
    by rule is tested at (:func:`doubted_run`): :data:`RULED_HALF_SIGMAS` where those codes
    are half-lattice points (floats), :data:`RULED_SIGMAS` otherwise. Public: the domain
    alone."""
    if domain is None or len(domain.attributes) != len(sizes):
        return [RULED_SIGMAS for _ in sizes]
    return [
        RULED_HALF_SIGMAS
        if isinstance(attr, Categorical) and any(isinstance(v, float) for v in attr.by_rule)
        else RULED_SIGMAS
        for attr in domain.attributes
    ]


def doubted_run(
    estimates: Sequence[tuple[np.ndarray, float]], cells: Sequence[Sequence[int]],
    z: float | Sequence[float],
) -> list[tuple[int, ...]]:  # fmt: skip
    """Per attribute, the leading run of its ``cells`` (in their order) whose noisy counts
    in ``estimates[a]`` are below ``z sigma`` (``z`` one for all, or one per attribute:
    :func:`ruled_sigmas_of`): the first cell that reaches it ends the run."""
    zs = [float(z)] * len(cells) if isinstance(z, int | float) else list(z)
    out = []
    for (y, sigma), mine, za in zip(estimates, cells, zs, strict=True):
        run: list[int] = []
        for c in mine:
            if float(np.asarray(y)[c]) >= za * sigma:
                break
            run.append(c)
        out.append(tuple(run))
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
    """Records ``X`` (``(m, g)`` codes) with each attribute conditioned on not taking its
    ``doubted`` codes: where a record takes one, that attribute's value is replaced by the
    value of a record drawn uniformly, with replacement, from those that take none of them
    (its other attributes kept). Returns the records and how many values were replaced;
    draws nothing for an attribute no record (or every record) takes a doubted code of."""
    out, k = X, 0
    for a, codes in enumerate(doubted):
        if not codes:
            continue
        hit = np.isin(X[:, a], np.asarray(codes))
        h = int(hit.sum())
        if h == 0 or h == X.shape[0]:
            continue
        if out is X:
            out = X.copy()
        out[hit, a] = X[rng.choice(np.flatnonzero(~hit), size=h, replace=True), a]
        k += h
    return out, k


__all__ = [
    "DEFAULT_EMPTY_SIGMAS",
    "LISTED_GRID_STEP",
    "LISTED_ITERATIONS",
    "LISTED_NULL",
    "LISTED_SIGMAS",
    "RULED_HALF_SIGMAS",
    "RULED_SIGMAS",
    "VOCABULARY_SIGMAS",
    "catch_all_cells",
    "condition_records",
    "doubted_cells",
    "doubted_listed",
    "doubted_run",
    "listed_cells",
    "null_posteriors",
    "ruled_cells",
    "ruled_low_cells",
    "ruled_sigmas_of",
    "vocabulary_cells",
]
