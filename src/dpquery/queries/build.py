"""Workloads by kind, and the check that a workload and the data share a domain.

The kinds a user asks for by name (:data:`WORKLOAD_KINDS`), each built from a public domain
by its generator (:mod:`dpquery.queries.generators`). Distinct from the *query* kinds of
:data:`dpquery.queries.workload.QUERY_KINDS` (conjunction, disjunction, parity).
"""

from __future__ import annotations

import numpy as np

from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError
from dpquery.queries import generators as gen
from dpquery.queries.workload import Workload

WORKLOAD_KINDS = ("marginals", "marginal-cells", "all-marginals", "parities", "disjunctions")


class MissingParameterError(DPQueryError):
    """A workload kind needs a parameter that was not given (``kind``, ``parameter``)."""

    def __init__(self, kind: str, parameter: str) -> None:
        self.kind, self.parameter = kind, parameter
        super().__init__(f"workload kind {kind} needs {parameter}")


def _require(value: int | None, name: str, kind: str) -> int:
    if value is None:
        raise MissingParameterError(kind, name)
    return value


def build_workload(
    kind: str,
    domain: Domain,
    *,
    k: int,
    count: int | None = None,
    marginals: int | None = None,
    attributes: list[str] | None = None,
    n: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> Workload:
    """The workload of ``kind`` over ``domain``: ``count`` random ``k``-way marginal queries
    (``marginals``), every cell of ``marginals`` random ``k``-attribute marginals
    (``marginal-cells``, which needs the public ``n``), all ``k``-way marginals of
    ``attributes`` (``all-marginals``), or ``count`` random ``k``-bit parities or
    disjunctions."""
    if kind not in WORKLOAD_KINDS:
        raise DPQueryError(f"workload kind must be one of {WORKLOAD_KINDS}, got {kind!r}")
    if kind == "marginals":
        return gen.random_marginal_queries(domain, k, _require(count, "count", kind), seed)
    if kind == "marginal-cells":
        m = _require(marginals, "marginals", kind)
        return gen.random_marginal_cells(domain, k, m, _require(n, "n", kind), seed)
    if kind == "all-marginals":
        return gen.all_kway_marginals(domain, k, attributes)
    make = gen.random_parities if kind == "parities" else gen.random_disjunctions
    return make(domain.d, k, _require(count, "count", kind), seed, domain)


def check_same_domain(workload: Workload, d: int, domain: Domain | None) -> None:
    """The workload is over the data's ``d`` bits and, when both carry one, the same domain
    (the same bits over another domain would be other queries)."""
    if workload.d != d:
        raise DPQueryError(f"the workload is over {workload.d} bits but the data has {d}")
    if (
        workload.domain is not None
        and domain is not None
        and workload.domain.layout() != domain.layout()
    ):
        raise DPQueryError("the workload was made over a different domain than the data's")
