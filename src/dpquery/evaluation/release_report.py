"""The JSON report of a release: how it was made, what it cost, how accurate it is.

Accuracy figures compare the release with the *true* answers, computed on the private data:
they are for the data holder's evaluation, are not differentially private, and the report
says so. Everything under ``release`` is safe to publish with the synthetic data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpquery.algorithms.baselines import LaplaceNoise, UniformDistribution, ZerosDataset
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.evaluation.metrics import error_report
from dpquery.queries import Workload, answer
from dpquery.rng import SeedLike

EVALUATION_NOTE = (
    "errors and baselines are computed on the private data for evaluation: they are NOT "
    "differentially private; publish only the 'release' section with the synthetic data"
)


def _errors(true: np.ndarray, released: np.ndarray, workload: Workload) -> dict[str, Any]:
    return error_report(true, released, workload).to_dict()


def oracle_summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts over the rounds: certified optimal, timed out, repaired, oracle failures."""
    seconds = [r.get("respond_s", 0.0) for r in rounds]
    return {
        "rounds": len(rounds),
        "optimal": sum(bool(r.get("optimal")) for r in rounds),
        "timed_out": sum(bool(r.get("timed_out")) for r in rounds),
        "repaired": sum(bool(r.get("repaired")) for r in rounds),
        "failed": sum(str(r.get("status", "")).startswith("oracle error") for r in rounds),
        "mean_seconds": float(np.mean(seconds)) if seconds else 0.0,
        "max_seconds": float(np.max(seconds)) if seconds else 0.0,
    }


def release_report(
    release: Release,
    data: BinaryData,
    workload: Workload,
    *,
    true_answers: np.ndarray | None = None,
    fresh_workload: Workload | None = None,
    fresh_true_answers: np.ndarray | None = None,
    baseline_epsilon: float | None = None,
    seed: SeedLike = None,
) -> dict[str, Any]:
    """The release's own account plus its errors, on ``workload`` and on a fresh workload of
    the same kind (true answers computed unless given), beside the zeros, uniform and
    Laplace-per-query baselines (the latter at ``baseline_epsilon``, default the release's
    epsilon budget)."""
    true = answer(workload, data) if true_answers is None else true_answers
    released = answer(workload, release.records)
    errors = {"workload": _errors(true, released, workload)}
    if fresh_workload is not None:
        fresh_true = (
            answer(fresh_workload, data) if fresh_true_answers is None else fresh_true_answers
        )
        released_fresh = answer(fresh_workload, release.records)
        errors["fresh_workload"] = _errors(fresh_true, released_fresh, fresh_workload)
    baselines = {
        "zeros": _errors(true, ZerosDataset().fit(data, workload).answers, workload),
        "uniform": _errors(true, UniformDistribution().fit(data, workload).answers, workload),
    }
    eps = baseline_epsilon if baseline_epsilon is not None else release.ledger.budget.epsilon
    if eps is not None:
        lap = LaplaceNoise(eps, seed=seed).fit(data, workload, true_answers=true)
        baselines["laplace"] = {**_errors(true, lap.answers, workload), "epsilon": eps}
    return {
        "release": {**release.to_dict(), "oracle_summary": oracle_summary(release.rounds)},
        "evaluation": {"note": EVALUATION_NOTE, "errors": errors, "baselines": baselines},
    }
