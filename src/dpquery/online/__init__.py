"""Online private multiplicative weights over low-weight polynomials.

Chandrasekaran, Thaler, Ullman, Wan, "Faster private release of marginals on small
databases" (ITCS 2014): answer adaptively chosen ``k``-way marginal and disjunction queries
under ``(epsilon, delta)``-DP with per-query time ``O(binom(d, <= t))`` instead of ``2^d``.
See ``docs/online.md``.

* :class:`PMWSession` -- the private session (Algorithm 1 + Theorem 3.3), persistent in
  SQLite via :meth:`PMWSession.open`; ``representation="full-domain"`` is the Hardt-Rothblum
  comparator.
* :mod:`~dpquery.online.polynomials` -- Fact 4.3, Fact 4.4, Lemmas 4.1 and 4.2.
* :mod:`~dpquery.online.representation` / :mod:`~dpquery.online.learner` -- ``p_bar``
  (Fact 3.4) and Algorithm 1 (Theorem 3.5).
* :func:`choose_representation` -- ``(m, t, W)`` for ``(d, k, alpha)``, with an explanation.
* :class:`CompactSummary` -- Remark 2 (:meth:`PMWSession.export_summary`).
* :mod:`~dpquery.online.state` -- parameters and state as values; the forward-secure noise key.
"""

from dpquery.online.fulldomain import FullDomainMW, full_domain_bytes, full_domain_mistake_bound
from dpquery.online.learner import PolynomialMW, mistake_bound
from dpquery.online.parameters import Representation, choose_representation, theorem_1_3_bounds
from dpquery.online.polynomials import (
    BlockPolynomial,
    UnivariateOR,
    exact_or,
    fact_4_4,
    interpolated_or,
    lemma_4_1,
    lemma_4_2,
)
from dpquery.online.representation import from_pbar, monomial_masks, query_vector, to_pbar
from dpquery.online.session import OnlineAnswer, PMWSession
from dpquery.online.sparse import PrivacyPlan, make_plan
from dpquery.online.state import SessionParams, SessionState
from dpquery.online.summary import CompactSummary
from dpquery.online.transform import OnlineQuery, VariableMap, parse_query

__all__ = [
    "BlockPolynomial",
    "CompactSummary",
    "FullDomainMW",
    "OnlineAnswer",
    "OnlineQuery",
    "PMWSession",
    "PolynomialMW",
    "PrivacyPlan",
    "Representation",
    "SessionParams",
    "SessionState",
    "UnivariateOR",
    "VariableMap",
    "choose_representation",
    "exact_or",
    "fact_4_4",
    "from_pbar",
    "full_domain_bytes",
    "full_domain_mistake_bound",
    "interpolated_or",
    "lemma_4_1",
    "lemma_4_2",
    "make_plan",
    "mistake_bound",
    "monomial_masks",
    "parse_query",
    "query_vector",
    "theorem_1_3_bounds",
    "to_pbar",
]
