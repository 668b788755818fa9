"""A public domain learned from a raw table under a stated privacy budget: no codebook needed.

:func:`learn_domain` reads a raw ``pandas.DataFrame`` (text or numbers, missing values as
NaN) and returns a :class:`~dpquery.data.Domain` and a :class:`LearnReport`. Every number it
reads off the data passes through a mechanism that charges the ledger before it draws; the
rules that turn the noisy numbers into a domain read nothing else (``docs/learn.md``).

The budget: ``rho`` (zCDP, charged on the ledger) is split equally over the columns; in a
column, by the public shares below. Partition selection also has a tail probability
``delta_tail`` (:mod:`dpquery.privacy.partition_selection`): the ``delta`` given is split
equally over the columns (each runs one: its categories, or a probe), and the report states it.

**Neighbours.** Under replace-one (``neighbours="replace-one"``) ``n`` is public and every
rule below reads it. Under add/remove (``neighbours="add-remove"``, ``n`` private) the learning
first draws a noisy ``n`` (:func:`~dpquery.privacy.neighbours.noisy_n`, the discrete Gaussian
on a count of sensitivity 1) from :data:`LEARNING_NOISY_N_SHARE` of its ``rho``, charged before the
draw, and every rule that reads ``n`` (the text and code rules'
non-missing count, the atoms' share, the small-table refusal, the decoding weights' sub-bins)
reads that noisy ``n`` instead: post-processing. Every count vector below holds each record in
exactly one cell, so its L2 sensitivity is ``sqrt(2)`` under replace-one (two cells move by
1) and 1 under add/remove (one cell moves by 1):
:func:`~dpquery.privacy.neighbours.marginal_sensitivity` of the relation, read once
(``_Context.l2``). Every count mechanism (profile and date test, precision, date formats,
bounds' buckets, partition selections and the second, decoding weights' sub-bins) draws at
it (the common date format's three histograms, each record in one cell of each, at
``sqrt(3)`` times it: :func:`_common_format`; the lattice test's two, at ``sqrt(2)`` times it:
:func:`lattice_test`), and every public rule on their noise
(thresholds, sd floors, :func:`second_plan`,
:func:`check_learnable` and :func:`size_limits`, :func:`within_plan`) reads the same. A
partition selection under add/remove is the setting of Desfontaines et al. 2022 (one key of
one record added or removed; the tail argument holds with ``U = keys(D) | keys(D')``). A
quantile score moves by at most ``max(alpha, 1 - alpha)`` under add/remove (OpenDP's
statement; the score reads the values, never ``n``), 1 under replace-one: the exponential
mechanism is calibrated to the relation's (``_Context.add_remove``,
:func:`~dpquery.privacy.quantiles.quantile_sensitivity`).

Per column (``n`` public under replace-one, the noisy ``n`` under add/remove):

* **profile** (:data:`PROFILE_SHARE`, unless declared categorical): the noisy numbers of
  missing values and of values that read as finite numbers, discrete Gaussian, L2
  sensitivity ``sqrt(2)`` under replace-one, 1 under add/remove (each count moves by at most
  1, and one at most under add/remove); its third count, of the values written as dates
  (:func:`_date_count`), is drawn at the same noise under the same charge, and so (for an
  undeclared column) is a count of the numbers written as days ``YYYYMMDD``
  (:func:`_digits_count`), which the count of numbers then leaves out: passing the number
  rule's test below, it makes a date column written ``%Y%m%d``.
* **kind**, when not declared in ``types``: text-like (noisy count of numbers short of
  :data:`NUMBER_SHARE` of the non-missing by more than :data:`NUMBER_SIGMAS` noise standard
  deviations) is categorical. A number-like column is probed by partition
  selection (:data:`PROBE_SHARE`): if at most :data:`MAX_CODES` keys are released, each a
  whole number, and their noisy counts hold :data:`CODE_MASS` of the noisy non-missing
  values, it is a code (categorical, the probe's keys its categories); otherwise a quantity
  (numeric).
* **date** (:mod:`dpquery.data.dates`): a text-like column whose noisy count of values
  written as ISO 8601 dates (the profile's third count, :func:`_date_count`, under the
  profile's one charge) passes the number rule's test is a date column, or one declared
  ``"date"`` / ``"date:FORMAT"``: learned as a quantity on the time axis (seconds since
  1970), its format class, year then month bounds and quantiles over a public time grid
  (:func:`_dates`), released in its format. A text-like column the ISO test did not take is
  tested for a common format (:data:`~dpquery.data.dates.COMMON_FORMATS`: the profile's
  further counts of its values' order classes, :func:`_common_test`, :func:`common_rule`),
  its layout then learned by :func:`_common_format`; one no order took, for a time of day
  alone (:data:`~dpquery.data.dates.CLOCK_FORMATS`: one more count of the profile,
  :func:`_clock_test`), learned over the day, its public bounds ``[0, 86400)``. A date
  whose time is always midnight (its format histogram's own cells, :func:`_finest`) is
  learned over days and written at midnight
  (:data:`~dpquery.data.dates.MIDNIGHT_FORMATS`); an ISO one always at whole minutes or
  hours, though written with seconds, to the minute or the hour, written with those zeros
  (:data:`~dpquery.data.dates.ISO_ZERO_FORMATS`).
* **categorical**: partition selection over the values (missing values one more key); the
  released keys, sorted, then :data:`OTHER_LABEL` for every other value (never echoed), and
  :data:`~dpquery.data.domain.MISSING_LABEL` if missing values were released as a key. With
  a pool (``second_rho``; a release's learning keeps :data:`SECOND_SHARE` of its share for
  it), a second selection over the keys the first did not release, on the columns whose
  noisy count left out can reach its threshold (:func:`second_plan`), each key's fresh noisy
  count combined with its first by inverse variance
  (:func:`~dpquery.privacy.partition_selection.reselect_partitions`).
* **a column of a public vocabulary** (:func:`membership_test`): an undeclared text column
  whose selection leaves :data:`MEMBERSHIP_OTHER_SHARE` of its noisy non-missing count out
  counts its values in each public vocabulary's writing case (US state names, country
  names, the older groups), cells of its profile's histogram under the profile's charge; a
  class holding :data:`MEMBERSHIP_SHARE` of it lists that vocabulary's members.
* **atoms**: a numeric column (declared or not) is probed too; released values holding at
  least :data:`ATOM_SHARE` of it and :data:`ATOM_PEAK` times each released value one step
  away that is not itself an atom (decided from the most frequent down) become bins of their
  own (point masses, post-processing of the probe), and the bin
  edges are the quantiles of its other values. A released value written with more decimals
  than the precision (a study's end, 3.270499657768651 years) is kept exactly
  (:func:`exact_atoms`): its bin is the precision's step holding it, and the domain decodes
  that bin to it (``Numeric.exact``).
* **codes by range**: an undeclared integer column whose private bounds hold at most
  :data:`MAX_CODES` integers is categorical over every integer in them (public once the
  bounds are: no further budget, no tail probability). The codes at its ends that a bucket
  or the rule at 0 brought in (:func:`by_rule_top`, :func:`by_rule_low`), and those below
  and between a code column's released keys (:func:`codes_below`), are listed as added by
  rule, for the release to test against its own measurements (:data:`ENDS_BY_RULE`,
  :data:`KEYS_BELOW`).
* **numeric**: the precision (:data:`DECIMALS_SHARE`): a noisy histogram of the decimals
  each value is written with (0 .. :data:`MAX_LEARNED_DECIMALS`), the most precise class
  holding :data:`DECIMALS_MASS` of the noisy total (and :data:`DECIMALS_SIGMAS` noise
  standard deviations) wins (0: integers, unless the fractional classes together hold
  :data:`DECIMALS_FRACTION_MASS`, :func:`precision_of`), the histogram's further cells
  counting the whole numbers written in a form of :data:`WRITTEN_FORMS` under the same
  charge (:func:`_decimals`): digits with a leading zero, read as a width the column is
  written back zero-padded to, or eight digits naming a day, read as dates written
  ``%Y%m%d`` and learned as a date column (:func:`written_form`), and the numbers written
  with an exponent by their mantissa's decimals (:func:`_scientific`): a column so written
  is learned at a step of ``10^-14`` (:data:`SCIENTIFIC_DECIMALS`) and released in
  scientific notation with its significant digits (:func:`scientific_form`); then the bounds
  (:data:`BOUNDS_SHARE` of the rest): the outermost magnitude buckets (``[1, 2)``, ``[2, 5)``,
  ``[5, 10)`` times a power of ten) whose noisy counts reach the threshold of
  :data:`BOUND_FALSE_RATE`, grown past them a bucket at a time at :data:`BOUND_STEP_RATE`
  (:func:`grown_past`, one thin bucket crossed at :data:`LARGE_SKIP_RATE`; a bound on the
  side of 0 the mode lacks at the stricter :data:`BOUND_CROSS_RATE`, :func:`across_zero`);
  then ``bins - 1`` equal-mass edges inside them by the exponential
  mechanism over the signed log grid at that precision (:mod:`dpquery.privacy.quantiles`). Values
  beyond the bounds clip into the end bins (``out_of_range="clip"``). A missing flag when
  the noisy missing count exceeds :data:`MISSING_SIGMAS` noise standard deviations.
* **numbers beyond 10^10**: the values beyond ``+-10^10`` count in far buckets to ``10^16``
  (:data:`FAR_EXPONENT`) alone, under the bounds' charge, their noise from a stream of
  their own; read only when the bounds reach ``+-10^10`` (grown outward) or no near bucket
  passes (a far mode at :data:`FAR_MODE_RATE`): :func:`far_reach`.
* **bands far from 0**: an occupied run of bounds buckets apart from the mode's (not a mode
  at 0) joins the bounds only at the stricter :data:`FAR_WINDOW_RATE`
  (:func:`far_windows`); bounds within :data:`NARROW_RATIO` of each other holding more
  than :data:`MAX_LATTICE` steps of the precision (:func:`narrow_band`: a decimal year in
  ``[2000, 5000]``) are narrowed by a finer histogram from :data:`BAND_SHARE` of the
  quantiles' share (:func:`_fine_run`), and the quantiles' candidates are the band's
  equal-width cells (:func:`fine_cells`, :func:`quantile_candidates`).

**Small tables** (:func:`check_learnable`: a category's selection threshold above
:data:`MIN_CATEGORY_SHARE` of the records, at most :data:`MIN_SMALL_SHARE`; refused above):
no probe (its share goes to the bounds); the bounds grown from the mode of their noisy
histogram (:func:`~dpquery.privacy.quantiles.grown_bounds`, a single test per step at
:data:`SMALL_BOUND_STEP_RATE`, crossing 0 only on the mode's evidence), joined to a run of
the other sign of 0 that the mode's and the window's tests see there within the run's
magnitude (:func:`other_sign`, :data:`OTHER_SIGN_RATE`); integer codes by
range from 0, their upper end grown again at :data:`SMALL_CODE_STEP_RATE`
(:func:`_code_top`); the bin edges read off the
bounds' noisy counts (:func:`_small_edges`, no quantiles); the text rule's zero test at half
the non-missing count. Each reads only noisy counts already drawn: post-processing. An
integer column whose bounds are a narrow band (a year) gives :data:`LATTICE_SHARE` of its
band's finer histogram to a lattice test (:func:`lattice_test`, a charge of its own): its
integers by residue mod 4 and mod 5; a class holding nearly all of them puts the column on
that lattice (``Numeric.lattice``: its edges on it, its values decoded to its points).
Bounds that a window or a crossing of a thin bucket pushed past such a band (a year's
``[50, 5000]``) give their core, the mode's growth by single buckets, as the band when the
buckets outside it hold little (:func:`step_core`, :data:`CORE_SIGMAS`); its finer
histogram has a cell for each part outside the core, and a run reaching one is not kept.
A run short of the band's noisy mass by at most ``1 / bins`` of it keeps its edges inside
the band, the rest of the band a bin a side (:func:`short_run`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pandas as pd

from dpquery.data import dates
from dpquery.data.domain import (
    MISSING_LABEL,
    Attribute,
    Categorical,
    Density,
    Domain,
    Numeric,
    cell_text,
)
from dpquery.data.numbers import plain_number
from dpquery.data.place_names import (
    COUNTRY_CODES_2,
    COUNTRY_CODES_3,
    COUNTRY_NAMES,
    US_STATE_NAMES,
)
from dpquery.errors import DPQueryError
from dpquery.privacy import ZCDP, Budget, Charge, Ledger
from dpquery.privacy.conversions import zcdp_rho_for
from dpquery.privacy.discrete import sample_discrete_gaussian
from dpquery.privacy.integer_mechanisms import discrete_gaussian_mechanism, discrete_gaussian_sigma2
from dpquery.privacy.neighbours import (
    ADD_REMOVE,
    REPLACE_ONE,
    check_neighbours,
    marginal_sensitivity,
    neighbouring,
    noisy_n,
)
from dpquery.privacy.partition_selection import (
    PARTITION_SENSITIVITY,
    Selection,
    combined_threshold,
    held_counts,
    partition_delta,
    partition_threshold,
    reselect_partitions,
    select_partitions,
)
from dpquery.privacy.quantiles import (
    BOUND_SENSITIVITY,
    bounds_histogram,
    bucket_counts,
    bucket_threshold,
    grown_bounds,
    grown_run,
    magnitude_buckets,
    private_bounds,
    private_quantiles,
    quantile_epsilon,
    read_bounds,
    signed_log_grid,
)
from dpquery.privacy.randomness import is_cryptographic, secure_rng

Kind = Literal["numeric", "categorical", "date"]
KINDS: tuple[Kind, ...] = ("numeric", "categorical", "date")

DEFAULT_DOMAIN_SHARE = 0.4
"""The share of a release's zCDP rho spent on learning its domain when none is given.
Measured (``docs/learn.md``, "Measured"): of 0.1, 0.25, 0.4 and 0.55, tried at epsilon 1 on
tuning seeds of Adult, the NIST national excerpt and CPS, 0.4 came within 0.007 of the best
in column shapes and pairs on every run, and 0.1 lost 0.02 to 0.07 in shapes: a domain
learned badly costs more than the release loses to a smaller share. (40% of rho is about
63% of epsilon alone, but rho adds: the release keeps 60% of it.)"""

DEFAULT_BINS = 16
"""Equal-mass bins per learned numeric column."""
LARGE_ROWS = 64_000
"""A table of at least this many records (its noisy count) learns twice ``bins`` under
add/remove (:func:`large_bins`; docs/learn.md, "The worst pair")."""
SMALL_BINS_SHARE = 0.5
"""A small table's numeric columns get this share of ``bins`` (8 of the default 16): at its
noise a narrow bin's count is mostly noise (docs/learn.md, "Tables too small for the
budget", rule 4)."""
LEARNED_DENSITY: Density = "linear"
"""How a learned bin without decoding weights is decoded (``Numeric.density``): a linear
density through its neighbours' (docs/learn.md, "Decoding weights")."""

PROFILE_SHARE = 0.1
"""A column's share spent on its profile (missing values, values that read as numbers)."""
PROBE_SHARE = 0.45
"""An undeclared number-like column's share spent on the partition selection that tells a
code from a quantity."""
DECIMALS_SHARE = 0.1
"""A numeric column's share spent on its precision."""

NUMBER_SHARE = 0.95
"""A column is number-like unless its noisy count of numbers falls short of this share of
the noisy count of non-missing values by more than :data:`NUMBER_SIGMAS` standard
deviations of the difference's noise."""
NUMBER_SIGMAS = 4.0
"""The margin of the text rule: at 3 standard deviations of the two noisy counts a number
column was read as text once in a few hundred columns (a 24-column census table lost its
income column so), at 4 once in some 30,000."""
MAX_CODES = 64
"""A number-like column is a code when at most this many keys are released ..."""
CODE_MASS = 0.98
"""... and their noisy counts hold this share of the noisy non-missing values."""
MAX_LEARNED_DECIMALS = 4
"""Decimals beyond this count as this many."""
DECIMALS_MASS = 0.05
"""The most precise decimals class holding this share of the noisy total (and at least
:data:`DECIMALS_SIGMAS` noise standard deviations) is the precision."""
DECIMALS_SIGMAS = 4.0
DECIMALS_FRACTION_MASS = 0.01
"""A column whose fractional values (1 decimal or more) hold this share of the noisy total
together, though no fractional class alone holds :data:`DECIMALS_MASS`, is not integer
(:func:`precision_of`)."""
BOUNDS_SHARE = 0.5
"""Of a numeric column's share for its edges, the part spent on its bounds."""
BOUND_FALSE_RATE = 0.01
"""A magnitude bucket is occupied when its noisy count reaches the smallest integer that an
empty bucket's noise exceeds with probability at most this over all the buckets of a column
(:func:`bound_threshold`): a bound far beyond the data, which would waste the bin edges'
candidates, comes from the noise alone in at most 1% of the columns. The far buckets beyond
``10^10`` (:func:`far_reach`) add their mode test's :data:`FAR_MODE_RATE`: at most 1.1% in
all."""
BOUND_CROSS_RATE = 1e-4
"""A bound on the side of 0 that the mode of a column's bucket counts lacks needs a bucket
there whose noisy count reaches the threshold of this false rate over all the buckets
(:func:`across_zero`), not :data:`BOUND_FALSE_RATE`'s: 4.7 noise sd in place of 3.7."""
BOUND_WINDOW = 3
"""A run of this many consecutive magnitude buckets (a decade) whose noisy counts together
reach their own threshold (the same false rate, for the sum's noise) also bounds the
column: a tail spread thinly over a few buckets, none occupied alone, is kept rather than
clipped."""
BOUND_STEP_RATE = 0.01
"""The union-bound bounds of a table that is not small are then grown outward from the
buckets they span (:func:`grown_past`), a bucket at a time, each step passing when the
bucket's noisy count reaches what an empty bucket's noise reaches with at most this
probability. A bucket beside the bounds is tested alone, not against every bucket of the
column: at :data:`BOUND_FALSE_RATE`'s union threshold (3.6 noise sd at 62 buckets) a bucket
holding 4 sd of records beside the mode is missed about one draw in three, and its records
clipped (2.33 sd a step: one in twenty-five). The bounds land a bucket beyond the data on a
side by a false step (at most this rate), ``j`` buckets beyond by ``j`` in a row. Steps
only: runs of :data:`BOUND_WINDOW` tested as one as well (measured, ``docs/learn.md``) double
the false rate, and on a tuning seed a false run took a decile code's top from 10 to 100."""
BOUND_SKIP_RATE = 0.01
"""A small table's bounds grown from the mode (:func:`spread_run`) and a point mass's run
(:func:`zero_mode_run`) may cross one thin bucket to the :data:`BOUND_WINDOW` buckets beyond
it when their noisy sum reaches what an empty run's noise reaches with this probability
(:func:`~dpquery.privacy.quantiles.grown_run`, ``skip``): one more test a side, stricter
than a growth step's (:data:`SMALL_BOUND_STEP_RATE`), since a false crossing lands the
bounds four buckets past the data at once (at 5%, a 0/1 flag of 1,000 records became a
quantity over empty buckets on 1 seed of 400; at 1%, on none). A table that is not small
grows by single steps (:data:`BOUND_STEP_RATE`, no window test), and crosses one thin
bucket only at the stricter :data:`LARGE_SKIP_RATE`, to one bucket beyond."""
BOUND_ZERO_RATIO = 10.0
"""A positive lower bound at most this fraction of the upper one is taken down to 0 (a
public rule on the private bounds): ages, counts and amounts start at 0, and the few values
below the lowest occupied bucket are otherwise clipped."""
ATOM_SHARE = 0.02
"""A released value of a numeric column's probe whose noisy count holds at least this share
of the noisy non-missing values is an atom: a bin of its own (``[v, v + 10^-decimals)``), so
that a point mass (the 0 of a money column, the 40 of hours worked) decodes to itself, its
released value kept exactly when it is written with more decimals (:func:`exact_atoms`)."""
ATOM_PEAK = 1.5
"""An atom's noisy count is also at least this many times that of each value one step of
the precision away (:func:`_atoms`): Adult's ages 19 to 60 each hold 2% of the records and
made 41 bins, whose 2-way tables the release measures with noise spread over four times the
cells; the 0 of capital gains and the 40 of hours worked stand far above their neighbours."""
MIN_CATEGORY_SHARE = 0.1
"""A table is small when the threshold of a categorical column's partition selection (the
smallest noisy count a category needs to be released) exceeds this share of its ``n``
records: the probe of a number-like column would release almost nothing, so it is skipped
and the column's share goes to its bounds (:func:`table_size`, :data:`SMALL_BOUNDS_SHARE`)."""
MIN_SMALL_SHARE = 0.5
"""A table is refused when that threshold exceeds this share of its ``n`` records: no
category could be released unless it held more than half of the records, and no bounds
bucket could be seen unless it held about as many (:func:`check_learnable`)."""
SMALL_BOUND_STEP_RATE = 0.05
"""In a small table, the bounds grow from the mode of the buckets' noisy counts, a bucket (or
a run of :data:`BOUND_WINDOW`) at a time, each passing when its noisy count reaches what an
empty bucket's noise (or the run's) reaches with at most this probability
(:func:`~dpquery.privacy.quantiles.grown_bounds`): ``k`` buckets beyond the data take ``k``
false passes in a row."""
SMALL_CODE_STEP_RATE = 0.01
"""In a small table, a column read as integer codes (:func:`_range_codes`) takes the upper
end of its bounds grown again from the same noisy counts at this per-step false rate
(:func:`_code_top`): a code beyond the data is a category of its own that the release
spreads noise over, and a 0/1 flag whose bound stepped to 20 by one false pass of
:data:`SMALL_BOUND_STEP_RATE` has 18 empty codes; a quantity's bound keeps the looser rate,
since a clipped tail costs a numeric column more than an empty bucket does."""
SMALL_BOUNDS_SHARE = 1.0
"""In a small table, of a numeric column's share for its edges, the part spent on its
bounds (:data:`BOUNDS_SHARE` otherwise): all of it, since its edges are read off the same
noisy bucket counts (:func:`_small_edges`)."""
ZERO_POINT_RATE = 0.2
"""In a small table, the bucket of the 0 holds records (:func:`zero_point`) when its noisy
count reaches what an empty bucket's noise reaches with this probability: a looser test than a
growth step's (:data:`SMALL_BOUND_STEP_RATE`), since a point mass at 0 read as empty is
clipped away (a tenth of the records and more: PUMS's incomes lost their 0 on two seeds of
sixty at 5%, KS 0.16 and 0.22), while an empty 0 read as held costs a bin or a code of noise."""
MISSING_SIGMAS = 2.0
"""A numeric column gets a missing flag when its noisy missing count exceeds this many noise
standard deviations."""
OTHER_LABEL = "<other>"
SECOND_SHARE = 0.1
"""Of a release's learning rho, the share kept in a pool for a second partition selection
over the keys the categorical columns' first did not release (:func:`second_plan`), taken
from the decoding weights' part (:data:`WITHIN_SHARE`): the columns' shares are unchanged.
Unspent in a small table, or where no column needs it: it then goes to the release."""
SMALL_BORROW_SHARE = 0.4
"""In a release from a small table, the share of the release's rho that the learning's pool
may borrow besides the decoding weights' part (``learn_domain(small_rho=...)``,
``pipeline.learning.small_borrow_rho``, and the plan of ``dpquery privacy synth``): spent
only when the second step takes a column (a narrow band's histogram at most what its column
spent first), the rest stays the release's. At 1,561 and 2,000 records a selection at a
column's share needs 271 and 219 records, the second at the pool's split over three columns
165 and 151 without the loan, 105 and 102 with it: a Chicago neighbourhood or a Forbes
industry of 100 to 150 records (measured, ``docs/learn.md``, "Categories of many values in
small tables")."""
LARGE_OTHER_SHARE = 0.3
"""In a table that is not small, the learning's pool borrows from the release (``learn_domain(
large_rho=...)``, ``pipeline.learning.large_borrow_rho``) only when a categorical column's
first selection released at least one key and left out a noisy mass, less
:data:`SECOND_SIGMAS` sd, of at least this share of the (noisy) ``n`` (:func:`large_loan`):
many categories of a few hundred records, each below the first threshold (a county of about
147 records of 10,000, 68 counties, under a first threshold of about 262). A column of
names (one record a key) releases no key and lends nothing. Post-processing of the first
selections' noisy counts."""
LARGE_BORROW_SHARE = 0.15
"""In a release from a table that is not small, the share of the release's rho that the
learning's pool may borrow when :func:`large_loan` finds a column that needs it: spent only
on the columns the second selection takes, the rest stays the release's. At 10,000 records
and 11 columns the second threshold falls from 151 to 97 records; 0.2 and more took too much
from the release of a table whose keys the pool alone already reached (46 cities of 187
records; measured, ``docs/learn.md``, "Many categories in a table that is not small")."""
SECOND_TAIL_SHARE = 0.5
"""Of the tail ``delta``, the share kept for the second selection (when it is planned)."""
SECOND_SIGMAS = 2.0
"""A column gets a second selection when its noisy mass not released, less this many of
that estimate's standard deviations, reaches the second selection's threshold."""
"""The catch-all category of a learned categorical column."""

LEARNING_NOISY_N_SHARE = 0.05
"""Under add/remove neighbours, the share of the learning's ``rho`` that buys its noisy ``n``
(before the columns split the rest). Every column's share rules (text, code, atoms) compare
its noisy counts with this one count, so it gets more than a column's profile: at 5% its
noise is below a profile count's once the table has two columns or more."""

_SAFETY = 1.0 - 1e-9  # the column shares sum to at most rho despite float rounding


@dataclass(frozen=True)
class ColumnReport:
    """What was learned about one column and what it cost. Publishable: it holds only noisy
    counts, public parameters and what was derived from them."""

    name: str
    kind: Kind
    declared: bool
    rule: str
    rho: float
    delta_tail: float
    learned: str
    noisy: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "declared": self.declared,
            "rule": self.rule,
            "rho": self.rho,
            "delta_tail": self.delta_tail,
            "learned": self.learned,
            "noisy": self.noisy,
        }


@dataclass(frozen=True)
class LearnReport:
    """Per column what was learned and its cost; ``rho`` charged on the ledger in all,
    ``delta_tail`` the partition selections' tail probabilities summed: the learning is
    ``(eps, delta_conv + (1 + e^eps) delta_tail)``-DP when its ``rho`` converts to ``(eps,
    delta_conv)`` (:func:`~dpquery.privacy.partition_selection.partition_delta`).

    ``n`` is the number of records the rules read: the public ``n`` under replace-one, the
    noisy ``n`` under add/remove (bought with ``noisy_n_rho``, included in ``rho``); the exact
    ``n`` of an add/remove learning appears nowhere in the report."""

    n: int
    rho: float
    delta_tail: float
    columns: tuple[ColumnReport, ...]
    neighbours: str = REPLACE_ONE
    noisy_n_rho: float = 0.0
    second_pool_rho: float = 0.0  # kept for the second selection (:data:`SECOND_SHARE`)
    second_spent_rho: float = 0.0  # of it, spent (the rest is unspent: learning.release_rho)
    small: bool = False  # the small-table rules applied (check_learnable)
    lent_rho: float = 0.0  # the pool beyond second_pool_rho (learn_domain small_rho, large_rho)

    @property
    def add_remove(self) -> bool:
        return self.neighbours == ADD_REMOVE

    @property
    def second_unspent_rho(self) -> float:
        """The second selection's pool left unspent (no column needed it)."""
        return max(0.0, self.second_pool_rho - self.second_spent_rho)

    def to_dict(self) -> dict[str, Any]:
        pool = {} if not self.second_pool_rho else {
            "second_pool_rho": self.second_pool_rho, "second_spent_rho": self.second_spent_rho
        }  # fmt: skip
        if self.lent_rho:  # a small table's pool: the weights' part and the release's loan
            key = "small_table_lent_rho" if self.small else "large_table_lent_rho"
            pool |= {key: self.lent_rho}
        if not self.add_remove:
            return {
                "n": self.n,
                "rho": self.rho,
                "delta_tail": self.delta_tail,
                **pool,
                "columns": [c.to_dict() for c in self.columns],
            }
        return {
            "neighbours": self.neighbours,
            "noisy_n": self.n,
            "noisy_n_rho": self.noisy_n_rho,
            "rho": self.rho,
            "delta_tail": self.delta_tail,
            **pool,
            "columns": [c.to_dict() for c in self.columns],
        }

    def describe(self) -> str:
        if self.add_remove:
            head = (f"domain learned under {neighbouring(self.neighbours)}, from a noisy count "
                    f"of about {self.n:,} records (rho={self.noisy_n_rho:.3g} of it)")  # fmt: skip
        else:
            head = f"domain learned from n={self.n:,} records"
        lines = [f"{head}: rho={self.rho:.6g} (zCDP), "
                 f"partition-selection tail delta={self.delta_tail:.3g}"]  # fmt: skip
        for c in self.columns:
            how = "declared" if c.declared and c.rule != PUBLIC_RULE else c.rule
            lines.append(f"  {c.name:<24} {c.kind:<11} {c.learned}  [{how}; rho={c.rho:.3g}]")
        return "\n".join(lines)


@dataclass(frozen=True)
class LearnBudget:
    """An ``(epsilon, delta)`` budget for learning a domain, split: ``rho`` for the ledger
    (converts to ``(epsilon, delta / 2)`` by Canonne-Kamath-Steinke), ``delta_tail`` for the
    partition selections, so that ``(1 + e^epsilon) delta_tail = delta / 2``."""

    epsilon: float
    delta: float
    rho: float
    delta_tail: float

    @property
    def ledger_budget(self) -> Budget:
        return Budget.approx(self.epsilon, self.delta / 2)


def learn_budget(epsilon: float, delta: float) -> LearnBudget:
    """The split of :class:`LearnBudget`: ``rho = zcdp_rho_for(epsilon, delta / 2)`` and
    ``delta_tail = (delta / 2) / (1 + e^epsilon)``."""
    budget = Budget.approx(epsilon, delta)  # validates both
    half = budget.delta / 2
    tail = half / (1.0 + math.exp(budget.limit))
    while partition_delta(tail, budget.limit) > half:
        tail = math.nextafter(tail, 0.0)
    return LearnBudget(budget.limit, budget.delta, zcdp_rho_for(budget.limit, half), tail)


# --- reading cells: each value on its own, never the column's dtype --------------------------
_MISSING = ("<missing key>",)  # the key of missing values in a partition selection


@dataclass
class _Column:
    n: int
    missing: int
    keys: dict[Hashable, int]  # value (text as written, or the number) -> count
    numbers: np.ndarray  # the values that read as finite numbers
    decimals: np.ndarray  # counts of numbers written with 0 .. MAX_LEARNED_DECIMALS decimals
    # the values written as ISO 8601 dates (dates.ISO_CLASSES, a zone's too), as seconds
    # since the epoch, and their counts by format class
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    time_classes: np.ndarray = field(
        default_factory=lambda: np.zeros(len(dates.ISO_CLASSES), dtype=np.int64)
    )
    # of those, the values of the classes with a time and no zone (ISO_FORMATS[1:]) whose
    # time is midnight, by class (dates.ISO_MIDNIGHT_FORMATS): _time_format's own cells
    midnight: np.ndarray = field(
        default_factory=lambda: np.zeros(len(dates.ISO_MIDNIGHT_FORMATS), dtype=np.int64)
    )
    # of those, the values not at midnight that are whole hours, by class (ISO_FORMATS[1:],
    # 4), then the values written with seconds that are whole minutes but not hours, by class
    # (ISO_FORMATS[2] and [4], 2): _time_format's own cells (dates.ISO_ZERO_FORMATS)
    whole: np.ndarray = field(
        default_factory=lambda: np.zeros(len(dates.ISO_ZERO_FORMATS), dtype=np.int64)
    )
    # counts of the whole numbers written in a form of WRITTEN_FORMS (zero-padded to a width,
    # or a YYYYMMDD date), which decimals[0] then does not count (written_form_of)
    forms: np.ndarray = field(default_factory=lambda: np.zeros(len(WRITTEN_FORMS), dtype=np.int64))
    # counts of the numbers written with an exponent (4.070e-04), by their mantissa's decimals
    # 0 .. MAX_MANTISSA_DECIMALS (scientific_of), which their decimals class then does not count
    scientific: np.ndarray = field(
        default_factory=lambda: np.zeros(MAX_MANTISSA_DECIMALS + 1, dtype=np.int64)
    )


def _cell(v: object) -> tuple[Hashable, float | None, int]:
    """``(key, number or None, decimals)`` of one non-missing value."""
    if isinstance(v, bool | np.bool_):
        return str(bool(v)), None, 0
    if isinstance(v, int | np.integer):
        return int(v), float(v), 0
    if isinstance(v, float | np.floating):
        x = float(v)
        if not math.isfinite(x):
            return repr(x), None, 0
        if x.is_integer():
            return int(x), x, 0
        exp = Decimal(repr(x)).as_tuple().exponent
        return x, x, min(MAX_LEARNED_DECIMALS, -int(exp))
    text = cell_text(v)  # as the encoder reads it (one normalisation)
    try:
        d = Decimal(text)
        x = float(d)
    except (InvalidOperation, ValueError, OverflowError):
        plain = plain_number(text)
        if plain is None:
            return text, None, 0
        d, x = Decimal(plain), float(plain)  # the key stays the text as written
    if not math.isfinite(x) or not d.is_finite():
        return text, None, 0
    # trailing zeros carry no precision: "12000.0" (an integer column that pandas wrote as
    # floats because of a missing value) has 0 decimals, "354.90" 1; a column of cents still
    # has most of its values at 2, which the precision rule's share keeps
    exp = d.normalize().as_tuple().exponent if d else 0
    return text, x, max(0, min(MAX_LEARNED_DECIMALS, -int(exp)))


def _read(series: pd.Series) -> _Column:
    na = series.isna().to_numpy()
    keys: dict[Hashable, int] = {}
    numbers: list[float] = []
    decimals = np.zeros(MAX_LEARNED_DECIMALS + 1, dtype=np.int64)
    times: list[int] = []
    classes = np.zeros(len(dates.ISO_CLASSES), dtype=np.int64)
    midnight = np.zeros(len(dates.ISO_MIDNIGHT_FORMATS), dtype=np.int64)
    whole = np.zeros(len(dates.ISO_ZERO_FORMATS), dtype=np.int64)
    for v in series.to_numpy(dtype=object)[~na]:
        key, x, k = _cell(v)
        keys[key] = keys.get(key, 0) + 1
        if x is not None:
            numbers.append(x)
            decimals[k] += 1
        elif isinstance(key, str) and (t := dates.iso_cell(key)) is not None:
            times.append(t[0])
            classes[t[1]] += 1
            if 0 < t[1] < len(dates.ISO_FORMATS):
                if t[0] % dates.DAY == 0:
                    midnight[t[1] - 1] += 1
                elif t[0] % 3600 == 0:
                    whole[t[1] - 1] += 1
                elif t[1] % 2 == 0 and t[0] % 60 == 0:  # written with seconds, all 0
                    whole[len(dates.ISO_HOUR_FORMATS) + t[1] // 2 - 1] += 1
    if na.any():
        keys[_MISSING] = int(na.sum())
    forms = np.zeros(len(WRITTEN_FORMS), dtype=np.int64)
    # a float carries no width (its repr may carry an exponent: scientific_of)
    if not pd.api.types.is_float_dtype(series.dtype):
        for key, count in keys.items():
            if (f := written_form_of(key)) is not None:  # a whole number: in decimals[0]
                forms[f] += count
                decimals[0] -= count
    scientific = np.zeros(MAX_MANTISSA_DECIMALS + 1, dtype=np.int64)
    for key, count in keys.items():  # a text written with an exponent: in its own cell
        if (m := scientific_of(key)) is not None:
            scientific[m] += count
            decimals[_cell(key)[2]] -= count
    return _Column(len(series), int(na.sum()), keys, np.array(numbers, dtype=np.float64), decimals,
                   np.array(times, dtype=np.float64), classes, midnight, whole, forms,
                   scientific)  # fmt: skip


# --- the mechanisms of one column ---------------------------------------------------------------
@dataclass
class _Context:
    rng: np.random.Generator
    ledger: Ledger
    bins: int
    delta_tail: float
    n: int  # the records the rules read: public (replace-one) or noisy (add/remove)
    small: bool = False  # the small-table rules (check_learnable)
    # a second selection is planned (a pool kept aside): each category selection's keys not
    # released, with their noisy counts, held for it (never published)
    second: bool = False
    held: dict[str, tuple[Selection, dict[Hashable, int], dict[Hashable, int]]] = field(
        default_factory=dict
    )
    # a small table's numeric columns whose bounds are a narrow band far from 0
    # (narrow_band), held for a finer histogram from the pool: the values, precision, the
    # band (the bounds, or their core: step_core), the bounds' noisy mass in their histogram
    # with its sd, the bounds, the band's own noisy mass in that histogram, and whether the
    # bounds hold the column's numbers (whole_band)
    narrow: dict[
        str,
        tuple[
            np.ndarray,
            int,
            tuple[float, float],
            tuple[float, float],
            tuple[float, float],
            float,
            bool,
        ],
    ] = field(default_factory=dict)
    # the noise of the date test's count (_date_count): a stream of its own, derived from
    # rng's seed, so that the draws of every other mechanism are those of a learning
    # without the test (a table with no date column is learned byte for byte as before)
    times_rng: np.random.Generator | None = None
    # the half-step test's noise (half_steps): a stream of its own alike, so that a column
    # the test is not drawn for is learned byte for byte as before
    half_rng: np.random.Generator | None = None
    # the membership test's noise (membership_test): a stream of its own alike
    vocab_rng: np.random.Generator | None = None
    # the noise of its code classes (CODE_VOCABULARIES): a stream of its own, so that the
    # other classes' noise is drawn as by the test without them
    codes_rng: np.random.Generator | None = None
    # the noise of the zone classes of the ISO formats' histogram (_time_format): a stream
    # of its own, so that the classes without a zone are drawn as by the histogram without
    # them (a date column without a zone is learned byte for byte as before)
    zone_rng: np.random.Generator | None = None
    # the common formats test's noise (_common_test): a stream of its own alike
    common_rng: np.random.Generator | None = None
    # the time of day test's noise (_clock_test): a stream of its own alike
    clock_rng: np.random.Generator | None = None
    # the lattice test's noise (lattice_test): a stream of its own alike
    lattice_rng: np.random.Generator | None = None
    # the far bounds buckets' noise (far_reach): a stream of its own, so that a column whose
    # bounds do not reach them is learned byte for byte as before
    far_rng: np.random.Generator | None = None
    # the noise of the precision histogram's written forms (_decimals): a stream of its own
    forms_rng: np.random.Generator | None = None
    # the noise of the profile's cell of days written YYYYMMDD (_digits_count): its own too
    digits_rng: np.random.Generator | None = None
    # the noise of the precision histogram's cells of numbers written with an exponent
    # (_scientific): a stream of its own too
    scientific_rng: np.random.Generator | None = None
    # the noise of the profile's cells of dates written with a month's name (_named_test)
    named_rng: np.random.Generator | None = None
    # the noise of the format histograms' cells of times always at midnight (_time_format,
    # _common_format): a stream of their own, so that every other cell is drawn as before
    midnight_rng: np.random.Generator | None = None
    # the noise of the ISO histogram's cells of whole hours and minutes (_time_format): a
    # stream of its own alike
    zeros_rng: np.random.Generator | None = None
    # the noise of the profile's further cells of other spellings (_spelled_test)
    spelled_rng: np.random.Generator | None = None
    # the L2 sensitivity of every count vector below (one record in one cell): sqrt(2) under
    # replace-one, 1 under add/remove (marginal_sensitivity of the learning's relation)
    l2: float = PARTITION_SENSITIVITY
    # the quantiles' score sensitivity: max(alpha, 1 - alpha) under add/remove, else 1
    add_remove: bool = False


def _sigma(rho: float, sensitivity: float) -> float:
    return math.sqrt(float(discrete_gaussian_sigma2(rho, sensitivity)))


def _profile(
    name: str, col: _Column, rho: float, ctx: _Context, digits: int = 0
) -> tuple[int, int, float]:
    """Noisy (missing, numbers) and the noise's standard deviation; ``digits``: the numbers
    written as days YYYYMMDD, a cell of their own (:func:`_digits_count`), not counted here."""
    noisy = discrete_gaussian_mechanism(
        [col.missing, col.numbers.size - digits], rho=rho, sensitivity=ctx.l2, rng=ctx.rng,
        ledger=ctx.ledger, name=f"{name}: profile (discrete Gaussian)",
    )  # fmt: skip
    return int(noisy[0]), int(noisy[1]), _sigma(rho, ctx.l2)


def _select(name: str, col: _Column, rho: float, ctx: _Context) -> Selection:
    return select_partitions(
        col.keys, rho=rho, delta_tail=ctx.delta_tail, rng=ctx.rng, ledger=ctx.ledger,
        name=f"{name}: partition selection (discrete Gaussian)", sensitivity=ctx.l2,
    )  # fmt: skip


def _select_categories(name: str, col: _Column, rho: float, ctx: _Context) -> Selection:
    """A categorical column's selection (the same draws as :func:`_select`); with a second
    selection planned, its unreleased keys' noisy counts are held for it."""
    if not ctx.second:
        return _select(name, col, rho, ctx)
    sel, held = held_counts(
        col.keys, rho=rho, delta_tail=ctx.delta_tail, rng=ctx.rng, ledger=ctx.ledger,
        name=f"{name}: partition selection (discrete Gaussian)", sensitivity=ctx.l2,
    )  # fmt: skip
    ctx.held[name] = (sel, held, col.keys)
    return sel


def _label(base: str, taken: set[str]) -> str:
    label = base
    while label in taken:
        label += "*"
    return label


def _integer_text(text: str) -> bool:
    """Whether ``text`` is an integer written plainly (``"7"``, ``"-2"``; not ``"07"``)."""
    return text.lstrip("-").isdigit() and str(int(text)) == text


def _whole(key: Hashable) -> bool:
    """Whether a released key reads as a whole number (``"7"``, ``"1.00"``, ``3.0``)."""
    x = _cell(key)[1]
    return x is not None and float(x).is_integer()


PARTNERS = {"true": "false", "yes": "no", "male": "female"}
"""Values that come in public pairs: a learned categorical holding one of them also holds the
other (:func:`partners`), as a plain value. Groups of more than two are
:data:`VOCABULARIES`, whose members are added by rule."""


def partners(keys: list[Hashable]) -> list[str]:
    """The public partners of the released text ``keys`` (:data:`PARTNERS`, either way round,
    written in the key's case: ``True`` gives ``False``, ``YES`` gives ``NO``) that are not
    released themselves. A function of the released keys and a public list alone
    (post-processing): in a small table a selection's threshold can release ``male`` (65% of
    the records) and not ``female`` (35%), which would then be released as the catch-all; a
    category the data lacks is harmless, the release's measurements give it its share."""
    both = PARTNERS | {v: k for k, v in PARTNERS.items()}
    have = {k for k in keys if isinstance(k, str)}
    out: list[str] = []
    for key in sorted(have):
        partner = both.get(key.casefold())
        if partner is None:
            continue
        partner = _in_case(partner, key)
        if partner not in have and partner not in out:
            out.append(partner)
    return out


def _slots(*names: str) -> tuple[tuple[str, ...], ...]:
    """A vocabulary's slots from space-separated spellings: ``"Tue Tues"`` is one slot."""
    return tuple(tuple(n.split()) for n in names)


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip

VOCABULARIES: dict[str, tuple[tuple[tuple[str, ...], ...], bool]] = {
    "uppercase letters": (_slots(*"ABCDEFGHIJKLMNOPQRSTUVWXYZ"), False),
    "lowercase letters": (_slots(*"abcdefghijklmnopqrstuvwxyz"), False),
    "days of the week": (_slots(*_DAYS), True),
    "days of the week, abbreviated": (
        _slots("Mon", "Tue Tues", "Wed", "Thu Thur Thurs", "Fri", "Sat", "Sun"),
        True,
    ),
    "months": (_slots(*_MONTHS), True),
    "months, abbreviated": (
        _slots(*"Jan Feb Mar Apr May Jun Jul Aug".split(), "Sep Sept", "Oct", "Nov", "Dec"),
        True,
    ),
}
"""Public groups of more than two values (:func:`vocabulary`): name -> (slots, cased). A slot
is one member with its common spellings (``Thu``, ``Thur``, ``Thurs``); ``cased``: a key
matches a spelling in any case and the members added are written in its case (as
:func:`partners`), else it must match exactly (``A`` and ``a`` are different groups). Public
knowledge about how such values are written, not read from any table."""
# the USPS codes of the states, DC and the territories (a public list): scorecard's
# state_abbr released 45 or 46 and left Wyoming, Alaska and the territories <other>
_STATES = ("AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH "
           "NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC")  # fmt: skip
VOCABULARIES["US state codes"] = (
    _slots(*_STATES.split(), *"PR GU VI AS MP FM MH PW".split()),
    False,
)
WHOLE_VOCABULARIES = frozenset({"US state codes"})
"""Groups whose members are common words or codes of other lists (``IN``, ``OR``, ``OK``,
``DE``): they are added only when at least :data:`WHOLE_HITS` keys are released and every
released text key is a member (a column of the codes, not one that holds one by chance)."""
WHOLE_HITS = 3


def _in_case(word: str, key: str) -> str:
    """``word`` written in the case of ``key`` (``SAT`` gives ``SUN``, ``sat`` ``sun``)."""
    if key.isupper():
        return word.upper()
    if key[:1].isupper():
        return word.capitalize()
    return word.lower()


def vocabulary(keys: list[Hashable]) -> list[str]:
    """The members of the public groups (:data:`VOCABULARIES`) that the released text
    ``keys`` hold a member of, not released themselves: every spelling of each slot that no
    key fills, in the case of the key that matched. A function of the released keys and a
    public list alone (post-processing): at titanic's 891 records a selection releases the
    port ``S`` (644 records) but not ``C`` (168) or ``Q`` (77), which then come back as the
    catch-all. The members are added by rule (``Categorical.by_rule``): the release tests
    each against its own measurements and takes those it cannot tell from empty as empty
    (:mod:`dpquery.algorithms.marginal.empty_cells`)."""
    have = [k for k in keys if isinstance(k, str)]
    taken = set(have)
    out: list[str] = []
    for name, (slots, cased) in VOCABULARIES.items():
        fold = (lambda t: t.casefold()) if cased else (lambda t: t)
        index = {fold(w): i for i, slot in enumerate(slots) for w in slot}
        hits = [(k, index[fold(k)]) for k in have if fold(k) in index]
        if not hits:
            continue
        if name in WHOLE_VOCABULARIES and (len(hits) < WHOLE_HITS or len(hits) < len(have)):
            continue
        filled = {i for _, i in hits}
        key = min(k for k, _ in hits)  # whose case: the least key that matched (a fixed rule)
        for i, slot in enumerate(slots):
            if i in filled:
                continue
            for w in slot:
                word = _in_case(w, key) if cased else w
                if word not in taken:
                    taken.add(word)
                    out.append(word)
    return out


def _categorical(
    name: str,
    sel: Selection,
    members: tuple[str, ...] = (),
    plain: tuple[str, ...] = (),
    codes: bool = False,
) -> tuple[Categorical, str]:
    """The released keys of ``sel``, their public partners and vocabularies' members
    (:func:`partners`, :func:`vocabulary`), ``plain`` as values and ``members`` by rule (a
    membership test's, :func:`membership_test`); then the catch-all and missing. ``codes``:
    ``plain`` are country codes (:data:`CODE_VOCABULARIES`), which the older groups'
    rule does not read (the alpha-3 ``MAR``, Morocco, is no month)."""
    keys: list[Hashable] = [k for k in sel.released if k != _MISSING]
    texts = [k for k in keys if isinstance(k, str)]
    if keys and len(texts) == len(keys) and all(_integer_text(t) for t in texts):
        keys = [int(t) for t in texts]  # codes written as integers: the numbers themselves
    numbers: list[int | float] = [k for k in keys if isinstance(k, int | float)]
    ruled: list[str] = []
    listed: list[str] = []
    if len(numbers) == len(keys) and not members and not plain:
        keys = list(sorted(numbers))
    else:
        keys = [*keys, *partners(keys)]
        listed = [m for m in dict.fromkeys(plain) if m not in set(keys)]
        keys += listed
        ruled = vocabulary([k for k in keys if k not in set(listed)] if codes else keys)
        ruled += [m for m in members if m not in {*map(str, keys), *ruled}]
        keys = sorted([*keys, *ruled], key=lambda k: (type(k).__name__, str(k)))
    taken = {str(k) for k in keys}
    other = _label(OTHER_LABEL, taken)
    values: list[Hashable] = [*keys, other]
    missing = None
    if _MISSING in sel.released:
        missing = _label(MISSING_LABEL, taken | {other})
        values.append(missing)
    attr = Categorical(name, tuple(values), missing=missing, other=other)
    if ruled:  # the vocabularies' members, tested one by one by the release
        attr = replace(attr, by_rule=tuple(v for v in values if v in set(ruled)))
    if listed:  # a vocabulary's members no selection released: the release tests them
        attr = replace(attr, listed=tuple(v for v in values if v in set(listed)))
    shown = ", ".join(map(str, keys[:6])) + (", ..." if len(keys) > 6 else "")
    extra = " + missing" if missing is not None else ""
    extra += f" ({len(ruled)} of them by a public vocabulary)" if ruled else ""
    return attr, f"{len(keys)} categories ({shown}) + {other}{extra}"


# --- a column of a public vocabulary: a private membership test ------------------------------
MEMBERSHIP_STREAM = 0x766F6362
"""The spawn key of the membership test's own stream (:func:`_own_stream`)."""
MEMBERSHIP_OTHER_SHARE = 0.5
"""An undeclared text column is tested (:func:`membership_test`) when the noisy mass its
selection left out (the noisy non-missing count less its released keys' noisy counts) is at
least this share of its noisy non-missing count: most of it would be the catch-all."""
MEMBERSHIP_SHARE = 0.5
"""A class of :func:`membership_classes` wins when its noisy count is at least this share of
the column's noisy non-missing count (and :data:`MEMBERSHIP_SIGMAS` noise sd): the column is
mostly that vocabulary, written in that case, not one that holds a few of its words (a
city's name, ``Washington``; a note, ``Mon``). Only the largest noisy class is tried, and a
column of state names with a few rows of other text (``DC`` written as ``Washington,
D.C.``) still passes (``docs/learn.md``, "Columns of a public vocabulary")."""
MEMBERSHIP_SIGMAS = 4.0
"""... and this many noise standard deviations (a class with no record passes about 3 times
in 100,000 a class; a column has about 30 classes)."""
CASES = ("upper", "lower", "title")
"""A cased vocabulary's writing cases, in the order a key is counted in the first that
matches: ``OHIO`` upper, ``ohio`` lower, ``Ohio`` title (the spelling as listed, so
``District of Columbia`` is title); an uncased vocabulary (codes, letters) has one class,
``none`` (an exact match)."""


MEMBERSHIP_KEYS = 2
"""The released keys' rule (:func:`released_membership`) needs at least this many released
keys, all members of one place vocabulary in one writing style."""
MEMBERSHIP_TAIL_SHARE = 0.02
"""... and a noisy mass left out by the selection of at least this share of the column's
noisy non-missing count (below :data:`MEMBERSHIP_OTHER_SHARE`, where the test draws) and
:data:`MEMBERSHIP_TAIL_SIGMAS` sd of that mass's noise: a column all of whose values were
released has no member to add."""
MEMBERSHIP_TAIL_SIGMAS = 2.0
"""The margin of :data:`MEMBERSHIP_TAIL_SHARE`, in sd of the noise of the mass left out (the
released keys' noisy counts, the noisy non-missing count's two)."""
PLACE_VOCABULARIES = ("US state names", "country names")
"""The vocabularies of the released keys' rule, in its order (the older groups of
:data:`VOCABULARIES` have their own rule, :func:`vocabulary`)."""
CODE_VOCABULARIES = ("country codes, ISO 3166-1 alpha-2", "country codes, ISO 3166-1 alpha-3")
"""The codes of the membership test (:mod:`dpquery.data.place_names`), its last classes,
exact matches in capitals (``AT``, ``AUT``): a code already in an earlier class (the USPS
codes ``CA``, ``IN``; ``USA`` among the country names) counts there. Their noise is drawn
from a stream of their own (:data:`CODES_STREAM`), so that every other class's noise is
that of the test without them (``docs/learn.md``, "Country codes")."""
CODES_STREAM = 0x69736F33
"""The spawn key of the code classes' own stream (:func:`_own_stream`)."""
SEPARATORS = (" ", "-")
"""The writing styles of a name of several words, in the order a key is matched: spaces as
listed, or every space written as a hyphen (UCI Adult's ``United-States``, ``El-Salvador``)."""


def _membership_vocabularies() -> dict[str, tuple[tuple[tuple[str, ...], ...], bool]]:
    """The vocabularies of the membership test, in its fixed order: :data:`VOCABULARIES`,
    then the US state names and the country names (:mod:`dpquery.data.place_names`; a name in
    both, ``Georgia``, is counted as a state), and last the country codes of
    :data:`CODE_VOCABULARIES`. The place names and codes are not among
    :data:`VOCABULARIES`: one released country does not list some 250 more by rule."""
    return {**VOCABULARIES, "US state names": (US_STATE_NAMES, True),
            "country names": (COUNTRY_NAMES, True),
            CODE_VOCABULARIES[0]: (COUNTRY_CODES_2, False),
            CODE_VOCABULARIES[1]: (COUNTRY_CODES_3, False)}  # fmt: skip


MEMBERSHIP_VOCABULARIES = _membership_vocabularies()


def _written(word: str, case: str, sep: str = " ") -> str:
    """``word`` in a writing ``case`` (:data:`CASES`) and style: its spaces written as
    ``sep`` (:data:`SEPARATORS`)."""
    cased = {"upper": word.upper(), "lower": word.lower()}.get(case, word)
    return cased if sep == " " else cased.replace(" ", sep)


def membership_classes() -> tuple[tuple[str, str], ...]:
    """The test's classes, ``(vocabulary, case)``, in their fixed order: each cased
    vocabulary in :data:`CASES`, each uncased one as ``none``. Public: no data."""
    return tuple((name, case) for name, (_, cased) in MEMBERSHIP_VOCABULARIES.items()
                 for case in (CASES if cased else ("none",)))  # fmt: skip


def _class_index() -> dict[str, int]:
    """Each written form -> the first class that holds it (the fixed order)."""
    index: dict[str, int] = {}
    for i, (name, case) in enumerate(membership_classes()):
        for slot in MEMBERSHIP_VOCABULARIES[name][0]:
            for w in slot:
                index.setdefault(_written(w, case), i)
    return index


_CLASS_INDEX = _class_index()
_CODE_CLASSES = sum(name in CODE_VOCABULARIES for name, _ in membership_classes())


def class_counts(keys: Mapping[Hashable, int]) -> np.ndarray:
    """The number of records in each class of :func:`membership_classes`: a text value that
    reads as no number and no ISO date (so that the classes are disjoint from the profile's
    cells, :func:`_profile` and :func:`_date_count`) counts in the first class holding it as
    written; every other value in none. One record in at most one cell."""
    out = np.zeros(len(membership_classes()), dtype=np.int64)
    for key, count in keys.items():
        if not isinstance(key, str) or key == _MISSING:
            continue
        i = _CLASS_INDEX.get(key)
        if i is not None and _cell(key)[1] is None and dates.iso_cell(key) is None:
            out[i] += count
    return out


def membership_plan() -> dict[str, Any]:
    """The membership test's public parameters (``dpquery privacy synth``): the share of a
    column's rho whose charge covers it (the profile's, :data:`PROFILE_SHARE`), the rules'
    shares and margin, the vocabularies in their order and the number of classes; and the
    released keys' rule's (:func:`released_membership`), which charges nothing."""
    return {"share_of_column": PROFILE_SHARE, "charge": "the profile's (no further charge)",
            "other_share": MEMBERSHIP_OTHER_SHARE, "class_share": MEMBERSHIP_SHARE,
            "sigmas": MEMBERSHIP_SIGMAS, "vocabularies": list(MEMBERSHIP_VOCABULARIES),
            "classes": len(membership_classes()), "by_rule": "alternative spellings",
            "released_keys": {"vocabularies": list(PLACE_VOCABULARIES), "keys": MEMBERSHIP_KEYS,
                              "left_out_share": MEMBERSHIP_TAIL_SHARE,
                              "left_out_sigmas": MEMBERSHIP_TAIL_SIGMAS,
                              "separators": list(SEPARATORS),
                              "charge": "none (post-processing)"}}  # fmt: skip


@dataclass(frozen=True)
class Membership:
    """A membership test's outcome: the winning class (None: none), its members written in
    its case, and the noisy counts (publishable)."""

    vocabulary: str | None
    case: str | None
    members: tuple[str, ...]
    noisy: dict[str, Any]
    first: tuple[str, ...] = ()  # each slot's first spelling

    @property
    def ruled(self) -> tuple[str, ...]:
        """The members added by rule (``Categorical.by_rule``: the release tests each against
        its own measurements): every spelling but each slot's first, which is a plain value
        (a column writes one spelling of each place; by rule, every member of 14 to 22
        records was taken as empty: docs/learn.md, "Columns of a public vocabulary")."""
        return tuple(m for m in self.members if m not in set(self.first))

    @property
    def plain(self) -> tuple[str, ...]:
        """The members listed as plain values."""
        return tuple(m for m in self.members if m not in set(self.ruled))


def membership_test(
    col: _Column, sel: Selection, present: int, profile_rho: float, ctx: _Context
) -> Membership | None:
    """The private membership test of an undeclared text column (``docs/learn.md``,
    "Columns of a public vocabulary"). None (nothing drawn) unless the selection ``sel``
    left at least :data:`MEMBERSHIP_OTHER_SHARE` of the noisy non-missing count ``present``
    out (noisy quantities only) and none of its released keys is a member of
    :data:`VOCABULARIES` (else :func:`vocabulary` lists that group, as before). Else one
    discrete Gaussian histogram over the disjoint classes of :func:`membership_classes`
    (:func:`class_counts`), drawn at the profile's noise: these cells and the profile's
    (missing, numbers, dates) hold each record in at most one cell, so the whole vector has
    the profile's L2 sensitivity (``ctx.l2``: 1 under add/remove, ``sqrt(2)`` under
    replace-one) and its discrete Gaussian at the profile's sigma is ``profile_rho``-zCDP as
    a whole (Canonne, Kamath and Steinke 2020, Theorem 4): the profile's charge, made before
    the profile drew, covers these cells (as the date count's, :func:`_date_count`). Drawn
    from the test's own stream, so that every other draw of the learning is the same as
    without it; the code classes (:data:`CODE_VOCABULARIES`, the last ones) from a stream of
    their own (``ctx.codes_rng``), so that the other classes' noise is the same as without
    them (a column that is no code column is learned byte for byte as before, unless a code
    class's noise alone wins). The largest noisy class wins when it holds
    :data:`MEMBERSHIP_SHARE` of ``present`` and :data:`MEMBERSHIP_SIGMAS` noise sd."""
    released = sum(v for k, v in sel.released.items() if k != _MISSING)
    if present - released < MEMBERSHIP_OTHER_SHARE * present:
        return None
    if vocabulary(list(sel.released)):  # a released member: the older rule lists its group
        return None
    assert ctx.vocab_rng is not None
    sigma2 = discrete_gaussian_sigma2(profile_rho, ctx.l2)
    counts = class_counts(col.keys)
    older = counts.size - _CODE_CLASSES
    codes_rng = ctx.codes_rng or _own_stream(ctx.rng, CODES_STREAM)
    noise = np.concatenate([
        sample_discrete_gaussian(sigma2, older, ctx.vocab_rng),
        sample_discrete_gaussian(sigma2, _CODE_CLASSES, codes_rng),
    ])  # fmt: skip
    noisy = counts + noise
    best = int(np.argmax(noisy))  # the first of the largest: a fixed rule
    top, sd = int(noisy[best]), math.sqrt(float(sigma2))
    classes = membership_classes()
    report: dict[str, Any] = {"membership_max": top, "membership_class": "/".join(classes[best])}
    if top < MEMBERSHIP_SHARE * present or top < MEMBERSHIP_SIGMAS * sd:
        return Membership(None, None, (), report)
    name, case = classes[best]
    members = tuple(dict.fromkeys(_written(w, case) for slot in
                                  MEMBERSHIP_VOCABULARIES[name][0] for w in slot))  # fmt: skip
    first = tuple(_written(slot[0], case) for slot in MEMBERSHIP_VOCABULARIES[name][0])
    return Membership(name, case, members, report, first)


def released_membership(sel: Selection, present: int, sigma: float) -> Membership | None:
    """The released keys' rule (``docs/learn.md``, "Phantoms and the released keys' rule"):
    a column whose selection released at least :data:`MEMBERSHIP_KEYS` keys, every one a
    member of one vocabulary of :data:`PLACE_VOCABULARIES` written in one style (a case of
    :data:`CASES` and a separator of :data:`SEPARATORS`, the first that fits all of them in
    that order), and left out a noisy mass of at least :data:`MEMBERSHIP_TAIL_SHARE` of the
    noisy non-missing count ``present`` and :data:`MEMBERSHIP_TAIL_SIGMAS` sd of its noise
    (each released count's, ``sel.sigma2``, and the two of ``present``: the noisy ``n`` and
    missing count, each taken at the profile's ``sigma``), lists that vocabulary's members in
    that style: each place no key names by its first spelling (a plain value,
    ``Categorical.listed``) and its other spellings by rule, the other spellings of a place
    a key names by rule. UCI Adult's
    ``native-country`` releases ``United-States``, ``Mexico`` and ``Philippines`` and leaves
    out 7% of its records, on 38 countries. None when the rule does not fit. A function of
    the released keys, their noisy counts, the noisy non-missing count and public lists:
    post-processing, nothing drawn, no charge."""
    keys = [k for k in sel.released if k != _MISSING]
    if len(keys) < MEMBERSHIP_KEYS or not all(isinstance(k, str) for k in keys):
        return None
    released = sum(v for k, v in sel.released.items() if k != _MISSING)
    sd = math.sqrt(len(keys) * float(sel.sigma2) + 2 * sigma**2)
    left = present - released
    if left < MEMBERSHIP_TAIL_SHARE * present or left < MEMBERSHIP_TAIL_SIGMAS * sd:
        return None
    for name in PLACE_VOCABULARIES:
        slots = MEMBERSHIP_VOCABULARIES[name][0]
        for case in CASES:
            for sep in SEPARATORS:
                index = {_written(w, case, sep): i for i, slot in enumerate(slots) for w in slot}
                if not all(k in index for k in keys):
                    continue
                filled = {index[str(k)] for k in keys}
                members = tuple(dict.fromkeys(_written(w, case, sep) for slot in slots
                                              for w in slot))  # fmt: skip
                first = tuple(_written(slot[0], case, sep) for i, slot in enumerate(slots)
                              if i not in filled)  # fmt: skip
                style = case if sep == " " else f"{case}, spaces as {sep!r}"
                report = {"membership_rule": "released keys", "membership_left_out":
                          present - released}  # fmt: skip
                return Membership(name, style, members, report, first)
    return None


# --- written forms: codes zero-padded to a width, dates written YYYYMMDD -------------------
MAX_LEARNED_WIDTH = 12
"""The widest zero-padded form the precision's histogram counts (:data:`WRITTEN_FORMS`): a
ZIP code is 5 digits, a county's FIPS code 5, a census tract 6, a provider number 6."""
WRITTEN_FORMS: tuple[int | str, ...] = (*range(2, MAX_LEARNED_WIDTH + 1), "YYYYMMDD")
"""The written forms of a whole number that the precision's histogram counts in cells of
their own (:func:`written_form_of`): digits alone with a leading zero, of each width 2 to
:data:`MAX_LEARNED_WIDTH` (``00403``: 5; ``003``: 3), and then eight digits naming a day
from 1800 to 2199 (``20190314``, :func:`dpquery.data.dates.digits_cell`). A value is in at
most one of them, and one in none of them is counted in the precision's class 0 as before."""
FORMS_STREAM = 0x666F726D
"""The spawn key of the written forms' own stream (:func:`_own_stream`, :func:`_decimals`)."""
FORM_SIGMAS = 4.0
"""A written form must hold this many noise sd (one cell's): a form no value is written in
passes at about 3.2e-5 a cell (one-sided), at most 3.8e-4 a column over the 12 cells."""
WIDTH_SHARE = 0.05
"""... and a width this share of the column's noisy count of numbers (the profile's): the
values below ``10^(w - 1)`` are the ones a width pads, a small part of a column of ZIP codes
(those of New England) or tracts (a third of Chicago's); the precision's
:data:`DECIMALS_MASS` alike."""
DIGITS_DATE_SHARE = 0.5
"""A column is dates written YYYYMMDD when that form holds at least this share of its noisy
count of numbers (and :data:`FORM_SIGMAS`): a majority, so that a count column holding a few
values such as 19870512 (a population) stays a number."""


def written_form_of(key: Hashable) -> int | None:
    """The index in :data:`WRITTEN_FORMS` of a value as written (a learner's key: the text,
    or an integer), None when it is in none: eight ASCII digits naming a day in
    :data:`~dpquery.data.dates.DIGITS_YEARS` (``20190314``; an integer so written too), else
    digits alone with a leading zero, 2 to :data:`MAX_LEARNED_WIDTH` of them (``007``). A
    public rule on one value; each is a whole number, counted in the precision's class 0
    otherwise."""
    if isinstance(key, bool | np.bool_):
        return None
    if isinstance(key, int | np.integer):
        text = str(int(key))
    elif isinstance(key, str):
        text = key
    else:
        return None
    if not (text.isascii() and text.isdigit()):
        return None
    if dates.digits_cell(text) is not None:
        return len(WRITTEN_FORMS) - 1
    if text[0] == "0" and 2 <= len(text) <= MAX_LEARNED_WIDTH:
        return len(text) - 2
    return None


def written_form(forms: list[int], numbers: int, sigma: float) -> int | str | None:
    """The written form read off the noisy counts ``forms`` of :data:`WRITTEN_FORMS` (noise sd
    ``sigma`` each) and the column's noisy count of numbers ``numbers``: ``"YYYYMMDD"`` when
    that cell holds :data:`FORM_SIGMAS` sd and :data:`DIGITS_DATE_SHARE` of ``numbers``;
    else the width of the largest noisy count among the widths holding :data:`FORM_SIGMAS`
    sd and :data:`WIDTH_SHARE` of ``numbers``; else None. Post-processing of noisy counts."""
    date = forms[-1]
    if date >= FORM_SIGMAS * sigma and date >= DIGITS_DATE_SHARE * numbers:
        return "YYYYMMDD"
    floor = max(FORM_SIGMAS * sigma, WIDTH_SHARE * numbers)
    passing = [(c, i) for i, c in enumerate(forms[:-1]) if c >= floor]
    if not passing:
        return None
    best = max(passing, key=lambda ci: (ci[0], -ci[1]))[1]  # the largest; the narrower on ties
    width = WRITTEN_FORMS[best]
    assert isinstance(width, int)
    return width


def forms_plan() -> dict[str, Any]:
    """The written forms' public parameters (``dpquery privacy synth``): the charge that
    covers them (the precision's), the widths counted and the rules' bars."""
    return {"charge": "the precision's (no further charge)", "share_of_column": DECIMALS_SHARE,
            "widths": [w for w in WRITTEN_FORMS if isinstance(w, int)],
            "date_form": "YYYYMMDD", "date_years": list(dates.DIGITS_YEARS),
            "date_in_profile": {"charge": "the profile's (no further charge)",
                                "share": NUMBER_SHARE, "sigmas": NUMBER_SIGMAS},
            "sigmas": FORM_SIGMAS, "width_share": WIDTH_SHARE,
            "date_share": DIGITS_DATE_SHARE,
            "scientific": {"charge": "the precision's (no further charge)",
                           "mantissa_decimals": MAX_MANTISSA_DECIMALS,
                           "sigmas": FORM_SIGMAS, "share": SCIENTIFIC_SHARE,
                           "learned_to": 10.0**-SCIENTIFIC_DECIMALS,
                           "every_value": {"share": NUMBER_SHARE, "sigmas": NUMBER_SIGMAS},
                           "otherwise": {"below": [10.0**e for e in range(
                               NOTATION_BELOW[0], NOTATION_BELOW[1] + 1)],
                               "from": [10.0**e for e in range(NOTATION_FROM[0],
                                                               NOTATION_FROM[1] + 1)],
                               "bucket_sigmas": NOTATION_SIGMAS}},
            "named_dates": {"charge": "the profile's (no further charge)",
                            "formats": list(dates.NAMED_FORMATS), "share": NUMBER_SHARE,
                            "spellings": list(dates.NAMED_SPELLINGS),
                            "spellings_sigmas": SPELLED_SIGMAS,
                            "sigmas": NUMBER_SIGMAS}}  # fmt: skip


def digits_times(col: _Column) -> np.ndarray:
    """The column's values written YYYYMMDD (:func:`written_form_of`'s last form) on the time
    axis, seconds since the epoch, one per record."""
    secs: list[int] = []
    counts: list[int] = []
    for key, count in col.keys.items():
        if written_form_of(key) == len(WRITTEN_FORMS) - 1:
            t = dates.digits_cell(str(key))
            assert t is not None
            secs.append(t)
            counts.append(count)
    return np.repeat(np.array(secs, dtype=np.float64), counts)


def _decimals(
    name: str, col: _Column, rho: float, ctx: _Context, numbers: int | None = None
) -> tuple[int, list[int], int | str | None, list[int]]:
    """The precision (:func:`precision_of`), the noisy decimals histogram, the written form
    (:func:`written_form`, None for none) and its cells' noisy counts.

    One discrete Gaussian histogram over the classes 0 .. :data:`MAX_LEARNED_DECIMALS` and
    the :data:`WRITTEN_FORMS`: a whole number written in a form is counted in that form's
    cell and not in class 0, so each record is in exactly one cell of the whole vector, which
    moves by L2 ``ctx.l2`` (``sqrt(2)`` under replace-one, 1 under add/remove) as the five
    classes alone did, and its discrete Gaussian at the same sigma is ``rho``-zCDP as a whole
    (Canonne, Kamath and Steinke 2020, Theorem 4): the precision's one charge, made before
    the first draw, covers the forms' cells. Their noise comes from a stream of their own
    (:data:`FORMS_STREAM`), so the five classes are drawn as before; a column with no value
    written in a form has the same class 0 and the same draws, and its precision is read off
    the five classes as before unless a form's noise alone passes (:data:`FORM_SIGMAS`). With
    a form found, the precision reads class 0 and the forms' cells together."""
    noisy = discrete_gaussian_mechanism(
        col.decimals, rho=rho, sensitivity=ctx.l2, rng=ctx.rng, ledger=ctx.ledger,
        name=f"{name}: precision (discrete Gaussian)",
    )  # fmt: skip
    counts = [int(c) for c in noisy]
    sigma = _sigma(rho, ctx.l2)
    assert ctx.forms_rng is not None
    noise = sample_discrete_gaussian(
        discrete_gaussian_sigma2(rho, ctx.l2), len(WRITTEN_FORMS), ctx.forms_rng
    )
    forms = [int(c) for c in col.forms + noise]
    total = numbers if numbers is not None else sum(counts) + sum(forms)
    form = written_form(forms, total, sigma)
    if form is None:
        return precision_of(counts, sigma), counts, None, forms
    return precision_of([counts[0] + sum(forms), *counts[1:]], sigma), counts, form, forms


def precision_of(counts: list[int], sigma: float) -> int:
    """The precision read off the noisy decimals histogram ``counts`` (classes 0 ..
    :data:`MAX_LEARNED_DECIMALS`, noise sd ``sigma`` each): the most precise class holding
    :data:`DECIMALS_MASS` of the noisy total and :data:`DECIMALS_SIGMAS` sd. When only the
    whole numbers (class 0) do, but the fractional classes together hold
    :data:`DECIMALS_FRACTION_MASS` of the total and :data:`DECIMALS_SIGMAS` sd of their sum,
    the column is not integer: its precision is the most precise fractional class holding
    :data:`DECIMALS_MASS` of their mass (and the sd floor), or else the largest one. When no
    class holds the floor (a small table), the fractional classes holding more than the whole
    numbers make the column not integer alike. A rate
    written ``0.00``, ``1.00``, ``0.33`` whose zeros and ones are 95% of the values is a
    rate, not a 0/1 integer column whose other values clip. Post-processing of the noisy
    histogram: public."""
    total = sum(max(c, 0) for c in counts)
    if total <= 0:
        return 0
    floor = max(DECIMALS_MASS * total, DECIMALS_SIGMAS * sigma)
    passing = [k for k, c in enumerate(counts) if c >= floor]
    if passing and max(passing) > 0:
        return max(passing)
    fractional = counts[1:]
    # no class reaches the floor (a small table's noise): the whole numbers are no likelier
    # than the fractions, so the column is integer only if they hold more than the fractions
    # together (a planet's mass, 0.0036 to 25 with two or three decimals, read as an integer
    # column became codes 0..19: a KS of 0.75)
    undecided = not passing and sum(fractional) > counts[0]
    if not undecided and sum(fractional) < max(
        DECIMALS_FRACTION_MASS * total, DECIMALS_SIGMAS * sigma * math.sqrt(len(fractional))
    ):
        return 0
    mass = sum(max(c, 0) for c in fractional)
    floor = max(DECIMALS_MASS * mass, DECIMALS_SIGMAS * sigma)
    passing = [k for k, c in enumerate(fractional, start=1) if c >= floor]
    return max(passing) if passing else 1 + int(np.argmax(fractional))


# --- numbers written in scientific notation (4.070e-04) -------------------------------------
MAX_MANTISSA_DECIMALS = 6
"""The most decimals of a mantissa the precision's histogram tells apart (:func:`scientific_of`):
a mantissa written with more (pandas writes a float's shortest repr, ``3.0517578125e-05``)
counts as this many, and a column so written is released with 7 significant digits."""
SCIENTIFIC_STREAM = 0x73636965
"""The spawn key of the scientific cells' own stream (:func:`_own_stream`, :func:`_scientific`)."""
SCIENTIFIC_SHARE = 0.05
"""A column is written in scientific notation when its numbers written with an exponent hold
this share of its noisy count of numbers (and :data:`FORM_SIGMAS` sd of their sum's noise):
a share, not a majority, as a width's (:data:`WIDTH_SHARE`): pandas and R write a float with
an exponent only where it is small or large (``1e-05`` beside ``0.00123``), and those are
the values that plain decimals lose."""
SCIENTIFIC_DECIMALS = 14
"""The step a scientific column is learned at (``10^-14``): its magnitude buckets start there
(:func:`_bounds`) and the quantiles' log grid at ``10^-12`` (two digits of mantissa at 14
decimals, :func:`quantile_candidates`), where a column of plain decimals stops at
``10^-MAX_LEARNED_DECIMALS``. Smaller values count in the bucket ``[0, 10^-14)``."""
_SCIENTIFIC = re.compile(r"[-+]?(?:\d+(?:\.(\d*))?|\.(\d+))[eE][-+]?\d+")


def scientific_of(key: Hashable) -> int | None:
    """The decimals of the mantissa (0 .. :data:`MAX_MANTISSA_DECIMALS`) of a value written
    with an exponent (a learner's key: the text as written; ``4.070e-04``: 3, ``1E5``: 0),
    None for any other value. A float (a number typed by pandas, as a DataFrame's float64
    column holds it) is written as Python's ``repr`` writes it, as pandas' ``to_csv`` does:
    with an exponent below ``10^-4`` and from ``10^16`` (``3.35e-08``: 2,
    ``3.3524949385538154e-08``: 6), plain otherwise (``0.000407``: None); a float holding a
    whole number is the learner's integer key (:func:`_cell`), never so written. A public
    rule on one value: each such value is a finite number, counted in a decimals class
    otherwise."""
    if isinstance(key, float):
        key = repr(key)
    if not isinstance(key, str) or "e" not in key.lower():
        return None
    if (m := _SCIENTIFIC.fullmatch(key)) is None:
        return None
    if not math.isfinite(float(key)):
        return None
    return min(MAX_MANTISSA_DECIMALS, len(m[1] or m[2] or ""))


def scientific_form(cells: list[int], numbers: int, sigma: float) -> int | None:
    """The significant digits of a column written in scientific notation, read off the noisy
    counts ``cells`` of its numbers written with an exponent (by the mantissa's decimals,
    noise sd ``sigma`` each) and its noisy count of numbers ``numbers``; None unless a cell
    holds :data:`FORM_SIGMAS` sd (as a width's: a column with no value so written passes at
    most ``7 x 3.2e-5`` a column) and their sum :data:`SCIENTIFIC_SHARE` of ``numbers`` (a
    test of the sum at 4 sd of its noise, ``sigma sqrt(7)``, missed pandas' 12% of small
    values in 5,000). The digits: one more than the most precise
    mantissa class holding :data:`DECIMALS_MASS` of the cells' mass and
    :data:`DECIMALS_SIGMAS` sd, the precision's rule (:func:`precision_of`; the largest cell
    holds both once the form passes). Post-processing of noisy counts."""
    total = sum(cells)
    if max(cells) < FORM_SIGMAS * sigma or total < SCIENTIFIC_SHARE * numbers:
        return None
    mass = sum(max(c, 0) for c in cells)
    floor = max(DECIMALS_MASS * mass, DECIMALS_SIGMAS * sigma)
    passing = [k for k, c in enumerate(cells) if c >= floor]
    return 1 + max(passing)


def every_value_scientific(
    cells: list[int], numbers: int, sigma: float, numbers_sigma: float
) -> bool:
    """Whether a column written in scientific notation (:func:`scientific_form`) writes every
    value so, read off the same noisy counts: the cells' sum passes the number rule's test on
    them (at least :data:`NUMBER_SHARE` of the noisy numbers less :data:`NUMBER_SIGMAS` sd of
    the difference's noise, ``sqrt(7 sigma^2 + 0.95^2 numbers_sigma^2)``); otherwise the
    column mixes the forms (R, Python and JavaScript write an exponent only at some
    magnitudes), and :func:`scientific_threshold` says where. Post-processing of the
    precision's and the profile's noisy counts (no further charge)."""
    noise = math.sqrt(len(cells) * sigma**2 + (NUMBER_SHARE * numbers_sigma) ** 2)
    return sum(cells) >= NUMBER_SHARE * numbers - NUMBER_SIGMAS * noise


NOTATION_BELOW = (-12, -1)
"""The magnitudes ``10^e`` (``e`` from -12 to -1) below which a mixed column may write its
values with an exponent (:func:`scientific_threshold`): R's, Python's ``repr`` and C's
``%g`` write small values so (``1.2e-05``) from ``10^-4`` or ``10^-5`` down, a writer of
one-digit exponents (``1.2e-5``) from ``10^-3``; none writes ``0.5`` as ``5e-01``."""
NOTATION_FROM = (5, 16)
"""The magnitudes ``10^e`` (``e`` from 5 to 16) from which a mixed column may write its
values with an exponent: R's round ``1e+05``, a spreadsheet's ``1.5E+10`` (from ``10^11``
in Excel's General format), Python's ``repr`` from ``10^16``."""
NOTATION_SIGMAS = 2.0
"""A bucket's noisy count counts in :func:`scientific_threshold`'s shares only from this many
sd of its noise up: the empty buckets near 0 (three a decade down to ``10^-14``) would
otherwise add their noise by the dozen to the share below a magnitude."""


def scientific_threshold(
    buckets: np.ndarray, noisy: np.ndarray, bounds: tuple[float, float], share: float,
    sigma: float,
) -> tuple[str, float]:  # fmt: skip
    """Where a column mixing the forms writes an exponent (``Numeric.notation``): below
    ``10^e`` (``("below", t)``: p-values, ``1.2e-05`` beside ``0.0123``;
    :data:`NOTATION_BELOW`) or from ``10^e`` up (``("from", t)``, :data:`NOTATION_FROM`),
    the side and power of ten at which the share of the column's mass in the bounds' noisy
    magnitude buckets (those within ``bounds`` holding :data:`NOTATION_SIGMAS` sd of their
    noise, ``sigma``) comes nearest ``share``, the noisy share of its numbers written with an
    exponent (below before from at equal distances; of equally near powers, between which
    the counted buckets hold no mass, the one nearest that mass: the largest below, the
    smallest from).
    ``("below", 1e-4)`` when those buckets hold no mass (R's and Python's rule). R's
    ``write.csv`` and Python's ``repr`` write an exponent below ``10^-4``; a writer of
    one-digit exponents (``1.2e-5``) below ``10^-3``. Post-processing of the bounds' and the
    precision's noisy counts (no further charge)."""
    lo, hi = bounds
    a, b = buckets[:-1], buckets[1:]
    counts = np.asarray(noisy, dtype=np.float64)
    inside = (a >= lo) & (b <= hi) & (counts >= NOTATION_SIGMAS * sigma)
    mass = counts[inside]
    outer = np.maximum(np.abs(a), np.abs(b))[inside]
    total = float(mass.sum())
    if total <= 0:
        return "below", 1e-4
    fits: list[tuple[float, str, int]] = []
    for side, (first, last) in (("below", NOTATION_BELOW), ("from", NOTATION_FROM)):
        for e in range(first, last + 1):
            below = float(mass[outer <= 10.0**e * (1 + 1e-9)].sum()) / total
            fits.append((abs((below if side == "below" else 1 - below) - share), side, e))
    nearest = min(f[0] for f in fits)
    side = next(f[1] for f in fits if f[0] == nearest)
    # equally near: powers of ten where the counted buckets hold no mass between (a gap of
    # the data's, or a thin tail's buckets each under the bar): the one nearest the mass
    # counted, the largest below, the smallest from; within a true gap the choice writes
    # few released values either way
    tied = [f[2] for f in fits if f[0] == nearest and f[1] == side]
    return side, 10.0 ** (max(tied) if side == "below" else min(tied))


def _scientific(
    name: str,
    col: _Column,
    rho: float,
    ctx: _Context,
    numbers: int | None,
    counts: list[int],
    forms: list[int],
) -> tuple[int | None, list[int]]:
    """The significant digits of a column written in scientific notation
    (:func:`scientific_form`, None for none) and its cells' noisy counts.

    The cells are further cells of the precision's histogram (:func:`_decimals`): a number
    written with an exponent is counted in its mantissa's cell and not in its decimals class,
    so each record is still in exactly one cell of the whole vector (a decimals class, a
    written form, a scientific cell or none), which moves by L2 ``ctx.l2`` as before; the
    discrete Gaussian at the precision's sigma over the whole vector is ``rho``-zCDP
    (Canonne, Kamath and Steinke 2020, Theorem 4): the precision's one charge, made before
    its first draw, covers these cells. Their noise comes from a stream of their own
    (:data:`SCIENTIFIC_STREAM`), so the other cells are drawn as before: a column with no
    value so written has the same classes and draws, and the same domain unless a cell's
    noise alone passes :data:`FORM_SIGMAS` sd (at most 2.2e-4 a column) and their sum
    :data:`SCIENTIFIC_SHARE` of its numbers. ``counts``, ``forms``: the other cells' noisy
    counts, whose sum with these stands for the numbers when ``numbers`` is None."""
    if ctx.scientific_rng is None:  # kept on the context: one stream for every column
        ctx.scientific_rng = _own_stream(ctx.rng, SCIENTIFIC_STREAM)
    noise = sample_discrete_gaussian(
        discrete_gaussian_sigma2(rho, ctx.l2), col.scientific.size, ctx.scientific_rng
    )
    cells = [int(c) for c in col.scientific + noise]
    total = numbers if numbers is not None else sum(counts) + sum(forms) + sum(cells)
    return scientific_form(cells, total, _sigma(rho, ctx.l2)), cells


def _outward(x: float, decimals: int, rounding: Any) -> float:
    """``x`` rounded down (``math.floor``) or up (``math.ceil``) to ``decimals`` decimals."""
    step = Decimal(1).scaleb(-decimals)
    return float(rounding(Decimal(repr(x)) / step) * step)


def _step(decimals: int) -> float:
    return float(Decimal(1).scaleb(-decimals))


def _bounds(
    name: str,
    col: _Column,
    rho: float,
    decimals: int,
    ctx: _Context,
    numbers: tuple[int, float] | None = None,
) -> tuple[
    tuple[float, float] | None,
    np.ndarray,
    np.ndarray,
    tuple[float, float] | None,
    tuple[float, float] | None,
]:
    """The column's private bounds, rounded outward to its precision (None when no bucket
    is occupied), the buckets, their noisy counts, the bounds before the rule at 0
    (:data:`BOUND_ZERO_RATIO`; the ends of buckets) and their core (:func:`step_core`; a
    small table's, else None). The buckets start at the precision's
    step (``[0, 1)`` then ``[1, 2)`` for integers): a number of that precision is never
    smaller, so finer buckets would only spread the noise's false positives and push apart
    the buckets a run joins. ``numbers``: the profile's noisy count of the column's numbers
    and its noise sd, read by the rule of a point mass at 0 (:func:`zero_mode_run`)."""
    buckets = magnitude_buckets(min_exponent=-decimals)
    k = buckets.size - 1
    one, window, steps = _run_tests(rho, k, ctx.l2)
    grow = steps if ctx.small else None  # grown from the mode (grown_bounds)
    # a thin bucket crossed (small tables: a large table's growth has no window test)
    skip = partition_threshold(one * BOUND_WINDOW, BOUND_SKIP_RATE) if ctx.small else math.inf
    mode = bucket_threshold(rho, k, BOUND_FALSE_RATE, ctx.l2)
    # the near buckets count the values within +-NEAR_LIMIT alone; those beyond it are the
    # far buckets' (far_reach), one record in one cell of the whole histogram
    near = (col.numbers >= buckets[0]) & (col.numbers < buckets[-1])
    _, noisy = bounds_histogram(
        col.numbers[near], rho=rho, rng=ctx.rng, ledger=ctx.ledger, edges=buckets,
        name=f"{name}: bounds (discrete Gaussian histogram)", sensitivity=ctx.l2,
    )  # fmt: skip
    bounds = read_bounds(noisy, buckets, SPREAD_MODE if ctx.small else mode, window, grow)
    if bounds is not None and grow is not None:  # the same draws: the run read again
        run = spread_run(noisy, buckets, mode, grow, window, skip)
        seen = sign_tests(rho, k, ctx.l2)
        run = other_sign(noisy, buckets, run, mode, grow, seen, skip)
        ends = None if run is None else (float(buckets[run[0]]), float(buckets[run[1] + 1]))
        bounds = None if ends is None else (*ends, noisy)
    found: tuple[float, float] | None = None
    if bounds is not None:
        lo, hi = bounds[0], bounds[1]
        if not ctx.small:  # (a small table's growth from the mode has its own rule at 0)
            lo, hi = far_windows(lo, hi, buckets, noisy, rho, ctx.l2)
            lo, hi = grown_past(lo, hi, buckets, noisy, rho, ctx.l2)
            strict = bucket_threshold(rho, k, BOUND_CROSS_RATE, ctx.l2)
            lo, hi = across_zero(lo, hi, buckets, noisy, strict)
            if LARGE_OTHER_SIGN:  # bounds on one side of 0: the other side, as a small table's
                run = (int(np.searchsorted(buckets, lo)), int(np.searchsorted(buckets, hi)) - 1)
                run = other_sign(noisy, buckets, run, mode, steps, sign_tests(rho, k, ctx.l2))
                assert run is not None
                lo, hi = float(buckets[run[0]]), float(buckets[run[1] + 1])
        found = (lo, hi)
    if found is None or max(-found[0], found[1]) >= NEAR_LIMIT:
        # the far buckets, read only now: no near bucket passed, or the bounds reach +-10^10
        far_ways = (
            (*grow, BOUND_WINDOW, skip)
            if grow is not None
            else (partition_threshold(one, BOUND_STEP_RATE), math.inf, 1, large_skip(one))
        )
        far = far_reach(col.numbers, found, decimals, noisy, rho, ctx, far_ways)
        if far is not None:
            (lo, hi), buckets, noisy = far
            bounds = (lo, hi, noisy)
    if bounds is None:
        return None, buckets, np.zeros(0, dtype=np.int64), None, None
    if numbers is not None:  # a point mass at 0: the rest bounded apart from it
        ways = (*grow, skip) if grow is not None else (partition_threshold(one, BOUND_STEP_RATE),)
        run = zero_mode_run(noisy, buckets, numbers, one, ways, hi)
        if run is not None:
            lo, hi = min(lo, 0.0), max(hi, float(buckets[run[1] + 1]))
    stepped = (lo, hi)
    if TAIL_REACH:  # a tail spread over many buckets beyond the bounds, none passing alone
        lo, hi = tail_reach(lo, hi, buckets, noisy, one)
    raw = (lo, hi)  # before the rule at 0 (narrow_band reads them)
    core = step_core(noisy, buckets, mode, grow, raw, one) if grow is not None else None
    if grow is not None and core is not None and raw != stepped:
        # a small table's core would clip the tail reached, and more (a core is narrower
        # than the stepped bounds): the stepped bounds kept
        lo, hi = raw = stepped
        core = step_core(noisy, buckets, mode, grow, raw, one)
    if 0 < lo <= hi / BOUND_ZERO_RATIO and (
        not ctx.small or zero_point(buckets, noisy, rho, ctx.l2)
    ):
        lo = 0.0  # a positive column starting near 0: its thin low tail is kept, not clipped
    lo, hi = _outward(lo, decimals, math.floor), _outward(hi, decimals, math.ceil)
    if hi <= lo:
        hi = float(Decimal(repr(lo)) + Decimal(1).scaleb(-decimals))
    return (lo, hi), buckets, noisy, raw, core


TAIL_REACH = False
"""Whether a column's bounds are reached outward over a tail spread thinly over many buckets
(:func:`tail_reach`). Off: measured (docs/learn.md, "Tails spread over many buckets"), it
moved three columns of 74 tables' domains at seed 3 and no scored release at seeds 10-11
(GDP's tail beyond ``5 10^12`` stays below its thresholds)."""
TAIL_FALSE_RATE = 0.005
"""The false rate of :func:`tail_reach`: a column none of whose values lies beyond its bounds
(in magnitude, away from 0) has them moved with probability at most this (half a side), by
the union bound over every run length of the column's buckets. It adds to
:data:`BOUND_FALSE_RATE` and :data:`FAR_MODE_RATE`: with :data:`TAIL_REACH` on, at
most 1.6% of the columns."""


def tail_thresholds(one: Fraction | float, cells: int) -> np.ndarray:
    """The thresholds of :func:`tail_reach` for a histogram of ``cells`` buckets of noise
    variance ``one``: entry ``k - 1`` is what the noisy sum of ``k`` empty buckets (variance
    ``k one``) reaches with probability at most ``TAIL_FALSE_RATE / (2 cells)``, so that on
    a side the ``cells`` run lengths together pass with at most half the rate. Public."""
    return np.array(_tail_thresholds(one, cells, TAIL_FALSE_RATE), dtype=np.float64)


@lru_cache(maxsize=64)
def _tail_thresholds(one: Fraction | float, cells: int, rate: float) -> tuple[int, ...]:
    """:func:`tail_thresholds`, kept per noise variance (each a discrete Gaussian tail's
    search): a table's columns share a few."""
    return tuple(partition_threshold(k * one, rate / (2 * cells)) for k in range(1, cells + 1))


def tail_reach(
    lo: float, hi: float, buckets: np.ndarray, noisy: np.ndarray, one: Fraction | float
) -> tuple[float, float]:
    """The bounds ``(lo, hi)`` (edges of ``buckets``) reached outward, away from 0, over a tail
    whose mass is spread thinly: beyond the upper bound (when above 0) the noisy counts of the
    first ``k`` buckets are summed for every ``k``, and when a sum reaches its threshold
    (:func:`tail_thresholds`: the sum of ``k`` buckets has noise variance ``k one``) the bound
    moves to the end of the shortest such run; repeated until no run passes. Likewise below
    a lower bound under 0. The step rules (:func:`grown_past`, a small table's growth) test
    a bucket, or a window of three, at a time: a tail of incomes or GDPs holding a few % of
    the values over six or more log-spaced buckets passes none of them, and was clipped at
    the bound. A side with no value beyond it is moved with probability at most
    ``TAIL_FALSE_RATE / 2`` at each repetition (the union bound over the run lengths); the
    shortest passing run, not the longest, keeps a real tail's reach from running on into
    empty buckets on their noise. Post-processing of the bounds' noisy counts (Bun and
    Steinke 2016, Lemma 1.8): no new draw, no further cost."""
    n = noisy.size
    if n == 0:
        return lo, hi
    t = tail_thresholds(one, n)
    x = noisy.astype(np.float64)

    def reach(counts: np.ndarray) -> int:
        """How many of ``counts`` (the buckets beyond a bound, outward) the bound takes."""
        end = 0
        while end < counts.size:
            passed = np.flatnonzero(np.cumsum(counts[end:]) >= t[: counts.size - end])
            if passed.size == 0:
                break
            end += int(passed[0]) + 1
        return end

    first = int(np.searchsorted(buckets, lo))  # lo and hi are edges of the buckets
    last = int(np.searchsorted(buckets, hi)) - 1
    if hi > 0:
        last += reach(x[last + 1 :])
    if lo < 0:
        first -= reach(x[:first][::-1])
    return float(buckets[first]), float(buckets[last + 1])


NEAR_LIMIT = 1e10
"""The outer edge of the near magnitude buckets (the default of
:func:`~dpquery.privacy.quantiles.magnitude_buckets`, exponents up to 9): the bounds' rules
read their buckets alone; the far buckets beyond it (:func:`far_reach`) only when those reach
it or pass nowhere."""
FAR_EXPONENT = 15
"""The far buckets: ``+-{1, 2, 5} 10^e`` for ``e`` from 10 to this, and ``+-10^16`` their
outer edge (:data:`LARGEST_FAR`): 18 a side. A float64 holds every integer up to ``2^53``
(about ``9.007 10^15``) exactly, so a column of integers (byte counts, 15-digit census block
numbers) is written exactly up to there; beyond ``10^16`` a value counts in the outermost
bucket and is clipped to ``10^16``."""
LARGEST_FAR = float(magnitude_buckets(0, FAR_EXPONENT)[-1])
"""The largest magnitude the bounds can reach (``10^16``): larger values are clipped to it."""
FAR_CELLS = 3 * (FAR_EXPONENT - 9)
"""The far buckets a side (18)."""
FAR_STREAM = 0x66617262
"""The spawn key of the far buckets' own stream (:func:`_own_stream`, :func:`far_reach`)."""
FAR_MODE_RATE = 1e-3
"""The false rate of the far buckets' mode test (:func:`far_reach`: a column no near bucket
of which passes), by the union bound over the 36 far buckets; it adds to
:data:`BOUND_FALSE_RATE`, the chance that a column's bounds take an empty bucket, which is
at most ``BOUND_FALSE_RATE + FAR_MODE_RATE`` (1.1%) for every column."""


def far_reach(
    values: np.ndarray, found: tuple[float, float] | None, decimals: int,
    near_noisy: np.ndarray, rho: float, ctx: _Context,
    ways: tuple[float, float, int, float],
) -> tuple[tuple[float, float], np.ndarray, np.ndarray] | None:  # fmt: skip
    """The bounds ``found`` (the ends of the near buckets of a column of ``decimals``, whose
    noisy counts are ``near_noisy``; None when none passed) reached
    into the far buckets (:data:`FAR_EXPONENT`): the bounds, the whole histogram's buckets
    (:func:`~dpquery.privacy.quantiles.magnitude_buckets` up to ``10^16``) and noisy counts;
    None when they stay as they were (no near bucket passed and the far mode test fails,
    or the far buckets next to the near ones' end do not join).

    - Bounds reaching ``+-10^10`` (the near buckets' end) are grown outward into the far
      buckets (:func:`~dpquery.privacy.quantiles.grown_run`, the growth's steps ``ways``:
      a step's threshold, a window's, its width, a thin bucket's crossing: the table's,
      those of :func:`grown_past` or a small table's).
    - When no near bucket passed, the far bucket of the largest noisy count is the mode when
      it reaches the threshold of :data:`FAR_MODE_RATE` over the far buckets (the union
      bound), and is grown the same way (crossing 0 only by a bucket reaching that
      threshold): a column all of whose values lie beyond ``10^10`` (15-digit codes) had no
      near bucket but the outermost, where it was clipped.

    Privacy: the far buckets count the values beyond ``+-10^10`` alone (the near buckets,
    drawn before, those within), so one record is in one cell of the whole histogram: it
    moves by L2 ``sqrt(2)`` under replace-one and 1 under add/remove (``ctx.l2``), and its
    discrete Gaussian at the near buckets' noise (the sigma of ``rho`` at ``ctx.l2``) is
    ``rho``-zCDP as a whole (Canonne, Kamath and Steinke 2020, Theorem 4): the near
    buckets' charge, made before they drew, covers these cells. Their noise is drawn here
    from a stream of their own (:data:`FAR_STREAM`, ``ctx.far_rng``): the near buckets'
    noise, and every later draw of the learning, are those of a learning without them, and
    drawing them only when read is the same as drawing them first (independent noise).
    What is read of them is post-processing (Bun and Steinke 2016, Lemma 1.8)."""
    f = FAR_CELLS
    whole = magnitude_buckets(min_exponent=-decimals, max_exponent=FAR_EXPONENT)
    far = (values < -NEAR_LIMIT) | (values >= NEAR_LIMIT)
    counts = bucket_counts(values[far], whole)
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    if ctx.far_rng is None:  # kept on the context: one stream for every column
        ctx.far_rng = _own_stream(ctx.rng, FAR_STREAM)
    stream = ctx.far_rng
    cells = np.r_[np.arange(f), np.arange(whole.size - 1 - f, whole.size - 1)]
    noisy = np.zeros(whole.size - 1, dtype=np.int64)
    noisy[f:-f] = near_noisy
    noisy[cells] = counts[cells] + sample_discrete_gaussian(sigma2, cells.size, stream)
    step, run, w, skip = ways
    zero = zero_bucket(whole)
    if found is None:
        seed = int(cells[int(np.argmax(noisy[cells]))])  # the first of equal maxima
        mode = bucket_threshold(rho, cells.size, FAR_MODE_RATE, ctx.l2)
        if noisy[seed] < mode:
            return None
        first, last = grown_run(noisy, (seed, seed), mode, step, run, w, zero, skip)
    else:
        first = int(np.searchsorted(whole, found[0]))
        last = int(np.searchsorted(whole, found[1])) - 1
        if last == whole.size - 2 - f:  # the near buckets' top: grown upward alone
            last += grown_run(noisy[last:], (0, 0), math.inf, step, run, w, None, skip)[1]
        if first == f:  # their bottom: grown downward alone
            first = grown_run(noisy[: first + 1], (first, first), math.inf, step, run, w,
                              None, skip)[0]  # fmt: skip
        if (float(whole[first]), float(whole[last + 1])) == found:
            return None
    return (float(whole[first]), float(whole[last + 1])), whole, noisy


def step_core(
    noisy: np.ndarray, buckets: np.ndarray, mode: float, grow: tuple[float, float],
    raw: tuple[float, float], one: Fraction | float,
) -> tuple[float, float] | None:  # fmt: skip
    """A small table's bounds ``raw`` (the ends of buckets) as the mode's growth by single
    buckets alone reaches them (:func:`~dpquery.privacy.quantiles.grown_bounds` with no
    window and no crossing of a thin bucket), when that core is narrower and the buckets of
    ``raw`` outside it hold at most :data:`CORE_SIGMAS` noise sd of their sum (``one``: a
    bucket's noise variance): the ends of its buckets, else None.

    The window and the crossing each join :data:`BOUND_WINDOW` buckets or more at once, at a
    per-side false rate (:data:`SMALL_BOUND_STEP_RATE`, :data:`BOUND_SKIP_RATE`), so a band
    far from 0 (a year in ``[1000, 5000]``) reaches ``[50, 5000]`` or ``[1000, 50000]`` from
    its noise alone about one draw in ten; such bounds are no longer a narrow band
    (:func:`narrow_band`), and the band was cut by its magnitude buckets (presidential
    elections' years, 1932 to 2016, in bins of 167 years: a KS of 0.49). :func:`_numeric`
    gives the core's band its finer histogram, whose run is kept only when it holds the
    whole bounds' noisy mass and stays out of the cells outside the core
    (:func:`_fine_run`, ``outer``): the buckets the window or the crossing joined are then
    clipped as noise. Post-processing of the bounds' noisy counts (Bun and Steinke 2016,
    Lemma 1.8): no further cost."""
    run = grown_bounds(noisy, mode, grow[0], math.inf, BOUND_WINDOW, zero_bucket(buckets))
    if run is None:
        return None
    core = (float(buckets[run[0]]), float(buckets[run[1] + 1]))
    if not raw[0] <= core[0] <= core[1] <= raw[1] or core == raw:
        return None
    starts, ends = buckets[:-1], buckets[1:]
    rest = ((starts >= raw[0]) & (ends <= raw[1])
            & ((starts < core[0]) | (ends > core[1])))  # fmt: skip
    return core if float(noisy[rest].sum()) <= CORE_SIGMAS * math.sqrt(rest.sum() * one) else None


CORE_SIGMAS = 2.5
"""The core of a small table's bounds (:func:`step_core`) is their band only when the noisy
mass of the buckets outside it is at most this many noise sd of their sum: what a false
window or crossing joins (it passed at 1.7 to 2.3 sd; presidential elections' year 1.66 to
1.92 on the seeds measured), and mostly not a real tail (a fare's ``[10, 100)`` beyond a
core ``[5, 10)``, 4 sd on one seed), which would only spend the pool on a finer histogram
whose run is not kept. A tail at the noise's level passes it (a rank's ``[20, 200)``, 180
records, 2.3 sd on one seed of twenty); the outer cells of :func:`_fine_run` keep its
records. At 2 sd ``planets``' year (2.14) kept its bounds ``[2000, 50000]`` (docs/learn.md)."""


def _run_tests(
    rho: float, k: int, sensitivity: float
) -> tuple[Fraction, tuple[int, int], tuple[int, int]]:
    """The tests a bounds histogram of ``k`` cells at ``rho`` is read with: one cell's noise
    variance, the window test (a run of :data:`BOUND_WINDOW` cells, whose noisy sum has
    about that many times the variance, at :data:`BOUND_FALSE_RATE` split over the runs)
    and a small table's growth steps from the mode (:func:`grown_bounds`, each a single test
    at :data:`SMALL_BOUND_STEP_RATE`: one cell, then a window). Public."""
    one = discrete_gaussian_sigma2(rho, sensitivity)
    sums = one * BOUND_WINDOW
    runs = max(1, k - BOUND_WINDOW + 1)
    window = (BOUND_WINDOW, partition_threshold(sums, BOUND_FALSE_RATE / runs))
    grow = (partition_threshold(one, SMALL_BOUND_STEP_RATE),
            partition_threshold(sums, SMALL_BOUND_STEP_RATE))  # fmt: skip
    return one, window, grow


def zero_bucket(buckets: np.ndarray) -> int | None:
    """The index of the bucket starting at 0 (``[0, step)``: the value 0 at the column's
    precision), None when no bucket starts there. Public: the buckets alone."""
    zeros = np.flatnonzero(buckets[:-1] == 0.0)
    return int(zeros[0]) if zeros.size else None


def zero_point(buckets: np.ndarray, noisy: np.ndarray, rho: float, sensitivity: float) -> bool:
    """Whether a small table's bucket starting at 0 (``[0, step)``: the value 0 at the
    column's precision) holds records by its noisy count alone: it reaches what an empty
    bucket's noise reaches with :data:`ZERO_POINT_RATE`. Only then is a positive lower bound
    taken to 0 (:data:`BOUND_ZERO_RATIO`), does the 0 get a bin of its own
    (:func:`_small_edges`) and do integer codes start at 0 (:func:`_range_codes`): PUMS's
    ages (18 to 93) got a bin ``[0, 1)`` and one ``[1, 20)`` whenever the bucket ``[10, 20)``
    was grown (up to 9% of the released ages below 18), and its education and race codes
    (from 1) an empty code 0. Post-processing of the bounds' noisy counts (drawn at ``rho``
    and L2 ``sensitivity``; Bun and Steinke 2016, Lemma 1.8): no further cost."""
    z = zero_bucket(buckets)
    if noisy.size == 0 or z is None:
        return False
    held = partition_threshold(discrete_gaussian_sigma2(rho, sensitivity), ZERO_POINT_RATE)
    return bool(noisy[z] >= held)


def zero_mode(buckets: np.ndarray, noisy: np.ndarray) -> int | None:
    """The index of the bucket starting at 0 (``[0, step)``: the value 0 at the column's
    precision) when it is the mode of the bounds' noisy counts (the first of equal maxima, a
    public tie rule), else None. Public: a function of the noisy counts alone."""
    z = zero_bucket(buckets)
    if noisy.size == 0 or z is None or int(np.argmax(noisy)) != z:
        return None
    return z


def zero_mode_run(
    noisy: np.ndarray, buckets: np.ndarray, numbers: tuple[int, float], one: Fraction | float,
    steps: tuple[float, ...], hi: float,
) -> tuple[int, int] | None:  # fmt: skip
    """The run of bounds buckets above 0 of a column whose mode is the bucket of 0
    (:func:`zero_mode`), grown apart from that point mass; None when the mode is elsewhere
    or the rest is not seen. A point mass at 0 (82% of a debt column's values, a quarter of
    a card spending column's) holds the mode, and growth from it stops at the first thin
    bucket beside it (``[1, 2)``: no debt of 1), bounds ``[0, 1]`` that clip every other
    value to 0 or 1. So the rest is bounded apart:

    - it is seen when the profile's noisy count of numbers (``numbers``: the count and its
      noise sd) less the bucket of 0's noisy count reaches what that difference's noise
      (variance ``sd^2 + one``, ``one`` a bucket's) reaches with :data:`BOUND_FALSE_RATE`;
    - it starts at the :data:`BOUND_WINDOW` adjacent buckets above the bucket of 0 of the
      largest noisy sum (the mode's side of 0: the other side needs
      :func:`across_zero`'s evidence), when that sum reaches what an empty run's noise
      reaches with :data:`BOUND_FALSE_RATE` (one test: the rest is seen, only its place is
      sought; a profile count 2.8 sd high passed the first test on a column of counts
      whose rest, 1 to 14, the noise had put below a run of empty buckets), and when it
      lies wholly above the bounds ``hi`` (their upper end) grown so far: a run they reach
      into was found by their growth (a 0/1 flag's ``[1, 2)``), and a window seeded there
      would reach two buckets past the data;
    - it is grown outward (:func:`~dpquery.privacy.quantiles.grown_run`) by ``steps``
      (the table's growth tests: one bucket's threshold, then in a small table a window's
      and a run's beyond a thin bucket, :data:`BOUND_SKIP_RATE`), never down into the
      bucket of 0.

    The caller takes the bounds to ``[min(lo, 0), max(hi, run's top)]`` and makes 0 an atom
    (a bin or a code of its own). Post-processing of the bounds' discrete Gaussian histogram
    and the profile's count (Bun and Steinke 2016, Lemma 1.8): no further cost."""
    z = zero_mode(buckets, noisy)
    w = BOUND_WINDOW
    if z is None or noisy.size - (z + 1) < w:
        return None
    rest = numbers[0] - int(noisy[z])
    if rest < partition_threshold(float(one) + numbers[1] ** 2, BOUND_FALSE_RATE):
        return None
    x = noisy.astype(np.float64)
    x[: z + 1] = -np.inf  # the point mass and the side of 0 it lacks: not part of the run
    sums = np.convolve(x[z + 1 :], np.ones(w), "valid")
    i = int(np.argmax(sums))
    if sums[i] < partition_threshold(w * float(one), BOUND_FALSE_RATE):
        return None
    if float(buckets[z + 1 + i]) < hi:  # the bounds reach into it: their growth found it
        return None
    i += z + 1
    step, run, skip = (*steps, math.inf, math.inf)[:3]
    return grown_run(x, (i, i + w - 1), math.inf, step, run, w, None, skip)


SPREAD_MODE = 1e-9
"""The threshold a small table's bounds are drawn with (:func:`private_bounds` returns the
noisy counts whatever it is); :func:`spread_run` reads them with the real ones."""


def spread_run(
    noisy: np.ndarray, buckets: np.ndarray, mode: float, grow: tuple[float, float],
    window: tuple[int, float], skip: float = math.inf,
) -> tuple[int, int] | None:  # fmt: skip
    """A small table's run of bounds buckets: grown from the mode when its noisy count
    reaches ``mode`` (:func:`~dpquery.privacy.quantiles.grown_bounds`, as before); when no
    bucket does, grown from the ``window[0]`` adjacent buckets of the largest noisy sum (not
    across 0) if it reaches ``window[1]``, the union bound's threshold of such runs at
    :data:`BOUND_FALSE_RATE` (the large table's window); else None. Values spread thinly over
    many buckets (a planet's mass, 0.0036 to 25 with no bucket above 105 of 513 values; its
    orbital period, 0.09 to 730,000 days) had no bounds, and a bin ``[0, 1]`` that clipped
    them all. ``skip``: growth may cross one thin bucket to a run beyond it whose sum reaches
    this (:func:`~dpquery.privacy.quantiles.grown_run`; the column's bounds,
    :data:`BOUND_SKIP_RATE`). Post-processing of the bounds' noisy counts (Bun and Steinke 2016,
    Lemma 1.8): no further cost."""
    zero = zero_bucket(buckets)
    run = grown_bounds(noisy, mode, grow[0], grow[1], window[0], zero, skip)
    w = window[0]
    if run is not None or noisy.size < w:
        return run
    sums = np.convolve(noisy.astype(np.float64), np.ones(w), "valid")
    if zero is not None:  # a window across 0 would take a sign on a run's evidence
        sums[max(0, zero - w + 1) : zero] = -np.inf
    i = int(np.argmax(sums))
    if sums[i] < window[1]:
        return None
    return grown_run(noisy, (i, i + w - 1), mode, grow[0], grow[1], w, zero, skip)


OTHER_SIGN_RATE = BOUND_FALSE_RATE
"""The false rate of each of the two tests the other sign of 0 is seen by in a small table's
bounds (:func:`sign_tests`, :func:`other_sign`), split over the column's buckets (runs) by the
union bound: the mode's test and the window's of :func:`spread_run`. The tests read only the
buckets within the magnitude the mode's run reaches, so a false pass is rarer by their share
and stays within the column's scale. At :data:`BOUND_CROSS_RATE` over every bucket of the
other side (a large table's rule, :func:`across_zero`) a company's profits (14% of 1,995
negative, spread from -50 to -0.01) kept its bounds positive on both seeds measured."""


def sign_tests(rho: float, k: int, sensitivity: float) -> tuple[float, tuple[int, float]]:
    """The tests the other sign of 0 is seen by in a small table's bounds histogram of ``k``
    buckets at ``rho`` (:func:`other_sign`): a bucket's noisy count, and the noisy sum of
    :data:`BOUND_WINDOW` adjacent buckets, each at :data:`OTHER_SIGN_RATE` split over the
    buckets (runs) by the union bound. Public: reads no data."""
    one = discrete_gaussian_sigma2(rho, sensitivity)
    runs = max(1, k - BOUND_WINDOW + 1)
    window = partition_threshold(one * BOUND_WINDOW, OTHER_SIGN_RATE / runs)
    return bucket_threshold(rho, k, OTHER_SIGN_RATE, sensitivity), (BOUND_WINDOW, window)


def other_sign(
    noisy: np.ndarray, buckets: np.ndarray, run: tuple[int, int] | None, mode: float,
    grow: tuple[float, float], seen: tuple[float, tuple[int, float]], skip: float = math.inf,
) -> tuple[int, int] | None:  # fmt: skip
    """A small table's run of bounds buckets (:func:`spread_run`; with
    :data:`LARGE_OTHER_SIGN`, a larger table's bounds after :func:`across_zero` as a run)
    joined to a run of the other sign of 0 when that side holds records by the tests
    ``seen`` (:func:`sign_tests`): the bucket of the largest noisy count there reaches
    ``seen[0]``, or else the ``w = seen[1][0]`` adjacent buckets there of the largest noisy
    sum reach ``seen[1][1]``; only the buckets no farther from 0 than the run's farther end
    are read. That run is grown from its seed as the mode's run was
    (:func:`~dpquery.privacy.quantiles.grown_run`: ``grow``, ``w``, ``skip``; ``mode``, the
    mode's test, to cross the bucket of 0), and the buckets between the two runs (the thin
    magnitudes near 0) are joined too. None or a run across 0 is returned as it is, and so is
    a run when no bucket starts at 0.

    Why: the mode's run crosses 0 only by a bucket next to 0 whose count alone reaches
    ``mode``, and growth toward 0 stops at the first thin magnitude bucket before that. At
    three decimals a column of daily returns around 0 (-4.9 to 5.7, half of them negative,
    1,250 records) holds 4 records in ``[0.002, 0.005)`` and 21 in ``[0.02, 0.05)`` against
    a noise sd near 38: its run from the mode ``[-2, -1)`` stopped at ``[-0.2, -0.1)``,
    bounds ``[-2, -0.2]`` that clipped every positive value (a KS near 0.5 on each such
    column). Its positive side's three best adjacent buckets hold about 450 noisy records
    against ``seen[1][1]``'s 235. A column with no value of the other sign has its buckets
    there empty, and by the two union bounds one of them (or of their runs) passes with
    probability at most twice :data:`OTHER_SIGN_RATE`, times the share of the buckets read.
    Read over every bucket of the other side, a false pass took a 0/1 flag's bounds to
    ``-50000`` (one seed of 400); within the run's magnitude it stays at the column's scale
    (the flag's one bucket ``[-2, -1)``).

    Privacy: a function of the bounds' noisy counts and public thresholds, post-processing of
    their discrete Gaussian histogram (Bun and Steinke 2016, Lemma 1.8): no further cost."""
    zero = zero_bucket(buckets)
    if run is None or zero is None or noisy.size == 0:
        return run
    x = noisy.astype(np.float64)
    if run[0] >= zero:  # the run is non-negative: the other side is below 0
        side = np.arange(0, zero)
    elif run[1] < zero:  # the run is negative: the other side is 0 and above
        side = np.arange(zero, x.size)
    else:
        return run  # already across 0
    # only magnitudes the run reaches: a false pass stays within the column's scale
    reach = max(abs(float(buckets[run[0]])), abs(float(buckets[run[1] + 1])))
    side = side[np.maximum(np.abs(buckets[side]), np.abs(buckets[side + 1])) <= reach]
    if side.size == 0:
        return run
    single, (w, tw) = seen
    seed = int(side[int(np.argmax(x[side]))])  # the first of equal maxima: a public tie rule
    first = last = seed
    if x[seed] < single:
        if side.size < w:
            return run
        sums = np.convolve(x[side], np.ones(w), "valid")  # runs within the side alone
        i = int(np.argmax(sums))
        if sums[i] < tw:
            return run
        first, last = int(side[i]), int(side[i]) + w - 1
    other = grown_run(x, (first, last), mode, grow[0], grow[1], w, zero, skip)
    return min(run[0], other[0]), max(run[1], other[1])


LARGE_OTHER_SIGN = True
"""Whether a table that is not small reads the other side of 0 of bounds on one side of it
(:func:`other_sign`, after :func:`across_zero`): there the other side's run, apart from the
mode's across the thin magnitudes near 0, was dropped by :func:`far_windows` (a county's
population change, -33.6 to 37.2 at two decimals, learned on ``[-5, 0]``;
``docs/learn.md``, "Signed columns and bands below 0 in a table that is not small")."""


def grown_past(
    lo: float, hi: float, buckets: np.ndarray, noisy: np.ndarray, rho: float,
    sensitivity: float = BOUND_SENSITIVITY,
) -> tuple[float, float]:  # fmt: skip
    """The union-bound bounds ``(lo, hi)`` of :func:`~dpquery.privacy.quantiles.private_bounds`
    grown outward bucket by bucket (:func:`~dpquery.privacy.quantiles.grown_run`), each step a
    single bucket's test at :data:`BOUND_STEP_RATE` (no run of buckets: a run tested as one
    would double the chance of a false step), a crossing of 0 needing the union bound's
    threshold. Post-processing of the bounds' noisy counts (drawn at ``rho`` and L2
    ``sensitivity``, whose thresholds these are; Bun and Steinke 2016, Lemma 1.8): no further
    cost."""
    k = buckets.size - 1
    one = discrete_gaussian_sigma2(rho, sensitivity)
    first = int(np.searchsorted(buckets, lo))  # lo and hi are edges of the buckets
    last = int(np.searchsorted(buckets, hi)) - 1
    # no window test (its threshold infinite): the width 1 is the skip's, one bucket beyond
    run = grown_run(
        noisy, (first, last), bucket_threshold(rho, k, BOUND_FALSE_RATE, sensitivity),
        partition_threshold(one, BOUND_STEP_RATE), math.inf, 1, zero_bucket(buckets),
        skip=large_skip(one),
    )  # fmt: skip
    return float(buckets[run[0]]), float(buckets[run[1] + 1])


LARGE_SKIP_RATE = 1e-4
"""A large table's bounds, grown bucket by bucket (:func:`grown_past`), may cross one thin
bucket to the bucket beyond it when that bucket's noisy count reaches what an empty bucket's
noise reaches with this probability (:func:`large_skip`): one more test a side, at
:data:`BOUND_CROSS_RATE`'s strictness (3.7 noise sd), since a false crossing takes a bound
two buckets past the data at once."""


def large_skip(one: Fraction | float) -> float:
    """The threshold of a large table's crossing of one thin bucket (:data:`LARGE_SKIP_RATE`)
    for buckets of noise variance ``one``. An industry code of the census (170 to 9,920, a
    tenth of the values below 2,000) had bounds ``[2000, 10000]`` whenever its bucket
    ``[1000, 2000)`` (154 of 12,000 values, 1.3 noise sd) stopped the growth, the 630 values
    of ``[500, 1000)`` beyond it (5 sd) too far for :func:`far_windows`'s union threshold, and
    every value below 2,000 was clipped (a KS of 0.073 against the codebook's 0.009). A
    public threshold on noisy counts already drawn (post-processing): no further cost."""
    return float(partition_threshold(float(one), LARGE_SKIP_RATE))


def across_zero(
    lo: float, hi: float, buckets: np.ndarray, noisy: np.ndarray, strict: float
) -> tuple[float, float]:
    """The bounds ``(lo, hi)`` of :func:`~dpquery.privacy.quantiles.private_bounds` with the
    side of 0 that the mode (the bucket of the largest noisy count) lacks kept only as far as
    a bucket there whose noisy count alone reaches ``strict`` (the threshold of
    :data:`BOUND_CROSS_RATE`), and otherwise stopped at 0. A sign the mode's side lacks is as
    unlikely a priori as a far bucket: at :data:`BOUND_FALSE_RATE` per column, a non-negative
    rate of KDD Cup 99 got a lower bound of -2 (its negative bins then drew 5.4% of the released
    values); a column with a real negative side holds far more than ``strict`` there. A
    public rule on the noisy counts (post-processing: no further cost)."""
    starts = buckets[:-1]
    mode = float(starts[int(np.argmax(noisy))])  # the first of equal maxima: a public tie rule
    if mode >= 0 and lo < 0:
        strong = np.flatnonzero((starts < 0) & (noisy >= strict))
        lo = float(starts[strong[0]]) if strong.size else 0.0
    elif mode < 0 and hi > 0:
        strong = np.flatnonzero((starts >= 0) & (noisy >= strict))
        hi = float(buckets[strong[-1] + 1]) if strong.size else 0.0
    return lo, hi


def _code_top(
    bounds: tuple[float, float], buckets: np.ndarray, noisy: np.ndarray, rho: float,
    sensitivity: float = BOUND_SENSITIVITY,
) -> tuple[float, float]:  # fmt: skip
    """A small table's integer-code column's bounds with the upper end grown again from the
    bounds' noisy counts (``noisy``, drawn at ``rho`` and L2 ``sensitivity``) at
    :data:`SMALL_CODE_STEP_RATE`, never above the first reading. Post-processing of the bounds'
    discrete Gaussian histogram (Bun and Steinke 2016, Lemma 1.8): no further cost."""
    if noisy.size == 0:
        return bounds
    k = buckets.size - 1
    one = discrete_gaussian_sigma2(rho, sensitivity)
    step = partition_threshold(one, SMALL_CODE_STEP_RATE)
    run_step = partition_threshold(one * BOUND_WINDOW, SMALL_CODE_STEP_RATE)
    mode = bucket_threshold(rho, k, BOUND_FALSE_RATE, sensitivity)  # private_bounds' mode test
    run = grown_bounds(noisy, mode, step, run_step, BOUND_WINDOW, zero_bucket(buckets))
    if run is None:
        return bounds
    return bounds[0], max(bounds[0] + 1.0, min(bounds[1], float(buckets[run[1] + 1])))


def large_bins(bins: int, n: int) -> int:
    """The bins of a large table's numeric columns under add/remove: ``bins`` doubled when
    the noisy count ``n`` is at least :data:`LARGE_ROWS` (a public rule on it; under
    replace-one :func:`learn_domain` keeps ``bins``: its release has no rank candidates, and
    at 32 bins ``juvenile_growth``'s worst pair fell from 0.206 to 0.053 on seed 10). A
    value is decoded within its bin, record by record, so a column that another one
    determines (one otolith code per fish) is spread over its bin's width: finer bins keep
    it closer, and the release's rank candidates
    (:func:`dpquery.algorithms.marginal.compress.rank_candidates`) measure the pair at the
    finer bins on as many cells as before (docs/learn.md, "The worst pair")."""
    return 2 * bins if n >= LARGE_ROWS else bins


def small_bins(bins: int) -> int:
    """The bins of a small table's numeric column: :data:`SMALL_BINS_SHARE` of ``bins``, at
    least 1 (a public constant of the learning: no data read)."""
    return max(1, round(bins * SMALL_BINS_SHARE))


def _small_edges(
    bounds: tuple[float, float], buckets: np.ndarray, noisy: np.ndarray, decimals: int,
    bins: int, zero: bool = True,
) -> list[float]:  # fmt: skip
    """A small table's bin edges from its bounds' noisy bucket counts alone (post-processing:
    no further budget). The exponential mechanism's quantiles are near-uniform draws at a
    small table's epsilon, so instead each bucket inside the bounds holding at least
    ``1 / bins`` of the noisy mass (counts clipped at 0) is split into equal-width parts in
    proportion to it, and lighter buckets are merged until they hold that much. A lower
    bound of 0 gets a bin ``[0, step)`` of its own when ``zero`` (:func:`zero_point`): the
    point mass at 0 of amounts and counts, which no probe found, beside the ``bins`` that
    share the rest of the mass (its mass merged with the buckets above cut a bin ``[1, 2)``
    holding noise alone off PUMS's incomes). Post-processing of the bounds' discrete
    Gaussian histogram (Bun and Steinke 2016, Lemma 1.8): no further cost."""
    lo, hi = bounds
    step = _step(decimals)
    counts = np.zeros(buckets.size - 1) if noisy.size == 0 else noisy  # no bounds found
    pairs = zip(buckets[:-1], buckets[1:], counts, strict=True)
    parts = [(max(float(a), lo), min(float(b), hi), max(float(c), 0.0))
             for a, b, c in pairs if a < hi and b > lo]  # fmt: skip
    edges = {lo, hi}
    if zero and lo == 0.0 and step < hi:
        edges.add(step)
        # the 0's bin, one of its own beside the ``bins`` of the rest (as a large table's
        # atoms are beside its quantiles' bins): neither merged with them nor in their target
        parts = [p for p in parts if p[0] >= step]
    total = math.fsum(c for _, _, c in parts)
    if total <= 0:
        parts = [(lo, hi, 1.0)]
        total = 1.0
    target, acc = total / bins, 0.0
    for a, b, c in parts:
        if c >= target:
            m = max(1, round(c / target))
            edges |= {a, b, *(_round(a + j * (b - a) / m, decimals) for j in range(1, m))}
            acc = 0.0
        else:
            acc += c
            if acc >= target:
                edges.add(b)
                acc = 0.0
    return sorted(e for e in edges if lo <= e <= hi)


FINE_CELLS = 1000
"""At most this many cells (as :data:`MAX_LATTICE`) in a small table's finer histogram of a band
(:func:`fine_cells`)."""
FINE_SIGMAS = 2.0
"""A finer run is kept only when its noisy mass is within this many standard deviations of
the band's in the bounds' histogram, and its cells hold on average this many noise sd
(:func:`_fine_edges`)."""
NARROW_RATIO = BOUND_ZERO_RATIO
"""A band's bounds lie within this factor of each other (:func:`narrow_band`)."""
BAND_SHARE = 0.5
"""The share of a numeric column's quantiles' rho that a table that is not small spends on a
narrow band's finer histogram (:func:`_fine_run`) before its quantiles."""


BAND_CAP = 1.0
"""A small table's band's finer histogram takes at most this many times what its column
spent first (under add/remove; replace-one 1). 4 was tried: weather_perth's pressures gained
(KS worst 0.50 to 0.26, seeds 0 to 3), Gestation's pairs lost what the release paid (0.678
to 0.661; "Tables of many columns or few rows")."""


def narrow_band(lo: float, hi: float, decimals: int, below: bool = False) -> bool:
    """Whether bounds ``[lo, hi]`` (a small table's: the ends of its buckets, before the rule
    at 0; or a large table's bounds, or its quantiles' bounds) are a band far from 0 that
    its magnitude buckets cannot cut: positive (or, with ``below``, on either side of 0),
    their magnitudes within :data:`NARROW_RATIO` of each other, and holding more than
    :data:`MAX_LATTICE` steps of the precision (a planet's discovery years 1989..2014 inside
    ``[1000, 5000]``, whose edges split the bucket ``[2000, 5000)`` into equal widths and
    put every year in one bin, KS 0.95; with ``below``, a city's longitudes, -74.25 to
    -73.70, inside ``[-100, -50]``, the mirror of it). A column spread over decades (an
    orbital period, 0.09 to 730,000 days) keeps its buckets. ``below`` is given for a table
    that is not small (its bounds and quantiles): there a column with values on both sides
    of 0 has bounds across 0, while a small table's run from the mode may stop short of 0
    on a signed column ("Signed columns around 0 in a small table"), and a finer histogram
    of such bounds piles the other side's records into the end cell next to 0 (Smarket's
    ``Lag5``, bounds ``[-2, -0.2]``, would have been cut to ``[-0.21, -0.2]``). Public: the
    private bounds and precision alone."""
    positive = 0.0 < lo and hi <= NARROW_RATIO * lo
    negative = below and hi < 0.0 and -lo <= NARROW_RATIO * -hi
    return (positive or negative) and not lattice(lo, hi, decimals)


def fine_cells(lo: float, hi: float, decimals: int, most: int = FINE_CELLS) -> np.ndarray:
    """The equal-width cells of a narrow band's finer histogram: the precision's step times
    the smallest power of 10 that cuts ``[lo, hi]`` into at most ``most`` cells (by default
    :data:`FINE_CELLS`; the years' 4,000 whole numbers of ``[1000, 5000]`` are cells of 1),
    aligned on it. With ``most`` below it (a small table's band, :func:`mass_cells`), the
    cells are the coarser of those and of the step times 1, 2 or 5 times a power of 10 that
    gives at most ``most`` cells (a factor of 10 between two widths was one of a band's
    noise), never finer than the default's: medpar's hospital codes in ``[20000, 50000]``
    keep their cells of 100, where 50 kept a run that clipped the 6% of codes at 32,000.
    Public: read off the private bounds and precision."""
    step = Decimal(1).scaleb(-decimals)
    a, b = Decimal(repr(lo)), Decimal(repr(hi))
    width = step
    while (b - a) / width > FINE_CELLS:
        width *= 10
    if most < FINE_CELLS:  # coarser where the mass asks, never finer than FINE_CELLS' cells
        fewer, i = step, 0
        while (b - a) / fewer > most:
            fewer *= (Decimal(2), Decimal("2.5"), Decimal(2))[i % 3]
            i += 1
        width = max(width, fewer)
    first, last = math.floor(a / width), math.ceil(b / width)
    return np.array([float(Decimal(u) * width) for u in range(first, last + 1)])


FINE_FILL = 16.0
"""A small table's band is cut into at most this many cells per noise sd of its noisy mass
(:func:`mass_cells`): a band whose records fill at most ``1 / (2 FINE_FILL)`` of it (a
32nd) then has cells holding on average the :data:`FINE_SIGMAS` (2) noise sd its finer
run's test asks. Tuned on seeds 0 to 3 ("Tables of many columns or few rows"; 1, 4 and 8
tried): at 1, election years of 1932 to 2020 in ``[1000, 2000]`` got cells of 200 years; at
8, codes of ``[30000, 30100)`` in ``[20000, 50000]`` (500 records) kept a bin of more than
half of them on 3 of 8 seeds (1 of 40 before), and weather_perth's pressures scored a KS
worst of 0.50 against 0.38."""
MASS_CELLS = True
"""Whether a small table's finer histogram of a band takes its cell count from the band's
noisy mass (:func:`mass_cells`) under add/remove, in place of :data:`FINE_CELLS` whatever
the mass (replace-one keeps it: its releases stay as they were)."""


def mass_cells(mass: float, rho: float, sensitivity: float) -> int:
    """The most cells a small table's finer histogram of a band (drawn at ``rho`` and L2
    ``sensitivity``) cuts it into: :data:`FINE_FILL` cells per noise sd of the band's noisy
    ``mass`` (its count in the bounds' histogram, negative as 0), at least 1 and at most
    :data:`FINE_CELLS`. At 1,000 cells a cell's noise sd near 50 (a table of 1,000 records
    and 21 columns) exceeds what most cells of a band hold (pressures of 1,001 to 1,038 hPa
    in cells of 1 hPa: 26 records a cell), so no run passed and the bounds' equal widths
    stood; 1,000 records at sd 50 take at most 320 cells (of 5 hPa over ``[1000, 2000]``,
    :func:`fine_cells`), and the run, eight cells of about 125 records (2.5 sd), holds the
    band. Public: a noisy count already charged (the bounds' histogram) and the histogram's
    ``rho``: post-processing."""
    sd = math.sqrt(float(discrete_gaussian_sigma2(rho, sensitivity)))
    return int(min(FINE_CELLS, max(1, math.floor(FINE_FILL * max(mass, 0.0) / sd))))


def band_mass(
    buckets: np.ndarray, noisy: np.ndarray, band: tuple[float, float], rho: float,
    sensitivity: float,
) -> tuple[float, float]:  # fmt: skip
    """The noisy mass of the bounds' buckets inside ``band`` (the ends of buckets) and that
    sum's sd at the histogram's noise (drawn at ``rho`` and L2 ``sensitivity``): what a finer
    run is checked against (:func:`_fine_run`). Post-processing of the bounds' counts."""
    inside = (buckets[:-1] >= band[0]) & (buckets[1:] <= band[1])
    one = discrete_gaussian_sigma2(rho, sensitivity)
    return float(noisy[inside].sum()), math.sqrt(int(inside.sum()) * one)


FAR_WINDOW_RATE = 1e-4
"""A bucket, or a run of :data:`BOUND_WINDOW` buckets, apart from the mode's occupied run (an
unoccupied bucket between) joins a large table's bounds only when its noisy count (sum)
reaches the threshold of this false rate over all the buckets (runs) (:func:`far_windows`),
not :data:`BOUND_FALSE_RATE`'s: 4.7 noise sd in place of 3.7."""


def far_windows(
    lo: float, hi: float, buckets: np.ndarray, noisy: np.ndarray, rho: float,
    sensitivity: float = BOUND_SENSITIVITY,
) -> tuple[float, float]:  # fmt: skip
    """The bounds ``(lo, hi)`` of :func:`~dpquery.privacy.quantiles.private_bounds` (drawn at
    ``rho`` and L2 ``sensitivity``) without the occupied runs of buckets apart from the
    mode's (an unoccupied bucket between) none of whose buckets reaches the threshold of
    :data:`FAR_WINDOW_RATE` alone and none of whose windows reaches it as a sum. Such a run
    took the bounds across the empty buckets between: txhousing's years 2000 to 2015
    (bucket ``[2000, 5000)``) got an upper bound of ``10^8`` from three empty buckets
    ``[10^7, 10^8)`` whose noisy sum (472) passed the window's threshold (461), a false pass
    of the test's 1%, and their quantiles spread over 0 to ``10^8``; its decimal year, on
    another draw, a lower bound of 1 from an empty bucket ``[1, 2)`` (noisy 277 against
    273), then 0, with edges 0, 0.58, ..., 48, 2500, ... (KS 0.79). A far run is as unlikely
    a priori as a sign the mode's side lacks (:data:`BOUND_CROSS_RATE`); a run next to the
    mode's (a thin tail) and a mode that is no bucket passing alone keep the bounds as they
    were, and so does a mode at 0 (the bucket ``[0, step)``): a point mass at 0 beside values
    spread orders of magnitude above it is an amount's shape, not a false pass (credit_data's
    debts, 82% of them 0, the rest spread thinly from 100 to 5,000: a window of noisy 578
    against the 1% test's 575 and the stricter rate's 745). Post-processing of the bounds'
    noisy counts (Bun and Steinke 2016, Lemma 1.8): no further cost."""
    k = buckets.size - 1
    one, (w, tw), _ = _run_tests(rho, k, sensitivity)
    single = noisy >= bucket_threshold(rho, k, BOUND_FALSE_RATE, sensitivity)
    mode = int(np.argmax(noisy))  # the first of equal maxima: a public tie rule
    if noisy.size < w or not single[mode] or buckets[mode] == 0.0:
        return lo, hi
    strict = partition_threshold(one * w, FAR_WINDOW_RATE / max(1, k - w + 1))
    ones = np.ones(w, dtype=np.int64)
    sums = np.convolve(noisy, ones, "valid")  # as private_bounds reads them
    alone = np.convolve(single.astype(np.int64), ones, "valid") > 0
    occupied = single.copy()
    strong = noisy >= bucket_threshold(rho, k, FAR_WINDOW_RATE, sensitivity)
    for r in np.flatnonzero((sums >= tw) & ~alone):
        occupied[r : r + w] = True
        strong[r : r + w] |= bool(sums[r] >= strict)
    first, last = mode, mode  # the mode's occupied run
    while first > 0 and occupied[first - 1]:
        first -= 1
    while last < k - 1 and occupied[last + 1]:
        last += 1
    kept = [first, last]
    i = 0
    while i < k:  # each other occupied run joins by a strong bucket or window only
        if not occupied[i] or first <= i <= last:
            i += 1
            continue
        j = i
        while j + 1 < k and occupied[j + 1]:
            j += 1
        if strong[i : j + 1].any():
            kept += [i, j]
        i = j + 1
    return float(buckets[min(kept)]), float(buckets[max(kept) + 1])


def _fine_draw(
    name: str, values: np.ndarray, rho: float, decimals: int, bounds: tuple[float, float],
    ctx: _Context, outer: tuple[float, float] | None = None, most: int = FINE_CELLS,
) -> tuple[np.ndarray, np.ndarray, bool, bool] | None:  # fmt: skip
    """A narrow band's finer histogram at ``rho`` (:func:`_fine_run`): its cells, their noisy
    counts, and whether a core's outer cell lies below and above; None when
    :func:`private_bounds` draws nothing."""
    cells = fine_cells(*bounds, decimals, most)
    lower = outer is not None and outer[0] < cells[0]
    upper = outer is not None and outer[1] > cells[-1]
    if outer is not None:
        cells = np.concatenate([[outer[0]] if lower else [], cells, [outer[1]] if upper else []])
    _, window, grow = _run_tests(rho, cells.size - 1, ctx.l2)
    drawn = private_bounds(
        values, rho=rho, threshold=SPREAD_MODE, rng=ctx.rng, ledger=ctx.ledger, edges=cells,
        window=window, grow=grow, name=f"{name}: finer bounds (discrete Gaussian histogram)",
        sensitivity=ctx.l2,
    )  # fmt: skip
    return None if drawn is None else (cells, drawn[2], lower, upper)


def _fine_run(
    name: str, values: np.ndarray, rho: float, decimals: int, bounds: tuple[float, float],
    band: tuple[float, float], ctx: _Context, outer: tuple[float, float] | None = None,
    most: int = FINE_CELLS,
) -> tuple[tuple[float, float], np.ndarray, np.ndarray, bool] | None:  # fmt: skip
    """A narrow band's run of finer cells (:func:`fine_cells`) at ``rho``: the bounds'
    discrete Gaussian histogram (:func:`private_bounds`, charged before it draws) on those
    cells, its run grown from the mode as a small table's bounds are (:func:`spread_run`);
    the run's ends, the cells, their noisy counts and whether the run is kept
    (:func:`_run_kept`). None when no cell passes the mode's test. The same mechanism as the
    bounds', on other public cells: a record counts in one cell (L2 ``ctx.l2``),
    ``rho``-zCDP (CKS 2020, Theorem 4); the rest is post-processing.

    ``outer``: the column's bounds when ``bounds`` is their core (:func:`step_core`): their
    parts outside the core are a cell each, so that the values there count in them, not in
    the core's end cells (a run of one end cell holding every fare above 10 passed the mass
    test); a run reaching either is not kept (the bounds and their edges stay). ``most``:
    the most cells over ``bounds`` (:func:`fine_cells`)."""
    drawn = _fine_draw(name, values, rho, decimals, bounds, ctx, outer, most)
    if drawn is None:
        return None
    cells, noisy, lower, upper = drawn
    found = _run_kept(noisy, cells, rho, ctx.l2, band, lower, upper)
    return None if found is None else (found[0], cells, noisy, found[1])


def _run_kept(
    noisy: np.ndarray, cells: np.ndarray, rho: float, sensitivity: float,
    band: tuple[float, float], lower: bool, upper: bool,
) -> tuple[tuple[float, float], bool] | None:  # fmt: skip
    """The run grown from the mode of a histogram at ``rho`` on ``cells`` (:func:`spread_run`)
    and whether it is kept; None when no cell passes the mode's test. Not kept when the
    run's noisy mass falls short of the band's (``band``: its noisy mass in the bounds'
    histogram and that sum's sd, :func:`band_mass`) by more than :data:`FINE_SIGMAS` sd of
    the difference: the run would clip the rest (a fare's peak at 7 to 9 in a band ``[5,
    50]``); or when its cells hold on average less than :data:`FINE_SIGMAS` noise sd: edges
    placed by such counts follow the noise (a penguin's body mass, 344 values over 360
    cells of 10 g); or when it reaches a core's outer cell (``lower``, ``upper``).
    Post-processing of the noisy counts."""
    k = cells.size - 1
    one, window, grow = _run_tests(rho, k, sensitivity)
    mode = bucket_threshold(rho, k, BOUND_FALSE_RATE, sensitivity)
    run = spread_run(noisy, cells, mode, grow, window)
    if run is None:
        return None
    mass = float(noisy[run[0] : run[1] + 1].sum())
    width = run[1] - run[0] + 1
    sd = math.sqrt(width * float(one) + band[1] ** 2)
    kept = not (mass < band[0] - FINE_SIGMAS * sd or mass < width * FINE_SIGMAS * math.sqrt(one))
    kept = kept and not ((lower and run[0] == 0) or (upper and run[1] == k - 1))
    return (float(cells[run[0]]), float(cells[run[1] + 1])), kept


SHORT_RUN = True
"""Whether a small table's finer run that falls short of its band's noisy mass keeps its
edges inside the band, the band's parts outside the run a bin each (:func:`short_run`),
in place of the band's magnitude buckets cut in equal widths."""


def short_run(
    fine: tuple[float, float], cells: np.ndarray, noisy: np.ndarray, band: tuple[float, float],
    held: float, rho: float, sensitivity: float, bins: int,
) -> bool:  # fmt: skip
    """Whether a finer run ``fine`` that :func:`_fine_run` did not keep is kept as a short
    run: inside the band ``band`` (not reaching a cell outside a core), its cells holding on
    average :data:`FINE_SIGMAS` noise sd (the histogram's, drawn at ``rho`` and L2
    ``sensitivity`` on ``cells``), and the band's noisy mass in the bounds' histogram
    (``held``) above the run's by at most ``1 / bins`` of it: the rest fills at most one of
    the ``bins`` equal-mass bins the band would be cut into, so a bin of its own a side
    holds it, as :func:`_small_edges` merges light buckets. Hospital codes ``030001`` to
    ``030094`` (1,445 records) and ``032000`` to ``032003`` (50) in bounds ``[20000,
    50000]``: the run ``[30000, 30100]``, 1,362 noisy against the band's 1,482 (2.1 sd of the
    difference), was not kept, and the band's bucket cut into 8 equal widths put every code
    in one bin ``[27500, 31250)`` (a KS of 0.61). A fare's peak at 7 to 9 in a band ``[5,
    50]`` holds far less than ``1 - 1 / bins`` of it: its buckets stay. Post-processing of
    the two histograms' noisy counts (Bun and Steinke 2016, Lemma 1.8): no further cost."""
    if not band[0] <= fine[0] < fine[1] <= band[1]:
        return False
    first = int(np.searchsorted(cells, fine[0]))
    last = int(np.searchsorted(cells, fine[1])) - 1
    mass = float(noisy[first : last + 1].sum())
    sd = math.sqrt(float(discrete_gaussian_sigma2(rho, sensitivity)))
    if mass < (last - first + 1) * FINE_SIGMAS * sd:
        return False
    return held - mass <= held / bins


GAPPED_RUNS = True
"""Whether a small table's finer run that is neither kept nor a short run, of a band that
holds the column's numbers (:func:`whole_band`), is looked for again on coarser cells, the
finer histogram's noisy counts summed ``f`` cells at a time (:func:`coarser_run`, for ``f``
in :data:`COARSER_FACTORS`; add/remove alone, so that replace-one releases stay as they
were): a band whose values sit on a few points with empty cells between them (hospitals'
latitudes, 22 values in ``[37.3, 40.42]`` of ``[20, 50]``, cells of 0.1) breaks the run from
the mode at the first empty cell, and the band's buckets cut in equal widths put every value
in one or two bins (KS 0.34 to 0.74). A run kept on coarser cells gives the band's edges
inside it, the band's parts outside it a bin a side (as a short run's), so that a thin tail
the run left out (a life expectancy's ends) is kept, not clipped."""
COARSER_FACTORS = (2, 5, 10, 20, 50, 100)
"""The numbers of finer cells summed into one, tried in this order (:data:`GAPPED_RUNS`)."""
GAPPED_REST = 0.25
"""A gapped run (:func:`coarser_run`) leaves at most this share of the band's noisy mass to
the band's parts outside it (a bin a side). The run test's 2 sd grow with the sums' noise
(a sum of 20 cells has sd 185 records in a table of 2,261): a stock's daily highs, 90 to
270 in ``[50, 500]``, kept a run ``[190, 270]`` holding 1,565 of the band's 2,307 noisy
records, and the bin below it held 57% of the values (KS 0.10 to 0.17 on the bins alone).
A quarter (2 of a small table's 8 bins) keeps a state's hospitals' latitudes (1,196 of
1,459 noisy records in ``[37, 40]``)."""
COARSER_MIN_CELLS = 8
"""The fewest summed cells a band is looked at in (:func:`coarser_cells`): a small table's
bins (:func:`small_bins` of the default 16)."""
POINT_BANDS = True
"""Whether a gapped run (:func:`coarser_run`) is kept only when the finer cells inside it
are rougher than noise on a smooth profile (:func:`point_band`): a band of a few point
masses with empty cells between them (a state's hospitals' latitudes), not a smooth band
whose finer run missed the band's mass by noise alone (a vote share, a trading volume),
which a run holding three quarters of it cut worse than the band's buckets did."""
ROUGH_SIGMAS = 2.0
"""A gapped run's finer cells are points when their roughness (:func:`roughness`) exceeds
its mean on a smooth profile, 1, by this many of its sd there, ``sqrt(3 / (w - 1))``."""
POINT_CELLS = True
"""Whether a band whose gapped run was kept as points (:data:`POINT_BANDS`) is decoded at its
finer histogram's cells (:func:`point_weights`, ``Numeric.density`` ``"cells"``) in place
of a density over each bin: a bin holding three hospitals spread them over its width, a KS
of 0.16 to 0.30 on the medicare tables' latitudes and zip codes."""
POINT_SIGMAS = 1.0
"""A point band's finer cell is decoded as holding records when its noisy count reaches
this many noise sd (:func:`point_weights`): below it an empty cell's noise, clipped at 0,
would take on average 0.4 sd (a third of a bin's mass when it holds 3 points of 100
records in 30 cells of noise sd 41), above it 0.24 sd. Tuned on the small medicare tables
``NV``, ``WV``, ``OK``, ``CO``, seeds 0 to 3 (0, 1, 2 and 3 tried; docs/learn.md, "Points
decoded as points")."""
POINT_SPLIT = 10
"""Equal sub-bins per finer cell met in a point band's bin whose ends cut cells
(:func:`point_weights`): a point is then decoded within about a tenth of a cell beyond its
own."""


SMALL_BELOW = True
"""Whether a small table's band below 0 that holds its column's numbers (:func:`whole_band`)
is a narrow band (:func:`narrow_band` with ``below``), its finer histogram drawn from the
pool as a band above 0's (add/remove alone): a state's hospitals' longitudes, -91.5 to
-89.9 in ``[-100, -50]``, were cut into the bucket's equal widths, one or two bins holding
every value. Bounds that stop short of 0 on a signed column hold only one side of its
numbers and are left as they were."""


def whole_band(band: tuple[float, float], numbers: tuple[float, float]) -> bool:
    """Whether a band's noisy mass in the bounds' histogram (``band``: the sum and its sd,
    :func:`band_mass`) holds the column's noisy count of numbers (``numbers``: the profile's,
    and its sd) within :data:`FINE_SIGMAS` sd of their difference: no side of the column lies
    outside the band. A small table's run from the mode may stop short of 0 on a signed
    column (a mesh's coordinate from -16.7 to 75.6 bounded ``[20, 100]``), and a run inside
    such a band that holds the band's mass clips every value outside it (the coordinate
    released in ``[62, 70]``, a KS of 0.67). Post-processing of two noisy counts already
    charged (the profile's and the bounds' discrete Gaussians): no further cost."""
    return numbers[0] - band[0] <= FINE_SIGMAS * math.hypot(band[1], numbers[1])


def coarser_cells(
    cells: np.ndarray, noisy: np.ndarray, factor: int, lower: bool, upper: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """The finer histogram's cells and noisy counts with ``factor`` neighbouring cells summed
    into one, from the band's lower end (the last may sum fewer); a core's outer cells
    (``lower``, ``upper``) stay cells of their own. None when fewer than
    :data:`COARSER_MIN_CELLS` summed cells would remain: no run of them could cut the band
    finer than its bins. A sum of noisy counts already drawn: post-processing (Bun and
    Steinke 2016, Lemma 1.8), no further cost; each sum's noise variance is ``factor``
    times a cell's, that of a histogram at ``rho / factor`` (the run's tests are read at
    that rho)."""
    last = len(noisy) - int(upper)
    inner = noisy[int(lower) : last]
    if -(-inner.size // factor) < COARSER_MIN_CELLS:
        return None
    starts = np.arange(0, inner.size, factor)
    sums = np.add.reduceat(inner, starts)
    edges = cells[int(lower) : last + 1]
    inner_edges = np.concatenate([edges[starts], edges[-1:]])
    out_cells = np.concatenate(
        [cells[:1] if lower else [], inner_edges, cells[-1:] if upper else []]
    )
    out_noisy = np.concatenate([noisy[:1] if lower else [], sums, noisy[-1:] if upper else []])
    return out_cells, out_noisy.astype(noisy.dtype)


def coarser_run(
    cells: np.ndarray, noisy: np.ndarray, rho: float, sensitivity: float,
    band: tuple[float, float], lower: bool, upper: bool,
) -> tuple[tuple[float, float], np.ndarray, np.ndarray] | None:  # fmt: skip
    """The first run kept (:func:`_run_kept`) on the finer histogram's cells summed ``f`` at
    a time, ``f`` in :data:`COARSER_FACTORS` (:func:`coarser_cells`; the sums' tests read at
    ``rho / f``) whose noisy mass falls short of the band's (``band[0]``) by at most
    :data:`GAPPED_REST` of it: its ends, the summed cells and counts; None when none is.
    Post-processing of the finer histogram's noisy counts: no further cost."""
    for factor in COARSER_FACTORS:
        merged = coarser_cells(cells, noisy, factor, lower, upper)
        if merged is None:
            return None
        wide = _run_kept(merged[1], merged[0], rho / factor, sensitivity, band, lower, upper)
        if wide is None or not wide[1]:
            continue
        inside = (merged[0][:-1] >= wide[0][0]) & (merged[0][1:] <= wide[0][1])
        if band[0] - float(merged[1][inside].sum()) <= GAPPED_REST * band[0]:
            fine = (cells[:-1] >= wide[0][0]) & (cells[1:] <= wide[0][1])
            sigma2 = float(discrete_gaussian_sigma2(rho, sensitivity))
            if POINT_BANDS and not point_band(noisy[fine], sigma2):
                return None  # a smooth band: its buckets' equal widths stand
            return wide[0], merged[0], merged[1]
    return None


def roughness(noisy: np.ndarray, sigma2: float) -> float:
    """The mean squared difference of neighbouring cells' noisy counts over twice the noise
    variance ``sigma2`` (von Neumann's ratio, its variance known): on a smooth profile, whose
    true counts change little from one finer cell to the next against the noise, each
    difference is two cells' noise, variance ``2 sigma2``, so the ratio has mean 1; a point
    of ``c`` records beside an empty cell adds about ``c^2`` to two differences. Fewer than
    two cells: 0. Post-processing of noisy counts already drawn."""
    if noisy.size < 2:
        return 0.0
    steps = np.diff(noisy.astype(np.float64))
    return float(np.mean(steps * steps) / (2.0 * sigma2))


def point_band(noisy: np.ndarray, sigma2: float) -> bool:
    """Whether the finer cells inside a gapped run (their noisy counts ``noisy``, noise
    variance ``sigma2``) hold a few point masses with gaps between them rather than a smooth
    profile: their :func:`roughness` exceeds 1 by :data:`ROUGH_SIGMAS` of its sd on a
    smooth profile. There, with ``w`` cells, the ``w - 1`` squared differences over ``2
    sigma2`` are chi-square(1) terms of variance 2, each correlated with the next (the
    shared cell: correlation -1/2, so their squares' covariance 2 (1/2)^2 = 1/2), so the
    ratio's variance is ``(2 (w - 1) + (w - 2)) / (w - 1)^2``, about ``3 / (w - 1)``; the
    test's false rate on a flat profile is about 2.5% (one-sided 2 sd, a chi-square's right
    skew adding some). The medicare tables' latitudes, longitudes and zip codes (10 to 60
    hospitals, 30 to 300 records each, noise sd 41 to 48) measured 1.5 to 103, 2.8 to 157 of
    its sd above 1; vote shares, trading volumes, prices, sample sizes and payments 0.5 to
    1.8, at most 2.1 sd (docs/learn.md, "Points in a band far from 0 in a small table").
    Post-processing of the finer histogram's noisy counts (Bun and Steinke 2016, Lemma
    1.8): no further cost."""
    w = noisy.size
    if w < 2:
        return False
    return roughness(noisy, sigma2) > 1.0 + ROUGH_SIGMAS * math.sqrt(3.0 / (w - 1))


def point_weights(
    edges: tuple[float, ...], cells: np.ndarray, noisy: np.ndarray, sigma2: float
) -> tuple[tuple[float, ...], ...] | None:
    """Decoding weights (``Numeric.within``, read as ``density="cells"``) of a band of point
    masses over its bins ``edges``: in each bin, the finer cells it meets (edges ``cells``,
    noisy counts ``noisy`` at noise variance ``sigma2``) weighted by the counts that reach
    :data:`POINT_SIGMAS` noise sd (the others 0), or, in a bin where none does, by the
    counts clipped at 0 (equal weights when all are 0), each spread evenly over its cell.
    A bin that is a run of whole cells gets one sub-bin a cell; one whose ends cut cells
    (a heavy sum of cells cut into equal widths by :func:`_small_edges`) :data:`POINT_SPLIT`
    times as many equal sub-bins as the cells it meets, each weighted by the cells' mass
    over it.
    A bin beyond the cells is one sub-bin, decoded uniformly; None when every bin is.
    Post-processing of the finer histogram's noisy counts, already drawn and charged (Bun
    and Steinke 2016, Lemma 1.8): no further cost, no draw."""
    bar = POINT_SIGMAS * math.sqrt(sigma2)
    weights: list[tuple[float, ...]] = []
    for a, b in itertools.pairwise(edges):
        first = int(np.searchsorted(cells, a, side="right")) - 1  # the cell holding a
        last = int(np.searchsorted(cells, b, side="left"))  # the cell edge at or above b
        if first < 0 or last >= cells.size:
            weights.append((1.0,))
            continue
        y = np.asarray(noisy[first:last], dtype=np.float64)
        w = np.where(y >= bar, y, 0.0)
        if not w.any():
            w = np.clip(y, 0.0, None)
        if not w.any():
            w = np.ones_like(y)
        whole = cells[first] == a and cells[last] == b
        k = y.size * (1 if whole else POINT_SPLIT)
        # each cell's weight spread evenly over it: the mass below x, read at the sub-bins
        below = np.interp(np.linspace(a, b, k + 1), cells[first : last + 1],
                          np.concatenate([[0.0], np.cumsum(w)]))  # fmt: skip
        weights.append(tuple(np.clip(np.diff(below), 0.0, None).tolist()))
    return None if all(len(w) == 1 for w in weights) else tuple(weights)


def point_cells(numeric: Numeric, cells: np.ndarray, noisy: np.ndarray, sigma2: float) -> Numeric:
    """A band of point masses (a gapped run kept by :func:`point_band`) decoded at its finer
    cells (:data:`POINT_CELLS`): its bins' weights :func:`point_weights`, read as
    ``density="cells"``, its edges as they were (so the release draws the same records);
    ``numeric`` itself when no bin meets the cells. Post-processing of noisy counts already
    charged: no further cost."""
    weights = point_weights(numeric.edges, cells, noisy, sigma2)
    if weights is None:
        return numeric
    return replace(numeric, within=weights, density="cells")


FineCells = tuple[np.ndarray, np.ndarray]
"""A finer histogram: its cells' edges and their noisy counts."""


def _fine_edges(
    name: str, values: np.ndarray, rho: float, decimals: int, bounds: tuple[float, float],
    band: tuple[float, float], ctx: _Context, outer: tuple[float, float] | None = None,
    held: float | None = None, most: int = FINE_CELLS, whole: bool = False,
) -> tuple[tuple[float, float], list[float], bool, FineCells | None] | None:  # fmt: skip
    """A small table's narrow band's bounds and edges from a finer histogram at ``rho``: the
    run of :func:`_fine_run` (None when it finds none and no gapped run either: the bounds
    and edges stay as they were), cut into edges by its noisy counts (:func:`_small_edges`,
    post-processing), and whether the run is the bounds. A run not kept that is a short run
    (:func:`short_run`, with ``held`` the band's noisy mass in the bounds' histogram;
    :data:`SHORT_RUN`) gives its edges and the band's ``bounds`` as the outer edges (False),
    the rest of the band a bin a side. One that is neither, of a band that holds the
    column's numbers (``whole``, :func:`whole_band`), is looked for again on coarser cells
    under add/remove (:func:`coarser_run`, :data:`GAPPED_RUNS`), read as a short run.
    ``most``: the most cells over ``bounds`` (:func:`mass_cells`). Last, with a gapped
    run (a band of points, :data:`POINT_BANDS`, :data:`POINT_CELLS`): the finer cells'
    edges and their noisy counts (:func:`point_cells`); None otherwise."""
    drawn = _fine_draw(name, values, rho, decimals, bounds, ctx, outer, most)
    if drawn is None:
        return None
    cells, noisy, lower, upper = drawn
    found = _run_kept(noisy, cells, rho, ctx.l2, band, lower, upper)
    bins = small_bins(ctx.bins)
    if found is not None and found[1]:
        return found[0], _small_edges(found[0], cells, noisy, decimals, bins), True, None
    if (
        found is not None
        and SHORT_RUN
        and held is not None
        and short_run(found[0], cells, noisy, bounds, held, rho, ctx.l2, bins)
    ):
        inner = _small_edges(found[0], cells, noisy, decimals, bins)
        return found[0], sorted({bounds[0], *inner, bounds[1]}), False, None
    if GAPPED_RUNS and whole and ctx.add_remove:  # replace-one's releases stay as they were
        wide = coarser_run(cells, noisy, rho, ctx.l2, band, lower, upper)
        if wide is not None:
            inner = _small_edges(wide[0], wide[1], wide[2], decimals, bins)
            points = (cells, noisy) if POINT_CELLS and POINT_BANDS else None
            return wide[0], sorted({bounds[0], *inner, bounds[1]}), False, points
    return None


def _round(x: float, decimals: int) -> float:
    return float(round(Decimal(repr(x)), decimals))


def _atoms(sel: Selection | None, present: int, decimals: int) -> list[float]:
    """The probe's released numbers holding at least :data:`ATOM_SHARE` of the noisy
    non-missing values and at least :data:`ATOM_PEAK` times the noisy count of each value
    one step away that the probe released (one it did not release counts 0) and that is not
    itself an atom, rounded to the precision (post-processing of the probe). Values are
    taken from the most frequent down, so a neighbour that is an atom has been decided
    first. A point mass stands above its neighbours, or beside a larger one; a smooth run of
    frequent integers (ages) does not, and is left to the quantiles' bins."""
    if sel is None:
        return []
    counts: dict[int, int] = {}  # the value in steps of the precision -> its noisy count
    for key, count in sel.released.items():
        if key == _MISSING:
            continue
        _, x, _ = _cell(key)
        if x is not None:
            units = round(Decimal(repr(x)).scaleb(decimals))
            counts[units] = counts.get(units, 0) + count
    taken: set[int] = set()
    # the most frequent first: a neighbour already taken as an atom is a point mass of its
    # own, not a run this value belongs to (KDD Cup's 510 connections beside the 511 that
    # nearly half the records hold: a point mass too, which a quantile bin spread over
    # [240, 511), a KS of 0.06)
    for units, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        beside = max((counts.get(u, 0) for u in (units - 1, units + 1) if u not in taken),
                     default=0)  # fmt: skip
        if count >= ATOM_SHARE * present and count >= ATOM_PEAK * beside:
            taken.add(units)
    return sorted(float(Decimal(u).scaleb(-decimals)) for u in taken)


def exact_atoms(sel: Selection | None, atoms: list[float], decimals: int) -> dict[float, float]:
    """The exact value of each atom (:func:`_atoms`) whose released value is written with
    more decimals than the precision: among the probe's released numbers that round to the
    atom, the one of the largest noisy count (the smallest of equal counts), when it is not
    a multiple of the precision's step. A key partition selection released is public text,
    and so is its value (post-processing of the probe: no data, no cost); an atom not
    released by the probe (the rule at 0's) has none. The atom's bin is then the step of
    the precision holding that value (:func:`atom_cell`), which must not be another atom's:
    one of two atoms one step apart keeps its rounded value."""
    if sel is None or decimals == 0 or not atoms:
        return {}
    wanted = {round(Decimal(repr(a)).scaleb(decimals)): a for a in atoms}
    best: dict[int, tuple[int, float]] = {}  # an atom's units -> (noisy count, value)
    counts: dict[float, int] = {}
    for key, count in sel.released.items():
        if key != _MISSING and (x := _cell(key)[1]) is not None:
            counts[x] = counts.get(x, 0) + count  # "3.2705" and "3.27050": one value
    for x, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):  # the largest first
        units = round(Decimal(repr(x)).scaleb(decimals))
        if units in wanted and units not in best:
            best[units] = (count, x)
    cells = {a: a for a in atoms}  # each atom's bin, by its lower end
    exact: dict[float, float] = {}
    for units, (_, x) in sorted(best.items()):
        a = wanted[units]
        cell = atom_cell(x, decimals)
        if x != a and cell not in {c for b, c in cells.items() if b != a}:
            cells[a] = cell
            exact[a] = x
    return exact


def atom_cell(x: float, decimals: int) -> float:
    """The lower end of the step of the precision holding ``x`` (``x`` itself when it is a
    multiple of the step): an atom's bin is ``[cell, cell + 10^-decimals)``, so the encoder
    puts the value there (3.270499657768651 at 4 decimals: ``[3.2704, 3.2705)``)."""
    step = Decimal(1).scaleb(-decimals)
    return float(Decimal(repr(x)).quantize(step, rounding=ROUND_FLOOR))


CAP_SIGMAS = 2.0
"""An atom on the top bucket's lower edge ends the bounds when its noisy count holds this many
noise sd and the buckets' rest (their noisy count less the atom's) at most this many sd of
their difference's noise (:func:`on_edge`; docs/learn.md, "A maximum on a bucket's edge")."""


def atom_run(
    buckets: np.ndarray, bounds: tuple[float, float], atoms: list[float]
) -> tuple[int, int] | None:
    """The buckets ``j..top`` from the largest atom on a bucket's lower edge (above the lower
    bound and 0) up to the upper bound, the end of bucket ``top``; None when no atom is on an
    edge or the bound is not a bucket's end. Public: the buckets, the bounds and the atoms
    (post-processing of the probe)."""
    lo, hi = bounds
    top = int(np.searchsorted(buckets, hi)) - 1
    if top < 0 or top + 1 >= buckets.size or float(buckets[top + 1]) != hi:
        return None
    on = [a for a in atoms if a > max(lo, 0.0) and a < hi and a in set(buckets.tolist())]
    if not on:
        return None
    j = int(np.searchsorted(buckets, max(on)))
    return j, top


def on_edge(top: float, top_sigma2: float, at: float, at_sigma2: float) -> bool:
    """Whether a top bucket's mass sits on its lower edge: the noisy count of the values at
    the edge (``at``, noise variance ``at_sigma2``) holds :data:`CAP_SIGMAS` noise sd, and the
    bucket's noisy count less it (``top``, variance ``top_sigma2``) holds at most
    :data:`CAP_SIGMAS` sd of the difference's noise. Post-processing of the two counts."""
    if at < CAP_SIGMAS * math.sqrt(at_sigma2):
        return False
    return top - at <= CAP_SIGMAS * math.sqrt(top_sigma2 + at_sigma2)


def cap_end(cap: float, decimals: int) -> float:
    """The end of a cap's own bin ``[cap, cap + step]`` at the precision: the bounds' end when
    the maximum is on a bucket's edge (the last bin; decoded as the cap exactly,
    ``Numeric.exact``)."""
    return float(Decimal(repr(cap)) + Decimal(1).scaleb(-decimals))


def _edge_cap(
    probe: Selection, buckets: np.ndarray, noisy: np.ndarray, bounds: tuple[float, float],
    atoms: list[float], decimals: int, bucket_sigma2: float,
) -> float | None:  # fmt: skip
    """The atom on a bucket's lower edge that holds the noisy mass of the buckets from its
    own up to the bound (:func:`atom_run`, :func:`on_edge`; ``bucket_sigma2`` a bucket's noise
    variance), or None. Post-processing of the bounds' and the probe's noisy counts."""
    run = atom_run(buckets, bounds, atoms)
    if run is None:
        return None
    j, last = run
    at = _released_count(probe, float(buckets[j]), decimals)
    if at is None:
        return None
    mass = float(np.sum(noisy[j : last + 1]))
    held = on_edge(mass, (last - j + 1) * bucket_sigma2, at, float(probe.sigma2))
    return float(buckets[j]) if held else None


SOLE_ATOM = True
"""Whether a column whose numbers one atom holds is learned as that atom's bin alone
(:func:`_sole_atom`; a table that is not small)."""


def _sole_atom(
    probe: Selection, atoms: list[float], decimals: int, numbers: float, numbers_sigma2: float
) -> float | None:
    """The atom holding all of a column's numbers, or None: the largest atom's noisy count in
    the probe holds :data:`CAP_SIGMAS` of its noise sd, and the profile's noisy count of
    numbers (``numbers``, noise variance ``numbers_sigma2``) less it at most
    :data:`CAP_SIGMAS` sd of the difference's noise (:func:`on_edge`, the same test): a
    constant column (a gross margin of 4.761904762 in every record). Post-processing of the
    probe's and the profile's noisy counts."""
    if not SOLE_ATOM:
        return None
    counts = {a: _released_count(probe, a, decimals) for a in atoms}
    held = {a: c for a, c in counts.items() if c is not None}
    if not held:
        return None
    a = max(held, key=lambda k: (held[k], -k))
    return a if on_edge(numbers, numbers_sigma2, held[a], float(probe.sigma2)) else None


def _released_count(sel: Selection, value: float, decimals: int) -> int | None:
    """The probe's noisy count of the numbers rounding to ``value`` at the precision (its
    released keys only; None when none was released). Post-processing of the probe."""
    units = round(Decimal(repr(value)).scaleb(decimals))
    counts = [c for key, c in sel.released.items() if key != _MISSING
              and (x := _cell(key)[1]) is not None
              and round(Decimal(repr(x)).scaleb(decimals)) == units]  # fmt: skip
    return sum(counts) if counts else None


MAX_LATTICE = 1000
"""Bounds holding at most this many values of the column's precision take every one of them
as a quantile candidate (:func:`quantile_candidates`)."""


def quantile_candidates(
    lo: float, hi: float, decimals: int, fine: bool = True, inner: tuple[float, float] | None = None
) -> np.ndarray:
    """The public candidates of a column's quantiles inside its private bounds ``[lo, hi]``:
    the bounds and the log grid's points between them (:func:`signed_log_grid`, 1-10%
    relative resolution), and, when the bounds do not reach 0 and hold at most
    :data:`MAX_LATTICE` values of the column's precision (``10^-decimals``), every one of
    them (:func:`lattice`). A column whose values lie
    in a narrow range far from 0 needs the lattice: a diamond's depth of 58.0 to 65.0 (one
    decimal) had grid points at whole numbers only, its 15 quantiles collapsed onto 7 edges.
    Read off the private bounds and precision alone (post-processing): no data, no cost. A
    lattice is capped because each candidate far from the data still draws a little of the
    exponential mechanism's mass. Bounds that are a band far from 0 with more steps than
    that (:func:`narrow_band`) take the band's equal-width cells (:func:`fine_cells`, at
    most :data:`FINE_CELLS`) inside them: txhousing's decimal year 2000.0 to 2015.5 in
    bounds ``[2000, 5000]`` lay between the grid's 2000 and 2100, and each quantile above
    the data was drawn among the equal scores of the grid's 30 points (edges 2000, 3100,
    3200, ..., 5000; a released median year of 2070). ``inner``: a finer run inside the
    bounds that fell short of their mass (:func:`_fine_run`; the bounds stay, lest they clip
    the rest), whose own fine cells are then the candidates in place of the band's.
    ``fine=False``: the bounds and the grid alone. The grid reaches ``9.9 10^15`` for bounds
    beyond ``+-10^10`` (:data:`FAR_EXPONENT`), ``9.9 10^9`` else."""
    # the grid's points beyond +-10^10 only for bounds beyond it (the far buckets'): within
    # it they would lie outside the bounds and be dropped anyway
    top = FAR_EXPONENT if max(-lo, hi) > NEAR_LIMIT else 9
    # a scientific column's grid reaches 10^-12 (SCIENTIFIC_DECIMALS); any other's 10^-4
    low = -4 if decimals <= MAX_LEARNED_DECIMALS else 2 - decimals
    grid = signed_log_grid(min_exponent=low, max_exponent=top, decimals=decimals)
    points: list[np.ndarray] = [np.array([lo, hi]), grid[(grid > lo) & (grid < hi)]]
    if fine and lattice(lo, hi, decimals):
        step = Decimal(1).scaleb(-decimals)
        first, last = Decimal(repr(lo)) / step, Decimal(repr(hi)) / step
        units = np.arange(math.ceil(first), math.floor(last) + 1)
        points.append(np.array([float(Decimal(int(u)) * step) for u in units]))
    elif fine and narrow_band(lo, hi, decimals, below=True):  # only a large table's quantiles
        # the band's cells, or those of a finer run inside it (_fine_run; public too): the
        # band's own cells far from the data would draw the quantiles above it
        cells = fine_cells(*(inner or (lo, hi)), decimals)
        points.append(cells[(cells > lo) & (cells < hi)])
    return np.unique(np.concatenate(points))


def lattice(lo: float, hi: float, decimals: int) -> bool:
    """Whether the quantiles take the precision's lattice (:func:`quantile_candidates`): the
    bounds ``[lo, hi]`` do not reach 0 and hold at most :data:`MAX_LATTICE` steps of the
    precision. Bounds that do not reach 0 lie within a factor of :data:`BOUND_ZERO_RATIO` of
    each other (else the lower one is taken to 0), where the log grid has few points for the
    spread of the values; from 0 up the grid is finest where most values of a skewed column
    are, and the lattice's further candidates only spread the exponential mechanism's mass
    (KDD Cup's connection counts 0..511 on a 42-column share: pairs 0.989 to 0.987)."""
    if lo <= 0.0 <= hi:
        return False
    step = Decimal(1).scaleb(-decimals)
    return (Decimal(repr(hi)) - Decimal(repr(lo))) / step <= MAX_LATTICE


def _edges(
    name: str, col: _Column, rho: float, bounds: tuple[float, float], decimals: int,
    atoms: list[float], ctx: _Context, inner: tuple[float, float] | None = None,
    exact: Mapping[float, float] | None = None,
) -> list[float]:  # fmt: skip
    """The bounds, a bin ``[v, v + step)`` per atom ``v`` (per exact value of an atom,
    ``exact``, the step holding it: :func:`atom_cell`), and ``bins - 1`` quantiles of the
    values that are not atoms (the exponential mechanism, score sensitivity 1 under
    replace-one and ``max(alpha, 1 - alpha)`` under add/remove: whether a record is an atom
    depends on that record and the public atoms alone)."""
    lo, hi = bounds
    candidates = quantile_candidates(lo, hi, decimals, inner=inner)
    alphas = [i / ctx.bins for i in range(1, ctx.bins)]
    if ctx.bins > 1 and candidates.size > quantile_candidates(lo, hi, decimals, False).size:
        # the lattice's exact quantiles leave each end bin 1/bins of the values spread to a
        # bound that can lie a bucket beyond them: half-bins at the ends keep that mass near
        # the data (only where the lattice adds candidates: a column the grid already served,
        # ages, is as it was)
        alphas = [0.5 / ctx.bins, *alphas, 1 - 0.5 / ctx.bins]
    values = col.numbers
    if atoms:
        scaled = np.round(values * 10.0**decimals)
        values = values[~np.isin(scaled, np.round(np.asarray(atoms) * 10.0**decimals))]
    picks: list[float] = []
    if alphas:
        eps = quantile_epsilon(rho, len(alphas))
        picks = [float(x) for x in private_quantiles(
            values, candidates, alphas, epsilon=eps, rng=ctx.rng, ledger=ctx.ledger,
            name=f"{name}: quantiles (exponential mechanism)", add_remove=ctx.add_remove,
        )]  # fmt: skip
    step = _step(decimals)
    exact = exact or {}
    cells = [atom_cell(exact[v], decimals) if v in exact else v for v in atoms]
    around = [float(Decimal(repr(v)) + Decimal(repr(step))) for v in cells]
    return sorted({lo, hi, *picks, *cells, *around})


def _range_codes(
    name: str, bounds: tuple[float, float], has_missing: bool, from_zero: bool = False,
    zero: bool = True, single: bool = True,
) -> tuple[Categorical, str] | None:  # fmt: skip
    """An integer column whose bounds hold at most :data:`MAX_CODES` integers, as a
    categorical column over every one of them (None when they hold more). ``from_zero`` (a
    small table, whose bounds miss the codes that too few records hold): a positive
    lower bound is taken to 0, so every code from 0 to the upper bound is a category (a
    public rule on the private bounds; a code no record holds costs the release a little
    noise, a code left out costs its records); to 1 unless ``zero`` (the bucket of the 0
    holds records, :func:`zero_point`): codes numbered from 1 (PUMS's education and race)
    had an empty code 0, given 1 to 7% of the released records. Bounds holding one integer
    ``v`` alone (``[0, 1]``: the bucket ``[0, 1)`` grown no further) make the codes ``v``
    and ``v + 1`` (the bounds' upper end, where the rest of a count begins), the rest in the
    catch-all: as a numeric column they made one bin ``[v, v + 1]``, decoded as ``v`` or
    ``v + 1`` about equally (a count 80% 0 released as 48% 0). Not with ``single`` False
    (no bounds found: ``[0, 1]`` stands in for them, and says nothing of the values; a
    mostly missing column of letters was coded 0, 1 and ``<other>``)."""
    first, last = math.ceil(bounds[0]), math.ceil(bounds[1]) - 1
    if from_zero and first > 0:
        first = 0 if zero else 1
    if last == first and single:  # one integer: it and the next, the rest in <other>
        last = first + 1
    if not 2 <= last - first + 1 <= MAX_CODES:
        return None
    values: list[Hashable] = list(range(first, last + 1))
    taken = {str(v) for v in values}
    other = _label(OTHER_LABEL, taken)
    missing = _label(MISSING_LABEL, taken | {other}) if has_missing else None
    attr = Categorical(name, (*values, other, *([missing] if missing else [])), missing=missing,
                       other=other)  # fmt: skip
    extra = " + missing" if missing is not None else ""
    shown = f"{len(values)} codes {first}..{last} (the integers in its bounds)"
    return attr, f"{shown} + {other}{extra}"


def far_codes(
    bounds: tuple[float, float], buckets: np.ndarray, noisy: np.ndarray, rho: float,
    sensitivity: float,
) -> bool:  # fmt: skip
    """Whether a small table's integer column whose codes from 0 (:func:`_range_codes`'s
    ``from_zero``) would be more than :data:`MAX_CODES` is coded over its bounds alone: the
    bounds hold at most that many integers and the bucket of 0 holds no records by its noisy
    count (``noisy``, drawn at ``rho`` and L2 ``sensitivity``): below what an empty bucket's
    noise reaches with :data:`SMALL_BOUND_STEP_RATE` (:func:`zero_point`'s
    :data:`ZERO_POINT_RATE` would refuse a fifth of the columns holding no 0). Scores of 0 to
    100 with 24 to 30 values in bounds ``[50, 100]``, a sixth of the records on one of them,
    were bins of 6 or 7 points decoded over the bin, their spikes smoothed (a KS of 0.15 to
    0.24). Post-processing of the bounds' discrete Gaussian histogram (Bun and Steinke 2016,
    Lemma 1.8): no further cost."""
    if not 2 <= math.ceil(bounds[1]) - math.ceil(bounds[0]) <= MAX_CODES:
        return False
    z = zero_bucket(buckets)
    if z is None or noisy.size == 0:
        return True
    one = discrete_gaussian_sigma2(rho, sensitivity)
    return bool(noisy[z] < partition_threshold(one, SMALL_BOUND_STEP_RATE))


ENDS_BY_RULE = True
"""Whether a table that is not small lists its integer codes in the top bucket as added by
rule (:func:`by_rule_top`, as a small table's) and any table the codes below its data's
bounds (:func:`by_rule_low`): the release tests both runs against its own measurements.
False: the domains of before (``docs/learn.md``, "The ends of integer codes")."""


def by_rule_top(attr: Categorical, buckets: np.ndarray) -> Categorical:
    """A small table's integer codes (:func:`_range_codes`) with the codes above the first
    code of the bounds' bucket holding the last code listed as added by rule
    (``Categorical.by_rule``): that bucket holds records as a whole, not code by code, so the
    codes past the data come with it (PUMS's education, 1 to 16, read as codes up to 19 from
    the bucket ``[10, 20)``; 17 to 19, empty, got 2.1% of the released educations). The
    release tests them against its own measurements
    (:mod:`dpquery.algorithms.marginal.empty_cells`). A public rule on the public buckets and
    the codes: no data read."""
    codes = [v for v in attr.values if isinstance(v, int) and v not in (attr.other, attr.missing)]
    if not codes:
        return attr
    top = float(buckets[int(np.searchsorted(buckets, max(codes), side="right")) - 1])
    return replace(attr, by_rule=tuple(v for v in codes if v > top))


def by_rule_low(attr: Categorical, low: float | None, small: bool) -> Categorical:
    """Integer codes (:func:`_range_codes`) with the codes below the data's bounds listed as
    added by rule (``Categorical.by_rule``) beside those already listed: the codes below
    ``low`` (the bounds' lower end before the rule at 0, ``_bounds``' last answer), which a
    rule added when it took the lower bound down to 0 (:data:`BOUND_ZERO_RATIO`): UCI
    Adult's ``education-num``, 1 to 16, read as codes 0 to 19 with 0 empty (up to 133
    released records on a tuning seed). In a small table only the code 0 (its bucket's count
    passed :func:`zero_point`'s loose rate, 20% for an empty bucket): the codes from 1 up
    to ``low`` are the ones its bounds missed (PUMS's education 1 to 4 below a bound of 5),
    which hold records. The release tests them from the lowest up against its own
    measurements (:func:`dpquery.algorithms.marginal.empty_cells.ruled_low_cells`). A public
    rule on the private bounds and the codes: no data read."""
    if low is None or low <= 0:
        return attr
    codes = [v for v in attr.values if isinstance(v, int) and v not in (attr.other, attr.missing)]
    below = {v for v in codes if v < math.ceil(low) and (v == 0 or not small)}
    if not below or len(below) == len(codes):
        return attr
    ruled = set(attr.by_rule) | below
    return replace(attr, by_rule=tuple(v for v in attr.values if v in ruled))


KEYS_BELOW = 10
"""A code column read off the probe's keys whose smallest key is at most this (and above 0)
gets the codes from 0 below it, and the codes between its keys, added by rule, when the
probe left out a noisy mass clear of its noise (:func:`codes_below`); 0: off (and no gap
filled)."""
KEYS_BELOW_SIGMAS = 1.0
"""The noise sds of the mass left out that :func:`codes_below` asks for."""


def codes_below(
    attr: Categorical, learned: str, sel: Selection, present: int, sigma: float
) -> tuple[Categorical, str]:
    """A code column read off the probe's released integer keys, with the integers between
    its keys and those from 0 below its smallest key (when that is at most
    :data:`KEYS_BELOW`) added as codes by rule (``Categorical.by_rule``; the release tests
    those below from the lowest up,
    :func:`dpquery.algorithms.marginal.empty_cells.ruled_low_cells`, and those between with
    the top run, :func:`~dpquery.algorithms.marginal.empty_cells.ruled_cells`), when the
    keys left out a noisy mass of at least :data:`KEYS_BELOW_SIGMAS` sd of its noise (each
    released count's, ``sel.sigma2``, and the two of ``present``, at the profile's
    ``sigma``): UCI Adult's ``education-num`` released 4 to 7 and 9 to 16 on a tuning seed,
    its 1 to 3 and 8 (3% of the records) in the catch-all. The codes above the largest key
    are not added. Post-processing of the probe's noisy counts and the profile's: nothing
    drawn, no charge."""
    keys = [v for v in attr.values if isinstance(v, int) and v not in (attr.other, attr.missing)]
    if not keys or len(keys) != len(sel.released) - (_MISSING in sel.released):
        return attr, learned
    first = 0 if 0 < min(keys) <= KEYS_BELOW else min(keys)
    added = tuple(v for v in range(first, max(keys)) if v not in set(keys))
    if not added or len(keys) + len(added) > MAX_CODES:
        return attr, learned
    released = sum(v for k, v in sel.released.items() if k != _MISSING)
    sd = math.sqrt(len(keys) * float(sel.sigma2) + 2 * sigma**2)
    if present - released < KEYS_BELOW_SIGMAS * sd:
        return attr, learned
    codes = tuple(range(first, max(keys) + 1))
    values = (*codes, *(v for v in attr.values if v not in set(codes)))
    out = replace(attr, values=values, by_rule=added)
    shown = ", ".join(map(str, added[:6])) + (", ..." if len(added) > 6 else "")
    return out, f"{learned}; codes {shown} beside its keys by rule"


def _clear_of_zero(numbers: int | None, sigma: float) -> bool:
    """Whether the profile's noisy count of numbers stands :data:`NUMBER_SIGMAS` noise sds
    above 0 (a column holding none passes about once in 30,000)."""
    return numbers is not None and numbers >= NUMBER_SIGMAS * sigma


NUMBERS_OTHER_MISSING = True
"""Whether an undeclared column of numbers learned as codes (:func:`numbers_codes`) writes its
catch-all as a missing value rather than the text ``<other>``."""


def numbers_codes(attr: Attribute, learned: str) -> tuple[Attribute, str]:
    """An undeclared column the profile read as numbers (its noisy count of numbers near its
    non-missing count) but learned as codes (the probe's keys, the integers of its bounds, or
    nothing at all: :func:`unknown_values`): its catch-all stands for numbers the codes do not
    list (a count's tail beyond its bounds, values no noisy count could place), and decodes
    to a missing value (``Categorical.other_missing``) instead of the text ``<other>``, which
    turned a column of counts into text. Public: a function of the rule's outcome (no data
    read, no budget)."""
    if not NUMBERS_OTHER_MISSING or not isinstance(attr, Categorical) or attr.other is None:
        return attr, learned
    return replace(attr, other_missing=True), f"{learned}; {OTHER_LABEL} written as missing"


SPARSE_TEXT_MISSING = False
"""Whether a column too sparse to tell numbers from text (:func:`too_few`) is released as
missing (True) or keeps its catch-all as the text ``<other>`` (False, kept: the rule cannot
tell a sparse column of numbers from a sparse column of texts, and ``<other>`` keeps which
records hold a value; ``docs/learn.md``, "Columns mostly missing")."""


def too_few(attr: Categorical, learned: str) -> tuple[Categorical, str]:
    """A column the number rule called text only because its noisy count of numbers is near
    0 while its noisy non-missing count is too small for the share's test, whose noisy
    count of values that are not numbers (the non-missing count less the numbers') is
    within :data:`NUMBER_SIGMAS` sds of its noise of 0 too (a column mostly missing: at 39
    columns, 566 temperatures of 1,683 records read as 318 numbers of 724 values, 406 texts
    against a bar of 673), and whose selection released no value but the missing one:
    whether its few values are numbers or text is the noise's call, and the text
    ``<other>`` wrote a catch-all into a column of numbers. Its catch-all decodes to a missing value
    (``Categorical.other_missing``): the column is released as missing. Public: a function
    of the rule's outcome and the released keys (post-processing, no budget)."""
    if not (NUMBERS_OTHER_MISSING and SPARSE_TEXT_MISSING) or attr.other is None:
        return attr, learned
    return replace(attr, other_missing=True), f"{learned}; too few values: released as missing"


def unknown_values(name: str, has_missing: bool) -> tuple[Categorical, str]:
    """An undeclared column whose bounds are not found, whose probe released no value and
    whose noisy count of numbers does not stand clear of 0 (:func:`_clear_of_zero`): every
    value ``<other>`` (and missing where its noisy count says so). Whether it holds numbers
    at all was the noise's call, and the bin ``[0, 1]`` that stands in for bounds not found
    invented values: a mostly missing column of names came back as 0s and 1s, one of
    district numbers 1 to 53 as decimals between 0 and 1. A column whose numbers do stand
    out keeps that bin (planets' masses, half of them below 1). A public rule on noisy
    counts."""
    missing = MISSING_LABEL if has_missing else None
    attr = Categorical(name, (OTHER_LABEL, *([missing] if missing else [])), missing=missing,
                       other=OTHER_LABEL)  # fmt: skip
    extra = " + missing" if missing else ""
    return attr, f"no bounds found and no value released: {OTHER_LABEL}{extra}"


# --- half steps: a column of one decimal whose values are whole or halves (ratings) -------
HALF_STREAM = 0x68616C66
"""The spawn key of the half-step test's own stream (:func:`_own_stream`)."""
HALF_SHARE = 0.2
"""The share of a small table's bounds rho that the half-step test (:func:`half_steps`) takes,
drawn only for a column whose noisy decimals histogram shows one decimal (:func:`half_seen`)."""
HALF_SIGMAS = 2.0
"""The noise sds a count must reach to be seen by the half-step rules (:func:`half_seen`,
:func:`on_halves`): a one-sided false rate of 2.3% each."""
HALF_OFF_RATIO = 0.5
"""At most this share of the noisy halves may lie off the half lattice (:func:`on_halves`)."""
HALF_WHOLE_RATIO = 0.5
"""The whole numbers must be at least this share of the one-decimal values for the half-step
test to be drawn (:func:`half_seen`): half the points of a half lattice are whole, a tenth of
a one-decimal column's tenths are."""


def half_seen(counts: list[int], sigma: float) -> bool:
    """Whether a column's noisy decimals histogram (``counts``, classes 0 ..
    :data:`MAX_LEARNED_DECIMALS`, noise sd ``sigma`` each) shows values of one decimal
    (class 1 at least :data:`HALF_SIGMAS` sd), whole numbers at least
    :data:`HALF_WHOLE_RATIO` of them (an income of one or two decimals, 4.52, has few: the
    test drawn for it cost its bounds a fifth of their rho) and none finer (each finer class
    below :data:`DECIMALS_SIGMAS` sd, the precision rule's floor): only
    then is the half-step test (:func:`half_steps`) drawn. A rating of 2.5 to 5.0 by halves
    (1,561 records, a third of them halves) was read at one decimal with unit bins, 5.0
    decoded over 5.0 to 5.9, or at none, its halves then left in the catch-all. Post-processing
    of the noisy histogram: no further cost."""
    if len(counts) < 2 or counts[1] < HALF_SIGMAS * sigma:
        return False
    finer = DECIMALS_SIGMAS * sigma  # the precision rule's floor: noise alone stays below
    return counts[0] >= HALF_WHOLE_RATIO * counts[1] and all(c < finer for c in counts[2:])


def half_counts(numbers: np.ndarray) -> list[int]:
    """The counts of ``numbers`` that are halves (``v + 0.5``, ``v`` whole) and of those off
    the half lattice; whole numbers are in neither cell (:func:`half_steps`)."""
    x = np.asarray(numbers, dtype=np.float64)
    twice = x * 2.0
    on = twice == np.round(twice)
    return [int(np.count_nonzero(on & (x != np.round(x)))), int(np.count_nonzero(~on))]


def half_steps(name: str, col: _Column, rho: float, ctx: _Context) -> tuple[int, int, float]:
    """The noisy counts of a column's numbers that are halves (``v + 0.5``, ``v`` whole) and
    of those off the half lattice, and their noise sd. The two cells are disjoint (a whole
    number is in neither), so one record moves the pair by at most L2 ``ctx.l2`` (1 under
    add/remove, ``sqrt(2)`` under replace-one) and the discrete Gaussian at ``rho`` is
    ``rho``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4), charged before it is drawn.
    Drawn from the test's own stream (:data:`HALF_STREAM`)."""
    assert ctx.half_rng is not None
    noisy = discrete_gaussian_mechanism(
        half_counts(col.numbers), rho=rho, sensitivity=ctx.l2, rng=ctx.half_rng,
        ledger=ctx.ledger,
        name=f"{name}: half steps (discrete Gaussian)",
    )  # fmt: skip
    return int(noisy[0]), int(noisy[1]), _sigma(rho, ctx.l2)


def on_halves(halves: int, off: int, sigma: float) -> bool:
    """Whether the half-step counts (:func:`half_steps`, noise sd ``sigma``) make the column's
    values whole numbers and halves: the halves reach :data:`HALF_SIGMAS` sd, the values off
    the lattice stay below it and below :data:`HALF_OFF_RATIO` of the halves. A column of one
    decimal spread over the tenths has four times as many values off the lattice as on it.
    Post-processing of the noisy counts: no further cost."""
    floor = HALF_SIGMAS * sigma
    return halves >= floor and off < floor and off < HALF_OFF_RATIO * max(halves, 0)


def _half_codes(
    name: str, bounds: tuple[float, float], buckets: np.ndarray, has_missing: bool
) -> tuple[Categorical, str] | None:
    """A column of whole numbers and halves (:func:`on_halves`) as a categorical column over
    the half lattice's points ``v`` with ``lo <= v < hi`` (the private bounds' buckets end
    before ``hi``), at most :data:`MAX_CODES` (None when more, or fewer than 2), the rest in
    the catch-all; the points above the first point of the bucket holding the last are added
    by rule (``Categorical.by_rule``, as :func:`by_rule_top`: that bucket holds records as a
    whole, not point by point). A public rule on the private bounds: no data read."""
    first, last = math.ceil(bounds[0] * 2), math.ceil(bounds[1] * 2) - 1
    if not 2 <= last - first + 1 <= MAX_CODES:
        return None
    points = [u / 2 for u in range(first, last + 1)]
    taken = {str(v) for v in points}
    other = _label(OTHER_LABEL, taken)
    missing = _label(MISSING_LABEL, taken | {other}) if has_missing else None
    top = float(buckets[int(np.searchsorted(buckets, points[-1], side="right")) - 1])
    attr = Categorical(name, (*points, other, *([missing] if missing else [])), missing=missing,
                       other=other, by_rule=tuple(v for v in points if v > top))  # fmt: skip
    extra = " + missing" if missing is not None else ""
    shown = f"{len(points)} codes {points[0]:g}..{points[-1]:g} (the halves in its bounds)"
    return attr, f"{shown} + {other}{extra}"


# --- integers on a coarser lattice: elections every 4 years, codes 10, 20, 30 -----------------
LATTICE_STREAM = 0x6C617474
"""The spawn key of the lattice test's own stream (:func:`_own_stream`)."""
LATTICE_SHARE = 0.25
"""The share of a small table's integer band's finer-histogram rho (the pool's,
:func:`_second_selection`) that its lattice test (:func:`lattice_test`) takes; the finer
histogram keeps the rest."""
LATTICE_MODULI = (4, 5)
"""The moduli of the lattice test's histograms: the column's integers by residue mod 4 and
mod 5, each integer in one cell of each. Their divisors (2, 4; 5) are the public candidate
steps, and their products (10, 20) by the Chinese remainder theorem: an integer's residue
mod 20 is its pair of residues mod 4 and mod 5. Not 25 (nor 50, 100): the test of a class
mod 25 sums the noise of 24 other cells, and a band's values in whole hundreds gain little
from a lattice its bins are far wider than."""
LATTICE_ON_SIGMAS = 4.0
"""A residue class (:func:`residue_class`) must hold at least this many noise sd of its sum:
records, not noise ..."""
LATTICE_OFF_SIGMAS = 1.0
"""... and the rest of its histogram's cells, raised by this many noise sd of their sum, at
most :data:`LATTICE_OFF_RATIO` of the class's noisy count: nearly all of the mass, with a
margin for the noise."""
LATTICE_OFF_RATIO = 0.25


def lattice_counts(numbers: np.ndarray) -> np.ndarray:
    """The column's integers by residue mod each of :data:`LATTICE_MODULI`, the histograms
    one after the other (4 + 5 cells); a number that is not an integer is in no cell. Each
    record is in at most one cell of each histogram: adding or removing one moves the
    vector by L2 at most ``sqrt(2)``, replacing one by at most 2 (:func:`lattice_test`)."""
    x = np.asarray(numbers, dtype=np.float64)
    whole = x[np.isfinite(x) & (x == np.round(x))].astype(np.int64)
    return np.concatenate([np.bincount(np.mod(whole, m), minlength=m) for m in LATTICE_MODULI])


def lattice_sensitivity(l2: float) -> float:
    """The L2 sensitivity of :func:`lattice_counts`: a record is in one cell of each of the
    :data:`LATTICE_MODULI` histograms, each of L2 sensitivity ``l2`` (1 under add/remove,
    ``sqrt(2)`` under replace-one), so ``sqrt(len(LATTICE_MODULI)) * l2``."""
    return math.sqrt(len(LATTICE_MODULI)) * l2


def lattice_test(
    name: str, numbers: np.ndarray, rho: float, ctx: _Context
) -> tuple[np.ndarray, float]:
    """The noisy residue histograms of a column's integers (:func:`lattice_counts`) and their
    noise sd: the discrete Gaussian at L2 sensitivity :func:`lattice_sensitivity` is
    ``rho``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4), charged on the ledger
    before it is drawn. Its cells overlap the profile's count of numbers (an integer is in
    both), so the profile's charge cannot cover them: the test has a charge of its own.
    Drawn from the test's own stream (:data:`LATTICE_STREAM`)."""
    assert ctx.lattice_rng is not None
    sensitivity = lattice_sensitivity(ctx.l2)
    noisy = discrete_gaussian_mechanism(
        lattice_counts(numbers), rho=rho, sensitivity=sensitivity, rng=ctx.lattice_rng,
        ledger=ctx.ledger, name=f"{name}: lattice (discrete Gaussian)",
    )  # fmt: skip
    return np.asarray(noisy, dtype=np.int64), _sigma(rho, sensitivity)


def residue_class(cells: np.ndarray, sigma: float) -> tuple[int, int]:
    """The step ``k`` and offset ``r`` of the residue class of one noisy histogram ``cells``
    (the integers by residue mod ``m = len(cells)``, noise sd ``sigma`` a cell) that holds
    nearly all of its mass: for each divisor ``k > 1`` of ``m``, from the largest down, the
    class ``r`` mod ``k`` of the largest noisy sum (its ``m / k`` cells; the first of equal
    sums) is taken when that sum reaches :data:`LATTICE_ON_SIGMAS` sd of its noise and the
    other cells' sum plus :data:`LATTICE_OFF_SIGMAS` sd of theirs is at most
    :data:`LATTICE_OFF_RATIO` of the class's. ``(1, 0)`` when no class does. Post-processing
    of the noisy counts: no further cost."""
    m = len(cells)
    c = np.asarray(cells, dtype=np.float64)
    total = float(c.sum())
    for k in sorted((d for d in range(2, m + 1) if m % d == 0), reverse=True):
        sums = [float(c[r::k].sum()) for r in range(k)]
        r = int(np.argmax(sums))
        on, off = sums[r], total - sums[r]
        sd_on, sd_off = math.sqrt(m / k) * sigma, math.sqrt(m - m / k) * sigma
        if on >= LATTICE_ON_SIGMAS * sd_on and off + LATTICE_OFF_SIGMAS * sd_off <= (
            LATTICE_OFF_RATIO * on
        ):
            return k, r
    return 1, 0


def on_lattice(noisy: np.ndarray, sigma: float) -> tuple[int, int] | None:
    """The lattice ``(step, offset)`` read off the noisy residue histograms of
    :func:`lattice_test` (noise sd ``sigma`` a cell): each histogram's class
    (:func:`residue_class`, ``(k, r)``), combined by the Chinese remainder theorem (the
    moduli are coprime): step the product of the ``k``, offset the one residue mod it that
    has each ``r`` mod its ``k``. None when the step is 1 (no lattice). An election year
    every 4 years from 1932 gives ``(4, 0)``; census years every 10 from 1790 ``(10, 0)``;
    years every 2 from 1981 ``(2, 1)``. Post-processing of the noisy counts: no further cost."""
    step, offset, start = 1, 0, 0
    for m in LATTICE_MODULI:
        k, r = residue_class(noisy[start : start + m], sigma)
        start += m
        offset = next(x for x in range(offset, offset + step * k, step) if x % k == r)
        step *= k
    return None if step == 1 else (step, offset)


def lattice_edges(edges: list[float], grid: tuple[int, int]) -> list[float]:
    """A small table's ``edges`` (read off noisy counts, :func:`_small_edges`) on the lattice
    ``grid``: each end up to the lattice (the lower bound is the start of a bucket, so the
    first point at or above it is the least value the column can hold; the upper one the
    end of a bucket, and a lattice column decodes the points below its last edge), each
    inner edge to its nearest point, those that meet merged. Public: the edges and the
    lattice alone."""
    lo, hi = on_grid(edges[0], grid, math.ceil), on_grid(edges[-1], grid, math.ceil)
    hi = max(hi, lo + grid[0])
    inner = {on_grid(e, grid, round) for e in edges[1:-1]}
    return sorted({lo, hi, *(e for e in inner if lo < e < hi)})


def lattice_plan() -> dict[str, Any]:
    """The lattice test's public parameters (``dpquery privacy synth``): which columns draw
    it, its share and charge, its histograms and rule."""
    return {"columns": "a small table's integer columns whose bounds are a narrow band far "
            "from 0 (those given a finer histogram from the pool)",
            "share_of_band": LATTICE_SHARE, "charge": "its own, from the band's share of the pool",
            "moduli": list(LATTICE_MODULI), "on_sigmas": LATTICE_ON_SIGMAS,
            "off_sigmas": LATTICE_OFF_SIGMAS, "off_ratio": LATTICE_OFF_RATIO}  # fmt: skip


def on_grid(x: float, grid: tuple[int, int], rounding: Any) -> float:
    """``x`` taken to the lattice ``grid`` (``(step, offset)``): down (``math.floor``), up
    (``math.ceil``) or to the nearest point (``round``). Public."""
    step, offset = grid
    return float(offset + step * int(rounding((x - offset) / step)))


def _numeric(
    name: str,
    col: _Column,
    rho: float,
    missing: tuple[int, float],
    ctx: _Context,
    probe: Selection | None = None,
    present: int = 0,
    codes: bool = False,
    numbers: int | None = None,
) -> tuple[Attribute, str, dict[str, Any], float]:
    """A numeric column's precision, bounds, atoms and edges from ``rho``, and the rho
    spent; with ``codes`` (an undeclared column), an integer column of few integers in its
    bounds is categorical over them (:func:`_range_codes`) and the edges' share is left
    unspent. ``numbers``: the profile's noisy count of numbers (its sd is ``missing``'s),
    for the rule of a point mass at 0 (:func:`zero_mode_run`)."""
    share = DECIMALS_SHARE / (1 - PROFILE_SHARE)  # of what a numeric column has after its profile
    decimals, hist, form, forms = _decimals(name, col, share * rho, ctx, numbers)
    significant, sci_cells = _scientific(name, col, share * rho, ctx, numbers, hist, forms)
    every = True
    if significant is not None:  # every value so written, or mixed (post-processing)
        total, total_sigma = (
            (numbers, missing[1]) if numbers is not None
            else (sum(hist) + sum(forms) + sum(sci_cells), _sigma(share * rho, ctx.l2)
                  * math.sqrt(len(hist) + len(forms) + len(sci_cells)))
        )  # fmt: skip
        every = every_value_scientific(sci_cells, total, _sigma(share * rho, ctx.l2), total_sigma)
    rest = (1 - share) * rho
    if not codes:  # a declared numeric column: its kind and form are the declaration's
        form = None
    if significant is not None and form != "YYYYMMDD":  # numbers written with an exponent:
        decimals, form = SCIENTIFIC_DECIMALS, None  # learned down to 10^-14, no width
    if form == "YYYYMMDD":  # dates written as digits: learned on the time axis (_dates)
        dated = replace(col, times=digits_times(col))
        day = _dates(name, dated, rest, missing, ctx, dates.DIGITS_FORMAT)
        assert day[0] is not None  # a declared format is never refuted
        day[2].update(decimals_histogram=hist, written_forms=forms, written_form=form)
        return day[0], day[1], day[2], share * rho + day[3]
    width = form if isinstance(form, int) else None
    bounds_share = SMALL_BOUNDS_SHARE if ctx.small else BOUNDS_SHARE
    noisy_missing, sigma = missing
    counted = None if numbers is None else (numbers, sigma)
    bounds_rho = bounds_share * rest
    halves: tuple[int, int, float] | None = None
    if ctx.small and codes and significant is None and half_seen(hist, _sigma(share * rho, ctx.l2)):
        halves = half_steps(name, col, HALF_SHARE * bounds_rho, ctx)  # charged, then drawn
        bounds_rho -= HALF_SHARE * bounds_rho
    found, buckets, bucket_noisy, raw, core = _bounds(name, col, bounds_rho, decimals, ctx, counted)
    has_missing = noisy_missing > MISSING_SIGMAS * sigma
    more: dict[str, Any] = {"decimals_histogram": hist, "bounds": found}
    if significant is not None:
        more |= {"scientific_cells": sci_cells, "significant": significant}
    notation: tuple[str, float] | None = None
    if significant is not None and not every and found is not None:  # where the forms mix
        written_share = min(max(sum(sci_cells) / max(total, 1), 0.0), 1.0)
        notation = scientific_threshold(buckets, bucket_noisy, found, written_share,
                                        _sigma(bounds_rho, ctx.l2))  # fmt: skip
        more["notation"] = list(notation)
    if found is None and probe is not None and codes and probe.released:
        # too few numbers to bound: the values the probe released are all that is known
        cat, learned = _categorical(name, probe)
        return cat, learned + " (no bounds found)", more, share * rho + bounds_share * rest
    if found is None and codes and not _clear_of_zero(numbers, sigma):
        # neither bounds nor numbers stand out: text read as numbers by the noise, maybe
        cat, learned = unknown_values(name, has_missing)
        return cat, learned, more, share * rho + bounds_share * rest
    fine_rho = 0.0
    inner: tuple[float, float] | None = None
    # the rule at 0 left it on one side (taxis' [5, 50] it did not; a longitude's [-100, -50])
    far = found is not None and (found[0] > 0 or found[1] < 0)
    if not ctx.small and far and raw is not None and narrow_band(*raw, decimals, below=True):
        # a band far from 0 that the buckets cannot cut: a finer histogram from the
        # quantiles' share narrows it (the quantiles' candidates then are fine over it)
        fine_rho = BAND_SHARE * (1 - bounds_share) * rest
        band = band_mass(buckets, bucket_noisy, raw, bounds_share * rest, ctx.l2)
        run = _fine_run(name, col.numbers, fine_rho, decimals, raw, band, ctx)
        more["band_bounds"] = None if run is None or not run[3] else run[0]
        if run is not None and not run[3]:  # short of the band's mass: the bounds stay, the
            inner = run[0]  # run's cells join the candidates (where the data are, mostly)
            more["band_run"] = inner
        if run is not None and run[3]:
            found = (_outward(run[0][0], decimals, math.floor),
                     _outward(run[0][1], decimals, math.ceil))  # fmt: skip
            more["bounds"] = found
    bounds = (0.0, 1.0) if found is None else found
    # a small table's 0: a bin or a code of its own only when its bucket holds records
    zero = ctx.small and zero_point(buckets, bucket_noisy, bounds_rho, ctx.l2)
    # the bucket of 0 the mode: 0 is a point mass, an atom (a bin or a code of its own)
    at_zero = zero_mode(buckets, bucket_noisy) is not None and bounds[0] <= 0.0 < bounds[1]
    zero = zero or (ctx.small and at_zero)
    if halves is not None:
        more["half_steps"] = halves[:2]
    if halves is not None and found is not None and on_halves(*halves):
        top = _code_top(found, buckets, bucket_noisy, bounds_rho, ctx.l2)
        coded = _half_codes(name, top, buckets, has_missing)
        if coded is not None:
            return coded[0], coded[1], more, share * rho + bounds_share * rest
    if codes and decimals == 0:
        from_zero = ctx.small
        coded = _range_codes(name, bounds, has_missing, from_zero=from_zero, zero=zero,
                             single=found is not None)  # fmt: skip
        # whole numbers seen (the precision rule's floor), not a precision of 0 by default: a
        # life expectancy of 274 records (76.2) read as integer would put all in <other>
        # (with a width, class 0 less the padded values: the forms' cells count them)
        zeros = hist[0] + (sum(forms) if width is not None else 0)
        whole = zeros >= DECIMALS_SIGMAS * _sigma(share * rho, ctx.l2)
        if (
            coded is None
            and from_zero
            and found is not None
            and whole
            and far_codes(bounds, buckets, bucket_noisy, bounds_rho, ctx.l2)
        ):
            from_zero = False  # a range far from 0: the codes of its bounds alone
            coded = _range_codes(name, bounds, has_missing)
        if coded is not None and ctx.small and found is not None:  # codes: the stricter top
            top = _code_top(bounds, buckets, bucket_noisy, bounds_rho, ctx.l2)
            coded = _range_codes(name, top, has_missing, from_zero=from_zero, zero=zero) or coded
            coded = (by_rule_top(coded[0], buckets), coded[1])
        elif coded is not None and found is not None and ENDS_BY_RULE:  # a large table's top
            coded = (by_rule_top(coded[0], buckets), coded[1])
        if coded is not None and found is not None and ENDS_BY_RULE and raw is not None:
            coded = (by_rule_low(coded[0], raw[0], ctx.small), coded[1])
        if coded is not None and width is not None:  # the codes written zero-padded
            more |= {"written_forms": forms, "written_form": width}
            coded = (replace(coded[0], width=width), f"{coded[1]}, written {width} digits wide")
        if coded is not None:
            return coded[0], coded[1], more, share * rho + bounds_share * rest + fine_rho
    atoms = _atoms(probe, present, decimals)
    if at_zero and 0.0 not in atoms:
        atoms = sorted([*atoms, 0.0])
    exact: dict[float, float] = {}
    if ctx.small:  # the bounds' counts place the edges: no quantiles
        edges = _small_edges(bounds, buckets, bucket_noisy, decimals, small_bins(ctx.bins), zero)
        # the band: the bounds, or the core the mode's single steps reached (step_core),
        # its run then held to the whole bounds' mass (the rest clipped only as noise)
        mass = None if raw is None else band_mass(buckets, bucket_noisy, raw, bounds_rho, ctx.l2)
        # the bounds hold the column's numbers (no side left out): a gapped run may cut
        # them, and a band below 0 is read as its mirror (add/remove alone)
        whole = counted is not None and mass is not None and whole_band(mass, counted)
        below = SMALL_BELOW and whole and ctx.add_remove
        cut = None if raw is None else raw if narrow_band(*raw, decimals, below) else core
        if (
            ctx.second
            and mass is not None
            and raw is not None
            and cut is not None
            and narrow_band(*cut, decimals, below)
        ):
            held = band_mass(buckets, bucket_noisy, cut, bounds_rho, ctx.l2)[0]
            # a finer histogram later (_fine_edges)
            ctx.narrow[name] = (col.numbers, decimals, cut, mass, raw, held, whole)
            if cut != raw:
                more["band_core"] = cut
        spent = share * rho + bounds_share * rest
    else:
        quantile_rho = (1 - bounds_share) * rest - fine_rho
        exact = exact_atoms(probe, atoms, decimals) if significant is None else {}
        cap = None
        if found is not None and probe is not None and significant is None and decimals > 0:
            sigma2 = float(discrete_gaussian_sigma2(bounds_rho, ctx.l2))
            cap = _edge_cap(probe, buckets, bucket_noisy, found, atoms, decimals, sigma2)
        if cap is not None:
            # the mass from the atom up is the atom on its bucket's lower edge: the bounds
            # end at the atom's own bin
            bounds = (bounds[0], cap_end(cap, decimals))
            atoms = [a for a in atoms if a <= cap]
            exact = {a: x for a, x in exact.items() if a < cap} | {cap: cap}
            more["cap"] = cap
        edges = _edges(name, col, quantile_rho, bounds, decimals, atoms, ctx, inner, exact)
        spent = rho
        sole = None if cap is not None or numbers is None or probe is None or decimals == 0 \
            else _sole_atom(probe, atoms, decimals, numbers, missing[1] ** 2)  # fmt: skip
        if sole is not None and significant is None:
            # one atom holds the column's numbers: its bin alone (the quantiles' draws,
            # charged as ever, are set aside), decoded as its value
            value = exact.get(sole, sole)
            cell = atom_cell(value, decimals)
            edges, atoms = [cell, cap_end(cell, decimals)], [sole]
            exact = {sole: value}
            more["sole_atom"] = value
    attr = Numeric(
        name, tuple(edges), out_of_range="clip", missing=has_missing, integer=decimals == 0,
        decimals=None if decimals == 0 or significant is not None else decimals,
        density=LEARNED_DENSITY,
        exact=tuple(x for x in exact.values() if edges[0] <= x < edges[-1]),
        width=width if decimals == 0 else None, significant=significant, notation=notation,
    )  # fmt: skip
    if attr.width is not None:
        more |= {"written_forms": forms, "written_form": attr.width}
    # an exact value in full (its repr), the others at the precision
    shown = [repr(exact[a]) if a in exact else f"{a:g}" for a in atoms[:6]]
    learned = (
        f"{attr.n_bins} bins over [{edges[0]:g}, {edges[-1]:g}] (clipped), "
        + (
            f"the maximum {more['cap']:g} on a bucket's edge, "
            "its mass the bucket's (the bounds end there), "
            if "cap" in more
            else ""
        )
        + ("every number one atom's (its bin alone), " if "sole_atom" in more else "")
        + (
            "integer"
            if decimals == 0
            else f"{decimals} decimals"
            if significant is None
            else f"written in scientific notation, {significant} significant digits"
            + ("" if notation is None else f" {notation[0]} {notation[1]:g}, plain elsewhere")
        )
        + (f", atoms {', '.join(shown)}" if atoms else "")
        + (f", written {attr.width} digits wide (zero-padded)" if attr.width else "")
        + (" + missing" if has_missing else "")
    )
    more |= {"atoms": atoms} | ({"exact_atoms": sorted(exact.values())} if exact else {})
    return attr, learned, more, spent


# --- dates and times: a quantity on the public time axis (dpquery.data.dates) ----------
TIME_YEARS = (1800, 2200)
"""The public range of the time axis's first bounds histogram, one bucket per year
(``[1800-01-01, 2200-01-01)``; values beyond it count in the end buckets and clip)."""
TIME_MONTH_YEARS = 4
"""Bounds spanning at most this many years are refined by a second histogram, one bucket
per month inside them (:func:`_time_bounds`)."""
TIME_GROW_YEARS = 10
"""A large table's years' bounds, once no single year beyond them passes, also grow by a
block of this many years, or twice or four times as many, when the block's noisy sum passes
(:func:`_time_run`'s ``span``): dates spread over a century and a half (24,270 ball players'
debuts, 1871 to 2025, about 150 a year against a year's noise sd near 110 at 26 columns)
stopped at the densest years, 2007 to 2025, and half the debuts were released as
2007-01-01. Post-processing of the years' noisy counts."""
TIME_STEPS = (1, 60, 300, 900, 3600, 6 * 3600, dates.DAY, 7 * dates.DAY, 30 * dates.DAY,
              365 * dates.DAY)  # fmt: skip
"""The public steps of the bin edges' candidate grid, in seconds: the finest at least the
column's precision whose grid inside the bounds has at most :data:`TIME_CANDIDATES` points."""
TIME_CANDIDATES = 2000
DATE_PREFIX = "date:"
"""A ``types`` entry ``"date:FORMAT"`` declares a date column written in the ``strftime``
format ``FORMAT`` (``"date:%d.%m.%Y"``; its precision is the format's); ``"date"`` alone, the
ISO 8601 family (:data:`dpquery.data.dates.ISO_FORMATS`), its precision learned."""


DATE_STREAM = 0x64617465
"""The spawn key of the date test's own stream (:func:`_own_stream`)."""


def _own_stream(rng: np.random.Generator, key: int) -> np.random.Generator:
    """A test's own stream (the date test's, :data:`DATE_STREAM`; the half-step test's,
    :data:`HALF_STREAM`), drawn from nothing of ``rng``'s: a cryptographically
    secure ``rng`` (every release without a seed) gets a fresh secure generator keyed from
    the operating system's entropy (:func:`~dpquery.privacy.randomness.secure_rng`); a
    seeded one (research and tests) a child of its ``SeedSequence`` under a fixed spawn key,
    made without drawing from it or changing it, so that a seeded learning is reproducible
    and its other draws are those of a learning without the test. ``key``: the spawn key."""
    seq = getattr(rng.bit_generator, "seed_seq", None)
    if is_cryptographic(rng) or not isinstance(seq, np.random.SeedSequence):
        return secure_rng()
    child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, key))
    return np.random.default_rng(child)


def _date_count(col: _Column, rho: float, ctx: _Context) -> int:
    """The noisy number of values written as ISO 8601 dates: the third count of the profile
    (:func:`_profile`). Missing, numbers and dates are disjoint classes of a record's value,
    so replacing a record moves the vector (missing, numbers, dates) by at most L2
    ``sqrt(2)``, and adding or removing one by at most L2 1 (``ctx.l2``, the profile's), and
    its discrete Gaussian at the profile's ``sigma`` is ``rho``-zCDP as a whole (CKS 2020,
    Theorem 4): the profile's one charge covers this draw (made after it, on the same ledger
    entry). Drawn from the test's own stream (:func:`_own_stream`)."""
    assert ctx.times_rng is not None
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    return int(col.times.size + sample_discrete_gaussian(sigma2, 1, ctx.times_rng)[0])


DIGITS_STREAM = 0x64696769
"""The spawn key of the profile's cell of days written YYYYMMDD (:func:`_digits_count`)."""


def _digits_count(col: _Column, rho: float, ctx: _Context) -> int:
    """The noisy number of an undeclared column's values written as days YYYYMMDD
    (:func:`written_form_of`'s last form): a cell of the profile (:func:`_profile`), whose
    count of numbers then leaves them out. Missing, numbers (not so written), ISO dates,
    these days and the common formats' and vocabularies' classes (which hold no number) are
    disjoint classes of a record's value, so the vector moves by at most L2 ``ctx.l2`` and
    its discrete Gaussian at the profile's sigma is ``rho``-zCDP as a whole (CKS 2020,
    Theorem 4): the profile's one charge covers this draw. Drawn from a stream of its own
    (:data:`DIGITS_STREAM`): a column holding no such value has the profile's two counts
    and every other draw of the learning as before."""
    assert ctx.digits_rng is not None
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    return int(col.forms[-1] + sample_discrete_gaussian(sigma2, 1, ctx.digits_rng)[0])


NAMED_STREAM = 0x6E616D65
"""The spawn key of the profile's cells of dates written with a month's name
(:func:`_named_test`)."""


NAMED_CELLS = 2 * len(dates.NAMED_STYLES)
"""The profile's cells of dates written with a month's name: two layouts (the day or the
month first) by three styles (abbreviated, in full, ``May``: either)."""


def named_times(col: _Column, fmt: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The column's values written as dates with a month's name
    (:func:`~dpquery.data.dates.named_cell`): their counts by class (:data:`NAMED_CELLS`),
    and the seconds since the epoch of those ``NAMED_FORMATS[fmt]`` reads (its layout, its
    style or ``May``; all when None), one per record."""
    styles = len(dates.NAMED_STYLES)
    read = None if fmt is None else {styles * (fmt // 2) + fmt % 2, styles * (fmt // 2) + 2}
    return _cells_and_times(col, dates.named_cell, NAMED_CELLS, read)


def _cells_and_times(
    col: _Column, cell_of: Callable[[str], tuple[int, int] | None], cells: int,
    read: set[int] | None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The counts of the column's texts by the class ``cell_of`` gives them (``(seconds,
    class)``, or None), and the seconds of those in the classes ``read`` (all when None),
    one per record."""
    counts = np.zeros(cells, dtype=np.int64)
    secs: list[int] = []
    reps: list[int] = []
    for key, count in col.keys.items():
        if isinstance(key, str) and (cell := cell_of(key)) is not None:
            counts[cell[1]] += count
            if read is None or cell[1] in read:
                secs.append(cell[0])
                reps.append(count)
    return counts, np.repeat(np.array(secs, dtype=np.float64), reps)


def _named_test(col: _Column, rho: float, ctx: _Context) -> list[int]:
    """The noisy numbers of a text-like column's values written as dates with a month's name,
    by class (:data:`NAMED_CELLS`): cells of the profile
    (:func:`_profile`). Missing, numbers, ISO dates, days written YYYYMMDD, these four
    classes and the common formats' and vocabularies' classes (whose cells hold no letter
    nor a month's name) are disjoint classes of a record's value, so the vector moves
    by at most L2 ``ctx.l2`` and its discrete Gaussian at the profile's sigma is
    ``rho``-zCDP as a whole (CKS 2020, Theorem 4): the profile's one charge covers this
    draw. Drawn from a stream of its own (:data:`NAMED_STREAM`): a column holding no such
    value has every other draw of the learning as before, and its kind unless this noise
    alone passes the number rule's test (95% of its non-missing count, less 4 sd)."""
    if ctx.named_rng is None:  # kept on the context: one stream for every column
        ctx.named_rng = _own_stream(ctx.rng, NAMED_STREAM)
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    counts, _ = named_times(col)
    return [int(c) for c in counts + sample_discrete_gaussian(sigma2, counts.size, ctx.named_rng)]


SPELLED_STREAM = 0x7370656C
"""The spawn key of the profile's cells of the other spellings of a month's name
(:func:`_spelled_test`)."""
SPELLED_SIGMAS = 5.0
"""How far clear of 0, in sd of a spelling's count's noise, the other spellings
(:data:`~dpquery.data.dates.NAMED_SPELLINGS` beyond :data:`~dpquery.data.dates.NAMED_FORMATS`:
56 formats) must be: ``P(Z > 5) = 2.9e-7``, 56 of them about ``1.6e-5`` a column, below one
of the four formats' ``3.2e-5`` at 4 sd."""


def spelled_times(col: _Column, fmt: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The column's values written as dates with a month's name in any spelling
    (:func:`~dpquery.data.dates.spelled_cell`): their counts by class
    (:data:`~dpquery.data.dates.SPELLING_CELLS`), and the seconds since the epoch of those
    the spelling ``fmt`` reads (its cells; all when None), one per record."""
    read = None if fmt is None else set(dates.SPELLING_FORMAT_CELLS[fmt])
    return _cells_and_times(col, dates.spelled_cell, dates.SPELLING_CELLS, read)


def _spelled_test(col: _Column, rho: float, ctx: _Context, named: list[int]) -> list[int]:
    """The noisy numbers of a text-like column's values written as dates with a month's name
    by class (:data:`~dpquery.data.dates.SPELLING_CELLS`): the classes of
    :func:`_named_test` (``named``, its noisy counts, in their cells
    :data:`~dpquery.data.dates.NAMED_CLASSES`) and 72 further cells of the profile (lower
    and upper case, a dotted month, a weekday, hyphens). Each record's value is in at most
    one cell of the 78, which are disjoint from the profile's other classes (whose cells hold
    no month's name), so the whole vector moves by at most L2 ``ctx.l2`` and its discrete
    Gaussian at the profile's sigma is ``rho``-zCDP as a whole (CKS 2020, Theorem 4): the
    profile's one charge covers these draws. Drawn from a stream of their own
    (:data:`SPELLED_STREAM`): :func:`_named_test`'s draws, and every other, are as
    before."""
    if ctx.spelled_rng is None:  # kept on the context: one stream for every column
        ctx.spelled_rng = _own_stream(ctx.rng, SPELLED_STREAM)
    counts, _ = spelled_times(col)
    further = [c for c in range(dates.SPELLING_CELLS) if c not in dates.NAMED_CLASSES]
    noise = sample_discrete_gaussian(discrete_gaussian_sigma2(rho, ctx.l2), len(further),
                                     ctx.spelled_rng)  # fmt: skip
    noisy = counts.copy()
    noisy[further] += noise
    noisy[list(dates.NAMED_CLASSES)] = named
    return [int(c) for c in noisy]


def _named_passes(
    name: str, col: _Column, rho: float, present: int, margin: float, zero: float,
    ctx: _Context,
) -> tuple[str, _Column, list[int]] | None:  # fmt: skip
    """A text-like column's dates written with a month's name (:func:`_named_test`): the
    format (:data:`~dpquery.data.dates.NAMED_FORMATS`) whose noisy count, its class's and
    ``May``'s of its layout, passes the number rule's test (at least :data:`NUMBER_SHARE` of
    the non-missing count less ``margin``, and ``zero``, the ISO test's bars; ``margin``
    widened for the two cells' noise, ``sqrt(2 + 0.95^2)`` in place of ``sqrt(1 +
    0.95^2)``; ``zero`` raised to :data:`NUMBER_SIGMAS` sd of that noise: a false pass at
    most ``4 x 3.2e-5`` a column), the column with those values on the time axis, and the
    noisy counts; when none passes, the other spellings
    (:data:`~dpquery.data.dates.NAMED_SPELLINGS`, :func:`_spelled_test`) alike, each sum of
    ``k`` cells against bars widened for its noise (``sqrt(k + 0.95^2)``) and clear of 0 by
    :data:`SPELLED_SIGMAS` sd of it, a dotted month's own cell :data:`FORM_SIGMAS` sd; the
    largest passing wins, its noisy counts those of its cells. None when none passes.
    Post-processing of the noisy counts."""
    counts = _named_test(col, rho, ctx)
    spelled = _spelled_test(col, rho, ctx, counts)
    styles = len(dates.NAMED_STYLES)
    sums = [counts[styles * (f // 2) + f % 2] + counts[styles * (f // 2) + 2]
            for f in range(len(dates.NAMED_FORMATS))]  # fmt: skip
    best = int(np.argmax(sums))  # the first of equal maxima
    wider = margin * math.sqrt((2 + NUMBER_SHARE**2) / (1 + NUMBER_SHARE**2))
    # clear of 0 by NUMBER_SIGMAS sd of the two cells' noise too: a small table's bar (half
    # its records, about 3 sd of one cell) let a column of Yes and No pass on noise alone
    clear = max(zero, NUMBER_SIGMAS * math.sqrt(2) * _sigma(rho, ctx.l2))
    if sums[best] >= NUMBER_SHARE * present - wider and sums[best] >= clear:
        return dates.NAMED_FORMATS[best], replace(col, times=named_times(col, best)[1]), counts
    # the other spellings: each format's cells summed, its bars widened for their noise
    # (k cells: sqrt(k + 0.95^2)); a dotted month's (AP's, whose cells hold the full names
    # too) only when its own cell stands out, else a column of full names would be read so
    passing: list[tuple[int, str]] = []
    for f in dates.NAMED_SPELLINGS:
        cells = dates.SPELLING_FORMAT_CELLS[f]
        if f in dates.NAMED_FORMATS:
            continue
        total = sum(spelled[c] for c in cells)
        k = len(cells)
        bar = NUMBER_SHARE * present - margin * math.sqrt(
            (k + NUMBER_SHARE**2) / (1 + NUMBER_SHARE**2)
        )
        if total < bar or total < max(zero, SPELLED_SIGMAS * math.sqrt(k) * _sigma(rho, ctx.l2)):
            continue
        if len(cells) > 2 and spelled[cells[0]] < FORM_SIGMAS * _sigma(rho, ctx.l2):
            continue
        passing.append((total, f))
    if not passing:
        return None
    fmt = max(passing, key=lambda p: p[0])[1]  # the first of equal maxima
    chosen = [spelled[c] for c in dates.SPELLING_FORMAT_CELLS[fmt]]
    return fmt, replace(col, times=spelled_times(col, fmt)[1]), chosen


def _time_edges(lo: int, hi: int) -> np.ndarray:
    """The first day of each year (``lo`` and ``hi`` years) or of each month from ``lo`` to
    ``hi`` (``(year, month)`` pairs as ``12 year + month - 1``), in seconds."""
    out = []
    for m in range(lo, hi + 1):
        y, mo = divmod(m, 12)
        cell = dates.iso_cell(f"{y:04d}-{mo + 1:02d}-01")
        assert cell is not None
        out.append(cell[0])
    return np.array(out, dtype=np.float64)


def _time_run(
    name: str,
    values: np.ndarray,
    edges: np.ndarray,
    rho: float,
    label: str,
    ctx: _Context,
    span: int | None = None,
) -> tuple[float, float, np.ndarray] | None:
    """The bounds of :func:`~dpquery.privacy.quantiles.private_bounds` over the public time
    buckets ``edges`` (one discrete Gaussian histogram at ``rho``, charged before it draws),
    grown past the union bound as :func:`grown_past` grows a number's (a small table: grown
    from the mode, as :func:`_bounds`), and the buckets' noisy counts; None when no bucket
    is occupied. There is no 0 to cross on the time axis. ``span``: a side that stops then
    grows by a block of ``span``, ``2 span`` or ``4 span`` buckets at once when the block's
    noisy sum reaches what as many empty buckets' noise reaches with at most
    :data:`BOUND_STEP_RATE`, until no block passes (the years' histogram:
    :data:`TIME_GROW_YEARS`)."""
    k = edges.size - 1
    one = discrete_gaussian_sigma2(rho, ctx.l2)
    w = min(BOUND_WINDOW, k)
    window = (w, partition_threshold(one * w, BOUND_FALSE_RATE / (k - w + 1)))
    grow = None
    if ctx.small:
        grow = (partition_threshold(one, SMALL_BOUND_STEP_RATE),
                partition_threshold(one * w, SMALL_BOUND_STEP_RATE))  # fmt: skip
    threshold = bucket_threshold(rho, k, BOUND_FALSE_RATE, ctx.l2)
    # private_bounds' histogram and reading, apart so that the wide windows read its counts
    e, counts = bounds_histogram(
        values, rho=rho, rng=ctx.rng, ledger=ctx.ledger, edges=edges,
        name=f"{name}: {label} (discrete Gaussian histogram)", sensitivity=ctx.l2,
    )  # fmt: skip
    found = read_bounds(counts, e, threshold, window, grow)
    if found is None and span is not None:  # the years: no year, nor run of w, passed alone
        return wide_time_run(counts, e, one)
    if found is None:
        return None
    lo, hi, noisy = found
    if not ctx.small:
        first = int(np.searchsorted(edges, lo))
        last = int(np.searchsorted(edges, hi)) - 1
        step = partition_threshold(one, BOUND_STEP_RATE)
        run = grown_run(noisy, (first, last), threshold, step, math.inf, w, None)
        while span is not None:  # a tail spread thinly over the years, none occupied alone
            before = run
            for k in (span, 2 * span, 4 * span):  # the smallest block that passes
                run = grown_run(noisy, run, threshold, step,
                                partition_threshold(one * k, FAR_WINDOW_RATE), k, None)  # fmt: skip
            if run == before:
                break
        lo, hi = float(edges[run[0]]), float(edges[run[1] + 1])
    return lo, hi, noisy


TIME_WIDE_WINDOWS = (10, 40)
"""When no year of the years' histogram (nor a run of :data:`BOUND_WINDOW` of them) reaches its
threshold, sliding windows of this many years are read on the same noisy counts, the narrower
first (:func:`wide_time_run`): a small table's dates spread over a few years hold about as
many records a year as a year's noise sd (838 murders of 2006 to 2011, 94 to 172 a year,
against a year's sd near 55 and its threshold near 220), and were released in one bin over
the whole axis, ``[1800, 2200)`` (KS 0.5). Post-processing of the years' noisy counts."""


def wide_time_run(
    noisy: np.ndarray, edges: np.ndarray, one: Fraction | float
) -> tuple[float, float, np.ndarray] | None:
    """The bounds of the years' histogram read in wide windows: for the first width ``w`` of
    :data:`TIME_WIDE_WINDOWS` that has one, the union of the windows of ``w`` consecutive
    buckets whose noisy counts (variance ``one`` each) sum to at least what an empty window's
    noise reaches with probability :data:`BOUND_FALSE_RATE` over all the windows of that
    width; None when no window of any width passes. An empty axis passes a width with
    probability at most :data:`BOUND_FALSE_RATE`, so at most ``len(TIME_WIDE_WINDOWS)``
    times it in all. A window that passes holds records somewhere in it, not at both of its
    ends: the bounds may be up to ``w - 1`` buckets wider on each side than the data (a
    small table's bins inside them are the years', a larger one's the quantiles'). Reads only the
    noisy counts and public thresholds: post-processing, no charge."""
    k = edges.size - 1
    for w in TIME_WIDE_WINDOWS:
        if w > k:
            continue
        sums = np.convolve(noisy, np.ones(w, dtype=np.int64), "valid")
        passing = np.flatnonzero(
            sums >= partition_threshold(one * w, BOUND_FALSE_RATE / (k - w + 1))
        )
        if passing.size:
            return float(edges[passing[0]]), float(edges[passing[-1] + w]), noisy
    return None


def _time_bounds(
    name: str, values: np.ndarray, rho: float, ctx: _Context
) -> tuple[tuple[float, float] | None, float, np.ndarray]:
    """The private bounds of a time column, the rho spent and the public buckets they were
    read on: a histogram of years over :data:`TIME_YEARS` at half of ``rho``, then, when the
    years found span at most :data:`TIME_MONTH_YEARS`, one of the months inside them at the
    other half (the choice reads only the first histogram's output: adaptive composition,
    each charged before its draw); when it finds none, the years' bounds stand, and on a
    side where the months beyond its run hold data (:func:`months_beyond`), the years'
    bound on that side stands."""
    y0, y1 = TIME_YEARS
    years = _time_edges(12 * y0, 12 * y1)[::12]
    run = _time_run(name, values, years, rho / 2, "bounds, years", ctx, span=TIME_GROW_YEARS)
    if run is None:
        return None, rho / 2, years
    found = run[:2]
    first = int(np.searchsorted(years, found[0]))
    last = int(np.searchsorted(years, found[1]))
    if last - first > TIME_MONTH_YEARS:
        return found, rho / 2, years
    months = _time_edges(12 * (y0 + first), 12 * (y0 + last))
    inner = _time_run(name, values, months, rho / 2, "bounds, months", ctx)
    if inner is None:
        return found, rho, months
    lo, hi, noisy = inner
    low, high = months_beyond(noisy, months, (lo, hi), discrete_gaussian_sigma2(rho / 2, ctx.l2))
    return (float(months[0]) if low else lo, float(months[-1]) if high else hi), rho, months


MONTHS_CLIP_SHARE = 0.1
"""A side of the months' run is cut (the year's bound not kept) only when the noisy sum of
the months beyond it is within this share of the run's noisy mass (:func:`months_beyond`)."""


def months_beyond(
    noisy: np.ndarray, months: np.ndarray, run: tuple[float, float], one: Fraction | float
) -> tuple[bool, bool]:
    """Whether the months below and above the months' ``run`` (inside the years' bounds)
    hold data: their noisy counts (``noisy``, noise variance ``one`` each) sum to what an
    empty run of as many months reaches with at most :data:`FAR_WINDOW_RATE`. The run is
    grown from one bucket, month by month, and stops at the first month whose noisy count
    fails: where the months hold about as many records as their noise sd (a small table's
    1,922 homicides of 2015, about 160 a month at a months' sd near 100), it stopped at
    January on a year whose other eleven months held 1,700 records; their sum, noisy at
    sd ``sqrt(11)`` times a month's, is far above it. The years' bounds already hold those
    months (the months' histogram only narrows them), so such a side keeps the year's bound.
    A side also keeps it unless its months' noisy sum is within :data:`MONTHS_CLIP_SHARE` of
    the run's noisy mass: where the run holds about as much as its noise, the first test's
    failure is no sign that the months beyond hold little (Gestation's 1,236 births of
    September 1964 to September 1965, at 23 columns a month's sd near 120: on one seed the
    run stopped at January 1965, 95 records read as 425, and the eleven months after it, 765
    records read as 690, fell below the test's 1,461, so the dates were released in one
    month, KS 0.62; and ``pp``'s dates of July 2012 to July 2014, under replace-one, were cut
    to December 2012 to October 2013, 36% of them clipped). An empty side is still cut unless
    its noise's sum exceeds a tenth of the run's mass (at 4,000 dates of one month and a
    month's sd near 50, nine months beyond: about 2.6 sd, 0.5%).
    Post-processing of the months' noisy counts and public thresholds: no charge."""
    a = int(np.searchsorted(months, run[0]))
    b = int(np.searchsorted(months, run[1]))
    k = months.size - 1
    inside = max(0.0, float(np.sum(noisy[a:b])))  # the run's noisy mass

    def holds(lo: int, hi: int) -> bool:
        if hi <= lo:
            return False
        beyond = float(np.sum(noisy[lo:hi]))
        if beyond >= partition_threshold(one * (hi - lo), FAR_WINDOW_RATE):
            return True
        # not shown to hold data: the side is cut only when its months' noisy sum is also a
        # small share of the run's, not when the run itself is of the noise's order
        return beyond > MONTHS_CLIP_SHARE * inside

    return holds(0, a), holds(b, k)


def _time_grid(lo: float, hi: float, unit: int) -> np.ndarray:
    """The bin edges' public candidates: ``lo``, ``hi`` and every multiple of the finest
    step of :data:`TIME_STEPS` at least ``unit`` from ``lo``, at most :data:`TIME_CANDIDATES`
    of them."""
    steps = [s for s in TIME_STEPS if s >= unit] or [TIME_STEPS[-1]]
    step = next((s for s in steps if (hi - lo) / s <= TIME_CANDIDATES), steps[-1])
    return np.unique(np.concatenate([[lo, hi], np.arange(lo, hi, step, dtype=np.float64)]))


ZONE_STREAM = 0x7A6F6E65
"""The spawn key of the zone classes' own stream (:func:`_own_stream`, :func:`_time_format`)."""
MIDNIGHT_STREAM = 0x6D69646E
"""The spawn key of the midnight cells' own stream (:func:`_own_stream`): the format
histograms' cells of times always midnight (:func:`_time_format`, :func:`_common_format`)."""
ZEROS_STREAM = 0x7A65726F
"""The spawn key of the ISO histogram's cells of whole hours and whole minutes' own stream
(:func:`_own_stream`, :func:`_time_format`)."""


def iso_format_counts(col: _Column) -> np.ndarray:
    """The exact counts :func:`_time_format` measures: the column's ISO values by format
    class (:data:`~dpquery.data.dates.ISO_CLASSES`, 13; the four classes with a time and no
    zone without their values at midnight, whole hours and, written with seconds, whole
    minutes), then those values at midnight by class
    (:data:`~dpquery.data.dates.ISO_MIDNIGHT_FORMATS`, 4), then the others at whole hours by
    class (:data:`~dpquery.data.dates.ISO_HOUR_FORMATS`, 4), then the others written with
    seconds at whole minutes (:data:`~dpquery.data.dates.ISO_MINUTE_FORMATS`, 2). Each value
    is in one cell of the 23, so the vector moves by L2 at most 1 when a record is added or
    removed and ``sqrt(2)`` when one is replaced."""
    own = col.time_classes.copy()
    base, hours = len(dates.ISO_FORMATS), len(dates.ISO_HOUR_FORMATS)
    own[1:base] -= col.midnight + col.whole[:hours]  # a value in a cell of zeros: there only
    own[2:base:2] -= col.whole[hours:]  # whole minutes, written with seconds
    return np.concatenate([own, col.midnight, col.whole])


def _time_format(name: str, col: _Column, rho: float, ctx: _Context) -> tuple[str, list[int]]:
    """The ISO format of an undeclared date column: a discrete Gaussian histogram of its
    values' format classes (:data:`~dpquery.data.dates.ISO_CLASSES`, L2 sensitivity
    ``ctx.l2``: ``sqrt(2)`` under replace-one, 1 under add/remove), read as the decimals'
    (:func:`precision_of` on day, minute and second, the last two each summing two classes,
    with the cells below), the time after a ``T`` when those classes' noisy sum exceeds the space's.

    The classes with a zone (:data:`~dpquery.data.dates.ZONE_FORMATS`, ``Z`` then an offset)
    are cells of the same histogram: one value is in one class of the 13, so the vector moves
    by ``ctx.l2`` as the five classes without a zone did, and its discrete Gaussian at the
    same sigma is the charged ``rho``-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4): the
    one charge, made before the first draw, covers them. Their noise is drawn from a stream
    of their own (``ctx.zone_rng``), so the five classes are drawn as before. When the zone
    classes' noisy sum exceeds the five's, the column's format is the zone's (``Z`` or the
    offset, whichever sum is larger) read from its four classes alike, to the minute at
    least; otherwise the five decide, as before.

    The values of the four classes with a time and no zone whose time is midnight
    (``00:00``, ``00:00:00``) are four cells of their own (:data:`_Column.midnight
    <_Column>`, after the zones', noise from ``ctx.midnight_rng``); those at other whole
    hours four more, and those written with seconds at whole minutes (not hours) two more
    (:data:`_Column.whole <_Column>`, noise from ``ctx.zeros_rng``). The classes then do not
    count them: a value is still in one cell of the 23, so the same sensitivity and the same
    one charge cover them, and the streams of their own leave every other cell's draw as it
    was. Each class is read as the sum of its cells (the seconds' two classes sum eight:
    :func:`precision_of` is given their sd, ``sqrt(8) sigma``); the chosen precision's cells,
    both separators summed (sd ``sqrt(2) sigma`` each), coarse to fine (midnight, whole
    hours, with seconds written whole minutes, the others) then give the time's precision by
    :func:`_finest`, the common formats' rule: at midnight, the format is
    :data:`~dpquery.data.dates.ISO_MIDNIGHT_FORMATS`' (a date's, written ``T00:00:00``); at
    whole hours :data:`~dpquery.data.dates.ISO_HOUR_FORMATS`' (``%Y-%m-%d %H:00:00``); at
    whole minutes :data:`~dpquery.data.dates.ISO_MINUTE_FORMATS`' (``%Y-%m-%d %H:%M:00``,
    pandas' datetime to the minute). Post-processing of the noisy histogram."""
    base, zoned = len(dates.ISO_FORMATS), len(dates.ISO_CLASSES)
    mids_end, hours = zoned + len(dates.ISO_MIDNIGHT_FORMATS), len(dates.ISO_HOUR_FORMATS)
    exact = iso_format_counts(col)
    noisy = discrete_gaussian_mechanism(
        exact[:base], rho=rho, sensitivity=ctx.l2, rng=ctx.rng, ledger=ctx.ledger,
        name=f"{name}: precision (discrete Gaussian)",
    )  # fmt: skip
    assert ctx.zone_rng is not None and ctx.midnight_rng is not None
    assert ctx.zeros_rng is not None
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    zones = exact[base:zoned] + sample_discrete_gaussian(
        sigma2, len(dates.ZONE_FORMATS), ctx.zone_rng
    )
    mids = exact[zoned:mids_end] + sample_discrete_gaussian(
        sigma2, len(dates.ISO_MIDNIGHT_FORMATS), ctx.midnight_rng
    )
    wholes = exact[mids_end:] + sample_discrete_gaussian(
        sigma2, len(dates.ISO_ZERO_FORMATS), ctx.zeros_rng
    )
    o = [int(x) for x in noisy]
    z = [int(x) for x in zones]
    m = [int(x) for x in mids]
    w = [int(x) for x in wholes]
    h = [0, *w[:hours]]  # by class: whole hours, then whole minutes (written with seconds)
    n = [0, 0, w[hours], 0, w[hours + 1]]
    c = [o[0], *(o[k] + m[k - 1] + h[k] + n[k] for k in range(1, base))]  # each class's sum
    one = _sigma(rho, ctx.l2)
    if sum(z) <= sum(c):
        precision = precision_of([c[0], c[1] + c[3], c[2] + c[4]], math.sqrt(8) * one)
        with_t = c[3] + c[4] > c[1] + c[2]
        at = [precision, precision + 2]  # the precision's classes, a space's and a T's
        finest = 0
        if precision > 0:  # midnight, whole hours, (whole minutes,) the others
            levels = [sum(m[k - 1] for k in at), sum(h[k] for k in at)]
            levels += [sum(n[k] for k in at)] if precision == 2 else []
            finest = _finest([*levels, sum(o[k] for k in at)], math.sqrt(2) * one)
        last = precision + 1  # the class itself: its own precision
        fmt = dates.iso_format(precision, with_t, midnight=precision > 0 and finest == 0,
                               whole=finest if 0 < finest < last else 0)  # fmt: skip
        return fmt, o + z + m + w
    sigma = math.sqrt(2) * one
    k = 0 if sum(z[:4]) >= sum(z[4:]) else 4  # Z or an offset
    t = z[k : k + 4]  # as classes 1 to 4 without a zone
    precision = max(1, precision_of([0, t[0] + t[2], t[1] + t[3]], sigma))
    fmt = dates.iso_format(precision, t[2] + t[3] > t[0] + t[1], dates.ZONES[k // 4])
    return fmt, o + z + m + w


# --- dates in a common format other than ISO 8601 (dates.COMMON_FORMATS) -----------------
COMMON_STREAM = 0x636F6D6D
"""The spawn key of the common formats test's own stream (:func:`_own_stream`)."""
COMMON_ORDER_SIGMAS = 4.0
"""The evidence of an order: month first only (or day first only) values whose noisy count
reaches this many noise sd (a column of either order holds none: noise alone passes at
about 3e-5 a column, one-sided)."""


@dataclass(frozen=True)
class CommonTest:
    """The outcome of :func:`_common_test`: the order taken (``"mdy"``, ``"dmy"``,
    ``"ymd"``), or None with the reason (``"either"``: every value reads in both orders;
    ``"both"``: values of each order; ``""``: not dates in a common format), and the noisy
    counts of :data:`~dpquery.data.dates.ORDER_CLASSES`."""

    order: str | None
    reason: str
    counts: tuple[int, ...]


def _common_cells(col: _Column) -> list[tuple[dates.CommonCell, int]]:
    """The column's distinct texts in a common format, with their counts: never a number or
    an ISO date (the profile's other classes), so the classes stay disjoint."""
    out = []
    for key, count in col.keys.items():
        if not isinstance(key, str):
            continue
        cell = dates.common_cell(key)  # a regex first: cheap
        if cell is not None and _cell(key)[1] is None and not dates.iso_cell(key):
            out.append((cell, count))
    return out


def _common_counts(col: _Column) -> np.ndarray:
    """The counts of :data:`~dpquery.data.dates.ORDER_CLASSES` (each value in one class at
    most) and then of :data:`~dpquery.data.dates.CLOCK_CLASSES` (a time of day alone)."""
    counts = np.zeros(len(dates.ORDER_CLASSES) + len(dates.CLOCK_CLASSES), dtype=np.int64)
    for cell, count in _common_cells(col):
        counts[cell.order_class] += count
    return counts


def _share_passes(count: int, cells: int, sigma: float, present: int, n: int, small: bool
                  ) -> bool:  # fmt: skip
    """The number rule's test on a noisy sum of ``cells`` classes (noise sd ``sigma`` each):
    near :data:`NUMBER_SHARE` of the ``present`` non-missing values less
    :data:`NUMBER_SIGMAS` sd of the difference, and clear of that margin from 0 (a small
    table: of half of ``n``). Post-processing."""
    margin = NUMBER_SIGMAS * sigma * math.sqrt(cells + NUMBER_SHARE**2)
    zero = min(margin, n / 2) if small else margin
    return count >= NUMBER_SHARE * present - margin and count >= zero


def common_rule(counts: list[int], sigma: float, present: int, n: int, small: bool) -> CommonTest:
    """The order of a column in a common format, read off the noisy counts of
    :data:`~dpquery.data.dates.ORDER_CLASSES` (noise sd ``sigma`` each): the number rule's
    test on the values one order reads (year first; month first only plus either; day first
    only plus either), near :data:`NUMBER_SHARE` of the ``present`` non-missing values less
    :data:`NUMBER_SIGMAS` sd of the difference and clear of 0 (a small table: of half of
    ``n``), and the evidence of one order only (:data:`COMMON_ORDER_SIGMAS` sd) while the
    conflicting order's count stays below it. Values in either order alone are refused
    (``"either"``), not guessed. Post-processing of noisy counts: public."""
    mdy, dmy, either, ymd = counts

    def passes(count: int, cells: int) -> bool:
        return _share_passes(count, cells, sigma, present, n, small)

    evidence = COMMON_ORDER_SIGMAS * sigma
    if small:
        evidence = min(evidence, n / 2)
    if passes(ymd, 1):
        return CommonTest("ymd", "", tuple(counts))
    month, day = mdy >= evidence, dmy >= evidence
    if month and day and (passes(mdy + dmy + either, 3)):
        return CommonTest(None, "both", tuple(counts))
    for order, own, other in (("mdy", month, day), ("dmy", day, month)):
        if own and not other and passes((mdy if order == "mdy" else dmy) + either, 2):
            return CommonTest(order, "", tuple(counts))
    if not month and not day and passes(either, 1):
        return CommonTest(None, "either", tuple(counts))
    return CommonTest(None, "", tuple(counts))


def _common_test(col: _Column, rho: float, present: int, ctx: _Context) -> CommonTest:
    """The common formats test: the noisy counts of the column's values by
    :data:`~dpquery.data.dates.ORDER_CLASSES`, read by :func:`common_rule`. These classes
    are disjoint from each other and from the profile's (missing, numbers, ISO dates: a value
    is in one class at most), so the whole vector (missing, numbers, ISO dates, month first
    only, day first only, either, year first) moves by at most L2 ``sqrt(2)`` when a record is
    replaced and 1 when one is added or removed (``ctx.l2``), and its discrete Gaussian at
    the profile's ``sigma`` is ``rho``-zCDP as a whole (CKS 2020, Theorem 4): the profile's
    one charge covers these draws, drawn (only for a text-like column the ISO test did not
    take) from the test's own stream (:data:`COMMON_STREAM`)."""
    assert ctx.common_rng is not None
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    noise = sample_discrete_gaussian(sigma2, len(dates.ORDER_CLASSES), ctx.common_rng)
    counts = [int(x) for x in _common_counts(col)[: len(dates.ORDER_CLASSES)] + noise]
    return common_rule(counts, _sigma(rho, ctx.l2), present, ctx.n, ctx.small)


# --- a time of day alone (dates.CLOCK_FORMATS) ----------------------------------------------
CLOCK_STREAM = 0x636C6F63
"""The spawn key of the time of day test's own stream (:func:`_own_stream`)."""


def _clock_test(col: _Column, rho: float, present: int, ctx: _Context) -> tuple[bool, int]:
    """The time of day test: the noisy count of the column's values written as a time of
    day alone (:data:`~dpquery.data.dates.CLOCK_CLASSES`), read by the number rule's test
    (:func:`_share_passes`); whether it passes, and the count. The class is disjoint from
    the profile's and from the common formats' (a value is in one class at most), so the
    whole vector (missing, numbers, ISO dates, the four order classes, time of day) moves by
    at most L2 ``sqrt(2)`` when a record is replaced and 1 when one is added or removed
    (``ctx.l2``), and its discrete Gaussian at the profile's ``sigma`` is ``rho``-zCDP as a
    whole (CKS 2020, Theorem 4): the profile's one charge covers this draw, made (only for a
    text-like column neither date test took) from the test's own stream
    (:data:`CLOCK_STREAM`)."""
    assert ctx.clock_rng is not None
    sigma2 = discrete_gaussian_sigma2(rho, ctx.l2)
    exact = int(_common_counts(col)[len(dates.ORDER_CLASSES)])
    count = int(exact + sample_discrete_gaussian(sigma2, 1, ctx.clock_rng)[0])
    passed = _share_passes(count, 1, _sigma(rho, ctx.l2), present, ctx.n, ctx.small)
    return passed, count


def _common_times(col: _Column, order: str) -> _Column:
    """``col`` with its times the values read in ``order`` (seconds since the epoch)."""
    pairs = [(c.seconds[order], k) for c, k in _common_cells(col) if order in c.seconds]
    secs = np.array([s for s, _ in pairs], dtype=np.float64)
    return replace(col, times=np.repeat(secs, [k for _, k in pairs]))


def _finest(counts: list[int], sd: float) -> int:
    """The finest of the precision classes ``counts`` (coarse to fine) holding
    :data:`DECIMALS_MASS` of their noisy total and :data:`DECIMALS_SIGMAS` sd, the finest
    when none does (a time written to the minute is never cut to the hour by noise alone)."""
    floor = max(DECIMALS_MASS * sum(max(c, 0) for c in counts), DECIMALS_SIGMAS * sd)
    passing = [k for k, c in enumerate(counts) if c >= floor]
    return max(passing) if passing else len(counts) - 1


def common_format_counts(col: _Column, order: str) -> np.ndarray:
    """The exact counts :func:`_common_format` measures, of the column's values read in
    ``order``: by separator (3), time form (:data:`~dpquery.data.dates.TIME_FORMS`, 6: its
    classes to the hour without the values at midnight), leading zeros (3), then the time
    forms' values at midnight (``0:00``, ``0:00:00``: 2; none for a time of day, ``order``
    ``"clock"``, whose ``0:00`` stays in its class). Each value is in one cell of each of the
    three histograms (the time forms' of 8), so the vector moves by L2 at most ``sqrt(3)``
    when a record is added or removed and ``sqrt(6)`` when one is replaced."""
    seps = np.zeros(len(dates.SEPARATORS), dtype=np.int64)
    times = np.zeros(len(dates.TIME_FORMS), dtype=np.int64)
    pads = np.zeros(3, dtype=np.int64)
    mids = np.zeros(len(dates.MIDNIGHT_FORMS), dtype=np.int64)
    for cell, count in _common_cells(col):
        if order in cell.seconds:
            seps[cell.sep] += count
            pads[cell.pad] += count
            if order != "clock" and cell.time in (1, 3) and cell.seconds[order] % dates.DAY == 0:
                mids[cell.time // 2] += count  # 0:00 (H:00) or 0:00:00 (H:00:00)
            else:
                times[cell.time] += count
    return np.concatenate([seps, times, pads, mids])


def _common_format(name: str, col: _Column, order: str, rho: float, ctx: _Context
                   ) -> tuple[str | None, list[int]]:  # fmt: skip
    """The common format of a date column in ``order``: the counts of its values by
    separator (3), time form (:data:`~dpquery.data.dates.TIME_FORMS`, 6) and leading zeros
    (none below 10, one written without, with: 3), one discrete Gaussian over the three
    histograms together, charged before it draws. Each value is in one cell of each, so the
    vector moves by L2 at most ``sqrt(3)`` when a record is added or removed and ``sqrt(6)``
    when one is replaced (``sqrt(3) ctx.l2``); each count is read alone (post-processing):
    the separator of the largest count; the time written (none, ``H:MM``, ``H:MM:SS``) of the
    largest sum, then its finest precision holding :data:`DECIMALS_MASS` of it
    (:func:`_finest`); the leading zeros when the values written with them outnumber those
    written without. Three histograms of one cell per value each, rather than one of 54 cells,
    so that no decision reads a sum of many cells' noise. A time of day alone (``order``
    ``"clock"``) whose largest sum is of the values written with no time is refuted: the
    format is ``None`` (a small table's text column can pass the time of day test on its
    noise alone; its values are in no time class, and a time of day has no date to write).

    A date's time form has two more cells, its values at midnight (``0:00``, written
    ``H:MM``; ``0:00:00``, written ``H:MM:SS``: :data:`~dpquery.data.dates.MIDNIGHT_FORMS`),
    which its classes to the hour then do not count: a value is still in one cell of the
    time forms' histogram, now of 8, so the same sensitivity and the same one charge cover
    them, their noise drawn from a stream of their own (``ctx.midnight_rng``, appended after
    the 12 cells). The time written is then that of the largest sum with its midnight cell,
    and its precision the finest of midnight, the hour, the minute (and the second) holding
    :data:`DECIMALS_MASS` of it (:func:`_finest`): midnight when only its values do, the
    format then a date's written at midnight (``M/D/YYYY 0:00:00``)."""
    split = order != "clock"  # a time of day at midnight is a time of day
    exact = common_format_counts(col, order)
    sensitivity = math.sqrt(3) * ctx.l2
    noisy = discrete_gaussian_mechanism(
        exact[:12], rho=rho, sensitivity=sensitivity, rng=ctx.rng, ledger=ctx.ledger,
        name=f"{name}: date format (discrete Gaussian)",
    )  # fmt: skip
    h = [int(x) for x in noisy]
    if split:
        assert ctx.midnight_rng is not None
        sigma2 = discrete_gaussian_sigma2(rho, sensitivity)
        mids = exact[12:] + sample_discrete_gaussian(sigma2, 2, ctx.midnight_rng)
        h += [int(x) for x in mids]
    s, t, p = h[:3], h[3:9], h[9:12]
    m = h[12:] if split else [0, 0]
    allowed = [i for i in range(3) if not (order == "ymd" and dates.SEPARATORS[i] == "-")]
    sep = max(allowed, key=lambda i: s[i])
    one = _sigma(rho, sensitivity)
    form = int(np.argmax([t[0], m[0] + t[1] + t[2], m[1] + sum(t[3:])]))
    if order == "clock" and form == 0:
        return None, h
    time = 0
    if form:
        first, classes = ((1, [m[0], *t[1:3]]), (3, [m[1], *t[3:]]))[form - 1]
        k = _finest(classes if split else classes[1:], one) + (0 if split else 1)
        time = dates.MIDNIGHT + form - 1 if k == 0 else first + k - 1
    padded = p[2] > p[1]
    return dates.common_format(order, dates.SEPARATORS[sep], time, padded), h


def _dates(
    name: str, col: _Column, rho: float, missing: tuple[int, float], ctx: _Context,
    fmt: str | None = None, order: str | None = None,
) -> tuple[Numeric | None, str, dict[str, Any], float]:  # fmt: skip
    """A date column learned from ``rho`` as a quantity on the time axis: its format (a
    declared one, or :func:`_time_format`'s), bounds (:func:`_time_bounds`), ``bins - 1``
    quantiles by the exponential mechanism over :func:`_time_grid` (a small table: the
    bounds' buckets inside them, post-processing) and a missing flag as a number's; and the
    rho spent. ``order``: a common format's (:func:`_common_format`), undeclared. Where that
    refutes a time of day, ``None`` in place of the attribute, with the rho spent."""
    share = DECIMALS_SHARE / (1 - PROFILE_SHARE)
    more: dict[str, Any] = {}
    spent = 0.0
    if fmt is None:
        learned_fmt, more["format_histogram"] = (
            _time_format(name, col, share * rho, ctx) if order is None  # ISO 8601
            else _common_format(name, col, order, share * rho, ctx)
        )  # fmt: skip
        spent += share * rho
        if learned_fmt is None:  # a time of day its format's counts refute
            return None, "", more, spent
        fmt = learned_fmt
        rest = (1 - share) * rho
    else:
        rest = rho
    unit = dates.format_unit(fmt)
    clock = order == "clock" or fmt in dates.CLOCK_FORMATS
    found: tuple[float, float] | None
    if clock:  # a time of day: the day is its public bounds, nothing spent on them
        found, buckets = (0.0, float(dates.DAY)), np.arange(0.0, dates.DAY + 1, 3600.0)
        quantile_rho = rest
    else:
        found, used, buckets = _time_bounds(name, col.times, BOUNDS_SHARE * rest, ctx)
        spent += used
        quantile_rho = (1 - BOUNDS_SHARE) * rest
    more["bounds"] = found
    noisy_missing, sigma = missing
    has_missing = noisy_missing > MISSING_SIGMAS * sigma
    if found is None:  # no bucket occupied: one bin over the years' range
        lo, hi = float(buckets[0]), float(buckets[-1])
        edges = [lo, hi]
    elif ctx.small:
        lo, hi = found
        edges = sorted({lo, hi, *(float(e) for e in buckets if lo < e < hi)})
    else:
        lo, hi = found
        alphas = [i / ctx.bins for i in range(1, ctx.bins)]
        picks: list[float] = []
        if alphas:
            picks = [float(x) for x in private_quantiles(
                col.times, _time_grid(lo, hi, unit), alphas,
                epsilon=quantile_epsilon(quantile_rho, len(alphas)), rng=ctx.rng,
                ledger=ctx.ledger, name=f"{name}: quantiles (exponential mechanism)",
                add_remove=ctx.add_remove,
            )]  # fmt: skip
            spent += quantile_rho
        edges = sorted({lo, hi, *picks})
    attr = Numeric(name, tuple(edges), out_of_range="clip", missing=has_missing, integer=True,
                   time=fmt, density=LEARNED_DENSITY)  # fmt: skip
    shown = dates.written(np.array([edges[0], edges[-1]]), np.zeros(2, dtype=bool), fmt)
    over = "the day [0:00, 24:00)" if clock else f"[{shown[0]}, {shown[1]}] (clipped)"
    learned = (f"{attr.n_bins} bins over {over}, written "
               f"{fmt}" + (" + missing" if has_missing else ""))  # fmt: skip
    return attr, learned, more, spent


GIVEN_PREFIX = "categorical:"
"""A ``types`` entry ``"categorical:V1|V2|..."`` declares a column categorical over the
public values ``V1``, ``V2``, ... (a partial codebook): nothing is learned or spent on it."""


def _check_types(
    df: pd.DataFrame, types: Mapping[str, str] | None
) -> tuple[dict[str, Kind], dict[str, tuple[str, ...]], dict[str, str]]:
    """The declared kinds, the columns declared with their public categories, and the date
    columns declared with their format."""
    if types is None:
        return {}, {}, {}
    if not isinstance(types, Mapping):
        raise DPQueryError(
            f"types must map column names to 'numeric', 'categorical' or 'date', got {types!r}"
        )
    out: dict[str, Kind] = {}
    given: dict[str, tuple[str, ...]] = {}
    formats: dict[str, str] = {}
    for col, kind in types.items():
        if col not in df.columns:
            raise DPQueryError(
                f"types names the column {col!r}, which the table does not have; its columns "
                f"are {list(df.columns)[:20]}"
            )
        if isinstance(kind, str) and kind.startswith(GIVEN_PREFIX):
            values = tuple(v.strip() for v in kind[len(GIVEN_PREFIX) :].split("|"))
            if not all(values) or len(set(values)) != len(values):
                raise DPQueryError(f"types[{col!r}]: the categories in {kind!r} must be "
                                   "distinct and non-empty, separated by '|'")  # fmt: skip
            given[str(col)] = values
            out[str(col)] = "categorical"
            continue
        if isinstance(kind, str) and kind.startswith(DATE_PREFIX):
            try:
                formats[str(col)] = dates.check_format(kind[len(DATE_PREFIX) :])
            except ValueError as exc:
                raise DPQueryError(f"types[{col!r}]: {exc} (e.g. 'date:%d.%m.%Y')") from None
            out[str(col)] = "date"
            continue
        if kind not in KINDS:
            raise DPQueryError(
                f"types[{col!r}] must be 'numeric', 'categorical', 'date', "
                f"'{DATE_PREFIX}FORMAT' or '{GIVEN_PREFIX}V1|V2|...', got {kind!r}"
            )
        out[str(col)] = kind
    return out, given, formats


def _given_column(name: str, values: tuple[str, ...]) -> tuple[Categorical, ColumnReport]:
    """A column declared with its public categories: those (integers when every one is
    written as one, as a learned code's), then the catch-all and a missing category (whether
    the column has missing values is not public; an unused category costs the release a
    little noise). Nothing read, nothing spent."""
    keys: list[Hashable] = list(values)
    if all(_integer_text(v) for v in values):
        keys = [int(v) for v in values]
    taken = {str(k) for k in keys}
    other = _label(OTHER_LABEL, taken)
    missing = _label(MISSING_LABEL, taken | {other})
    attr = Categorical(name, (*keys, other, missing), missing=missing, other=other)
    shown = ", ".join(map(str, keys[:6])) + (", ..." if len(keys) > 6 else "")
    learned = f"{len(keys)} categories ({shown}) + {other} + missing, given"
    report = ColumnReport(name, "categorical", True, "declared categories (public)", 0.0, 0.0,
                          learned)  # fmt: skip
    return attr, report


PUBLIC_RULE = "public domain"
"""The rule of a column taken from a partial public domain (nothing read, nothing spent)."""


def _check_public(
    names: list[str], public: Domain | None, given: Mapping[str, tuple[str, ...]]
) -> dict[str, Attribute]:
    """The attributes of the partial domain ``public`` by name, checked against the table's
    columns: each must be one, not also declared in ``types``, and some column must be left
    to learn."""
    if public is None:
        return {}
    if not isinstance(public, Domain):
        raise TypeError(f"public must be a dpquery Domain; got {type(public).__name__}")
    absent = [a for a in public.names if a not in names]
    if absent:
        raise DPQueryError(
            f"the public domain names {absent[:5]}, which the table does not have; its "
            f"columns are {names[:20]}"
        )
    both = [a for a in public.names if a in given]
    if both:
        raise DPQueryError(f"{both[:5]} are both in the public domain and declared with "
                           "categorical:V1|V2|... types: give each column once")  # fmt: skip
    if len(public.names) == len(names):
        raise DPQueryError(
            "the public domain covers every column of the table: there is nothing to learn "
            "(use it as the domain, which costs nothing)"
        )
    return {a.name: a for a in public.attributes}


def _public_column(attr: Attribute) -> tuple[Attribute, ColumnReport]:
    """A column of the partial public domain: taken as it is, nothing read, nothing spent."""
    kind: Kind = "numeric" if isinstance(attr, Numeric) else "categorical"
    learned = f"{attr.size} values, from the public domain"
    return attr, ColumnReport(attr.name, kind, True, PUBLIC_RULE, 0.0, 0.0, learned)


def learn_domain(
    df: pd.DataFrame,
    *,
    rho: float,
    delta: float,
    rng: np.random.Generator,
    ledger: Ledger,
    types: Mapping[str, str] | None = None,
    bins: int = DEFAULT_BINS,
    neighbours: str = REPLACE_ONE,
    public: Domain | None = None,
    second_rho: float = 0.0,
    small_rho: float = 0.0,
    large_rho: float = 0.0,
) -> tuple[Domain, LearnReport]:
    """Learn a public domain for ``df`` spending ``rho`` (zCDP) on ``ledger`` and at most
    ``delta`` of partition-selection tail probability (module docstring; ``docs/learn.md``),
    under ``neighbours`` (add/remove: a noisy ``n`` from
    :data:`LEARNING_NOISY_N_SHARE` of ``rho`` first, read by every rule).

    ``types`` declares columns ``"numeric"`` or ``"categorical"`` (public knowledge: no budget
    is spent deciding them). ``public`` is a partial domain (a codebook of some of the
    columns): its columns are taken as they are, nothing read or spent on them, and the
    others share ``rho``. All randomness comes from ``rng``. The ledger must admit
    ``ZCDP(rho + second_rho + small_rho)`` (less ``1e-9`` of ``small_rho``, for float
    rounding); that is checked before any data is read.

    ``second_rho`` (in a release: :data:`SECOND_SHARE` of the learning's rho, taken from the
    decoding weights' part) is a pool, beside the columns' ``rho``, for a second partition
    selection over what the categorical columns' first did not release
    (:func:`second_plan`); the part no column needs is unspent
    (``LearnReport.second_unspent_rho``). ``small_rho`` is added to the pool of a small
    table (in a release: the decoding weights' part, which a small table does not draw, and
    :data:`SMALL_BORROW_SHARE` of the release's rho),
    whose second step (a second selection, and a finer histogram of each narrow band,
    :func:`narrow_band`) runs on the tails its first selections did not use: the tails sum
    to at most ``delta`` whatever the noise decided, so the coupling of the module's
    partition selections (each within total variation of its tail of the ideal mechanism,
    given what came before) bounds the whole learning's distance by ``delta``.
    ``large_rho`` is added to the pool of a table that is not small when :func:`large_loan`
    finds a categorical column whose first selection left out a large noisy share of the
    records (in a release: :data:`LARGE_BORROW_SHARE` of the release's rho); the ledger must
    admit ``ZCDP(rho + second_rho + max(small_rho, large_rho))``. What the pool does not
    spend is ``second_pool_rho + lent_rho - second_spent_rho`` of the report.
    """
    if not isinstance(df, pd.DataFrame):
        raise DPQueryError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0 or df.shape[1] == 0:
        raise DPQueryError(
            f"the table has {len(df)} rows and {df.shape[1]} columns: nothing to learn"
        )
    names = [c for c in df.columns]
    bad = [c for c in names if not isinstance(c, str) or not c]
    if bad or len(set(names)) != len(names):
        raise DPQueryError(f"column names must be distinct non-empty strings; got {names[:20]}")
    if (
        not isinstance(rho, int | float)
        or isinstance(rho, bool)
        or not rho > 0
        or not math.isfinite(rho)
    ):
        raise DPQueryError(f"rho must be a positive number, got {rho!r}")
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= 256:
        raise DPQueryError(f"bins must be an integer from 1 to 256, got {bins!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (dpquery.rng.make_rng); got {rng!r}")
    if not isinstance(ledger, Ledger):
        raise TypeError(f"ledger must be a dpquery.privacy.Ledger; got {ledger!r}")
    declared, given, formats = _check_types(df, types)
    known = _check_public(names, public, given)
    add_remove = check_neighbours(neighbours) == ADD_REMOVE
    l2 = marginal_sensitivity(neighbours)  # every count vector's L2 sensitivity (_Context.l2)
    # every column learned runs one partition selection (categories, or a probe); a column
    # given with its categories, or in the public domain, runs none and takes no share
    selecting = [c for c in names if c not in given and c not in known] or names
    if not (isinstance(delta, int | float) and 0 < delta < 1):
        raise DPQueryError(
            f"delta must be in (0, 1) to select the categories of {selecting[:5]}, got {delta!r}"
        )
    if (
        not isinstance(second_rho, int | float)
        or isinstance(second_rho, bool)
        or not 0 <= second_rho < math.inf
    ):
        raise DPQueryError(f"second_rho must be a non-negative number, got {second_rho!r}")
    if (
        not isinstance(small_rho, int | float)
        or isinstance(small_rho, bool)
        or not 0 <= small_rho < math.inf
    ):
        raise DPQueryError(f"small_rho must be a non-negative number, got {small_rho!r}")
    if (
        not isinstance(large_rho, int | float)
        or isinstance(large_rho, bool)
        or not 0 <= large_rho < math.inf
    ):
        raise DPQueryError(f"large_rho must be a non-negative number, got {large_rho!r}")
    # before any data; the loan less a float's residue: the three parts of a release's
    # learning can sum to an ulp above its rho, and every charge below is within its part
    lend = float(small_rho) * _SAFETY
    lend_large = float(large_rho) * _SAFETY
    ledger.check([Charge("domain learning", ZCDP(rho + second_rho + max(lend, lend_large)))])
    n, n_rho = len(df), 0.0
    if add_remove:  # n is private: every rule below reads this noisy n (post-processing)
        n_rho = LEARNING_NOISY_N_SHARE * rho
        n = noisy_n(len(df), n_rho, rng, ledger)
    per_column = column_rho(rho, len(selecting), add_remove)
    tail = float(delta) / len(selecting)
    small = check_learnable(n, per_column, tail, noisy=add_remove, sensitivity=l2)
    # a pool of rho kept for a second step (public shares): a second selection over what the
    # categories' first left out, with a part of the tail kept for it; in a small table the
    # tails no selection used (its number-like columns select nothing) instead, and a finer
    # histogram of its narrow bands (narrow_band) besides
    lent = lend if small else 0.0
    second = second_rho + lent > 0
    pool_rho = float(second_rho) + lent if second else 0.0
    pool_tail = SECOND_TAIL_SHARE * float(delta) if second and not small else 0.0
    if second and not small:
        tail = (float(delta) - pool_tail) / len(selecting)
    # a large table's finer bins under add/remove, where the release's rank candidates measure
    # a key-like column's pair at them (replace-one's release has none: it stays as it was)
    ctx = _Context(rng, ledger, large_bins(bins, n) if add_remove else bins, tail, n, small,
                   second,
                   times_rng=_own_stream(rng, DATE_STREAM), l2=l2, add_remove=add_remove,
                   half_rng=_own_stream(rng, HALF_STREAM),
                   vocab_rng=_own_stream(rng, MEMBERSHIP_STREAM),
                   codes_rng=_own_stream(rng, CODES_STREAM),
                   zone_rng=_own_stream(rng, ZONE_STREAM),
                   common_rng=_own_stream(rng, COMMON_STREAM),
                   clock_rng=_own_stream(rng, CLOCK_STREAM),
                   lattice_rng=_own_stream(rng, LATTICE_STREAM),
                   far_rng=_own_stream(rng, FAR_STREAM),
                   forms_rng=_own_stream(rng, FORMS_STREAM),
                   digits_rng=_own_stream(rng, DIGITS_STREAM),
                   scientific_rng=_own_stream(rng, SCIENTIFIC_STREAM),
                   midnight_rng=_own_stream(rng, MIDNIGHT_STREAM),
                   zeros_rng=_own_stream(rng, ZEROS_STREAM))  # fmt: skip
    attrs: list[Attribute] = []
    reports: list[ColumnReport] = []
    for name in names:
        attr: Attribute
        if name in known:
            attr, report = _public_column(known[name])
        elif name in given:
            attr, report = _given_column(name, given[name])
        else:
            col = _read(df[name])
            if name in formats:  # a declared format: its values are the dates written so
                times = dates.times_of(df[name], formats[name]).to_numpy()
                col = replace(col, times=times[~np.isnan(times)])
            attr, report = _learn_column(name, col, declared.get(name), per_column, ctx,
                                         formats.get(name))  # fmt: skip
        attrs.append(attr)
        reports.append(report)
    if second:
        n_sigma2 = float(discrete_gaussian_sigma2(n_rho, 1.0)) if add_remove else 0.0
        if small:  # the tails no selection used (a function of the public rules' outputs)
            pool_tail = max(0.0, float(delta) - math.fsum(r.delta_tail for r in reports))
        # a table that is not small borrows only when a column needs it (large_loan)
        loan = 0.0 if small else lend_large
        lent += _second_selection(attrs, reports, pool_rho, pool_tail, n_sigma2, ctx, loan)
    domain = Domain(tuple(attrs), note="learned from the data under differential privacy "
                    "(dpquery.domain_learning)")  # fmt: skip
    total_tail = math.fsum(r.delta_tail for r in reports)
    spent = math.fsum([n_rho, *(r.rho for r in reports)])
    relation = ADD_REMOVE if add_remove else REPLACE_ONE
    pool_spent = math.fsum(r.noisy.get(k, 0.0) for r in reports for k in ("second_rho", "fine_rho"))
    return domain, LearnReport(n, spent, total_tail, tuple(reports), relation, n_rho,
                               float(second_rho), pool_spent, small, lent)  # fmt: skip


def _other_mass(sel: Selection, n: int, n_sigma2: float) -> tuple[float, float]:
    """The noisy number of records a selection did not release (``n`` less its released
    noisy counts, the missing key's among them) and that estimate's noise standard
    deviation (the released counts' and, under add/remove, the noisy ``n``'s)."""
    other = n - sum(sel.released.values())
    return float(other), math.sqrt(len(sel.released) * float(sel.sigma2) + n_sigma2)


def large_loan(others: Mapping[str, tuple[float, float, float]], released: Mapping[str, int],
               n: int) -> list[str]:  # fmt: skip
    """The categorical columns of a table that is not small for which its pool borrows from
    the release: ``others`` as :func:`second_plan` reads it, ``released`` each column's number
    of keys its first selection released, ``n`` the (noisy) number of records. A column
    qualifies when it released at least one key and its noisy mass left out, less
    :data:`SECOND_SIGMAS` sd, is at least :data:`LARGE_OTHER_SHARE` of ``n``: many categories
    of mid size, of which the first threshold took the largest (a column of names, one record
    a key, releases none). Public: noisy outputs and public shares only."""
    return [c for c in others if released.get(c, 0) >= 1
            and others[c][0] - SECOND_SIGMAS * others[c][1] >= LARGE_OTHER_SHARE * n]  # fmt: skip


def second_plan(
    others: Mapping[str, tuple[float, float, float]], pool_rho: float, pool_tail: float,
    sensitivity: float = PARTITION_SENSITIVITY, extra: int = 0, prefix: bool = False,
) -> list[str]:  # fmt: skip
    """The columns given a second selection: ``others`` maps each categorical column to
    ``(noisy other mass, its sd, the first selection's sigma2)``; the pool is split equally
    over the columns kept, and a column is kept while its other mass, less
    :data:`SECOND_SIGMAS` sd, reaches the second selection's threshold
    (:func:`~dpquery.privacy.partition_selection.combined_threshold`) at that split: no key
    rarer than the threshold can pass, and an empty column would only thin the others'
    share. Repeated until the set stands (dropping a column raises the others' share and
    lowers their threshold). ``sensitivity``: the selections' L2 sensitivity (that of
    :func:`~dpquery.privacy.partition_selection.reselect_partitions`). ``extra``: the pool's
    other users (a small table's narrow bands), each taking a share as a column does.
    ``prefix`` (a small table): the columns are ranked by their other mass less its
    :data:`SECOND_SIGMAS` sd and the longest leading run of them that passes at its own
    split is kept (dropping every column that fails at once, a small table's columns all
    fail at the split over all of them). Public: noisy outputs and public shares only."""
    margin = {c: others[c][0] - SECOND_SIGMAS * others[c][1] for c in others}
    if prefix:
        ranked = sorted(others, key=lambda c: (-margin[c], c))
        for k in range(len(ranked), 0, -1):
            s2 = discrete_gaussian_sigma2(pool_rho * _SAFETY / (k + extra), sensitivity)
            if all(margin[c] >= combined_threshold(others[c][2], s2, pool_tail / k)
                   for c in ranked[:k]):  # fmt: skip
                return [c for c in others if c in ranked[:k]]
        return []
    chosen = list(others)
    while chosen:
        rho2 = pool_rho * _SAFETY / (len(chosen) + extra)
        s2 = discrete_gaussian_sigma2(rho2, sensitivity)
        tail2 = pool_tail / len(chosen)
        kept = [c for c in chosen
                if others[c][0] - SECOND_SIGMAS * others[c][1]
                >= combined_threshold(others[c][2], s2, tail2)]  # fmt: skip
        if kept == chosen:
            break
        chosen = kept
    return chosen


def _second_selection(
    attrs: list[Attribute], reports: list[ColumnReport], pool_rho: float, pool_tail: float,
    n_sigma2: float, ctx: _Context, loan: float = 0.0,
) -> float:  # fmt: skip
    """The second selection over what the categorical columns' first did not release
    (:func:`~dpquery.privacy.partition_selection.reselect_partitions`), on the columns of
    :func:`second_plan`, then a small table's narrow bands' finer histograms
    (:func:`_fine_edges`), each charged its equal share of the pool (a band at most what
    its column spent first) before any draw; ``attrs`` and ``reports`` updated in place. An
    integer band gives :data:`LATTICE_SHARE` of its share to its lattice test
    (:func:`lattice_test`, a charge of its own), drawn first from the test's stream; when it
    finds a lattice (:func:`on_lattice`) the band's edges are put on it
    (:func:`lattice_edges`) and the column decodes to its points (``Numeric.lattice``).

    ``loan`` (a table that is not small) joins the pool when :func:`large_loan` names a
    column, before the plan; the loan so taken is returned (0 otherwise)."""
    others = {}
    for name, (sel, _, _) in ctx.held.items():
        other, sd = _other_mass(sel, ctx.n, n_sigma2)
        others[name] = (other, sd, float(sel.sigma2))
    released = {name: len(sel.released) for name, (sel, _, _) in ctx.held.items()}
    taken = loan if loan > 0 and large_loan(others, released, ctx.n) else 0.0
    pool_rho += taken
    narrow = [a.name for a in attrs if a.name in ctx.narrow]  # the table's column order
    chosen = (second_plan(others, pool_rho, pool_tail, ctx.l2, len(narrow), prefix=ctx.small)
              if pool_tail > 0 else [])  # fmt: skip
    if not chosen and not narrow:
        return taken
    rho2 = pool_rho * _SAFETY / (len(chosen) + len(narrow))
    tail2 = pool_tail / max(1, len(chosen))
    index = {a.name: i for i, a in enumerate(attrs)}
    # a band takes at most what its column spent first: when its cells turn out too thin
    # (_fine_edges), the release loses no more than that
    cap = BAND_CAP if ctx.add_remove else 1.0
    fine_rho = {c: min(rho2, cap * reports[index[c]].rho) for c in narrow}
    # an integer band's lattice test (lattice_test) takes LATTICE_SHARE of its band's rho
    tested = {c: LATTICE_SHARE * r if ctx.narrow[c][1] == 0 else 0.0 for c, r in fine_rho.items()}
    charges = [Charge(f"{c}: second partition selection", ZCDP(rho2)) for c in chosen]
    charges += [Charge(f"{c}: finer bounds", ZCDP(r - tested[c])) for c, r in fine_rho.items()]
    charges += [Charge(f"{c}: lattice", ZCDP(r)) for c, r in tested.items() if r > 0]
    ctx.ledger.check(charges)
    for name in [a.name for a in attrs if a.name in chosen]:  # the table's column order
        sel, held, keys = ctx.held[name]
        again = reselect_partitions(
            keys, held, sel, rho=rho2, delta_tail=tail2, rng=ctx.rng, ledger=ctx.ledger,
            name=f"{name}: second partition selection (discrete Gaussian)", sensitivity=ctx.l2,
        )  # fmt: skip
        both = replace(sel, released={**sel.released, **again.released})
        attr, learned = _categorical(name, both)
        i = index[name]
        first = attrs[i]
        if (
            isinstance(first, Categorical)
            and first.other_missing
            and set(again.released) <= {_MISSING}
        ):  # too few values (too_few), and still no value released: released as missing
            attr, learned = too_few(attr, learned)
        old = reports[i]
        noisy = old.noisy | {"second_rho": rho2, "second_released": len(again.released),
                             "second_threshold": again.tau, "other": others[name][0]}  # fmt: skip
        attrs[i] = attr
        reports[i] = replace(old, rho=old.rho + rho2, delta_tail=old.delta_tail + tail2,
                             learned=learned + f" ({len(again.released)} by a second selection)",
                             noisy=noisy)  # fmt: skip
    for name in narrow:
        values, decimals, bounds, band, whole, own, holds = ctx.narrow[name]
        grid, lattice_more = None, {}
        if tested[name] > 0:  # charged above, then drawn (its own stream)
            cells, lattice_sd = lattice_test(name, values, tested[name], ctx)
            grid = on_lattice(cells, lattice_sd)
            lattice_more = {"lattice_counts": [int(c) for c in cells], "lattice": grid}
        band_rho = fine_rho[name] - tested[name]
        outer = None if whole == bounds else whole  # a core's band: the rest a cell a side
        # the cells from the band's noisy mass (charged with the bounds): as many as its
        # noise lets a run of them pass
        # (add/remove alone: a replace-one release stays as it was, byte for byte)
        most = FINE_CELLS
        if MASS_CELLS and ctx.add_remove:
            most = mass_cells(own, band_rho, ctx.l2)
        fine = _fine_edges(name, values, band_rho, decimals, bounds, band, ctx, outer, own,
                           most, holds)  # fmt: skip
        i = index[name]
        old = reports[i]
        learned = old.learned
        numeric = attrs[i]
        assert isinstance(numeric, Numeric)
        if fine is not None and fine[2]:
            attrs[i] = numeric = replace(numeric, edges=tuple(fine[1]))
            learned += f"; finer: {numeric.n_bins} bins over [{fine[1][0]:g}, {fine[1][-1]:g}]"
        elif fine is not None:  # a short run: its edges inside the band, the rest a bin a side
            rest = [e for e in numeric.edges if not bounds[0] <= e <= bounds[1]]
            attrs[i] = numeric = replace(numeric, edges=tuple(sorted({*rest, *fine[1]})))
            learned += (
                f"; finer: {len(fine[1]) - 1} bins over [{bounds[0]:g}, {bounds[1]:g}]"
                f", a run [{fine[0][0]:g}, {fine[0][1]:g}] short of the band's mass"
            )
        if grid is not None:  # the edges on the lattice, its points the values decoded
            edges = lattice_edges(list(numeric.edges), grid)
            attrs[i] = replace(numeric, edges=tuple(edges), lattice=grid)
            learned += f"; on the lattice {grid[1]} + {grid[0]} j: {len(edges) - 1} bins"
        elif fine is not None and fine[3] is not None:  # a band of points: at its cells
            sigma2 = float(discrete_gaussian_sigma2(band_rho, ctx.l2))
            attrs[i] = point_cells(numeric, *fine[3], sigma2)
            if attrs[i] is not numeric:
                learned += "; decoded at its finer cells (points)"
        kept = None if fine is None or not fine[2] else fine[0]  # the run as the bounds
        short = {"short_run": fine[0]} if fine is not None and not fine[2] else {}
        noisy = old.noisy | lattice_more | short | {"fine_rho": fine_rho[name],
                             "fine_bounds": kept}  # fmt: skip
        reports[i] = replace(old, rho=old.rho + fine_rho[name], learned=learned, noisy=noisy)
    return taken


def column_rho(rho: float, columns: int, add_remove: bool) -> float:
    """A column's share of a learning at ``rho`` (after the noisy ``n`` under add/remove)."""
    n_rho = LEARNING_NOISY_N_SHARE * rho if add_remove else 0.0
    return (rho - n_rho) * _SAFETY / columns


def bounds_need(rho: float, sensitivity: float = PARTITION_SENSITIVITY) -> int:
    """The fewest records a small table's numeric column needs for bounds at a column's
    ``rho``: the threshold its bounds' mode bucket must reach (:func:`_bounds`: the union
    bound of :data:`BOUND_FALSE_RATE` over the integers' magnitude buckets, the fewest of any
    precision), at the share of ``rho`` its bounds get (all but its profile and precision,
    :data:`SMALL_BOUNDS_SHARE` of that). All of them in one bucket: fewer pass no bucket and
    no run. Public: the budget alone."""
    share = (1 - PROFILE_SHARE - DECIMALS_SHARE) * SMALL_BOUNDS_SHARE
    k = magnitude_buckets(min_exponent=0).size - 1
    return bucket_threshold(share * rho, k, BOUND_FALSE_RATE, sensitivity)


def size_limits(rho: float, delta: float, columns: int, add_remove: bool) -> tuple[int, int]:
    """``(small, refused)``: a learning at ``rho`` and tail ``delta`` over ``columns``
    columns uses the small-table rules below ``small`` records and refuses below ``refused``
    (:func:`check_learnable`; the noisy ``n`` and L2 sensitivity 1 under add/remove, as the
    learning's selections). Public: reads no data."""
    per = column_rho(rho, columns, add_remove)
    l2 = marginal_sensitivity(ADD_REMOVE if add_remove else REPLACE_ONE)
    tau = partition_threshold(discrete_gaussian_sigma2(per, l2), delta / columns)
    need = min(tau, bounds_need(per, l2)) if REFUSE_ON_BOUNDS else tau
    return math.ceil(tau / MIN_CATEGORY_SHARE), math.ceil(need / MIN_SMALL_SHARE)


REFUSE_ON_BOUNDS = False
"""Whether a table is refused only when neither a category nor a numeric column's bounds
can pass at half of its records (:func:`check_learnable`, :func:`bounds_need`), in place of
the category's threshold alone. Off: measured ("Tables of many columns or few rows"), the
tables it let in (250 to 470 records) had their columns' kinds decided where half of the
records is 1.3 to 2 profile sd (healthexp's countries and life expectancies learned as
dates written YYYYMMDD, cabinet_turnover's numbers unbounded on one seed of two)."""


def check_learnable(
    n: int, rho: float, delta_tail: float, noisy: bool = False,
    sensitivity: float = PARTITION_SENSITIVITY,
) -> bool:  # fmt: skip
    """Whether a table of ``n`` records is small for the budget, refusing one too small to
    learn anything, before any draw. ``tau`` is the threshold of a partition selection
    spending a whole column's ``rho`` (the most any column spends on one). Small: ``tau`` is
    above :data:`MIN_CATEGORY_SHARE` of ``n`` (no category rarer than that can be released;
    the small-table rules apply, :func:`_learn_column`). Refused: ``tau`` is above
    :data:`MIN_SMALL_SHARE` of ``n`` (a category would need about half of the records; with
    :data:`REFUSE_ON_BOUNDS`, and so is what a numeric column's bounds need,
    :func:`bounds_need`: then between the two its numeric columns are bounded and its text
    columns' selections release at most a value held by more than half of the records,
    every other one :data:`OTHER_LABEL`, which the column's rule says). Public: ``n``, the
    budget and the tail probability only (under add/remove, ``n`` is the noisy ``n``:
    ``noisy``, and the message says so). The message names the smallest ``n`` this budget
    serves. ``sensitivity``: the selection's L2 sensitivity (1 under add/remove)."""
    tau = partition_threshold(discrete_gaussian_sigma2(rho, sensitivity), delta_tail)
    if tau <= MIN_CATEGORY_SHARE * n:
        return False
    least = min(tau, bounds_need(rho, sensitivity)) if REFUSE_ON_BOUNDS else tau
    if least <= MIN_SMALL_SHARE * n:
        return True
    need = math.ceil(least / MIN_SMALL_SHARE)
    raise DPQueryError(
        ("about " if noisy else "")
        + f"{n:,} records"
        + (" (a noisy count)" if noisy else "")
        + f" are too few to learn a domain with rho={rho:.3g} per column: a "
        f"category is released only when its noisy count reaches {tau:,} ({tau / n:.0%} of the "
        f"records), so nearly every value would fall into {OTHER_LABEL}"
        + (f", and a number's bounds need {least:,} of them in one bucket" if least < tau else "")
        + f". This budget learns a "
        f"domain from at least {need:,} records ("
        + ("a category or a bounds bucket needs " if least < tau else "a category needs ")
        + f"{MIN_SMALL_SHARE:.0%} of them); give the table's codebook (--domain), or a larger "
        f"--epsilon or --domain-share, or fewer columns"
    )


def _learn_column(
    name: str, col: _Column, kind: Kind | None, rho: float, ctx: _Context,
    fmt: str | None = None,
) -> tuple[Attribute, ColumnReport]:  # fmt: skip
    attr: Attribute
    if kind == "categorical":
        sel = _select_categories(name, col, rho, ctx)
        attr, learned = _categorical(name, sel)
        counts = {"released": len(sel.released), "threshold": sel.tau}
        return attr, ColumnReport(name, "categorical", True, "declared", rho, ctx.delta_tail,
                                  learned, counts)  # fmt: skip
    profile_rho = PROFILE_SHARE * rho
    # an undeclared column's days written YYYYMMDD: a cell of the profile of their own
    digits = int(col.forms[-1]) if kind is None else 0
    noisy_missing, noisy_numbers, sigma = _profile(name, col, profile_rho, ctx, digits)
    present = max(ctx.n - max(noisy_missing, 0), 1)  # public n, or the noisy n (add/remove)
    noisy: dict[str, Any] = {"missing": noisy_missing, "numbers": noisy_numbers}
    rest = rho - profile_rho
    # numbers - 0.95 present has the noise of both counts: sd sigma sqrt(1 + 0.95^2)
    margin = NUMBER_SIGMAS * sigma * math.sqrt(1 + NUMBER_SHARE**2)
    days_written = False
    if kind is None:  # the days written YYYYMMDD (a stream of their own)
        noisy_digits = _digits_count(col, profile_rho, ctx)
        days_written = _share_passes(noisy_digits, 1, sigma, present, ctx.n, ctx.small)
        if days_written or noisy_digits >= FORM_SIGMAS * sigma:  # seen: numbers all the same
            noisy_numbers += noisy_digits
            noisy |= {"numbers": noisy_numbers, "digit_days": noisy_digits}
    few = noisy_numbers < NUMBER_SHARE * present - margin
    # about 0: within the margin of it; in a small table, where the margin can exceed half
    # the records, nearer 0 than the non-missing count (a symmetric test)
    zero = min(margin, present / 2) if ctx.small else margin
    date_rule, order = "declared", None
    if kind is None:  # the date test: the profile's third count (a stream of its own)
        noisy_dates = _date_count(col, profile_rho, ctx)
        noisy["dates"] = noisy_dates
        # the number rule's test, on the dates: near the share of the non-missing values
        # and clear of 0 (a column of numbers, or of text, holds no date). In a small table
        # clear of half the records (n, not the non-missing count: a column all missing
        # has a non-missing count near 0, which its noise alone would pass)
        date_zero = min(margin, ctx.n / 2) if ctx.small else margin
        if days_written:  # a column of days written YYYYMMDD: learned as a declared one's
            kind, fmt = "date", dates.DIGITS_FORMAT
            col = replace(col, times=digits_times(col))
            date_rule = (f"date: written YYYYMMDD, noisy {noisy['digit_days']} >= "
                         f"{NUMBER_SHARE:g} x {present} - {margin:.0f}")  # fmt: skip
        elif (few or noisy_numbers < zero) and not (
            noisy_dates < NUMBER_SHARE * present - margin or noisy_dates < date_zero
        ):
            kind = "date"
            date_rule = (f"date: noisy dates {noisy_dates} >= {NUMBER_SHARE:g} x {present} - "
                         f"{margin:.0f}")  # fmt: skip
        elif (few or noisy_numbers < zero) and (
            named := _named_passes(name, col, profile_rho, present, margin, date_zero, ctx)
        ) is not None:  # dates written with a month's name: learned as a declared one's
            kind, fmt, col = "date", named[0], named[1]
            noisy["named_dates"] = named[2]
            date_rule = f"date: written {fmt}, noisy {named[2]} (a month's name)"
        elif few or noisy_numbers < zero:  # text-like: a date in a common format?
            common = _common_test(col, profile_rho, present, ctx)
            if common.order is not None or common.reason:
                noisy |= {"common_dates": list(common.counts), "date_order": common.order
                          or common.reason}  # fmt: skip
            if common.order is not None:
                kind, order, col = "date", common.order, _common_times(col, common.order)
                date_rule = f"date: a common format, {common.order} (noisy {common.counts})"
            elif not common.reason:  # a time of day alone?
                clock, noisy_clock = _clock_test(col, profile_rho, present, ctx)
                if clock:
                    noisy["times_of_day"] = noisy_clock
                    kind, order, col = "date", "clock", _common_times(col, "clock")
                    clock_bar = NUMBER_SIGMAS * sigma * math.sqrt(1 + NUMBER_SHARE**2)
                    date_rule = (f"time of day: noisy {noisy_clock} >= {NUMBER_SHARE:g} x "
                                 f"{present} - {clock_bar:.0f}")  # fmt: skip
    if kind == "date":  # no selection: its rest buys the format, bounds and edges
        dated, learned, more, spent = _dates(name, col, rest, (noisy_missing, sigma), ctx, fmt,
                                             order)  # fmt: skip
        if dated is not None:
            return dated, ColumnReport(name, "date", date_rule == "declared", date_rule,
                                       profile_rho + spent, 0.0, learned, noisy | more)  # fmt: skip
        # a time of day refuted by its format's counts: text, selected with what is left
        noisy |= more
        kind, rest = None, rest - spent
    if kind != "numeric" and (few or noisy_numbers < zero):  # short of the share, or ~0
        sel = _select_categories(name, col, rest, ctx)
        found = membership_test(col, sel, present, profile_rho, ctx)
        if found is None or found.vocabulary is None:  # the released keys' rule
            found = released_membership(sel, present, sigma) or found
        attr, learned = (_categorical(name, sel) if found is None
                         else _categorical(name, sel, found.ruled, found.plain,
                                           found.vocabulary in CODE_VOCABULARIES))  # fmt: skip
        bar = f"{NUMBER_SHARE:g} x {present} - {margin:.0f}" if few else f"{zero:.0f}"
        rule = f"text: noisy numbers {noisy_numbers} < {bar}"
        texts = present - noisy_numbers  # the noisy count of values that are not numbers
        if (
            not few
            and texts < NUMBER_SIGMAS * sigma * math.sqrt(2)
            and not [v for v in attr.values if v not in (attr.other, attr.missing)]
        ):
            # text on the count of numbers near 0 alone (too few non-missing values for the
            # share's test), its texts' count within the noise of 0 too (two counts' noise),
            # and no value released: nothing tells its values from noise
            attr, learned = too_few(attr, learned)
            if attr.other_missing:
                floor = NUMBER_SIGMAS * sigma * math.sqrt(2)
                rule += f"; too few values: noisy texts {texts} < {floor:.0f}"
        if date_rule.startswith("time of day"):  # refuted by its format's counts
            rule += f"; not a {date_rule}, no time form"
        if found is not None:
            noisy |= found.noisy
        if found is not None and found.vocabulary is not None:
            ctx.held.pop(name, None)  # its members are listed: no second selection
            if "membership_max" in found.noisy:
                rule += (
                    f"; {found.vocabulary} ({found.case}): noisy "
                    f"{found.noisy['membership_max']} >= {MEMBERSHIP_SHARE:g} x {present}"
                )
            else:
                rule += (
                    f"; {found.vocabulary} ({found.case}): the released keys, noisy "
                    f"{found.noisy['membership_left_out']} left out >= "
                    f"{MEMBERSHIP_TAIL_SHARE:g} x {present}"
                )
        noisy |= {"released": len(sel.released), "threshold": sel.tau}
        if sel.tau > MIN_SMALL_SHARE * present and not any(k != _MISSING for k in sel.released):
            # a table a number's bounds serve but a category does not (check_learnable)
            rule += f"; every value {OTHER_LABEL}: a value needs {sel.tau:,} records, over half"
        return attr, ColumnReport(name, "categorical", False, rule, rho, ctx.delta_tail,
                                  learned, noisy)  # fmt: skip
    # a number-like or declared numeric column: its frequent values, to tell a code from a
    # quantity (undeclared) and to find its point masses (atoms)
    # (a small table: no probe, its threshold is above what most values hold; its share goes
    # to the bounds, from which an integer column's codes are read)
    probe_rho = 0.0 if ctx.small else PROBE_SHARE * rho
    probe = None if ctx.small else _select(name, col, probe_rho, ctx)
    codes = {} if probe is None else {k: v for k, v in probe.released.items() if k != _MISSING}
    mass = sum(codes.values())
    if probe is not None:
        noisy |= {"probe_released": len(codes), "probe_mass": mass, "threshold": probe.tau}
    # codes are whole numbers: a released key with a fraction ("0.05") makes a quantity, a
    # rate whose values the probe did not release are then bins, not a catch-all of text
    whole = all(_whole(k) for k in codes)
    coded = 0 < len(codes) <= MAX_CODES and mass >= CODE_MASS * present and whole
    if probe is not None and kind is None and coded:
        attr, learned = _categorical(name, probe)
        if KEYS_BELOW:
            attr, learned = codes_below(attr, learned, probe, present, sigma)
        attr, learned = numbers_codes(attr, learned)
        rule = f"code: {len(codes)} keys hold noisy {mass} >= {CODE_MASS:g} x {present}"
        return attr, ColumnReport(name, "categorical", False, rule, profile_rho + probe_rho,
                                  ctx.delta_tail, learned, noisy)  # fmt: skip
    numeric_rho = rest - probe_rho
    attr, learned, more, spent = _numeric(
        name, col, numeric_rho, (noisy_missing, sigma), ctx, probe=probe, present=present,
        codes=kind is None, numbers=noisy_numbers,
    )  # fmt: skip
    if isinstance(attr, Numeric) and attr.time is not None:  # dates written YYYYMMDD
        rule = (f"date: written YYYYMMDD, noisy {more['written_forms'][-1]} >= "
                f"{DIGITS_DATE_SHARE:g} x {noisy_numbers}")  # fmt: skip
        tail = 0.0 if probe is None else ctx.delta_tail
        return attr, ColumnReport(name, "date", False, rule, profile_rho + probe_rho + spent,
                                  tail, learned, noisy | more)  # fmt: skip
    if kind is None:  # a column of numbers learned as codes: its catch-all, missing
        attr, learned = numbers_codes(attr, learned)
    if kind == "numeric":
        rule = "declared"
    elif (
        isinstance(attr, Categorical)
        and more["bounds"] is None
        and attr.values == (OTHER_LABEL, *([attr.missing] if attr.missing else []))
    ):
        rule = "unknown: no bounds found, no value released"
    elif isinstance(attr, Categorical) and more["bounds"] is None:
        rule = "code: no bounds found, the probe's released values"
    elif isinstance(attr, Categorical) and any(isinstance(v, float) for v in attr.values):
        rule = f"code by range: whole numbers and halves, at most {MAX_CODES} in the bounds"
    elif isinstance(attr, Categorical):
        rule = f"code by range: integers, at most {MAX_CODES} in the private bounds"
    elif probe is None:
        rule = "quantity: a small table (no probe)"
    else:
        rule = f"quantity: {len(codes)} keys hold noisy {mass} of {present}"
    if probe is None and isinstance(attr, Categorical):
        rule += "; a small table (no probe)"
    out_kind: Kind = "categorical" if isinstance(attr, Categorical) else "numeric"
    used = profile_rho + probe_rho + spent
    tail = 0.0 if probe is None else ctx.delta_tail  # no selection, no tail probability
    return attr, ColumnReport(name, out_kind, kind is not None, rule, used, tail,
                              learned, noisy | more)  # fmt: skip


# --- decoding weights: a finer noisy histogram inside each learned bin --------------------
WITHIN_SHARE = 0.25
"""The share of the learning's rho spent on decoding weights (:func:`learn_within`); the
domain itself is learned from the rest."""
MAX_SUB_BINS = 8
"""At most this many equal-width sub-bins per learned bin."""
WITHIN_SIGMAS = 2.0
"""Sub-bins per bin are halved from :data:`MAX_SUB_BINS` until a cell of a bin holding an
equal share of the ``n`` records (public, or noisy under add/remove) expects this many noise
standard deviations; a column where even 2 sub-bins would not is left without weights (and
charged nothing)."""


@dataclass(frozen=True)
class WithinReport:
    """The decoding weights' cost per column (publishable: public parameters only)."""

    rho: float
    sub_bins: dict[str, int]
    sigma: float

    def to_dict(self) -> dict[str, Any]:
        return {"rho": self.rho, "sub_bins": dict(self.sub_bins), "sigma": self.sigma}


def sub_bin_counts(attr: Numeric, values: Any, k: int) -> np.ndarray:
    """The counts of ``values`` (numbers; NaN is missing and not counted) over ``k``
    equal-width sub-bins of each of ``attr``'s bins, bin by bin (``n_bins * k`` cells);
    values beyond the edges clip into the end bins. One record is in at most one cell, so
    replacing one moves at most one unit out of a cell and one into another: L2
    sensitivity ``sqrt(2)``; adding or removing one moves one cell by 1: L2 1."""
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    edges = np.asarray(attr.edges)
    x = np.clip(x, edges[0], edges[-1])
    b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, attr.n_bins - 1)
    lo, hi = edges[b], edges[b + 1]
    j = np.clip(np.floor((x - lo) / (hi - lo) * k), 0, k - 1).astype(np.int64)
    return np.bincount(b * k + j, minlength=attr.n_bins * k).astype(np.int64)


def sub_bins_for(n: int, n_bins: int, sigma: float) -> int:
    """Sub-bins per bin from public quantities (:data:`WITHIN_SIGMAS`); 0: none."""
    k = MAX_SUB_BINS
    while k >= 2 and n / (n_bins * k) < WITHIN_SIGMAS * sigma:
        k //= 2
    return k if k >= 2 else 0


def within_plan(
    domain: Domain, n: int, rho: float, sensitivity: float = PARTITION_SENSITIVITY
) -> dict[str, int]:
    """The sub-bins per numeric column that :func:`learn_within` draws at ``rho`` for ``n``
    records (0: none), from public quantities and the learned domain alone: the numeric
    columns' bins, ``n`` (public, or the learning's noisy ``n``) and the noise
    (:func:`sub_bins_for`) at the histograms' L2 ``sensitivity`` (``sqrt(2)`` under
    replace-one, 1 under add/remove). Empty when the domain has no numeric column."""
    numeric = [a for a in domain.attributes if isinstance(a, Numeric)]
    if not numeric or rho <= 0:
        return {}
    sigma = _sigma(rho / len(numeric) * _SAFETY, sensitivity)
    return {a.name: sub_bins_for(n, a.n_bins, sigma) for a in numeric}


def learn_within(
    domain: Domain,
    table: pd.DataFrame,
    *,
    rho: float,
    rng: np.random.Generator,
    ledger: Ledger,
    n: int | None = None,
    sensitivity: float = PARTITION_SENSITIVITY,
) -> tuple[Domain, WithinReport]:
    """``domain`` with decoding weights (``Numeric.within``) on its numeric columns: per
    column a discrete Gaussian histogram (L2 ``sensitivity``, :func:`sub_bin_counts`)
    of equal-width sub-bins of each bin, one charge of ``rho / columns`` each on ``ledger``
    before its draw; the noisy counts clipped at 0 and normalised per bin (a bin whose noisy
    sub-bins are all 0 keeps equal weights). The number of sub-bins depends only on the
    public ``n`` (``n``; None: ``len(table)``, replace-one), or under add/remove the noisy
    ``n`` passed as ``n``, the bins and the noise (:func:`sub_bins_for`). ``sensitivity``:
    ``sqrt(2)`` (the default) under replace-one; under add/remove a record moves one sub-bin
    by 1, so 1 (:func:`~dpquery.privacy.neighbours.marginal_sensitivity`)."""
    numeric = [a for a in domain.attributes if isinstance(a, Numeric)]
    if not numeric or rho <= 0:
        return domain, WithinReport(0.0, {}, math.inf)
    per_column = rho / len(numeric) * _SAFETY
    sigma = _sigma(per_column, sensitivity)
    plan = within_plan(domain, len(table) if n is None else n, rho, sensitivity)
    ledger.check([Charge(f"{a.name}: within-bin histogram", ZCDP(per_column))
                  for a in numeric if plan[a.name]])  # fmt: skip
    attrs: list[Attribute] = []
    spent = 0.0
    for attr in domain.attributes:
        k = plan.get(attr.name, 0) if isinstance(attr, Numeric) else 0
        if isinstance(attr, Numeric) and k:
            counts = sub_bin_counts(attr, table[attr.name], k)
            noisy = discrete_gaussian_mechanism(
                counts, rho=per_column, sensitivity=sensitivity, rng=rng, ledger=ledger,
                name=f"{attr.name}: within-bin histogram (discrete Gaussian)",
            )  # fmt: skip
            spent += per_column
            w = np.clip(np.asarray(noisy, dtype=np.float64), 0, None).reshape(attr.n_bins, k)
            w[w.sum(axis=1) == 0] = 1.0
            attr = replace(attr, within=tuple(tuple(row) for row in w.tolist()))
        attrs.append(attr)
    out = Domain(tuple(attrs), domain.non_private, domain.note)
    return out, WithinReport(spent, {n: k for n, k in plan.items() if k}, sigma)
