"""The data holder's evaluation of a synthetic table, as one JSON-ready dict.

What :mod:`dpquery.evaluation.html` draws and ``dpquery evaluate --html`` embeds: the workload
errors of the synthetic records beside the zeros and uniform baselines (DualQuery 2015,
Section 7), the total variation of every workload marginal, every 1-way marginal and the
worst 2-way marginals, real against synthetic, and how often synthetic records break rules
every real record keeps (:mod:`dpquery.evaluation.coherence`). Everything here is computed on
the private data and is NOT differentially private.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from dpquery.algorithms.baselines import UniformDistribution, ZerosDataset
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.evaluation.coherence import coherence_section
from dpquery.evaluation.marginals import (
    MAX_INDICATORS_FOR_PAIRS,
    Indicators,
    gram,
    one_way,
    total_variation,
    two_way,
)
from dpquery.evaluation.metrics import error_report
from dpquery.queries import Workload, answer

NOT_PRIVATE_NOTE = (
    "computed on the private data for the data holder: NOT differentially private; do not "
    "publish this evaluation"
)
BASELINES = ("zeros", "uniform")
# The reference that reads the data (NOT private): the product of the true 1-way marginals.
INDEPENDENT = "independent"


def evaluate_synthetic(
    data: BinaryData,
    synthetic: BinaryData | Records,
    workload: Workload,
    *,
    true_answers: np.ndarray | None = None,
    worst_pairs: int = 3,
    real_table: pd.DataFrame | None = None,
    synthetic_table: pd.DataFrame | None = None,
    worst_constraints: int = 15,
) -> dict[str, Any]:
    """Errors, per-marginal TV and 1-/2-way marginals of ``synthetic`` against ``data``; with
    both tables (in the user's columns), the coherence of the synthetic records
    (:func:`dpquery.evaluation.coherence.coherence_report`)."""
    domain = data.domain
    if domain is None:
        raise DPQueryError("the evaluation needs the data's domain")
    if synthetic.d != data.d:
        raise DPQueryError(f"synthetic records have {synthetic.d} bits, the data {data.d}")
    true = answer(workload, data) if true_answers is None else true_answers
    released = {
        "synthetic": answer(workload, synthetic),
        "zeros": ZerosDataset().fit(data, workload).answers,
        "uniform": UniformDistribution().fit(data, workload).answers,
    }
    independent = independent_answers(workload, data)
    if independent is not None:
        released[INDEPENDENT] = independent
    m = synthetic.n if isinstance(synthetic, BinaryData) else synthetic.m
    coherence = {}
    if real_table is not None and synthetic_table is not None:
        coherence = {"coherence": coherence_section(
            real_table, synthetic_table, domain, limit=worst_constraints
        )}  # fmt: skip
    return {
        "note": NOT_PRIVATE_NOTE,
        "data": {"records": data.n, "attributes": len(domain), "bits": data.d},
        "synthetic": {"records": m, "weighted": isinstance(synthetic, Records)},
        "workload": {"queries": len(workload), "kind": workload.kind},
        "errors": {k: error_report(true, v, workload).to_dict() for k, v in released.items()},
        "per_marginal": _per_marginal(workload, true, released),
        **_marginals(data, synthetic, worst_pairs),
        **coherence,
    }


def independent_answers(workload: Workload, data: BinaryData) -> np.ndarray | None:
    """The workload's answers under the product of the data's true 1-way marginals (every
    attribute independent of the others), or None for a workload of another kind than
    conjunctions. A reference to judge a release's TV against, computed on the private data:
    NOT private. Under independence a conjunction's answer is the product over its
    attributes of the fraction of records that satisfy its literals on that attribute."""
    domain = data.domain
    if workload.kind != "conjunction" or domain is None or len(workload) == 0:
        return None
    query = np.repeat(np.arange(len(workload)), workload.sizes)
    attribute = domain.attribute_of_bit[workload.bits]
    order = np.lexsort((attribute, query))
    query, attribute = query[order], attribute[order]
    starts = np.flatnonzero(
        np.r_[True, (query[1:] != query[:-1]) | (attribute[1:] != attribute[:-1])]
    )
    # One sub-query per (query, attribute): the literals of the query on that attribute.
    parts = Workload(
        "conjunction", workload.d, np.append(starts, query.size),
        workload.bits[order], workload.positive[order],
    )  # fmt: skip
    out = np.ones(len(workload))
    np.multiply.at(out, query[starts], answer(parts, data))
    return out


def _per_marginal(
    workload: Workload, true: np.ndarray, released: dict[str, np.ndarray]
) -> list[dict[str, Any]]:
    """TV of every whole marginal of the workload (none when it has no marginal marks)."""
    if workload.marginals is None or workload.domain is None:
        return []
    starts = workload.marginals[:-1]
    tv = {k: 0.5 * np.add.reduceat(np.abs(v - true), starts) for k, v in released.items()}
    names = workload.domain.names
    out = []
    for j, q in enumerate(starts):
        bits = workload.bits[workload.offsets[q] : workload.offsets[q + 1]]
        attrs = sorted({int(a) for a in workload.domain.attribute_of_bit[bits]})
        out.append({"attributes": [names[a] for a in attrs],
                    "tv": {k: float(v[j]) for k, v in tv.items()}})  # fmt: skip
    return out


def _uniform_cells(ind: Indicators, i: int) -> np.ndarray:
    return np.full(ind.sizes[i], 1.0 / ind.sizes[i])


def _marginals(
    data: BinaryData, synthetic: BinaryData | Records, worst_pairs: int
) -> dict[str, Any]:
    domain = data.domain
    assert domain is not None
    ind = Indicators(domain)
    pairs = ind.width <= MAX_INDICATORS_FOR_PAIRS and len(domain) > 1
    g_real, g_syn = gram(data, domain, pairs=pairs), gram(synthetic, domain, pairs=pairs)
    d_real = np.diag(g_real) if pairs else g_real
    d_syn = np.diag(g_syn) if pairs else g_syn
    ones = []
    for i, name in enumerate(domain.names):
        p, q = one_way(d_real, ind, i), one_way(d_syn, ind, i)
        ones.append({
            "attribute": name, "labels": ind.labels(i),
            "real": p.tolist(), "synthetic": q.tolist(),
            "tv": {"synthetic": total_variation(p, q),
                   "uniform": total_variation(p, _uniform_cells(ind, i))},
        })  # fmt: skip
    out: dict[str, Any] = {"one_way": ones}
    if not pairs:
        out["two_way"] = {"pairs": 0, "note": f"more than {MAX_INDICATORS_FOR_PAIRS} cells"}
        return out
    tv = {
        (i, j): total_variation(two_way(g_real, ind, i, j), two_way(g_syn, ind, i, j))
        for i, j in itertools.combinations(range(len(domain)), 2)
    }
    worst = sorted(tv, key=lambda ij: -tv[ij])[:worst_pairs]
    out["two_way"] = {
        "pairs": len(tv),
        "max_tv": max(tv.values()),
        "mean_tv": float(np.mean(list(tv.values()))),
        "worst": [_pair(g_real, g_syn, ind, i, j) for i, j in worst],
    }
    return out


def _pair(g_real: np.ndarray, g_syn: np.ndarray, ind: Indicators, i: int, j: int) -> dict:
    p, q = two_way(g_real, ind, i, j), two_way(g_syn, ind, i, j)
    uniform = np.outer(_uniform_cells(ind, i), _uniform_cells(ind, j))
    names = ind.domain.names
    return {
        "attributes": [names[i], names[j]],
        "labels": [ind.labels(i), ind.labels(j)],
        "real": p.tolist(),
        "synthetic": q.tolist(),
        "tv": {"synthetic": total_variation(p, q), "uniform": total_variation(p, uniform)},
    }
