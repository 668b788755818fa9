"""The estimator protocol every synthetic-data algorithm implements, and its one ``fit``.

An algorithm is a :class:`Synthesizer`: keyword hyperparameters stored by ``__init__``
(scikit-learn style), a :meth:`~Synthesizer.plan` that resolves them against the public sizes
(``n``, ``d``, the workload's size) and a budget, and a short function playing the paper's
box (``dualquery()``, ``dqrs()``, ``fem()``, ``mwem()``), wired in by :meth:`~Synthesizer.run`.
:meth:`Synthesizer.fit` is the one skeleton they share::

    check inputs -> plan -> rng -> ledger (kept as ``ledger_``) -> check the whole plan
    against the budget -> true answers (when the algorithm reads them) -> run (the game)
    -> Release

The ledger is on the estimator (``ledger_``) before anything is drawn, and stays there when
the fit raises: the exception carries it too (``exc.ledger``), so what a failed fit spent is
never lost. An estimator whose fit failed after charging refuses to fit again (a retry would
spend on the same data a second time, and its own ledger would not show the first spend).

``fit(data, workload, ledger=parent)`` spends a given ledger instead of opening its own: the
plan is resolved against that ledger's budget (the estimator's own budget must then be
unset). A pipeline gives each stage a :meth:`~dpquery.privacy.Ledger.child` of its ledger, so
every stage charges the one account as it draws (:mod:`dpquery.algorithms.game.reweight`).
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from dpquery.algorithms.options import check_options
from dpquery.algorithms.parameters import budget_of, budget_parameters, with_default_delta
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.oracles import Oracle
from dpquery.privacy import Accountant, Budget, Charge, Ledger
from dpquery.privacy.delta import check_delta, check_epsilon
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE, noisy_n, noisy_n_rho
from dpquery.privacy.randomness import is_cryptographic
from dpquery.queries import Workload, answer
from dpquery.queries.counts import counts_elsewhere
from dpquery.rng import SeedLike, make_rng

DRY_RUN_N = 1
"""The public number of records an add/remove fit plans on before it draws the noisy ``n``:
only to refuse bad options before any charge (the plan it runs is made on the noisy ``n``)."""
# One round's statistics: its timings (select_s, respond_s, observe_s) and what the algorithm
# reports beside them.
RoundStats = dict[str, Any]


def check_inputs(name: str, data: BinaryData, workload: Workload | None) -> None:
    """The workload is over the data's bits and of a kind the oracles handle (None: a
    release that measures no workload, such as the wide release on item data)."""
    if workload is None:
        return
    if workload.d != data.d:
        raise DPQueryError(f"the workload is over {workload.d} bits, the data {data.d}")
    if workload.kind not in ("conjunction", "disjunction", "parity"):
        raise DPQueryError(f"{name} does not support {workload.kind!r} queries")


def true_answers_of(
    workload: Workload, data: BinaryData, true_answers: np.ndarray | None
) -> tuple[np.ndarray, float]:
    """``q(D)`` for every query (computed unless given: in this process, or in a pass over a
    partitioned dataset's partitions) and the seconds it took."""
    start = time.perf_counter()
    if true_answers is None:
        if counts_elsewhere(data):  # a partitioned dataset: one pass over its partitions
            true_answers = data.answers(workload)  # type: ignore[attr-defined]
        else:
            true_answers = answer(workload, data)
    elif np.shape(true_answers) != (len(workload),):
        raise DPQueryError(f"true_answers must have {len(workload)} entries")
    return np.asarray(true_answers, dtype=np.float64), time.perf_counter() - start


def round_timings(rounds: list[RoundStats]) -> dict[str, float]:
    """Seconds spent in each step of the game, summed over the rounds: the private choices
    (``select_s``), the data player (``respond_s``: the oracle) and the updates (``observe_s``)."""
    return {k: float(sum(r[k] for r in rounds)) for k in ("select_s", "respond_s", "observe_s")}


class Plan(Protocol):
    """Resolved parameters of a run: the budget its ledger enforces and what it will charge."""

    @property
    def budget(self) -> Budget: ...

    def charges(self) -> list[Charge]:
        """Everything the run will charge, in order."""
        ...


@dataclass
class Run:
    """What :meth:`Synthesizer.run` is given: the inputs, the resolved plan and the run's
    generator and ledger (the only ways to draw randomness and spend privacy)."""

    data: BinaryData
    workload: Workload
    true_answers: np.ndarray
    plan: Any
    rng: np.random.Generator
    ledger: Ledger
    n: int | None = None  # the n the run may read: data.n, or under add-remove the noisy n

    @property
    def records_n(self) -> int:
        """The number of records the run may read: ``n`` when set, else the data's (public
        under replace-one)."""
        return int(self.data.n) if self.n is None else int(self.n)


@dataclass
class Outcome:
    """What an algorithm's run produced: the records, per-round statistics and the
    parameters to report beside the common ones."""

    records: Records
    rounds: list[RoundStats] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] | None = None


class Synthesizer(ABC):
    """Private synthetic data from ``fit(data, workload)`` (module docstring).

    Subclasses set :attr:`name` (the lower-case registry name), :attr:`options` (the
    hyperparameters a front end may set, see :mod:`dpquery.algorithms.options`), and
    implement :meth:`plan` and :meth:`run`.
    """

    name: ClassVar[str]
    options: ClassVar[tuple[str, ...]] = ()
    release_type: ClassVar[type[Release]] = Release  # what fit returns
    seed: SeedLike

    # --- parameters ---------------------------------------------------------------------
    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The hyperparameters ``__init__`` takes."""
        return tuple(
            p.name
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        )

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters as stored (scikit-learn's ``get_params(deep=False)``)."""
        return {k: getattr(self, k) for k in self.parameter_names()}

    def with_params(self, **changes: Any) -> Synthesizer:
        """A new estimator of the same class with ``changes`` to its hyperparameters; this
        one is left as it is."""
        unknown = sorted(set(changes) - set(self.parameter_names()))
        if unknown:
            raise DPQueryError(f"{self.name} takes no parameter {', '.join(unknown)}")
        return type(self)(**{**self.get_params(), **changes})

    def validate(self) -> None:
        """Check every hyperparameter against its declared range (one shared place, see
        :func:`dpquery.algorithms.options.check_options`); :meth:`plan` checks how they
        combine."""
        check_options(self.get_params())

    @property
    def relation(self) -> str:
        """The neighbouring relation the release's guarantee is stated for
        (:mod:`dpquery.privacy.neighbours`): the estimator's ``neighbours``, or replace-one,
        the relation the papers' algorithms are proved for."""
        return str(getattr(self, "neighbours", REPLACE_ONE))

    def budget_keywords(self, budget: Budget | None, n: int | None) -> dict[str, float | None]:
        """``epsilon``, ``delta`` and ``rho`` to plan with on ``n`` records: the estimator's
        own, ``delta`` defaulting to ``1/n^2`` when ``epsilon`` is given (under add/remove
        neighbours to the public 1e-9, ``n`` unread;
        :func:`~dpquery.algorithms.parameters.with_default_delta`; ``delta=0``: pure DP), or
        those of ``budget`` (a given ledger's), refusing an estimator whose own budget is also
        set."""
        own = {k: getattr(self, k, None) for k in ("epsilon", "delta", "rho")}
        if budget is None:
            return with_default_delta(own, n, self.relation == ADD_REMOVE)
        if any(v is not None for v in own.values()):
            raise DPQueryError(
                f"{self.name} is spending a given ledger's budget: leave its own epsilon, "
                "delta and rho unset"
            )
        return budget_parameters(budget)

    # --- the protocol -------------------------------------------------------------------
    @abstractmethod
    def plan(self, data: BinaryData, workload: Workload, *, budget: Budget | None = None) -> Any:
        """The parameters and budget :meth:`fit` would use (a :class:`Plan`), against
        ``budget`` when given (a ledger's) or the estimator's own; reads only public sizes."""

    def charges(
        self, data: BinaryData, workload: Workload, *, budget: Budget | None = None
    ) -> list[Charge]:
        """Everything :meth:`fit` would charge, in order."""
        return list(self.plan(data, workload, budget=budget).charges())

    def plan_accountant(self, plan: Any) -> Accountant | None:
        """The accountant of the ledger :meth:`fit` opens (None: the default, tightest)."""
        return getattr(self, "accountant", None)

    def reads_answers(self, plan: Any) -> bool:
        """Whether the run reads the workload's true answers ``q(D)`` (:attr:`Run.true_answers`);
        when it does not, :meth:`fit` does not compute them (on a partitioned dataset, a pass
        over every partition saved) and the run gets an empty array."""
        return True

    @abstractmethod
    def run(self, run: Run) -> Outcome:
        """Play the algorithm: everything after the plan is checked against the ledger."""

    def fit(
        self,
        data: BinaryData,
        workload: Workload,
        true_answers: np.ndarray | None = None,
        *,
        ledger: Ledger | None = None,
    ) -> Release:
        """Run the algorithm on ``data`` for ``workload`` and return its :class:`Release`.

        ``true_answers`` (``q(D)``) may be passed when already computed; otherwise they are
        computed when the algorithm reads them (:meth:`reads_answers`). ``ledger`` is a
        ledger to spend (e.g. a pipeline stage's child ledger); by default a new one holds
        the plan's budget. The whole plan is checked against it before anything is drawn.
        The ledger is ``self.ledger_`` from then on, also when the fit raises (module
        docstring).
        """
        refuse_after_failed_spend(getattr(self, "failed_ledger_", None), self.name)
        check_inputs(self.name, data, workload)
        self.validate()
        if self.relation == ADD_REMOVE and plans_on_noisy_n(self):
            return self._fit_add_remove(data, workload, true_answers, ledger)
        plan = self.plan(data, workload, budget=None if ledger is None else ledger.budget)
        # Under add/remove (an estimator that measures n itself) n is private: not read here.
        add_remove = self.relation == ADD_REMOVE
        public_n = None if add_remove else data.n
        check_delta(plan.budget.delta, public_n, add_remove)  # warns when delta >= 1/n
        if ledger is None:  # the budget given to this estimator (a given ledger's is its owner's)
            eps, rho = getattr(self, "epsilon", None), getattr(self, "rho", None)
            check_epsilon(eps, rho, public_n, add_remove)
        rng = make_rng(self.seed)
        if ledger is None:
            ledger = Ledger(plan.budget, self.plan_accountant(plan))
        self.ledger_: Ledger | None = ledger
        before = len(ledger.entries)  # a given ledger may hold earlier stages' charges
        try:
            ledger.check(plan.charges())  # the whole plan fits before anything is drawn
            if workload is None or (true_answers is None and not self.reads_answers(plan)):
                true_answers, t_answers = np.zeros(0), 0.0  # nothing reads them
            else:
                true_answers, t_answers = true_answers_of(workload, data, true_answers)
            start = time.perf_counter() - t_answers
            outcome = self.run(Run(data, workload, true_answers, plan, rng, ledger))
        except BaseException as exc:
            self.failed_ledger_ = attach_ledger(exc, ledger, before)
            raise
        # Under add/remove the outcome's parameters carry the noisy n it measured, if any.
        known = {"d": data.d} if add_remove else {"n": data.n, "d": data.d}
        parameters = {**outcome.parameters, **known}
        return self._release(outcome, ledger, parameters, workload, t_answers, start, rng)

    def _fit_add_remove(
        self, data: BinaryData, workload: Workload, true_answers: np.ndarray | None,
        ledger: Ledger | None,
    ) -> Release:  # fmt: skip
        """:meth:`fit` under add/remove neighbours, ``n`` private: the budget is resolved
        without ``n`` (``delta`` default 1e-9), the noisy ``n`` is drawn and charged first
        (:func:`~dpquery.privacy.neighbours.noisy_n`, :data:`NOISY_N_SHARE` of ``rho``), and
        the plan and the run read it in place of ``n``; the release reports it as
        ``noisy_n`` and never the exact ``n``. Before any charge the plan is tried on one
        record (:data:`DRY_RUN_N`, public), so that options out of range or that do not
        combine are refused with nothing spent."""
        own = ledger is None
        budget = ledger.budget if ledger is not None else budget_of(
            **self.budget_keywords(None, None)
        )  # fmt: skip
        dry = None if own else ledger.budget  # type: ignore[union-attr]
        self.plan(data, workload, budget=dry, n=DRY_RUN_N)  # type: ignore[call-arg]
        check_delta(budget.delta, None, add_remove=True)
        if own:
            check_epsilon(getattr(self, "epsilon", None), getattr(self, "rho", None), None, True)
        rng = make_rng(self.seed)
        if ledger is None:
            ledger = Ledger(budget, self.plan_accountant(None))
        self.ledger_ = ledger
        before = len(ledger.entries)
        try:
            n = noisy_n(data.n, noisy_n_rho(budget), rng, ledger)
            plan = self.plan(data, workload, budget=None if own else ledger.budget, n=n)  # type: ignore[call-arg]
            ledger.check(plan.charges())
            if workload is None or (true_answers is None and not self.reads_answers(plan)):
                true_answers, t_answers = np.zeros(0), 0.0
            else:
                true_answers, t_answers = true_answers_of(workload, data, true_answers)
            start = time.perf_counter() - t_answers
            outcome = self.run(Run(data, workload, true_answers, plan, rng, ledger, n=n))
        except BaseException as exc:
            self.failed_ledger_ = attach_ledger(exc, ledger, before)
            raise
        parameters = {**outcome.parameters, "noisy_n": n, "d": data.d}
        return self._release(outcome, ledger, parameters, workload, t_answers, start, rng)

    def _release(
        self, outcome: Outcome, ledger: Ledger, parameters: dict[str, Any],
        workload: Workload | None, t_answers: float, start: float, rng: np.random.Generator,
    ) -> Release:  # fmt: skip
        if self.relation == ADD_REMOVE:  # replace-one's name no relation (the report does)
            parameters["neighbours"] = ADD_REMOVE
        if workload is not None:
            parameters["queries"] = len(workload)
        timings = outcome.timings if outcome.timings is not None else round_timings(outcome.rounds)
        return self.release_type(
            self.name,
            outcome.records,
            ledger,
            parameters,
            outcome.rounds,
            {
                "true_answers_s": t_answers,
                **timings,
                "total_s": time.perf_counter() - start,
            },
            seeded=not is_cryptographic(rng),
        )


def plans_on_noisy_n(model: Synthesizer) -> bool:
    """Whether ``model``'s plan takes the number of records ``n`` to plan on: then, under
    add/remove neighbours, :meth:`Synthesizer.fit` draws the noisy ``n`` first and plans on
    it; an estimator whose plan takes none measures ``n`` itself (as the wide release does)."""
    return "n" in inspect.signature(type(model).plan).parameters


def attach_ledger(exc: BaseException, ledger: Ledger, before: int = 0) -> Ledger | None:
    """Attach ``ledger`` to ``exc`` (``exc.ledger``; an outer fit's replaces an inner stage's,
    whose charges it holds too) with a note of what it spent; return it when the failed fit
    charged it (more than its ``before`` entries: then noise may have been drawn and the
    spend is real), else None."""
    exc.ledger = ledger  # type: ignore[attr-defined]
    notes = getattr(exc, "__notes__", [])
    previous = getattr(exc, "spend_note", None)
    if previous in notes:  # an inner stage's: this ledger's note says more
        notes.remove(previous)
    if len(ledger.entries) <= before:
        return None
    note = (
        f"privacy spent before the failure: {ledger.spent:.6g} of {ledger.budget.describe()} "
        f"in {len(ledger.entries)} charges under {ledger.accountant.name} (exc.ledger)"
    )
    exc.spend_note = note  # type: ignore[attr-defined]
    exc.add_note(note)
    return ledger


def refuse_after_failed_spend(failed: Ledger | None, what: str) -> None:
    """Refuse a new fit on an estimator whose last fit failed after charging ``failed``."""
    if failed is not None:
        raise DPQueryError(
            f"{what}: the last fit failed after spending {failed.spent:.6g} of "
            f"{failed.budget.describe()} on the data (its ledger_ holds the "
            f"{len(failed.entries)} charges); fitting again would spend on the same data a "
            "second time. To release anyway, use a new estimator and count both spends "
            "against your budget"
        )


# --- hyperparameters shared by several algorithms -------------------------------------------
# Estimators are keyword-only dataclasses (``__init__`` stores, :meth:`Synthesizer.validate`
# checks); these groups declare the hyperparameters several of them take, once.
@dataclass(kw_only=True, eq=False)
class EpsilonBudget:
    """A budget ``epsilon`` with ``delta`` (None: ``1/n^2``; 0: pure DP)."""

    epsilon: float | None = None
    delta: float | None = None


@dataclass(kw_only=True, eq=False)
class ZCDPBudget(EpsilonBudget):
    """A budget ``epsilon`` (with ``delta``) or ``rho`` (zCDP)."""

    rho: float | None = None


@dataclass(kw_only=True, eq=False)
class MultiplicativeWeightsParameters:
    """DualQuery's and DQRS's modes: explicit ``eta, T, samples`` (the papers' ``s``), the
    largest ``T`` or ``samples`` for a budget, or theory mode from ``alpha``, ``beta``."""

    eta: float | None = None
    T: int | None = None
    samples: int | None = None
    alpha: float | None = None
    beta: float | None = None


@dataclass(kw_only=True, eq=False)
class OracleParameters:
    """The data player's oracle (a name with its options, or an instance), the policy for
    free attributes and what an oracle exception does (``"fallback"``: a random record;
    ``"raise"``)."""

    oracle: str | Oracle = "heuristic"
    oracle_options: dict[str, Any] | None = None
    free_attributes: str = "zeros"
    on_error: str = "fallback"


@dataclass(kw_only=True, eq=False)
class RunParameters:
    """The accountant of the ledger a fit opens (None: the tightest proved) and the seed of
    every random choice (None: unpredictable)."""

    accountant: Accountant | None = None
    seed: SeedLike = None
