"""FEM's and sepFEM's players (Oracle-efficient, Algorithms 1, 2 and 3).

* the query player (Algorithm 1) runs the exponential mechanism over ``Q ∪ ¬Q`` with score
  ``S_t(D, q) = q(D) - q(D_hat^t)`` (sensitivity ``1/n``): the only place privacy is spent;
* the data player follows the perturbed leader: each round it draws ``s`` perturbations
  (:mod:`dpquery.algorithms.game.perturbations`) and asks the oracle, for each, for
  ``argmax_x sum_{i<t} q_i(x) + perturbation(x)``; the ``s`` solves may run in a process pool.
"""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

import numpy as np

from dpquery.algorithms.game.best_response import best_response
from dpquery.algorithms.game.free import FreeAttributes
from dpquery.algorithms.game.loop import unit_answers
from dpquery.algorithms.game.perturbations import Perturbation
from dpquery.data.records import Records
from dpquery.oracles import BestResponse, Oracle
from dpquery.privacy import Ledger, exponential_mechanism
from dpquery.privacy.fem import MECHANISM
from dpquery.queries import Workload


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
        on_error: str = "fallback",
    ) -> None:  # fmt: skip
        self.workload, self.perturbation = workload, perturbation
        self.s, self.T = s, T
        self.onehot_groups, self.oracle, self.free = onehot_groups, oracle, free
        self.rng, self.executor, self.workers = rng, executor, workers
        self.on_error = on_error
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
        args = (self.oracle, self.free, self.on_error)
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


# --- the process pool of a round's solves ---------------------------------------------------
class _NoPool:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def pool(workers: int) -> Any:
    if workers < 2:
        return _NoPool()
    # fork: the workers inherit the compiled oracle kernels instead of recompiling them.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def picklable(*objects: object) -> bool:
    try:
        pickle.dumps(objects)
    except Exception:
        return False
    return True
