"""``auto``: the release dpquery makes by default, chosen for the data's shape.

The policy (measured in ``docs/choosing.md``, ``benchmarks/bench_choosing.py``) reads only
public quantities: the number of records ``n`` (under the default add/remove relation the
noisy ``n`` the fit draws first, :func:`~dpquery.privacy.neighbours.noisy_n`; under
replace-one the public ``n``), the domain (attributes ``g``, bits ``d``, values per
attribute), the budget and the workload's shape. It never looks at the data's values.

1. **adaptive-projection** (AIM's whole-marginal measurements fitted by a record set,
   :mod:`dpquery.algorithms.marginal.adaptive_projection`) whenever its record matrix fits:
   ``min(n, 50,000)`` records x ``g`` attributes within ``MAX_CODES`` codes and at most
   :data:`MAX_ATTRIBUTES` attributes (its rounds start with one measurement per attribute, so
   its time grows with ``g``), and the workload is conjunctions. It was the best release
   measured wherever it runs.
   On data partitioned on a cluster too: it reads the data only through the counts of a
   candidate list fixed in advance, which the workers count in one pass
   (:mod:`dpquery.algorithms.marginal.candidate_counts`); the records are fitted in this
   process.
2. **wide** (:mod:`dpquery.algorithms.wide`) on item data beyond that reach (free bits
   without a domain, as ``encode --transactions`` writes them, more than
   :data:`MAX_ATTRIBUTES` of them or too many codes): item
   counts, sizes and frequent pairs under a contribution bound, fitted by sparse records; it
   beat the zeros and independence tables on npm_words at 5,000 and 45,375 items
   (``docs/wide.md``), where dualquery was worse than the all-zero table. On a table of free
   bits over a domain beyond that reach (such as DualQuery's 512,000 biased bits) its dense
   mode, **wide-dense** (:mod:`dpquery.algorithms.wide.dense`): every bit's count at once,
   shrunk, and records of independent bits; it beat the uniform table there, where dualquery
   did not (``docs/choosing.md``).
3. otherwise the oracle-efficient family, which works on bits and runs at hundreds of
   thousands of them: :data:`WIDE` (see ``docs/choosing.md`` for the measurements).

:class:`Auto` resolves the choice in :meth:`Auto.plan` (public sizes only), plans the chosen
estimator (built by :func:`dpquery.algorithms.registry.build`, which the registry hands to
:attr:`Auto.catalog` when it lists this class, so it carries the same
pipeline, e.g. :class:`~dpquery.algorithms.columns.MeasuredColumns`, as when named), and runs
it on the same ledger. The :class:`~dpquery.algorithms.release.Release` carries the chosen
algorithm's name and, under ``parameters["auto"]``, the algorithm and the reason in one
sentence.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpquery.algorithms.marginal.adaptive_projection import (
    DEFAULT_MAX_RECORDS,
    MAX_CODES,
    AdaptivePlan,
    candidates_of,
    pair_candidates,
)
from dpquery.algorithms.release import Release
from dpquery.algorithms.synthesizer import (
    Outcome,
    Run,
    Synthesizer,
    ZCDPBudget,
    plans_on_noisy_n,
)
from dpquery.algorithms.wide.dense import DensePlan
from dpquery.algorithms.wide.release import WidePlan, WideRelease, noise_warning
from dpquery.data.binary import BinaryData
from dpquery.data.shape import PublicShape
from dpquery.errors import DPQueryError
from dpquery.privacy import Accountant, Budget, Ledger, ZCDPAccountant
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.privacy.delta import default_delta
from dpquery.privacy.neighbours import ADD_REMOVE, check_neighbours
from dpquery.queries import Workload
from dpquery.queries.marginals import AttributeLayout, Marginal, workload_marginals
from dpquery.rng import SeedLike

# Above this many attributes adaptive-projection's rounds (one 1-way measurement per
# attribute, then a selection over every candidate) take minutes (docs/utility.md: 1,000
# binary attributes took 43 s, 16,000 did not finish in 300 s).
MAX_ATTRIBUTES = 1000
# The algorithm for wider data (docs/choosing.md).
WIDE = "dualquery"
# The algorithm for wide binary item data (every attribute a free bit, docs/wide.md).
SPARSE = "wide"
# The algorithm for wide tables of free bits over a domain (docs/choosing.md).
DENSE = "wide-dense"
# The largest epsilon at which the wide path was measured not to beat the uniform baseline.
WIDE_MEASURED_EPSILON = 1.0
# adaptive-projection's time per round grows with (candidate marginals) x (records): each
# round scores every candidate on the records. The records are capped so that this product
# stays within WORK (docs/choosing.md: ACS, 1,740 candidates, 27,253 records took 88 s at
# epsilon 1 with scoring; 10,000 records 24 s, the same errors within seed noise), never below
# MIN_RECORDS (or n).
WORK = 20_000_000
MIN_RECORDS = 2_000


@dataclass(frozen=True)
class Choice:
    """The algorithm the policy picked, why (one sentence), the options it gets, and whether
    it was picked for the data's width (the case :func:`wide_warning` was measured on)."""

    algorithm: str
    reason: str
    options: dict[str, Any]
    wide: bool = False


def records_for(n: int, candidates: int) -> int:
    """The records adaptive-projection fits: ``min(n, 50,000)``, lowered so that
    ``candidates x records <= WORK`` but not below ``min(n, MIN_RECORDS)``."""
    fit = WORK // max(candidates, 1)
    return min(n, DEFAULT_MAX_RECORDS, max(fit, MIN_RECORDS))


def candidate_count(marginals: Sequence[Marginal], sizes: Sequence[int], n: int) -> int:
    """How many marginals adaptive-projection scores each round: its candidates (AIM's
    downward closure of the workload, and the pair candidates), as it builds them."""
    return len(candidates_of(marginals, pair_candidates(sizes, n)))


def choose(
    *, n: int, g: int, d: int, workload_kind: str, candidates: int = 0,
    size: int | None = None, partitioned: bool = False, items: bool = False,
    free_bits: bool = False, noisy: bool = False,
) -> Choice:  # fmt: skip
    """The policy of the module docstring, from public quantities only: ``n``, the attributes
    ``g`` and bits ``d``, the workload's kind and its number of candidate marginals, the
    user's ``size`` (records released; None: the policy's), whether the data is
    partitioned on a cluster (then the reason says where adaptive-projection's counts are
    computed) and whether every attribute is a free bit (``items``: a users x items table
    without a domain; ``free_bits``: over a domain); ``noisy``: ``n`` is the noisy ``n``
    (add/remove neighbours), and the reason says so."""
    records = min(n, DEFAULT_MAX_RECORDS) if size is None else size
    count = f"about {n} (a noisy count)" if noisy else f"{n}"
    beyond = records * g > MAX_CODES or g > MAX_ATTRIBUTES
    if (items or free_bits) and beyond and not partitioned and workload_kind == "conjunction":
        algorithm, kind, what = (
            (SPARSE, "binary items", "every item's count, the record sizes and the pairs of the "
             "most frequent items (on few long records, the most frequent items alone), "
             "measured and fitted by sparse records")
            if items
            else (DENSE, "free bits", "every bit's count, measured at once, shrunk, and "
                  "records of independent bits with those frequencies")
        )  # fmt: skip
        reason = (
            f"{count} records x {d} {kind} is beyond adaptive-projection's reach, so the "
            f"{algorithm} release runs: {what}"
        )
        return Choice(algorithm, reason, {} if size is None else {"size": size})
    if workload_kind != "conjunction":
        reason = f"the workload is {workload_kind} queries, which the game-based algorithms answer"
    elif records * g > MAX_CODES:
        reason = (
            f"{records} records x {g} attributes exceed adaptive-projection's "
            f"{MAX_CODES} codes, so the oracle-efficient {WIDE} runs on the {d} bits"
        )
    elif g > MAX_ATTRIBUTES:
        reason = (
            f"{g} attributes is more than the {MAX_ATTRIBUTES} adaptive-projection handles "
            f"in reasonable time, so the oracle-efficient {WIDE} runs on the {d} bits"
        )
    else:
        reason = (
            f"{count} records x {g} attributes fit adaptive-projection (whole-marginal "
            "measurements fitted by a record set), the most accurate release measured on "
            "tables of this shape"
        )
        if size is None:
            size = records_for(n, candidates)
            if size < min(n, DEFAULT_MAX_RECORDS):
                reason += (
                    f"; it fits {size} records (not {min(n, DEFAULT_MAX_RECORDS)}) so that "
                    f"scoring the workload's {candidates} candidate marginals each round "
                    "stays within a minute"
                )
        if partitioned:
            reason += (
                "; the data is partitioned on a cluster: the counts of its candidate "
                "marginals are computed on the cluster in one pass (the workers' integer "
                "counts summed exactly), the records fitted in this process"
            )
        return Choice("adaptive-projection", reason, {"size": size})
    # dualquery releases its T rounds' records: a size the user gave is refused by name
    wide = workload_kind == "conjunction"
    return Choice(WIDE, reason, {} if size is None else {"size": size}, wide)


# The pre-release check's threshold on the median attribute's expected 1-way total variation
# (:func:`expected_one_way_tv`), tuned on subsamples of adult-pgm and CPS and checked on ACS,
# KDD99 and other seeds (docs/choosing.md, benchmarks/bench_baseline_rule.py).
BASELINE_MEDIAN_TV = 0.43


class BaselineWarning(UserWarning):
    """The budget is too small for the release to be expected to beat the baselines that
    read no data (uniform, zeros); raised before anything is drawn."""


def expected_one_way_tv(plan: AdaptivePlan | DensePlan, n: int, sizes: Sequence[int]) -> np.ndarray:
    """Each attribute's expected total variation from its noisy 1-way measurement alone,
    ``|a| sqrt(2/pi) sigma_a / (2 n)`` (half the expected L1 error of ``|a|`` Gaussian
    cells, as a fraction of records): public, from the plan's noise scales."""
    a = np.asarray(sizes, dtype=np.float64)
    return 0.5 * a * math.sqrt(2 / math.pi) * np.asarray(plan.one_way) / n


def baseline_warning(
    plan: AdaptivePlan | DensePlan, n: int, sizes: Sequence[int], noisy: bool = False
) -> str | None:
    """The public pre-release check (docs/choosing.md): a message when the median over the
    attributes of the expected total variation of their noisy 1-way measurements,
    :func:`expected_one_way_tv`, is at least :data:`BASELINE_MEDIAN_TV`. Measured on real
    tables subsampled to n = 50..5,000 at epsilon 0.1..1, the release's mean total variation
    over the workload's marginals was then not below both baselines that read no data
    (zeros: 0.5 on every marginal; uniform), with few exceptions, all near 0.5; below it, the
    release beat both. The records start from these measurements, so when the typical
    column is mostly noise so are the marginals fitted on them. The same check runs on the
    dense mode of the wide release (:class:`~dpquery.algorithms.wide.dense.DensePlan`, every
    bit measured at once): on DualQuery's 512,000 biased bits (n = 20,000) its median
    expected total variation is 1.47 at epsilon 0.1, where the release matched the uniform
    table (docs/choosing.md), and 0.16 at epsilon 1, where it beat it. Reads the plan's noise
    scales, ``n`` and the attribute sizes only (all public; ``noisy``: ``n`` is the noisy
    ``n`` of add/remove neighbours, and the message says so)."""
    tv = expected_one_way_tv(plan, n, sizes)
    median = float(np.median(tv))
    if median < BASELINE_MEDIAN_TV:
        return None
    return (
        f"at this budget the noise of the 1-way measurements is as large as much of the data "
        f"(expected total variation {median:.2f} for the median attribute, {tv.min():.2f} to "
        f"{tv.max():.2f} over the {tv.size}, on {'about ' if noisy else ''}n = {n} records; "
        "measured threshold "
        f"{BASELINE_MEDIAN_TV:g}, docs/choosing.md): the release is not expected to beat the "
        "uniform or zeros baselines, which read no data; raise epsilon, or release those "
        "baselines"
    )


def wide_warning(budget: Budget, n: int) -> str | None:
    """The check of the oracle-efficient family's wide path (docs/choosing.md): at 512,000
    free bits and n = 20,000, none of them beat the uniform baseline's mean total variation
    at epsilon 0.1 or 1. ``auto`` runs the dense mode of the wide release on such free bits
    now; it still runs :data:`WIDE` on wide tables it cannot give to the wide release (one-hot
    groups beyond adaptive-projection's reach), where, at a budget of epsilon <=
    :data:`WIDE_MEASURED_EPSILON` (a zCDP budget converted at delta = 1/n^2), the release
    says so before it runs. Public: the budget."""
    if budget.measure == "zcdp":
        assert budget.rho is not None
        epsilon = zcdp_to_epsilon(budget.rho, default_delta(n))
    else:
        assert budget.epsilon is not None
        epsilon = budget.epsilon
    if epsilon > WIDE_MEASURED_EPSILON:
        return None
    return (
        f"at this width and epsilon <= {WIDE_MEASURED_EPSILON:g}, the measured releases of "
        f"{WIDE} and its family did not beat the uniform baseline's mean total variation "
        "(docs/choosing.md): the release is not expected to beat the uniform baseline, "
        "which reads no data"
    )


@dataclass(frozen=True)
class Catalog:
    """What :class:`Auto` needs of the registry: the options an algorithm takes, and its
    estimator built from options (:func:`dpquery.algorithms.registry.takes` and
    :func:`~dpquery.algorithms.registry.build`). The registry lists every algorithm, this
    class among them, and hands them over; this module never imports it."""

    takes: Callable[[str], tuple[str, ...]]
    build: Callable[..., Synthesizer]
    supports_add_remove: Callable[[str], bool]


@dataclass(frozen=True)
class AutoPlan:
    """The choice, the chosen estimator and its plan (whose budget and charges are ours),
    and the pre-release check's message (None: the release is expected to be useful)."""

    choice: Choice
    model: Synthesizer
    inner: Any
    warning: str | None = None

    @property
    def budget(self) -> Budget:
        return self.inner.budget

    def charges(self) -> list:
        return list(self.inner.charges())


@dataclass(kw_only=True, eq=False)
class Auto(ZCDPBudget, Synthesizer):
    """The default release: the algorithm :func:`choose` picks for the data's shape, run with
    this estimator's budget (module docstring). ``size`` is the number of records released
    (the chosen algorithm's default when None); ``compress``, ``column_tv`` and
    ``ordinal``, when given, go to adaptive-projection (another choice refuses them)."""

    name: ClassVar[str] = "auto"
    catalog: ClassVar[Catalog]  # set by the registry
    options: ClassVar[tuple[str, ...]] = (
        "epsilon",
        "delta",
        "rho",
        "size",
        "compress",
        "column_tv",
        "ordinal",
    )

    size: int | None = None
    compress: float | None = None  # adaptive-projection's, passed on when given
    column_tv: float | None = None
    ordinal: Sequence[str] | str | None = None
    neighbours: str = ADD_REMOVE
    seed: SeedLike = None
    progress: bool | None = None

    def validate(self) -> None:
        super().validate()
        check_neighbours(self.neighbours)

    def choose(self, data: BinaryData, workload: Workload, n: int | None = None) -> Choice:
        """The policy's choice for ``data``'s public shape and ``workload`` (``n``: the data's,
        or under add/remove the noisy ``n``)."""
        n = int(data.n) if n is None else n
        layout = AttributeLayout.of_data(data)
        # Anything but records in memory or their public shape: PartitionedData (dask).
        partitioned = not isinstance(data, BinaryData | PublicShape)
        free = len(data.onehot_groups) == 0
        candidates = 0  # adaptive-projection's, counted only where it may run
        if workload.kind == "conjunction" and layout.g <= MAX_ATTRIBUTES:
            marginals = workload_marginals(workload, layout)
            candidates = candidate_count(marginals, layout.sizes.tolist(), n)
        return choose(
            n=n, g=layout.g, d=data.d, workload_kind=workload.kind,
            candidates=candidates, size=self.size, partitioned=partitioned,
            # bits with no domain and no one-hot group: item sets (encode --transactions)
            items=free and getattr(data, "domain", None) is None, free_bits=free,
            noisy=self.neighbours == ADD_REMOVE,
        )  # fmt: skip

    def plan(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None,
        n: int | None = None,
    ) -> AutoPlan:  # fmt: skip
        """Choose (public sizes only: ``n`` the data's, or under add/remove the noisy ``n``
        the fit drew), build the chosen estimator under this estimator's relation and plan
        it."""
        add_remove = self.neighbours == ADD_REMOVE
        n = int(data.n) if n is None else n
        choice = self.choose(data, workload, n)
        own = {k: getattr(self, k) for k in ("epsilon", "delta", "rho")}
        if budget is not None and any(v is not None for v in own.values()):
            raise DPQueryError(
                f"{self.name} is spending a given ledger's budget: leave its own epsilon, "
                "delta and rho unset"
            )
        passed = {k: getattr(self, k) for k in ("compress", "column_tv", "ordinal")}
        given = {**(own if budget is None else {}), **choice.options, **passed}
        taken = self.catalog.takes(choice.algorithm)
        refused = [k for k, v in given.items() if v is not None and k not in taken]
        if refused:
            raise DPQueryError(
                f"auto chose {choice.algorithm} ({choice.reason}), which does not take "
                f"{', '.join(refused)}"
            )
        try:
            model = self.catalog.build(
                choice.algorithm, given, seed=self.seed, progress=self.progress,
                neighbours=self.neighbours,
            )  # fmt: skip
        except DPQueryError as exc:
            if not add_remove or self.catalog.supports_add_remove(choice.algorithm):
                raise
            raise DPQueryError(f"auto chose {choice.algorithm} ({choice.reason}): {exc}") from None
        model.validate()
        if add_remove and plans_on_noisy_n(model):  # the noisy n, drawn by the fit, for n
            inner = model.plan(data, workload, budget=budget, n=n)  # type: ignore[call-arg]
        else:
            inner = model.plan(data, workload, budget=budget)
            if add_remove and isinstance(model, WideRelease):  # the n drawn here, not again
                inner = model.after_drawn_n(inner, n, int(data.d))
        warning = None
        if isinstance(inner, AdaptivePlan | DensePlan):
            sizes = AttributeLayout.of_data(data).sizes.tolist()
            warning = baseline_warning(inner, n, sizes, noisy=add_remove)
        elif isinstance(inner, WidePlan):  # item data: the wide release's own check
            warning = noise_warning(inner, n)
        elif choice.wide:
            warning = wide_warning(inner.budget, n)
        return AutoPlan(choice, model, inner, warning)

    def plan_accountant(self, plan: AutoPlan | None) -> Accountant | None:
        """The chosen estimator's; before the plan (add/remove: the noisy ``n`` is charged
        first) zCDP, the measure every add/remove release is proved in."""
        if plan is None:
            return ZCDPAccountant(bounded_range=True, conversion="cks")
        return plan.model.plan_accountant(plan.inner)

    def reads_answers(self, plan: AutoPlan) -> bool:
        return plan.model.reads_answers(plan.inner)

    def run(self, run: Run) -> Outcome:
        plan: AutoPlan = run.plan
        if plan.warning is not None:  # said before anything is drawn
            warnings.warn(plan.warning, BaselineWarning, stacklevel=3)
        outcome = plan.model.run(dataclasses.replace(run, plan=plan.inner))
        auto = {"algorithm": plan.choice.algorithm, "reason": plan.choice.reason}
        if plan.warning is not None:
            auto["warning"] = plan.warning
        parameters = {**outcome.parameters, "auto": auto}
        return Outcome(outcome.records, outcome.rounds, parameters, outcome.timings)

    def fit(
        self,
        data: BinaryData,
        workload: Workload,
        true_answers: np.ndarray | None = None,
        *,
        ledger: Ledger | None = None,
    ) -> Release:
        """:meth:`Synthesizer.fit`, the release named after the algorithm that ran."""
        release = super().fit(data, workload, true_answers, ledger=ledger)
        return dataclasses.replace(release, algorithm=release.parameters["auto"]["algorithm"])


__all__ = [
    "BASELINE_MEDIAN_TV",
    "DENSE",
    "MAX_ATTRIBUTES",
    "MIN_RECORDS",
    "SPARSE",
    "WIDE",
    "WIDE_MEASURED_EPSILON",
    "WORK",
    "Auto",
    "AutoPlan",
    "BaselineWarning",
    "Catalog",
    "Choice",
    "baseline_warning",
    "candidate_count",
    "choose",
    "expected_one_way_tv",
    "records_for",
    "wide_warning",
]
