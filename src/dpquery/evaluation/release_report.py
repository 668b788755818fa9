"""The JSON reports of a release: the publishable account, and the curator's evaluation.

:func:`publishable_report` holds what may be published with the synthetic data: the
release's account (:meth:`~dpquery.algorithms.release.Release.to_dict`: parameters, the privacy
account, charged round statistics) and nothing else computed from the private data.
:func:`evaluation_report` compares the release with the *true* answers, computed on the private
data: it is for the data holder's evaluation, is NOT differentially private, and says so in its
``label``. :func:`release_report` returns both, under ``release`` and ``evaluation``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dpquery.algorithms.baselines import LaplaceNoise, UniformDistribution, ZerosDataset
from dpquery.algorithms.release import Release
from dpquery.data.binary import BinaryData
from dpquery.evaluation.coherence import coherence_section
from dpquery.evaluation.metrics import error_report
from dpquery.queries import Workload, answer
from dpquery.rng import SeedLike

NOT_PRIVATE = "NOT PRIVATE: computed on the private data, for the data holder only"
EVALUATION_NOTE = (
    "errors, baselines and timings are computed on the private data for evaluation: they are "
    "NOT differentially private; publish only the release report with the synthetic data"
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


def publishable_report(
    release: Release, *, randomness: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What may be published with the records: the release's account (no raw noise, no
    timings of passes over the private data), its oracle summary and, when given, which
    generator drew the noise (:func:`dpquery.rng.describe_rng`)."""
    section = {**release.to_dict(), "oracle_summary": oracle_summary(release.rounds)}
    if randomness is not None:
        section["randomness"] = dict(randomness)
    return {"release": section}


def evaluation_report(
    release: Release,
    data: BinaryData,
    workload: Workload,
    *,
    true_answers: np.ndarray | None = None,
    fresh_workload: Workload | None = None,
    fresh_true_answers: np.ndarray | None = None,
    baseline_epsilon: float | None = None,
    seed: SeedLike = None,
    real_table: pd.DataFrame | None = None,
    synthetic_table: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The release's errors on ``workload`` and on a fresh workload of the same kind (true
    answers computed unless given), beside the zeros, uniform and Laplace-per-query
    baselines (the latter at ``baseline_epsilon``, default the release's epsilon budget), and
    the timings of the passes over the private data; with the real table and the synthetic
    table written (both in the user's columns), their ``coherence``: how often synthetic
    records break rules every real record keeps (:mod:`dpquery.evaluation.coherence`). NOT
    private: for the curator only."""
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
    out = {
        "label": NOT_PRIVATE,
        "note": EVALUATION_NOTE,
        "errors": errors,
        "baselines": baselines,
        "timings": release.private_timings(),
    }
    if real_table is not None and synthetic_table is not None and data.domain is not None:
        out["coherence"] = coherence_section(real_table, synthetic_table, data.domain)
    return out


def release_report(
    release: Release, data: BinaryData, workload: Workload, **evaluation: Any
) -> dict[str, Any]:
    """:func:`publishable_report` under ``release`` and :func:`evaluation_report` (NOT
    private; ``evaluation`` are its keyword arguments) under ``evaluation``: for research
    runs, never to be published as a whole."""
    return {
        **publishable_report(release),
        "evaluation": evaluation_report(release, data, workload, **evaluation),
    }
