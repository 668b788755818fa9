"""Linear queries over bits, workload generators and the evaluation kernels.

See ``docs/queries.md``. Everything an algorithm needs:

* :class:`Workload` (conjunctions, disjunctions, parities; negation closure implicit) and
  :class:`LinearQueries` (general linear queries as a predicate matrix);
* generators for the papers' workloads (:func:`random_marginal_queries`,
  :func:`random_marginal_cells`, :func:`all_kway_marginals`, ...);
* :func:`answer` on :class:`~dpquery.data.binary.BinaryData` or a weighted
  :class:`~dpquery.data.records.Records` set, and :func:`uniform_answers`.
"""

from dpquery.queries.build import WORKLOAD_KINDS, build_workload, check_same_domain
from dpquery.queries.default import default_workload
from dpquery.queries.evaluate import (
    answer,
    answer_data,
    answer_records,
    cached_answers,
    data_fingerprint,
    fold_counts,
)
from dpquery.queries.generators import (
    all_kway_marginals,
    fem_marginals,
    marginal_cells,
    marginal_size,
    random_disjunctions,
    random_marginal_cells,
    random_marginal_queries,
    random_parities,
)
from dpquery.queries.linear import LinearQueries
from dpquery.queries.uniform import uniform_answers
from dpquery.queries.workload import QUERY_KINDS, QueryKind, Workload, concat, describe_query

__all__ = [
    "QUERY_KINDS",
    "WORKLOAD_KINDS",
    "LinearQueries",
    "QueryKind",
    "Workload",
    "all_kway_marginals",
    "answer",
    "answer_data",
    "answer_records",
    "build_workload",
    "cached_answers",
    "check_same_domain",
    "concat",
    "data_fingerprint",
    "default_workload",
    "describe_query",
    "fem_marginals",
    "fold_counts",
    "marginal_cells",
    "marginal_size",
    "random_disjunctions",
    "random_marginal_cells",
    "random_marginal_queries",
    "random_parities",
    "uniform_answers",
]
