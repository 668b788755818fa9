"""Step 1 of a release from a raw table: its domain, learned privately when none is given.

A table given without a domain (a file without ``--domain``, a DataFrame without
``domain=``) has one learned from it by :func:`dpquery.domain_learning.learn_domain`
(``docs/learn.md``) on the run's one ledger, before the release draws anything; the release
then spends the rest. The split is stated in advance and never depends on the data:

* the run's budget is ``(epsilon, delta)`` (``delta`` defaulting to ``1/n^2`` under
  replace-one, to the public 1e-9 under add/remove, where ``n`` is private); half of
  ``delta`` is the ledger's, half the partition selections'
  (:func:`~dpquery.domain_learning.learn_budget`): the ledger holds ``(epsilon, delta / 2)``,
  whose zCDP ``rho = zcdp_rho_for(epsilon, delta / 2)``, and the selections' tail is
  ``delta_tail = (delta / 2) / (1 + e^epsilon)``;
* the learning spends ``share`` of that ``rho`` (a share of rho, not of epsilon: zCDP adds
  rho, and rho grows about as epsilon squared, so 10% of epsilon would be 1 to 2% of rho,
  :func:`epsilon_share`), the release ``1 - share`` of it, each
  on a child of the one ledger (its charges named ``domain learning: ...`` and
  ``release: ...``); of the learning's share,
  :data:`~dpquery.domain_learning.WITHIN_SHARE` less
  :data:`~dpquery.domain_learning.SECOND_SHARE` goes to decoding weights (a noisy histogram
  of sub-bins inside each learned numeric bin, :func:`~dpquery.domain_learning.learn_within`)
  (unspent when ``Learning.within`` is off, so that the domain and the release are the
  same with and without them), :data:`~dpquery.domain_learning.SECOND_SHARE` to a pool for
  a second category selection (``learn_domain(second_rho=...)``), the domain itself the
  rest; when the weights would draw nothing (:func:`release_rho`: no column is numeric, or
  the bins are too few records for a sub-bin), their part goes to the release instead, and
  so does the pool's part that no column needed (``LearnReport.second_unspent_rho``: a
  function of noisy counts, the same privacy filter); a small table draws no weights and
  lends their part to the pool (``learn_domain(small_rho=...)``), with
  :data:`~dpquery.domain_learning.SMALL_BORROW_SHARE` of the release's rho besides
  (:func:`small_borrow_rho`: the learning's stage admits it), the release getting what
  the pool left (``LearnReport.second_spent_rho`` against ``second_pool_rho``); a table that
  is not small lends :data:`~dpquery.domain_learning.LARGE_BORROW_SHARE` of the release's
  rho to the pool (:func:`large_borrow_rho`) only when a column's first selection left out a
  large noisy share of the records (:func:`~dpquery.domain_learning.large_loan`);
* the whole run is ``(epsilon, delta_ledger + (1 + e^epsilon) delta_tail)``-DP, at most
  ``(epsilon, delta)`` (:class:`~dpquery.algorithms.release.OutsideLedger`).

Under add/remove neighbours (the release's relation: the default of ``auto``) the learning
draws its own noisy ``n`` first, from its own share
(:func:`~dpquery.domain_learning.learn_domain`), and its rules and the decoding weights read
that; the release then draws its own noisy ``n`` from its share, as it does after a given
domain (one more count at :data:`~dpquery.privacy.neighbours.NOISY_N_SHARE` of its rho: the
two stages stay independent, and a learned domain reused with ``--domain`` releases exactly
as it would after the learning).

The raw table is read here, once: every cell of a CSV as text (a pandas dtype is read off
the values, and one value of 37.5 would change it), a DataFrame as given. The learned domain
must encode every table of ``n`` records, whatever the noise decided, so that no release
fails, or not, depending on the data: every learned numeric column gets a missing bin
(:func:`encodable`), and its values that are not numbers count as missing (the column's
``texts="missing"``, written with the domain, so that its reuse reads them alike); a categorical
column's catch-all category already takes what was not released. The table is encoded from
that reading, and the domain written beside the output (``<out stem>.domain.json``) for
reuse at no further cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpquery.algorithms.release import OutsideLedger, Release
from dpquery.algorithms.synthesizer import attach_ledger
from dpquery.data import dates
from dpquery.data.decode import scientific_text
from dpquery.data.domain import Categorical, Domain, Numeric, padded
from dpquery.data.encode import read_table
from dpquery.data.numbers import axis_values
from dpquery.domain_learning import (
    LARGE_BORROW_SHARE,
    LARGEST_FAR,
    PUBLIC_RULE,
    SECOND_SHARE,
    SMALL_BORROW_SHARE,
    WITHIN_SHARE,
    LearnReport,
    WithinReport,
    learn_budget,
    learn_domain,
    learn_within,
    within_plan,
)
from dpquery.errors import DPQueryError
from dpquery.pipeline.request import Frame, ReleaseRequest, TableFile
from dpquery.privacy import Budget, Ledger
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.privacy.delta import relation_default_delta
from dpquery.privacy.neighbours import (
    ADD_REMOVE,
    REPLACE_ONE,
    check_neighbours,
    marginal_sensitivity,
)
from dpquery.privacy.partition_selection import PARTITION_SENSITIVITY, partition_delta
from dpquery.rng import child_rng, make_rng

LEARNING_STAGE = "domain learning"
"""The prefix of the learning's charges on the run's ledger."""
RELEASE_STAGE = "release"
"""The prefix of the release's charges on the run's ledger, after a learned domain."""
SLACK = 1e-9
"""The release's share of rho is cut by this fraction: the two shares add up within the
ledger's budget despite float rounding."""
NEEDS_EPSILON = (
    "a domain learned from the data needs an (epsilon, delta) budget: its category "
    "selections have a tail probability that no {given} states; give epsilon (delta "
    "defaults to 1/n^2, or 1e-9 under add/remove), or a public domain"
)


@dataclass(frozen=True)
class RunBudget:
    """The split of a run's ``(epsilon, delta)`` between learning its domain and releasing
    (module docstring)."""

    epsilon: float
    delta: float
    share: float
    rho: float  # the ledger's whole rho: zcdp_rho_for(epsilon, delta / 2)
    delta_tail: float  # the partition selections' tail probability, all columns together

    @property
    def ledger_delta(self) -> float:
        return self.delta / 2

    @property
    def ledger_budget(self) -> Budget:
        return Budget.approx(self.epsilon, self.ledger_delta)

    @property
    def learn_rho(self) -> float:
        return self.share * self.rho

    @property
    def release_rho(self) -> float:
        return (1.0 - self.share) * self.rho * (1.0 - SLACK)

    @property
    def selection_delta(self) -> float:
        """What the selections add to the ledger's delta at the budget's epsilon."""
        return partition_delta(self.delta_tail, self.epsilon)

    def to_dict(self) -> dict[str, float]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "share": self.share,
            "rho": self.rho,
            "learn_rho": self.learn_rho,
            "release_rho": self.release_rho,
            "ledger_delta": self.ledger_delta,
            "delta_tail": self.delta_tail,
            "selection_delta": self.selection_delta,
        }


def epsilon_share(budget: RunBudget) -> float:
    """The share of epsilon the learning's share of rho amounts to, alone: the epsilon its
    rho converts to at the ledger's delta, over the budget's (for the plan and the docs)."""
    alone = zcdp_to_epsilon(budget.learn_rho, budget.ledger_delta)
    return alone / budget.epsilon


def check_share(share: object) -> float:
    """A share of rho strictly between 0 and 1."""
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
        raise DPQueryError(f"domain_share must be a number strictly between 0 and 1, got "
                           f"{share!r}")  # fmt: skip
    return float(share)


def run_budget(
    options: Mapping[str, Any], n: int | None, share: float, add_remove: bool = False
) -> RunBudget:
    """The split of the budget in ``options`` (``epsilon``, ``delta``: None is ``1/n^2``, or
    under add/remove (``add_remove``; ``n`` private, not read) the public 1e-9; ``rho``) for a
    run on ``n`` records that learns its domain with ``share`` of rho."""
    share = check_share(share)
    if options.get("rho") is not None:
        raise DPQueryError(NEEDS_EPSILON.format(given="rho (zCDP)"))
    epsilon = options.get("epsilon")
    if epsilon is None:
        raise DPQueryError("no privacy budget given: give epsilon (e.g. epsilon=1; delta "
                           "defaults to 1/n^2)")  # fmt: skip
    delta = options.get("delta")
    delta = relation_default_delta(n, add_remove) if delta is None else delta
    if delta == 0:
        raise DPQueryError(NEEDS_EPSILON.format(given="pure epsilon (delta=0)"))
    split = learn_budget(epsilon, delta)
    return RunBudget(split.epsilon, split.delta, share, split.rho, split.delta_tail)


def check(request: ReleaseRequest) -> None:
    """Before any data is read: a learned domain needs the local backend and an
    ``(epsilon, delta)`` budget (its category selections have a tail probability)."""
    if request.learning.rest and not _partial(request):
        raise DPQueryError("learn_rest learns the columns a partial domain leaves out: give "
                           "that domain with a raw table")  # fmt: skip
    if not request.learns:
        return
    if request.backend.name != "local":
        raise DPQueryError(
            "learning the domain reads the whole table in this process: give its domain "
            "(--domain DOMAIN.json) with --backend dask"
        )
    check_share(request.learning.share)
    options = request.options
    if options.get("rho") is not None:
        raise DPQueryError(NEEDS_EPSILON.format(given="rho (zCDP)"))
    if options.get("delta") == 0:
        raise DPQueryError(NEEDS_EPSILON.format(given="pure epsilon (delta=0)"))


@dataclass
class Learned:
    """A domain learned from the data and what it cost: the run's ``ledger`` holds the
    learning's charges, ``release_ledger`` is its child for the release's share; ``table``
    is the raw table read for the domain (its numeric columns as numbers, anything else
    there missing: :func:`encodable`)."""

    domain: Domain
    report: LearnReport
    budget: RunBudget
    ledger: Ledger
    release_ledger: Ledger
    table: pd.DataFrame
    within: WithinReport | None = None

    @property
    def neighbours(self) -> str:
        """The relation the learning holds for (the release's)."""
        return self.report.neighbours

    @property
    def outside(self) -> OutsideLedger:
        """The selections' tail, besides the ledger, and the run's whole budget."""
        whole = Budget.approx(self.budget.epsilon, self.budget.delta)
        return OutsideLedger(self.report.delta_tail, whole)

    def kinds(self) -> dict[str, int]:
        """How many columns of each kind the domain has, and (``public``, when any) how many
        of them came from a partial public domain."""
        counts = {"categorical": 0, "numeric": 0}
        times = 0
        for attr in self.domain.attributes:
            counts["categorical" if isinstance(attr, Categorical) else "numeric"] += 1
            times += isinstance(attr, Numeric) and attr.time is not None
        public = sum(c.rule == PUBLIC_RULE for c in self.report.columns)
        # (dates are numeric columns on the time axis: counted there and, when any, apart)
        return counts | ({"date": times} if times else {}) | ({"public": public} if public else {})

    def as_run(self, release: Release) -> Release:
        """``release`` (fitted on :attr:`release_ledger`) accounted as the whole run: the
        run's ledger, with the selections' delta besides it."""
        return replace(release, ledger=self.ledger, outside=self.outside)

    def to_dict(self) -> dict[str, Any]:
        """The publishable account of the learning: noisy counts and what was derived."""
        return {
            "source": "learned from the data under differential privacy (docs/learn.md)",
            "neighbours": self.neighbours,
            "share_of": "rho",
            "budget": self.budget.to_dict(),
            "spent_rho": self.report.rho + (self.within.rho if self.within else 0.0),
            # the release's rho: budget.release_rho, plus the weights' part when they draw
            # nothing (release_rho)
            "release_rho": self.release_ledger.budget.rho,
            "delta_tail": self.report.delta_tail,
            "kinds": self.kinds(),
            "numeric_missing": "every numeric column has a missing bin; a value there that "
            "is not a number counts as missing",
            "learned": self.report.to_dict(),
            "notes": column_notes(self.domain, self.report),
            "within": None if self.within is None else {
                "share_of_learning": WITHIN_SHARE - SECOND_SHARE, **self.within.to_dict(),
                "what": "per numeric column, a discrete Gaussian histogram of equal-width "
                f"sub-bins inside each bin (L2 sensitivity {_L2_TEXT[self.neighbours]}), "
                "clipped at 0 and "
                "normalised per bin: the decoding weights Numeric.within",
            },
        }  # fmt: skip


_L2_TEXT = {ADD_REMOVE: "1", REPLACE_ONE: "sqrt(2)"}
"""The decoding weights' L2 sensitivity as the report states it, per relation
(:func:`~dpquery.privacy.neighbours.marginal_sensitivity`)."""

LARGEST_BOUND = LARGEST_FAR
"""The largest magnitude private bounds can reach (``10^16``, the outer edge of their far
buckets, :data:`~dpquery.domain_learning.FAR_EXPONENT`): values beyond it are clipped to
it."""


def small_note(report: LearnReport) -> str:
    """What a small table's learning means for its user (``report.small``: the selection's
    threshold above a tenth of the records, ``check_learnable``), read off the report alone:
    the records (noisy under add/remove), the columns learned and the largest threshold."""
    learned = [c for c in report.columns if c.rho > 0]
    taus = [c.noisy["threshold"] for c in learned if isinstance(c.noisy.get("threshold"), int)]
    need = (f"; a category is released only when its noisy count reaches about {max(taus):,} "
            "records") if taus else ""  # fmt: skip
    return (
        f"about {report.n:,} records are few for {len(learned)} learned columns at this "
        f"budget{need}, and each column's kind and bounds are read through noise of that "
        'order (the small-table rules, docs/learn.md, "Tables too small for the budget"); '
        "where you can, declare the kinds (--types), give the columns' codebook (--domain, "
        "--learn-rest), raise --epsilon or --domain-share, or leave columns out"
    )


def _order_note(name: str, why: str) -> str:
    """The note of a column whose values look like dates whose order was not taken
    (``domain_learning.common_rule``)."""
    what = (
        "every value reads both month first and day first (no field above 12)"
        if why == "either"
        else "some values read month first only, others day first only"
    )
    return (f"{name}: looks like dates in a common format, but {what}: the order is never "
            f"guessed, so it is learned as text; declare it, --types '{name}=date:%m/%d/%Y' "
            f"or '{name}=date:%d/%m/%Y'")  # fmt: skip


def column_notes(domain: Domain, report: LearnReport) -> list[str]:
    """What a user must know about the learned columns that release little of their table,
    read off the learned domain and the report's noisy counts alone (post-processing: public):
    a small table (:func:`small_note`), a categorical column with no value released (an
    identifier, dates, free text: every value is its catch-all), a column with no bounds
    found, and bounds at :data:`LARGEST_BOUND` (larger values clipped)."""
    columns = {c.name: c for c in report.columns}
    notes = [small_note(report)] if report.small else []
    for attr in domain.attributes:
        c = columns.get(attr.name)
        if c is None or c.rho == 0:  # public, or declared with its categories: nothing learned
            continue
        if isinstance(attr, Categorical | Numeric) and attr.width is not None:
            notes.append(f"{attr.name}: written zero-padded to {attr.width} digits (read off the "
                         "precision's noisy count of that form, no further charge): released "
                         f"so, {padded(7, attr.width)!r} for 7")  # fmt: skip
        if isinstance(attr, Numeric) and attr.significant is not None:
            k = attr.significant - 1
            if attr.notation is None:
                notes.append(f"{attr.name}: written in scientific notation with "
                             f"{attr.significant} significant digits (read off the precision's "
                             "noisy counts of that form, no further charge): released so, "
                             f"{0.000407:.{k}e} for 0.000407")  # fmt: skip
            else:
                side, t = attr.notation
                near = (t / 2, 2 * t) if side == "below" else (2 * t, t / 2)
                shown = ", ".join(scientific_text(x, attr.significant, attr.notation)
                                  for x in near)  # fmt: skip
                where = "below" if side == "below" else "from"
                notes.append(f"{attr.name}: written in scientific notation {where} {t:g} and as "
                             f"plain decimals {'above' if side == 'below' else 'below'}, at "
                             f"{attr.significant} significant digits (the form and its "
                             "magnitude read off the precision's and the bounds' noisy counts, "
                             f"no further charge): released so, {shown} for "
                             f"{near[0]:g}, {near[1]:g}")  # fmt: skip
        if isinstance(attr, Categorical) and c.noisy.get("date_order") in ("either", "both"):
            notes.append(_order_note(attr.name, c.noisy["date_order"]))
        if isinstance(attr, Categorical):
            kept = [v for v in attr.values if v not in (attr.other, attr.missing)]
            if not kept and attr.other_missing:  # too few values: all missing
                why = ("too few numbers for private bounds and no value released"
                       if c.noisy.get("bounds", ()) is None else
                       "too few values to tell numbers from text (its noisy counts of both "
                       "are within their noise of 0) and no value released")  # fmt: skip
                notes.append(f"{attr.name}: {why}; released as missing")
            elif not kept and c.noisy.get("bounds", ()) is None:  # read as numbers, unbounded
                notes.append(f"{attr.name}: too few numbers for private bounds and no value "
                             f"released; every value is released as {attr.other}"
                             + (" or missing" if attr.missing else ""))  # fmt: skip
            elif not kept and attr.other is not None:
                tau = c.noisy.get("threshold")
                held = f" (about {tau:,} records)" if isinstance(tau, int) else ""
                which = "only its missing values are" if attr.missing else "no value is"
                notes.append(f"{attr.name}: {which} held by enough records to reach the "
                             f"selection's threshold{held}; every other value is released as "
                             f"{attr.other} (an identifier, free text or dates in none of "
                             "the common formats never come out as written; declare "
                             "other dates' format: --types COL=date:%d.%m.%Y)")  # fmt: skip
        elif isinstance(attr, Numeric) and attr.time is not None:
            ends = dates.written(np.array(attr.edges[::attr.n_bins]), np.zeros(2, dtype=bool),
                                 attr.time)  # fmt: skip
            how = "declared" if c.declared else "read as dates (the ISO 8601 rule)"
            iso = (attr.time in dates.ISO_CLASSES or attr.time in dates.ISO_MIDNIGHT_FORMATS
                   or attr.time in dates.ISO_ZERO_FORMATS)  # fmt: skip
            if not c.declared and not iso:
                how = f"read as dates (a common format, {c.noisy.get('date_order')} order)"
            if not c.declared and attr.time in dates.MIDNIGHT_FORMATS:
                how += ", every time written at midnight (learned over days, released so)"
            if not c.declared and attr.time in dates.ISO_ZERO_FORMATS:
                unit = "hours" if attr.time in dates.ISO_HOUR_FORMATS else "minutes"
                how += (f", every time a whole {unit[:-1]} (learned over {unit}, released "
                        "with its zeros)")  # fmt: skip
            if not c.declared and attr.time == dates.DIGITS_FORMAT:
                how = "read as dates written YYYYMMDD (a private count of that form)"
            if not c.declared and attr.time in dates.NAMED_SPELLINGS:
                how = (f"read as dates written {attr.time} (a private count of that form; "
                       "written back in English, in the case read, the day with its leading "
                       "zero, a weekday the released day's)")  # fmt: skip
            if attr.time in dates.CLOCK_FORMATS:
                how = "declared" if c.declared else "read as times of day (a common format)"
                notes.append(f"{attr.name}: {how}; learned over the day (0:00 to 24:00, "
                             f"public) in {attr.n_bins} bins and released as times written "
                             f"{attr.time}; a value that is not such a time is released as "
                             "missing")  # fmt: skip
                continue
            if c.noisy.get("bounds", ()) is None:
                notes.append(f"{attr.name}: {how}; too few values are dates written "
                             f"{attr.time} for private bounds: released in one bin "
                             f"[{ends[0]}, {ends[1]}]" + (" or missing" if attr.missing else "")
                             )  # fmt: skip
                continue
            notes.append(f"{attr.name}: {how}; learned on the time axis in {attr.n_bins} bins "
                         f"over [{ends[0]}, {ends[1]}] (earlier or later dates are clipped to "
                         f"them) and released as dates written {attr.time}; a value that is "
                         "not such a date is released as missing")  # fmt: skip
        elif isinstance(attr, Numeric):
            if "bounds" in c.noisy and c.noisy["bounds"] is None:
                notes.append(f"{attr.name}: too few numbers for private bounds; released in "
                             f"one bin [{attr.edges[0]:g}, {attr.edges[-1]:g}]"
                             + (" or missing" if attr.missing else ""))  # fmt: skip
            elif max(abs(attr.edges[0]), abs(attr.edges[-1])) >= LARGEST_BOUND:
                notes.append(f"{attr.name}: its bounds reached {LARGEST_BOUND:g}, the largest "
                             "magnitude they can learn: larger values are clipped to it "
                             "(give its range in a partial domain, --learn-rest)")  # fmt: skip
    return notes


def read_raw(path: Path, na_values: list[str] | None = None) -> pd.DataFrame:
    """The table as written: every CSV cell as text (no dtype inferred from the values), a
    missing value as NaN (pandas' default texts and ``na_values``)."""
    if not path.is_file():
        raise DPQueryError(f"data file {path} does not exist")
    return read_table(path, as_text=True, na_values=na_values)


def raw_table(source: TableFile | Frame) -> pd.DataFrame:
    """The raw table the learner reads: a file's cells as text, a DataFrame as given."""
    if isinstance(source, Frame):
        return source.table
    if source.path.is_dir():
        raise DPQueryError(f"{source.path} is a folder: learning a domain reads one file")
    return read_raw(source.path, list(source.na_values))


def learn(
    request: ReleaseRequest, rng: np.random.Generator, neighbours: str = REPLACE_ONE
) -> Learned | None:
    """The domain of a table given without one, learned on the run's ledger from ``rng``
    (the run's one generator) under ``neighbours``, the release's relation; None when the
    request gives a domain."""
    if not request.learns:
        return None
    add_remove = check_neighbours(neighbours) == ADD_REMOVE
    source = request.source
    assert isinstance(source, TableFile | Frame)
    raw = raw_table(source)
    public = public_part(source) if request.learning.rest else None
    budget = run_budget(
        request.options, None if add_remove else len(raw), request.learning.share, add_remove
    )
    ledger = Ledger(budget.ledger_budget)
    within_rho = weights_rho(budget)
    borrow = small_borrow_rho(budget)  # a small table's pool may borrow from the release
    stage = ledger.child(Budget.zcdp(budget.learn_rho + borrow), LEARNING_STAGE)
    within = None
    l2 = marginal_sensitivity(neighbours)  # the decoding weights' histograms' (learn_within)
    try:
        domain, report = learn_domain(
            raw, rho=(1 - WITHIN_SHARE) * budget.learn_rho, delta=budget.delta_tail, rng=rng,
            ledger=stage, types=request.learning.types, bins=request.learning.bins,
            neighbours=neighbours, public=public,
            second_rho=SECOND_SHARE * budget.learn_rho, small_rho=within_rho + borrow,
            large_rho=large_borrow_rho(budget),
        )  # fmt: skip
        domain, table = encodable(domain, raw, public)
        # drawn with or without the weights: the domain and the release are the same either way
        weights_rng = make_rng(child_rng(rng))
        if request.learning.within and not report.small:  # (a small table lent their part)
            domain, within = learn_within(
                domain, table, rho=within_rho, rng=weights_rng, ledger=stage, n=report.n,
                sensitivity=l2,
            )  # fmt: skip
    except BaseException as exc:
        attach_ledger(exc, ledger)
        raise
    if report.small:  # the weights' part was lent to the learning's pool: what it left
        release = (
            budget.release_rho + within_rho - (report.second_spent_rho - report.second_pool_rho)
        )
    elif report.lent_rho:  # a large table's loan joined the pool: the release gets what it left
        pool = report.second_pool_rho + report.lent_rho
        release = (
            release_rho(budget, domain, report.n, l2)
            - report.lent_rho
            + (pool - report.second_spent_rho)
        )
    else:
        release = release_rho(budget, domain, report.n, l2) + report.second_unspent_rho
    release_ledger = ledger.child(Budget.zcdp(release), RELEASE_STAGE)
    return Learned(domain, report, budget, ledger, release_ledger, table, within)


def small_borrow_rho(budget: RunBudget) -> float:
    """What a small table's pool may borrow from the release's rho
    (:data:`~dpquery.domain_learning.SMALL_BORROW_SHARE` of it): spent only on the
    categorical columns the second selection takes, the rest stays the release's."""
    return SMALL_BORROW_SHARE * budget.release_rho


def large_borrow_rho(budget: RunBudget) -> float:
    """What the pool of a table that is not small may borrow from the release's rho
    (:data:`~dpquery.domain_learning.LARGE_BORROW_SHARE` of it), when
    :func:`~dpquery.domain_learning.large_loan` finds a column that needs it; at most
    :func:`small_borrow_rho`, so that the learning's stage admits it."""
    return min(LARGE_BORROW_SHARE, SMALL_BORROW_SHARE) * budget.release_rho


def weights_rho(budget: RunBudget) -> float:
    """The decoding weights' rho: :data:`~dpquery.domain_learning.WITHIN_SHARE` of the
    learning's, less the second selection's pool
    (:data:`~dpquery.domain_learning.SECOND_SHARE`), which is taken from it."""
    return (WITHIN_SHARE - SECOND_SHARE) * budget.learn_rho


def release_rho(
    budget: RunBudget, domain: Domain, n: int, sensitivity: float = PARTITION_SENSITIVITY
) -> float:
    """The release's rho: ``budget.release_rho``, plus the decoding weights' part of the
    learning's share when :func:`~dpquery.domain_learning.within_plan` draws no sub-bin on
    any column (with the weights on or off alike, so that the release does not depend on
    that option). ``n`` is the learning's (public, or its noisy ``n`` under add/remove), and
    ``sensitivity`` the weights' histograms' L2 sensitivity (``sqrt(2)``, or 1 under
    add/remove: the plan of :func:`~dpquery.domain_learning.learn_within`).

    Privacy: the amount is a function of the learned domain and ``n``, outputs of charged
    mechanisms and public quantities, never of the data directly, and the ledger admits each
    charge only while the run's total stays within its budget: the privacy filter of
    ``docs/privacy.md`` ("Adaptive budgets"; Feldman and Zrnic 2021, the Rényi filter, and
    Whitehouse, Ramdas, Rogers and Wu 2023 for zCDP). The learning's child ledger never
    charges the unspent part, so the run's total is at most ``learn_rho + release_rho``
    of a run that drew the weights."""
    within_rho = weights_rho(budget)
    if any(within_plan(domain, n, within_rho, sensitivity).values()):
        return budget.release_rho
    return budget.release_rho + within_rho


def _partial(request: ReleaseRequest) -> bool:
    source = request.source
    return isinstance(source, TableFile | Frame) and source.domain is not None


def public_part(source: TableFile | Frame) -> Domain:
    """The partial public domain given with a table whose other columns are learned."""
    if isinstance(source, Frame):
        assert source.domain is not None
        return source.domain
    assert source.domain is not None
    return Domain.load(source.domain)


def encodable(
    domain: Domain, raw: pd.DataFrame, public: Domain | None = None
) -> tuple[Domain, pd.DataFrame]:
    """The learned ``domain`` with a missing bin on every learned numeric column (a public
    rule: the noisy missing count may miss a few; a column of the ``public`` domain is kept
    as given), and ``raw`` with the numeric columns as numbers, a value that is not one
    missing (the learner found at most a small noisy share of them)."""
    attrs = []
    table = raw.copy()
    given = set(public.names) if public is not None else set()
    for attr in domain.attributes:
        if isinstance(attr, Numeric):
            if attr.name not in given:  # the reuse of the domain reads texts as here
                attr = replace(attr, missing=True, texts="missing")
            # "$1,200.50" too, as learned; a date column on its time axis
            table[attr.name] = axis_values(table[attr.name], attr)
        attrs.append(attr)
    return Domain(tuple(attrs), note=domain.note), table


SMALL_COMPRESS = 2.0
"""The release's compression threshold ``c`` (adaptive-projection's ``compress``, 5 by
default) after a small table's learned domain under add/remove: its categories were released
over a threshold of 60 to 280 noisy records, a few noise sds of the release's 1-way
measurements, and at ``c = 5`` most of them merge again into one value in every pair
(docs/learn.md, "The worst pair")."""


def small_release_options(
    options: Mapping[str, Any], algorithm: str, learned: Learned, add_remove: bool
) -> dict[str, Any]:
    """``options`` with ``compress`` :data:`SMALL_COMPRESS` when the learned domain is a small
    table's (``report.small``, read off noisy counts: public), under add/remove, the user gave
    no ``compress`` and the algorithm takes it (auto or adaptive-projection); else as given."""
    takes = algorithm in ("auto", "adaptive-projection")
    if learned.report.small and add_remove and takes and options.get("compress") is None:
        return {**options, "compress": SMALL_COMPRESS}
    return dict(options)


def release_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The estimator's options after a learned domain: no budget of its own (it spends the
    release's child ledger)."""
    return {**options, "epsilon": None, "delta": None, "rho": None}
