"""The fifth step of a release: the publishable report and the NOT PRIVATE evaluation.

The report holds the release's account and privacy guarantee, how its rows were made and
the backend; it publishes nothing computed from the data beyond the release. The evaluation
(errors against the true answers, baselines, coherence; for item data the wide measures) is
the curator's, never published.
"""

from __future__ import annotations

from typing import Any

from dpquery.algorithms.auto import BaselineWarning
from dpquery.algorithms.columns import columns_report
from dpquery.backends import PartitionedData
from dpquery.data.items import ItemSets
from dpquery.data.sample import OutputReport
from dpquery.evaluation.release_report import evaluation_report, publishable_report
from dpquery.evaluation.wide import wide_evaluation
from dpquery.pipeline.fitting import Fitted
from dpquery.rng import describe_rng

RELEASED = "the released records"
"""The output's method when it is the released records themselves, unweighted."""


def backend_report(data: Any) -> dict[str, Any]:
    """Where the data was counted: the cluster's description, or this process."""
    if isinstance(data, PartitionedData):
        return data.describe()
    return {"name": "local", "partitions": 1}


def table_report(fitted: Fitted, output: OutputReport) -> dict[str, Any]:
    """The publishable report of a table's release whose rows were made as ``output``."""
    release, data = fitted.release, fitted.data
    assert fitted.workload is not None  # a table's release is fitted for a workload
    report = publishable_report(release, randomness=describe_rng(fitted.rng))
    report["release"]["output"] = output.to_dict()
    report["release"]["decode"] = output.decode.to_dict()
    report["release"]["columns"] = columns_report(
        release.parameters, data, fitted.workload, getattr(fitted.model, "free_attributes", None)
    )
    report["backend"] = backend_report(data)
    if fitted.learned is not None:
        report["release"]["domain"] = fitted.learned.to_dict()
    return report


def table_evaluation(fitted: Fitted, real: Any, synthetic: Any) -> dict[str, Any]:
    """The curator's evaluation of a table's release (NOT private): errors on the workload
    and the fresh one, the baselines, and coherence when both tables are in their own
    columns (``real``, ``synthetic``: None otherwise)."""
    true, fresh = fitted.true, fitted.fresh
    assert fitted.workload is not None  # a table's release is fitted for a workload
    evaluation = evaluation_report(
        fitted.release, fitted.data, fitted.workload, true_answers=true[0],
        fresh_workload=fresh, fresh_true_answers=true[1] if fresh is not None else None,
        seed=fitted.rng, real_table=real, synthetic_table=synthetic,
    )  # fmt: skip
    if isinstance(fitted.data, PartitionedData):  # time on the cluster: the row count and
        evaluation["timings"]["backend_s"] = fitted.data.seconds  # both workloads' answers
    return evaluation


def items_report(
    fitted: Fitted, out: ItemSets, form: str, weights: bool, reason: str | None
) -> dict[str, Any]:
    """The publishable report of item data's release, whose rows ``out`` are written in
    ``form``; ``reason`` says why ``auto`` chose the wide release (None: it was named)."""
    released: ItemSets = fitted.records
    report = publishable_report(fitted.release, randomness=describe_rng(fitted.rng))
    rel = report["release"]
    if reason is not None:
        rel["parameters"]["auto"] = {"chosen": "wide", "reason": reason}
        checked = [str(m) for m in fitted.messages if isinstance(m, BaselineWarning)]
        if checked:  # the pre-release check's, said before the fit
            rel["parameters"]["auto"]["warning"] = checked[0]
    if weights:
        method = "the released records with their weights"
    elif out is released:  # unweighted, rows = n: sampling would only reorder them
        method = RELEASED
    else:
        method = "sampled from the released records (systematic sampling by weight)"
    rel["output"] = {"rows": out.n, "released_records": released.n, "form": form,
                     "method": method}  # fmt: skip
    if fitted.universe is not None:
        rel["universe"] = fitted.universe.to_dict()
    report["backend"] = backend_report(fitted.data)
    return report


def items_evaluation(real: ItemSets, out: ItemSets) -> dict[str, Any]:
    """The wide measures of the output against the real item sets (NOT private)."""
    return wide_evaluation(real, out, seed=0)
