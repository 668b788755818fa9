"""DualQuery (Gaboardi, Gallego Arias, Hsu, Roth, Wu), Algorithm 2.

The query player runs multiplicative weights over the closed workload ``Q ∪ ¬Q``; each round
it draws ``s`` queries from ``Q^t`` (an exponential mechanism: the only place privacy is
spent), the data player best-responds with one record ``x^t`` (an oracle: untrusted,
post-processing), and every query's log-weight moves by ``-eta (q(x^t) - q(D))``. The
synthetic data is the ``T`` records.

Parameters come in four modes (see :func:`plan_dualquery`): explicit ``(eta, T, s)``;
budget mode, the largest ``T`` (or ``s``) that fits ``(epsilon, delta)`` under the chosen
accountant; theory mode from ``(alpha, beta)`` (Algorithm 2's settings, Remark 4.7).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpquery.algorithms.free import (
    DENSITY_MECHANISM,
    FreeAttributes,
    check_policy,
    private_density,
)
from dpquery.algorithms.game import play
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.oracles import BestResponse, Oracle, OracleResult, get_oracle, validate_record
from dpquery.privacy import (
    Accountant,
    Budget,
    Charge,
    Composition,
    Ledger,
    PureDP,
    default_accountant,
    dualquery_max_samples,
    dualquery_plan,
    dualquery_sample_round,
    fits,
    max_rounds,
    remark_4_7_parameters,
    spend,
)
from dpquery.privacy.dualquery import dualquery_round_charge
from dpquery.queries import Workload, answer
from dpquery.rng import SeedLike, make_rng

DEFAULT_ETA = 1.2
DEFAULT_SAMPLES = 1000


@dataclass(frozen=True)
class DualQueryPlan:
    """Resolved parameters of a run and the budget its ledger enforces."""

    eta: float
    T: int
    s: int
    budget: Budget
    mode: str
    density_epsilon: float | None = None

    def charges(self, n: int) -> list[Charge]:
        """Everything the run will charge, in order."""
        density = [] if self.density_epsilon is None else [
            Charge(DENSITY_MECHANISM, PureDP(self.density_epsilon))
        ]  # fmt: skip
        return density + dualquery_plan(eta=self.eta, T=self.T, s=self.s, n=n)


def budget_for(epsilon: float, delta: float | None) -> Budget:
    """Pure epsilon when ``delta`` is 0 or None, else (epsilon, delta)."""
    return Budget.pure(epsilon) if not delta else Budget.approx(epsilon, delta)


def log_universe_size(data: BinaryData) -> float:
    """``ln |X|``: one value per one-hot group, two per free bit (Remark 4.7's ``|X|``)."""
    sizes = data.onehot_groups[:, 1] - data.onehot_groups[:, 0]
    free_bits = data.d - int(sizes.sum())
    return float(np.log(sizes).sum() + free_bits * math.log(2))


def plan_dualquery(
    *,
    n: int,
    num_queries: int,
    log_universe: float,
    epsilon: float | None = None,
    delta: float | None = None,
    eta: float | None = None,
    T: int | None = None,
    s: int | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    density_epsilon: float | None = None,
    accountant: Accountant | None = None,
) -> DualQueryPlan:
    """Resolve DualQuery's parameters (DualQuery, Theorems 4.2/4.3, Remark 4.7).

    * theory: ``alpha`` (and ``beta``, default 0.05): Algorithm 2's ``T, eta, s``; with
      ``epsilon``, they must fit it;
    * budget: ``epsilon`` (``delta``; 0 or None for pure DP) with two of ``eta, T, s``: the
      largest third one (``T`` or ``s``) that fits; ``eta`` and ``s`` default to 1.2 and 1000,
      as in the paper's experiments;
    * explicit: ``eta, T, s`` and no ``epsilon``: the budget is what they cost under the
      accountant (pure epsilon by Theorem 4.2 when ``delta`` is not given).

    ``num_queries`` is ``|Q|`` with negations (2 x the workload).
    """
    acc = accountant if accountant is not None else default_accountant()
    density = [] if density_epsilon is None else [
        Charge(DENSITY_MECHANISM, PureDP(density_epsilon))
    ]  # fmt: skip

    def cost(eta_: float, T_: int, s_: int) -> float:
        totals = Composition(density + dualquery_plan(eta=eta_, T=T_, s=s_, n=n)).totals()
        probe = budget_for(1.0, delta)
        return spend(totals, probe, acc)

    if alpha is not None:
        if eta is not None or T is not None or s is not None:
            raise DPQueryError("give either alpha (theory mode) or eta/T/s, not both")
        p = remark_4_7_parameters(
            alpha=alpha, beta=0.05 if beta is None else beta,
            num_queries=num_queries, log_universe_size=log_universe,
        )  # fmt: skip
        needed = cost(p.eta, p.T, p.s)
        if epsilon is not None and needed > epsilon:
            raise DPQueryError(
                f"Algorithm 2's parameters for alpha={alpha} (T={p.T}, s={p.s}, eta={p.eta:g}) "
                f"need epsilon={needed:.4g} on n={n}, more than the budget {epsilon}"
            )
        budget = budget_for(epsilon if epsilon is not None else ceil_epsilon(needed), delta)
        return DualQueryPlan(p.eta, p.T, p.s, budget, "theory", density_epsilon)
    if epsilon is None:
        if eta is None or T is None or s is None:
            raise DPQueryError(
                "give a budget (epsilon, delta), or all of eta, T and s, or alpha (theory mode)"
            )
        check_parameters(eta, T, s)
        return DualQueryPlan(
            eta, T, s, budget_for(ceil_epsilon(cost(eta, T, s)), delta), "explicit", density_epsilon
        )
    budget = budget_for(epsilon, delta)
    eta = DEFAULT_ETA if eta is None else eta
    if T is not None and s is not None:
        check_parameters(eta, T, s)
        if not fits(Composition(density + dualquery_plan(eta=eta, T=T, s=s, n=n)).totals(),
                    budget, acc):  # fmt: skip
            raise DPQueryError(
                f"eta={eta:g}, T={T}, s={s} need epsilon={cost(eta, T, s):.4g} on n={n}, more "
                f"than the budget {budget.describe()}"
            )
        return DualQueryPlan(eta, T, s, budget, "explicit", density_epsilon)
    if T is not None:  # the largest s for the given T
        check_parameters(eta, T, 1)
        if density:
            raise DPQueryError("budget mode for s does not support private-density; give s")
        s = dualquery_max_samples(budget, eta=eta, T=T, n=n, accountant=acc)
        if s < 1:
            raise DPQueryError(f"no sample size fits {budget.describe()} with T={T}")
        return DualQueryPlan(eta, T, s, budget, "budget (largest s)", density_epsilon)
    s = DEFAULT_SAMPLES if s is None else s
    check_parameters(eta, 1, s)

    def round_charges(t: int) -> list[Charge]:
        first = density if t == 1 else []
        return [*first, dualquery_round_charge(t, eta=eta, s=s, n=n)]

    T = max_rounds(round_charges, budget, acc)
    if T < 2:
        raise DPQueryError(
            f"{budget.describe()} admits only {T} round(s) with eta={eta:g}, s={s}, n={n}; "
            "lower eta or s"
        )
    return DualQueryPlan(eta, T, s, budget, "budget (largest T)", density_epsilon)


def ceil_epsilon(epsilon: float) -> float:
    """A budget just above ``epsilon``, for the explicit modes' own cost."""
    # The ledger recomputes the same exact sums; one ulp of room absorbs the last rounding.
    return math.nextafter(epsilon, math.inf) if epsilon > 0 else 1e-300


def check_parameters(eta: float, T: int, s: int) -> None:
    """``eta`` a positive number, ``T`` and ``s`` positive integers, or a clear error."""
    if not (isinstance(eta, int | float) and 0 < eta < math.inf):
        raise DPQueryError(f"eta must be a positive number, got {eta!r}")
    for name, v in (("T", T), ("s", s)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise DPQueryError(f"{name} must be a positive integer, got {v!r}")


RoundCallback = Callable[[dict[str, Any]], None]


def unit_answers(workload: Workload, target: BinaryData | Records) -> np.ndarray:
    """Answers rescaled to [0, 1] (parities: (1 + p) / 2), the range the privacy proofs
    assume: with them every score has sensitivity ``1/n`` per round."""
    lo, hi = workload.value_range
    return (answer(workload, target) - lo) / (hi - lo)


class MultiplicativeWeightsSampler:
    """DualQuery's query player (Algorithm 2): multiplicative weights over ``Q ∪ ¬Q``.

    The log-weight of ``q`` is ``-eta r_q`` and of ``¬q`` is ``+eta r_q``, with
    ``r_q = sum_{i<t} (q(x^i) - q(D))``; round ``t`` draws ``s`` queries from it.
    """

    def __init__(
        self, true_unit: np.ndarray, *, eta: float, s: int, n: int,
        rng: np.random.Generator, ledger: Ledger,
    ) -> None:  # fmt: skip
        self.true_unit = true_unit
        self.eta, self.s, self.n = eta, s, n
        self.rng, self.ledger = rng, ledger
        self.r = np.zeros_like(true_unit)

    def log_weights(self) -> np.ndarray:
        return np.concatenate([-self.eta * self.r, self.eta * self.r])

    def select(self, t: int) -> np.ndarray:
        return dualquery_sample_round(
            self.log_weights(), t=t, eta=self.eta, s=self.s, n=self.n,
            rng=self.rng, ledger=self.ledger,
        )  # fmt: skip

    def observe(self, t: int, answers: np.ndarray) -> None:
        self.r += answers - self.true_unit


class BestResponder:
    """DualQuery's data player: one best-response record per round (Section 5)."""

    def __init__(
        self, workload: Workload, *, onehot_groups: np.ndarray, oracle: Oracle,
        free: FreeAttributes, rng: np.random.Generator, on_oracle_error: str = "fallback",
    ) -> None:  # fmt: skip
        self.workload, self.onehot_groups = workload, onehot_groups
        self.oracle, self.free, self.rng = oracle, free, rng
        self.on_oracle_error = on_oracle_error
        self.rows: list[np.ndarray] = []

    def start(self) -> None:
        return None

    def respond(self, t: int, sampled: np.ndarray) -> dict[str, Any]:
        problem = BestResponse.from_workload(
            self.workload, sampled, onehot_groups=self.onehot_groups
        )
        x, info = best_response(problem, self.oracle, self.free, self.rng, self.on_oracle_error)
        self.rows.append(x)
        return info

    def answers(self) -> np.ndarray:
        return unit_answers(self.workload, Records(self.rows[-1][None, :]))


def dualquery(
    workload: Workload,
    true_answers: np.ndarray,
    *,
    n: int,
    onehot_groups: np.ndarray,
    plan: DualQueryPlan,
    oracle: Oracle,
    free: FreeAttributes,
    ledger: Ledger,
    rng: np.random.Generator,
    on_round: RoundCallback | None = None,
    on_oracle_error: str = "fallback",
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """DualQuery, Algorithm 2: the ``T`` best-response records and per-round statistics.

    ``true_answers`` are ``q(D)`` for the stored queries. Answers are rescaled to [0, 1]
    (parities: (1 + p) / 2) so the score's sensitivity is ``(t-1)/n`` as Theorem 4.2's
    proof requires.
    """
    lo, hi = workload.value_range
    true_unit = (np.asarray(true_answers, dtype=np.float64) - lo) / (hi - lo)
    queries = MultiplicativeWeightsSampler(
        true_unit, eta=plan.eta, s=plan.s, n=n, rng=rng, ledger=ledger
    )
    records = BestResponder(
        workload, onehot_groups=onehot_groups, oracle=oracle, free=free, rng=rng,
        on_oracle_error=on_oracle_error,
    )  # fmt: skip
    stats = play(queries, records, plan.T, on_round)
    return np.array(records.rows, dtype=np.uint8).reshape(plan.T, workload.d), stats


def best_response(
    problem: BestResponse,
    oracle: Oracle,
    free: FreeAttributes,
    rng: np.random.Generator,
    on_error: str = "fallback",
) -> tuple[np.ndarray, dict[str, Any]]:
    """Ask the (untrusted) oracle; validate and repair its record; set the free bits.

    Whatever the oracle does (raise, time out, return garbage) nothing is charged here: the
    round's privacy was paid when its queries were sampled. On an exception the record is a
    random sensible one (``on_error="fallback"``) or the run stops (``"raise"``).
    """
    seed = int(rng.integers(2**63))
    try:
        result: OracleResult = oracle.solve(problem, seed=seed)
        record = validate_record(problem, result.record, repair=True)
        repaired = not np.array_equal(record, np.asarray(result.record))
        free_bits = np.asarray(result.free, dtype=bool)
        if free_bits.shape != (problem.d,):
            free_bits = np.zeros(problem.d, dtype=bool)
        info: dict[str, Any] = {
            "objective": float(problem.objective(record)),
            "bound": _finite_or_none(result.bound),  # untrusted: keep the report valid JSON
            "optimal": bool(result.optimal) and not repaired,
            "timed_out": bool(result.timed_out),
            "status": str(result.status),
            "repaired": repaired,
        }
    except Exception as exc:
        if on_error == "raise":
            raise DPQueryError(f"the oracle failed: {type(exc).__name__}: {exc}") from exc
        record = np.zeros(problem.d, dtype=np.uint8)
        record[problem.onehot_groups[:, 0]] = 1
        free_bits = np.ones(problem.d, dtype=bool)
        info = {"objective": None, "bound": None, "optimal": False, "timed_out": False,
                "status": f"oracle error, random record: {type(exc).__name__}: {exc}",
                "repaired": False}  # fmt: skip
    return free.apply(record, free_bits, rng), info


def _finite_or_none(x: object) -> float | None:
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


class DualQuery:
    """Private synthetic data by DualQuery (Algorithm 2), scikit-learn style.

    Hyperparameters are stored as given; :meth:`fit` validates them, resolves the mode
    (:func:`plan_dualquery`), and returns a :class:`Release`. ``seed`` fixes every random
    choice (for testing and research); without it the run is unpredictable.
    """

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        eta: float | None = None,
        T: int | None = None,
        samples: int | None = None,
        alpha: float | None = None,
        beta: float | None = None,
        oracle: str | Oracle = "heuristic",
        oracle_options: dict[str, Any] | None = None,
        free_attributes: str = "zeros",
        density_epsilon: float | None = None,
        accountant: Accountant | None = None,
        on_oracle_error: str = "fallback",
        seed: SeedLike = None,
        progress: bool | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.eta = eta
        self.T = T
        self.samples = samples
        self.alpha = alpha
        self.beta = beta
        self.oracle = oracle
        self.oracle_options = oracle_options
        self.free_attributes = free_attributes
        self.density_epsilon = density_epsilon
        self.accountant = accountant
        self.on_oracle_error = on_oracle_error
        self.seed = seed
        self.progress = progress

    def plan(self, data: BinaryData, workload: Workload) -> DualQueryPlan:
        """The parameters and budget :meth:`fit` would use; reads only public sizes."""
        policy = check_policy(self.free_attributes)
        density_eps = None
        if policy == "private-density":
            density_eps = self.density_epsilon
            if density_eps is None:
                raise DPQueryError("free_attributes='private-density' needs density_epsilon")
        elif self.density_epsilon is not None:
            raise DPQueryError("density_epsilon applies only to free_attributes='private-density'")
        return plan_dualquery(
            n=data.n, num_queries=2 * len(workload), log_universe=log_universe_size(data),
            epsilon=self.epsilon, delta=self.delta, eta=self.eta, T=self.T, s=self.samples,
            alpha=self.alpha, beta=self.beta, density_epsilon=density_eps,
            accountant=self.accountant,
        )  # fmt: skip

    def fit(
        self, data: BinaryData, workload: Workload, true_answers: np.ndarray | None = None
    ) -> Release:
        """Run DualQuery on ``data`` for ``workload``; ``true_answers`` may be passed when
        already computed (e.g. from a cache)."""
        if workload.d != data.d:
            raise DPQueryError(f"the workload is over {workload.d} bits, the data {data.d}")
        if workload.kind not in ("conjunction", "disjunction", "parity"):
            raise DPQueryError(f"DualQuery does not support {workload.kind!r} queries")
        if self.on_oracle_error not in ("fallback", "raise"):
            raise DPQueryError(
                f"on_oracle_error must be 'fallback' or 'raise', got {self.on_oracle_error!r}"
            )
        plan = self.plan(data, workload)
        oracle = (
            get_oracle(self.oracle, **(self.oracle_options or {}))
            if isinstance(self.oracle, str) else self.oracle
        )  # fmt: skip
        rng = make_rng(self.seed)
        ledger = Ledger(plan.budget, self.accountant)
        ledger.check(plan.charges(data.n))  # the whole plan fits before anything is drawn
        start = time.perf_counter()
        if true_answers is None:
            true_answers = answer(workload, data)
        elif np.shape(true_answers) != (len(workload),):
            raise DPQueryError(f"true_answers must have {len(workload)} entries")
        t_answers = time.perf_counter() - start
        density = None
        if plan.density_epsilon is not None:
            density = private_density(data, epsilon=plan.density_epsilon, rng=rng, ledger=ledger)
        free = FreeAttributes(check_policy(self.free_attributes), data.onehot_groups, density)
        progress = _progress(plan.T) if _show_progress(self.progress) else None
        rows, rounds = dualquery(
            workload, true_answers, n=data.n, onehot_groups=data.onehot_groups, plan=plan,
            oracle=oracle, free=free, ledger=ledger, rng=rng, on_round=progress,
            on_oracle_error=self.on_oracle_error,
        )  # fmt: skip
        if progress is not None:
            print(file=sys.stderr)
        total = time.perf_counter() - start
        parameters = {**asdict(plan), "budget": plan.budget.to_dict(), "n": data.n,
                      "d": data.d, "queries": len(workload), "oracle": oracle.name,
                      "free_attributes": self.free_attributes}  # fmt: skip
        return Release(
            "dualquery",
            Records(rows, None, data.domain),
            ledger,
            parameters,
            rounds,
            {
                "true_answers_s": t_answers,
                "sampling_s": sum(r["select_s"] for r in rounds),
                "oracle_s": sum(r["respond_s"] for r in rounds),
                "update_s": sum(r["observe_s"] for r in rounds),
                "total_s": total,
            },
            non_private_domain=bool(data.domain is not None and data.domain.non_private),
        )


def _show_progress(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else progress


def _progress(T: int) -> RoundCallback:
    def show(info: dict[str, Any]) -> None:
        obj = info["objective"]
        print(
            f"\rDualQuery round {info['round']}/{T}  oracle {info['respond_s'] * 1e3:7.1f} ms  "
            f"objective {obj if obj is None else f'{obj:.1f}'}  {info['status'][:20]:<20}",
            end="", file=sys.stderr, flush=True,
        )  # fmt: skip

    return show
