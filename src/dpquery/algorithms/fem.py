"""FEM and sepFEM (Vietri, Tian, Bun, Steinke, Wu, "New Oracle-Efficient Algorithms for
Private Synthetic Data Release", Algorithms 1, 2 and 3).

Both play the primal query-release game of :mod:`dpquery.algorithms.game`:

* the query player (Algorithm 1) runs the exponential mechanism over ``Q ∪ ¬Q`` with score
  ``S_t(D, q) = q(D) - q(D_hat^t)`` (sensitivity ``1/n``): the only place privacy is spent,
  ``T`` times at ``epsilon_0``;
* the data player follows the perturbed leader: each round it draws ``s`` perturbations and
  asks the oracle, for each, for ``argmax_x sum_{i<t} q_i(x) + perturbation(x)``; ``D_hat^t``
  is the uniform distribution over the ``s`` answers. FEM (Algorithm 2) perturbs by
  ``- <x, sigma>``, ``sigma ~ Exp(eta)^d``; sepFEM (Algorithm 3) by ``sum_j sigma_j q~_j(x)``
  over a separator set, ``sigma ~ Lap(eta)^M``.

The output is ``1/T sum_t D_hat^t``: ``T s`` records of equal weight. The data player never
reads ``D``, so whatever the (untrusted) oracle returns is post-processing (Theorem 8).

Parameters come in modes (see :func:`plan_fem`): given a budget, the largest ``T`` for an
``epsilon_0`` (or the largest ``epsilon_0`` for a ``T``: ``rho_0 = rho / T``); the authors'
scaling ``epsilon_0 = c sqrt(epsilon)``, ``eta = noise_multiple sqrt(T)``; or explicit
``(T, epsilon_0)``. ``docs/fem.md`` documents the default and how it was measured.
"""

from __future__ import annotations

import math
import multiprocessing
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, Protocol

import numpy as np

from dpquery.algorithms.best_response import best_response, resolve_oracle
from dpquery.algorithms.free import FreeAttributes, check_policy
from dpquery.algorithms.game import (
    check_inputs,
    play,
    progress_printer,
    round_timings,
    show_progress,
    true_answers_of,
    unit_answers,
)
from dpquery.algorithms.parameters import ceil_epsilon, positive, positive_int
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.data.decode import sample_records
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.oracles import BestResponse, Oracle
from dpquery.privacy import (
    Accountant,
    Budget,
    Charge,
    Composition,
    Ledger,
    ZCDPAccountant,
    exponential_mechanism,
    fem_max_epsilon0,
    fem_max_rounds,
    fem_plan,
    spend,
)
from dpquery.privacy.conversions import Conversion
from dpquery.privacy.delta import check_delta
from dpquery.privacy.fem import MECHANISM
from dpquery.queries import Workload
from dpquery.rng import SeedLike, make_rng

Accounting = Literal["zcdp", "bounded-range"]
ACCOUNTINGS: tuple[Accounting, ...] = ("zcdp", "bounded-range")

# The authors' tuned Adult values (c, noise_multiple, s): epsilon_0 = c sqrt(epsilon),
# eta = noise_multiple sqrt(T), s samples per round (FEM repository, 64 marginals).
AUTHORS_ADULT: dict[str, tuple[float, float, int]] = {
    "authors-adult-3way": (0.008, 0.16, 50),
    "authors-adult-5way": (0.010, 0.16, 50),
}
# The fixed default, chosen on adult-pgm 3-way marginals (64 marginals, 3 runs at each of the
# six epsilons of Figure 1; docs/family-results.md): c = 0.008 with bounded-range accounting
# was best at every epsilon. sepFEM's Laplace perturbation wants half FEM's noise.
DEFAULT_C = 0.008
DEFAULT_NOISE_MULTIPLE = 0.16
SEPFEM_NOISE_MULTIPLE = 0.08
DEFAULT_SAMPLES = 50
DEFAULT_ACCOUNTING: Accounting = "bounded-range"
# The data player's oracle: the shared heuristic with a smaller iteration budget. FEM's
# problems have only t clauses against a perturbation on every bit; on adult-pgm one restart
# of 50 kicks matched CP-SAT's certified optimum (docs/fem.md) at ~1/15 of the default cost.
DEFAULT_ORACLE_OPTIONS: dict[str, Any] = {"restarts": 1, "kicks": 50}


# --- parameters ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FEMPlan:
    """Resolved parameters of a run and the budget its ledger enforces."""

    T: int
    epsilon0: float
    eta: float
    s: int
    budget: Budget
    mode: str
    accounting: Accounting

    def charges(self) -> list[Charge]:
        """Everything the run will charge: ``T`` exponential mechanisms at ``epsilon_0``."""
        return fem_plan(T=self.T, epsilon0=self.epsilon0)


def fem_accountant(
    accounting: Accounting = DEFAULT_ACCOUNTING, conversion: Conversion = "cks"
) -> Accountant:
    """The zCDP accountant of a run: ``"zcdp"`` charges each exponential mechanism
    ``epsilon_0^2 / 2`` (Lemma 4, as Theorem 8 does, so ``epsilon_0 = sqrt(2 rho_0)``);
    ``"bounded-range"`` charges ``epsilon_0^2 / 8`` (Cesar and Rogers 2021: the exponential
    mechanism is ``epsilon_0``-bounded range), which allows 4 times as many rounds. Both
    convert to ``(epsilon, delta)`` by ``conversion`` (default Canonne-Kamath-Steinke,
    tighter than Lemma 2's ``rho + 2 sqrt(rho ln(1/delta))``, ``"standard"``)."""
    if accounting not in ACCOUNTINGS:
        raise DPQueryError(f"accounting must be one of {ACCOUNTINGS}, got {accounting!r}")
    return ZCDPAccountant(bounded_range=accounting == "bounded-range", conversion=conversion)


def plan_fem(
    *,
    n: int,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: float | None = None,
    epsilon0: float | None = None,
    T: int | None = None,
    eta: float | None = None,
    c: float | None = None,
    noise_multiple: float | None = None,
    s: int | None = None,
    accounting: Accounting = DEFAULT_ACCOUNTING,
    accountant: Accountant | None = None,
) -> FEMPlan:
    """Resolve FEM's parameters (Oracle-efficient, Algorithm 1 and Theorem 8).

    The budget is ``(epsilon, delta)`` (``delta`` defaults to ``1/n^2``, as in Section 6) or
    ``rho`` (zCDP). Then:

    * ``epsilon0`` given: the largest ``T`` whose ``T`` rounds fit ("budget (largest T)");
    * ``T`` given: the largest ``epsilon_0`` that fits, i.e. ``rho_0 = rho / T`` and
      ``epsilon_0 = sqrt(2 rho_0)`` (``sqrt(8 rho_0)`` bounded range) ("budget (rho/T)");
    * neither: the authors' scaling ``epsilon_0 = c sqrt(epsilon)`` (``c`` default
      :data:`DEFAULT_C`) and the largest ``T`` ("scaled");
    * no budget: ``T`` and ``epsilon0`` explicit, the budget is what they cost ("explicit").

    ``eta`` (the perturbation scale) defaults to ``noise_multiple sqrt(T)`` (the authors'
    implementation; ``noise_multiple`` default :data:`DEFAULT_NOISE_MULTIPLE`).
    """
    acc = accountant if accountant is not None else fem_accountant(accounting)
    s = DEFAULT_SAMPLES if s is None else positive_int("s", s)
    if eta is not None and noise_multiple is not None:
        raise DPQueryError("give eta or noise_multiple, not both")
    if epsilon is not None and rho is not None:
        raise DPQueryError("give epsilon (with delta) or rho, not both")
    if rho is not None and delta is not None:
        raise DPQueryError("a rho (zCDP) budget takes no delta")
    if epsilon is None and rho is None:
        if T is None or epsilon0 is None:
            raise DPQueryError("give a budget (epsilon, delta or rho), or both T and epsilon0")
        T, eps0 = positive_int("T", T), positive("epsilon0", epsilon0)
        cost = Composition(fem_plan(T=T, epsilon0=eps0)).totals()
        d = 1.0 / n**2 if delta is None else delta
        budget = Budget.approx(ceil_epsilon(spend(cost, Budget.approx(1.0, d), acc)), d)
        return _finish(T, eps0, eta, noise_multiple, s, budget, "explicit", accounting)
    if rho is not None:
        budget = Budget.zcdp(rho)
    else:
        assert epsilon is not None
        budget = Budget.approx(epsilon, 1.0 / n**2 if delta is None else delta)
    if c is not None and (epsilon0 is not None or T is not None):
        raise DPQueryError("c sets epsilon0 = c sqrt(epsilon); give c or epsilon0 or T")
    if T is not None and epsilon0 is not None:
        T, eps0 = positive_int("T", T), positive("epsilon0", epsilon0)
        needed = spend(Composition(fem_plan(T=T, epsilon0=eps0)).totals(), budget, acc)
        if needed > budget.limit:
            raise DPQueryError(
                f"T={T} rounds at epsilon0={eps0:g} spend {needed:.6g}, more than the budget "
                f"{budget.describe()}"
            )
        return _finish(T, eps0, eta, noise_multiple, s, budget, "explicit", accounting)
    if T is not None:
        T = positive_int("T", T)
        eps0 = fem_max_epsilon0(budget, T=T, accountant=acc)
        if not eps0 > 0:
            raise DPQueryError(f"no epsilon0 fits {budget.describe()} with T={T}")
        return _finish(T, eps0, eta, noise_multiple, s, budget, "budget (rho/T)", accounting)
    mode = "budget (largest T)"
    if epsilon0 is None:
        if budget.epsilon is None:
            raise DPQueryError("the scaling epsilon0 = c sqrt(epsilon) needs an epsilon budget")
        epsilon0 = (DEFAULT_C if c is None else positive("c", c)) * math.sqrt(budget.epsilon)
        mode = "scaled (epsilon0 = c sqrt(epsilon))"
    eps0 = positive("epsilon0", epsilon0)
    T = fem_max_rounds(budget, epsilon0=eps0, accountant=acc)
    if T < 1:
        raise DPQueryError(f"{budget.describe()} admits no round at epsilon0={eps0:g}")
    return _finish(T, eps0, eta, noise_multiple, s, budget, mode, accounting)


def _finish(
    T: int, eps0: float, eta: float | None, noise_multiple: float | None, s: int,
    budget: Budget, mode: str, accounting: Accounting,
) -> FEMPlan:  # fmt: skip
    if eta is None:
        m = DEFAULT_NOISE_MULTIPLE if noise_multiple is None else noise_multiple
        eta = positive("noise_multiple", m) * math.sqrt(T)
    return FEMPlan(T, eps0, positive("eta", eta), s, budget, mode, accounting)


# --- the query player (Algorithm 1) ---------------------------------------------------------
class ExponentialMechanismPlayer:
    """Algorithm 1's query player: ``q_t ~ M_E(D, S_t, Q ∪ ¬Q, epsilon_0)`` with
    ``S_t(D, q) = q(D) - q(D_hat^t)``, answers in [0, 1] (sensitivity ``1/n``).

    Over the closed workload the score of ``¬q`` is ``-S_t(D, q)``, so the mechanism looks
    for the largest error with its direction. Each draw is charged (``PureDP(epsilon_0)``,
    bounded range) before it is made.
    """

    def __init__(
        self, true_unit: np.ndarray, *, epsilon0: float, n: int,
        rng: np.random.Generator, ledger: Ledger,
    ) -> None:  # fmt: skip
        self.true_unit = true_unit
        self.epsilon0, self.n = epsilon0, n
        self.rng, self.ledger = rng, ledger
        self.current: np.ndarray | None = None

    def select(self, t: int) -> int:
        assert self.current is not None, "a primal data player plays first"
        diff = self.true_unit - self.current
        scores = np.concatenate([diff, -diff])
        return int(exponential_mechanism(
            scores, epsilon=self.epsilon0, sensitivity=1.0 / self.n, rng=self.rng,
            ledger=self.ledger, name=MECHANISM,
        )[0])  # fmt: skip

    def observe(self, t: int, answers: np.ndarray) -> None:
        self.current = answers


# --- perturbations (Algorithm 2 and Algorithm 3) ---------------------------------------------
class Perturbation(Protocol):
    """How a follow-the-perturbed-leader player perturbs its oracle problem."""

    def draw(self, rng: np.random.Generator, s: int, d: int) -> np.ndarray:
        """``s`` perturbation vectors, one per row."""
        ...

    def perturb(self, leader: BestResponse, sigma: np.ndarray) -> BestResponse:
        """The leader's problem with the perturbation ``sigma`` added to its objective."""
        ...


@dataclass(frozen=True)
class ExponentialPerturbation:
    """FEM (Algorithm 2): ``- <x, sigma>`` with ``sigma ~ Exp(eta)^d``; ``eta`` is the scale
    (mean), as ``numpy.random.exponential(eta)`` in the authors' implementation."""

    eta: float

    def draw(self, rng: np.random.Generator, s: int, d: int) -> np.ndarray:
        return rng.exponential(self.eta, size=(s, d))

    def perturb(self, leader: BestResponse, sigma: np.ndarray) -> BestResponse:
        return replace(leader, linear=-sigma)


@dataclass(frozen=True)
class SeparatorPerturbation:
    """sepFEM (Algorithm 3): ``sum_j sigma_j q~_j(x)`` with ``sigma ~ Lap(eta)^M`` over a
    separator set ``sep(Q) = {q~_1, ..., q~_M}`` (Definition 4.1: any two distinct records are
    told apart by some ``q~_j``).

    ``separator=None`` is the set of the ``d`` single-bit queries ``q~_j(x) = x_j``: two
    distinct records of ``{0,1}^d`` differ in some bit ``j``, and ``x_j`` then takes different
    values on them, so the set separates every class of queries over the bits (conjunctions,
    disjunctions, parities). The perturbation is then exactly the linear term ``<sigma, x>``.
    Any other separator set is a :class:`~dpquery.queries.Workload` whose queries enter the
    oracle problem as clauses of weight ``|sigma_j|``: a negative weight is a positive weight
    on the negated query up to a constant (``-w q = w (1 - q) - w`` for a conjunction,
    ``-w p = w (-p)`` for a parity), which leaves the argmax unchanged.
    """

    eta: float
    separator: Workload | None = None

    def draw(self, rng: np.random.Generator, s: int, d: int) -> np.ndarray:
        M = d if self.separator is None else len(self.separator)
        return rng.laplace(0.0, self.eta, size=(s, M))

    def perturb(self, leader: BestResponse, sigma: np.ndarray) -> BestResponse:
        if self.separator is None:
            return replace(leader, linear=sigma)
        return with_weighted_queries(leader, self.separator, sigma)


def with_weighted_queries(
    problem: BestResponse, queries: Workload, weights: np.ndarray
) -> BestResponse:
    """``problem`` with ``sum_j weights_j q_j(x)`` added to its objective (up to a constant):
    query ``j`` becomes a clause of weight ``|weights_j|``, negated when ``weights_j < 0``;
    zero weights are dropped."""
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (len(queries),):
        raise DPQueryError(f"need one weight per query ({len(queries)}), got {weights.shape}")
    keep = np.flatnonzero(weights != 0)
    if keep.size == 0:
        return problem
    closed = np.where(weights[keep] > 0, keep, keep + len(queries))
    extra = BestResponse.from_workload(queries, closed, onehot_groups=problem.onehot_groups)
    # from_workload orders clauses by closed index; carry each weight along with its index.
    extra_w = np.abs(weights[keep])[np.argsort(closed, kind="stable")]
    return replace(
        problem,
        offsets=np.concatenate([problem.offsets, problem.offsets[-1] + extra.offsets[1:]]),
        bits=np.concatenate([problem.bits, extra.bits]),
        positive=np.concatenate([problem.positive, extra.positive]),
        parity=np.concatenate([problem.parity, extra.parity]),
        negated=np.concatenate([problem.negated, extra.negated]),
        weight=np.concatenate([problem.weight, extra_w]),
    )


# --- the data player (Algorithms 2 and 3) ----------------------------------------------------
def _solve_chunk(
    perturbation: Perturbation, leader: BestResponse, sigmas: np.ndarray, seeds: np.ndarray,
    oracle: Oracle, free: FreeAttributes, on_error: str,
) -> tuple[np.ndarray, list[dict[str, Any]]]:  # fmt: skip
    """Solve the perturbed problems of one chunk of a round (runs in a worker process)."""
    rows, infos = [], []
    for sigma, seed in zip(sigmas, seeds, strict=True):
        problem = perturbation.perturb(leader, sigma)
        x, info = best_response(problem, oracle, free, np.random.default_rng(int(seed)), on_error)
        rows.append(x)
        infos.append(info)
    return np.array(rows, dtype=np.uint8), infos


class PerturbedLeader:
    """The follow-the-perturbed-leader data player (Algorithm 2 for FEM, 3 for sepFEM).

    ``D_hat^t`` is the uniform distribution over ``s`` oracle answers to
    ``argmax_x sum_{i<t} q_i(x) + perturbation_j(x)``, ``j = 1..s``. ``start`` plays
    ``D_hat^1`` against ``q_0``, drawn uniformly from ``Q ∪ ¬Q`` (Algorithm 1, "Initialize";
    data-independent, so free); ``respond(t, q_t)`` plays ``D_hat^{t+1}`` for ``t < T`` (the
    game's round ``t`` ends with the data player's next play; ``D_hat^{T+1}`` is not part of
    Algorithm 1's output, so it is not computed).

    The ``s`` solves of a round are independent: they run in ``executor`` (a process pool:
    the compiled oracle kernels hold the GIL, so threads would not run them in parallel).
    Each solve gets its own seed, drawn in order from the run's generator, so the records do
    not depend on how the solves are scheduled.
    """

    def __init__(
        self, workload: Workload, *, perturbation: Perturbation, s: int, T: int,
        onehot_groups: np.ndarray, oracle: Oracle, free: FreeAttributes,
        rng: np.random.Generator, executor: Executor | None = None, workers: int = 1,
        on_oracle_error: str = "fallback",
    ) -> None:  # fmt: skip
        self.workload, self.perturbation = workload, perturbation
        self.s, self.T = s, T
        self.onehot_groups, self.oracle, self.free = onehot_groups, oracle, free
        self.rng, self.executor, self.workers = rng, executor, workers
        self.on_oracle_error = on_oracle_error
        self.queries: list[int] = []  # q_0, q_1, ... as closed indices
        self.plays: list[np.ndarray] = []  # D_hat^1, D_hat^2, ... as (s, d) records

    def start(self) -> np.ndarray:
        self.queries.append(int(self.rng.integers(2 * len(self.workload))))
        self._play()
        return self.answers()

    def respond(self, t: int, q_t: int) -> dict[str, Any]:
        self.queries.append(q_t)
        if t >= self.T:
            return {"query": q_t, "samples": 0}
        return {"query": q_t, **self._play()}

    def answers(self) -> np.ndarray:
        return unit_answers(self.workload, Records(self.plays[-1]))

    def _play(self) -> dict[str, Any]:
        # The leader's problem is the same for all s solves; only the perturbation changes.
        leader = BestResponse.from_workload(
            self.workload, np.array(self.queries), onehot_groups=self.onehot_groups
        )
        sigmas = self.perturbation.draw(self.rng, self.s, self.workload.d)
        seeds = self.rng.integers(2**63, size=self.s)
        args = (self.oracle, self.free, self.on_oracle_error)
        if self.executor is None or self.workers < 2:
            rows, infos = _solve_chunk(self.perturbation, leader, sigmas, seeds, *args)
        else:
            parts = np.array_split(np.arange(self.s), min(self.workers, self.s))
            futures = [
                self.executor.submit(_solve_chunk, self.perturbation, leader, sigmas[p],
                                     seeds[p], *args)
                for p in parts
            ]  # fmt: skip
            results = [f.result() for f in futures]
            rows = np.concatenate([r for r, _ in results])
            infos = [i for _, chunk in results for i in chunk]
        self.plays.append(rows)
        objectives = [i["objective"] for i in infos if i["objective"] is not None]
        return {
            "samples": self.s,
            "objective_mean": float(np.mean(objectives)) if objectives else None,
            "optimal": sum(bool(i["optimal"]) for i in infos),
            "repaired": sum(bool(i["repaired"]) for i in infos),
            "oracle_errors": sum(i["objective"] is None for i in infos),
        }


RoundCallback = Callable[[dict[str, Any]], None]


def fem(
    workload: Workload,
    true_answers: np.ndarray,
    *,
    n: int,
    plan: FEMPlan,
    perturbation: Perturbation,
    onehot_groups: np.ndarray,
    oracle: Oracle,
    free: FreeAttributes,
    ledger: Ledger,
    rng: np.random.Generator,
    executor: Executor | None = None,
    workers: int = 1,
    on_round: RoundCallback | None = None,
    on_oracle_error: str = "fallback",
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """Algorithm 1 with a follow-the-perturbed-leader data player: the plays
    ``D_hat^1..D_hat^T`` (each ``(s, d)``) and per-round statistics."""
    lo, hi = workload.value_range
    true_unit = (np.asarray(true_answers, dtype=np.float64) - lo) / (hi - lo)
    queries = ExponentialMechanismPlayer(
        true_unit, epsilon0=plan.epsilon0, n=n, rng=rng, ledger=ledger
    )
    data = PerturbedLeader(
        workload, perturbation=perturbation, s=plan.s, T=plan.T, onehot_groups=onehot_groups,
        oracle=oracle, free=free, rng=rng, executor=executor, workers=workers,
        on_oracle_error=on_oracle_error,
    )  # fmt: skip
    stats = play(queries, data, plan.T, on_round)
    return data.plays, stats


# --- estimators ------------------------------------------------------------------------------
class FEM:
    """Private synthetic data by FEM (Oracle-efficient, Algorithms 1 and 2), scikit-learn style.

    Hyperparameters are stored as given; :meth:`fit` validates them, resolves the mode
    (:func:`plan_fem`) and returns a :class:`Release` whose records are the ``T s`` plays
    (weights ``1/(T s)``), or ``size`` records resampled from them. ``preset`` selects the
    authors' tuned Adult values (``"authors-adult-3way"``, ``"authors-adult-5way"``: ``c``,
    ``noise_multiple``, ``s``); explicit arguments override it. ``workers`` forked
    processes solve a round's ``s`` problems (default 1: a 2-process pool measured no
    speedup on this machine, see docs/fem.md, and forking after numba's OpenMP threads start
    is fragile). ``seed`` fixes every random choice.
    """

    algorithm = "fem"

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        rho: float | None = None,
        epsilon0: float | None = None,
        T: int | None = None,
        eta: float | None = None,
        c: float | None = None,
        noise_multiple: float | None = None,
        samples: int | None = None,
        preset: str | None = None,
        accounting: Accounting = DEFAULT_ACCOUNTING,
        accountant: Accountant | None = None,
        size: int | None = None,
        oracle: str | Oracle = "heuristic",
        oracle_options: dict[str, Any] | None = None,
        free_attributes: str = "zeros",
        workers: int = 1,
        on_oracle_error: str = "fallback",
        seed: SeedLike = None,
        progress: bool | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.epsilon0 = epsilon0
        self.T = T
        self.eta = eta
        self.c = c
        self.noise_multiple = noise_multiple
        self.samples = samples
        self.preset = preset
        self.accounting = accounting
        self.accountant = accountant
        self.size = size
        self.oracle = oracle
        self.oracle_options = oracle_options
        self.free_attributes = free_attributes
        self.workers = workers
        self.on_oracle_error = on_oracle_error
        self.seed = seed
        self.progress = progress

    def plan(self, data: BinaryData, workload: Workload) -> FEMPlan:
        """The parameters and budget :meth:`fit` would use; reads only public sizes."""
        c, m, s = self.c, self.noise_multiple, self.samples
        if m is None and self.eta is None and self.preset is None:
            m = self.default_noise_multiple
        if self.preset is not None:
            if self.preset not in AUTHORS_ADULT:
                raise DPQueryError(
                    f"unknown preset {self.preset!r}; choose one of {tuple(AUTHORS_ADULT)}"
                )
            pc, pm, ps = AUTHORS_ADULT[self.preset]
            c = pc if c is None and self.epsilon0 is None and self.T is None else c
            m = pm if m is None and self.eta is None else m
            s = ps if s is None else s
        return plan_fem(
            n=data.n, epsilon=self.epsilon, delta=self.delta, rho=self.rho,
            epsilon0=self.epsilon0, T=self.T, eta=self.eta, c=c, noise_multiple=m, s=s,
            accounting=self.accounting, accountant=self.accountant,
        )  # fmt: skip

    default_noise_multiple = DEFAULT_NOISE_MULTIPLE

    def _perturbation(self, plan: FEMPlan, workload: Workload) -> Perturbation:
        return ExponentialPerturbation(plan.eta)

    def fit(
        self, data: BinaryData, workload: Workload, true_answers: np.ndarray | None = None
    ) -> Release:
        """Run the algorithm on ``data`` for ``workload``; ``true_answers`` may be passed when
        already computed (e.g. from a cache)."""
        check_inputs(self.algorithm, data, workload)
        policy = check_policy(self.free_attributes)
        if policy == "private-density":
            raise DPQueryError(f"{self.algorithm} supports free_attributes 'zeros' or 'uniform'")
        workers = positive_int("workers", self.workers)
        if self.size is not None:
            positive_int("size", self.size)
        plan = self.plan(data, workload)
        check_delta(plan.budget.delta, data.n)  # warns when delta >= 1/n
        perturbation = self._perturbation(plan, workload)
        default = DEFAULT_ORACLE_OPTIONS if self.oracle == "heuristic" else {}
        oracle = resolve_oracle(self.oracle, self.oracle_options or default, self.on_oracle_error)
        accountant = (
            self.accountant if self.accountant is not None else fem_accountant(plan.accounting)
        )
        rng = make_rng(self.seed)
        ledger = Ledger(plan.budget, accountant)
        ledger.check(plan.charges())  # the whole plan fits before anything is drawn
        true_answers, t_answers = true_answers_of(workload, data, true_answers)
        start = time.perf_counter() - t_answers
        free = FreeAttributes(policy, data.onehot_groups)
        workers = workers if _picklable(oracle, perturbation) else 1
        progress = (
            progress_printer(self.algorithm, plan.T, _describe_round)
            if show_progress(self.progress)
            else None
        )
        with _pool(workers) as executor:
            plays, rounds = fem(
                workload, true_answers, n=data.n, plan=plan, perturbation=perturbation,
                onehot_groups=data.onehot_groups, oracle=oracle, free=free, ledger=ledger,
                rng=rng, executor=executor, workers=workers, on_round=progress,
                on_oracle_error=self.on_oracle_error,
            )  # fmt: skip
        if progress is not None:
            print(file=sys.stderr)
        rows = np.concatenate(plays)
        records = Records(rows, np.full(len(rows), 1.0 / len(rows)), data.domain)
        if self.size is not None:
            # Post-processing: a resample of the released average (no privacy cost).
            records = sample_records(records, self.size, seed=int(rng.integers(2**63)))
        total = time.perf_counter() - start
        parameters = {
            **asdict(plan), "budget": plan.budget.to_dict(), "n": data.n, "d": data.d,
            "queries": len(workload), "oracle": oracle.name, "workers": workers,
            "accountant": accountant.name, "free_attributes": self.free_attributes,
            "preset": self.preset, "size": self.size, **self._extra_parameters(),
        }  # fmt: skip
        return Release(
            self.algorithm,
            records,
            ledger,
            parameters,
            rounds,
            {
                "true_answers_s": t_answers,
                **round_timings(rounds),
                "total_s": total,
            },
        )

    def _extra_parameters(self) -> dict[str, Any]:
        return {"perturbation": "exponential (Algorithm 2)"}


class SepFEM(FEM):
    """Private synthetic data by sepFEM (Oracle-efficient, Algorithms 1 and 3).

    The same query player and budget modes as :class:`FEM`; the data player perturbs with
    ``Lap(eta)`` weights on a separator set: ``separator=None`` for the ``d`` single-bit
    queries (a separator set of every class of queries over bits; see
    :class:`SeparatorPerturbation`), or a :class:`~dpquery.queries.Workload` of separator
    queries over the same bits.
    """

    algorithm = "sepfem"
    default_noise_multiple = SEPFEM_NOISE_MULTIPLE

    def __init__(self, *, separator: Workload | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.separator = separator

    def _perturbation(self, plan: FEMPlan, workload: Workload) -> Perturbation:
        if self.separator is not None and self.separator.d != workload.d:
            raise DPQueryError(
                f"the separator set is over {self.separator.d} bits, the workload {workload.d}"
            )
        return SeparatorPerturbation(plan.eta, self.separator)

    def _extra_parameters(self) -> dict[str, Any]:
        sep = "single bits" if self.separator is None else f"{len(self.separator)} queries"
        return {"perturbation": f"Laplace on a separator set ({sep}, Algorithm 3)"}


# --- helpers ---------------------------------------------------------------------------------
class _NoPool:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _pool(workers: int) -> Any:
    if workers < 2:
        return _NoPool()
    # fork: the workers inherit the compiled oracle kernels instead of recompiling them.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def _picklable(*objects: object) -> bool:
    try:
        pickle.dumps(objects)
    except Exception:
        return False
    return True


def _describe_round(info: dict[str, Any]) -> str:
    obj = info.get("objective_mean")
    return f"mean objective {obj if obj is None else f'{obj:.1f}'}"


__all__: Sequence[str] = [
    "AUTHORS_ADULT",
    "FEM",
    "ExponentialMechanismPlayer",
    "ExponentialPerturbation",
    "FEMPlan",
    "PerturbedLeader",
    "SepFEM",
    "SeparatorPerturbation",
    "fem",
    "fem_accountant",
    "plan_fem",
    "with_weighted_queries",
]
