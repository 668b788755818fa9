"""The brute-force twin of the evaluation kernels: one record and one query at a time.

Slow on purpose and written straight from the definitions (DualQuery journal, Definition
6.1 for parities; Small databases, Section 1.2 for monotone disjunctions), so the tests can
check the compiled kernels against it. Not for use outside tests.
"""

from __future__ import annotations

import numpy as np

from dpquery.queries.linear import LinearQueries
from dpquery.queries.workload import Workload


def query_value(workload: Workload, i: int, record: np.ndarray) -> float:
    """q_i(x) for one record x (a 0/1 vector)."""
    holds = [bool(record[b]) == p for b, p in workload.literals(i)]
    if workload.kind == "conjunction":
        return 1.0 if all(holds) else 0.0
    if workload.kind == "disjunction":
        return 1.0 if any(holds) else 0.0
    ones = sum(int(record[b]) for b, _ in workload.literals(i))
    return 1.0 if ones % 2 == 0 else -1.0


def reference_answers(
    workload: Workload, rows: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """Weighted average of every query over the rows of a dense 0/1 matrix."""
    weights = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
    total = float(weights.sum())
    out = np.zeros(len(workload))
    for i in range(len(workload)):
        s = 0.0
        for record, w in zip(rows, weights, strict=True):
            s += w * query_value(workload, i, record)
        out[i] = s / total
    return out


def reference_linear(
    queries: LinearQueries, rows: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """Answers of general linear queries by looking each row up in the universe."""
    weights = np.ones(len(rows)) if weights is None else np.asarray(weights, dtype=float)
    out = np.zeros(len(queries))
    for record, w in zip(rows, weights, strict=True):
        u = next(j for j, x in enumerate(queries.universe) if np.array_equal(x, record))
        out += w * queries.matrix[:, u]
    return out / weights.sum()
