"""The private online session: Algorithm 1 behind the Theorem 3.3 conversion.

``PMWSession(data, epsilon, delta, alpha, k)`` answers conjunction (marginal cell) and
disjunction queries of width ``<= k`` one at a time, each possibly chosen after the earlier
answers, under ``(epsilon, delta)``-DP for the whole sequence (see :mod:`dpquery.online.sparse`
for the mechanism, the accounting and the accuracy bound, and ``docs/online.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.online.fulldomain import DEFAULT_MAX_BYTES, FullDomainMW
from dpquery.online.learner import PolynomialMW
from dpquery.online.parameters import DEFAULT_MAX_MONOMIALS, Representation, choose_representation
from dpquery.online.sparse import (
    DEFAULT_SV_SHARE,
    LAPLACE_NAME,
    PrivacyPlan,
    SparseVectorEpoch,
    make_plan,
)
from dpquery.online.transform import LiteralSet, OnlineQuery, VariableMap, parse_query
from dpquery.privacy import Budget, Ledger, laplace_mechanism
from dpquery.queries.evaluate import answer_data
from dpquery.rng import SeedLike, make_rng

Source = Literal["hypothesis", "measured", "converged", "refused"]
RepresentationKind = Literal["polynomial", "full-domain"]


class Learner(Protocol):
    B: int

    @property
    def updates(self) -> int: ...

    def predict(self, query: OnlineQuery) -> float: ...
    def update(self, query: OnlineQuery, a: float) -> None: ...
    def set_state(self, logw: np.ndarray, updates: int) -> None: ...
    @property
    def state(self) -> np.ndarray: ...
    @property
    def nbytes(self) -> int: ...
    def describe(self) -> str: ...


class PolynomialLearner:
    """Algorithm 1 on the transformed query (Section 1.2): a monotone disjunction ``D`` of the
    variables, with the query's answer ``D`` or ``1 - D``."""

    def __init__(self, variables: VariableMap, rep: Representation) -> None:
        self.variables, self.rep = variables, rep
        self.mw = PolynomialMW(variables.m, rep.t, rep.W, rep.alpha)
        self.B = self.mw.B

    @property
    def updates(self) -> int:
        return self.mw.updates

    def predict(self, query: OnlineQuery) -> float:
        mask, flip = self.variables.mask(query)
        v = self.mw.value(mask)
        return 1.0 - v if flip else v

    def update(self, query: OnlineQuery, a: float) -> None:
        mask, flip = self.variables.mask(query)
        self.mw.update(mask, 1.0 - a if flip else a)

    @property
    def state(self) -> np.ndarray:
        return self.mw.logw

    def set_state(self, logw: np.ndarray, updates: int) -> None:
        self.mw.set_state(logw, updates)

    @property
    def nbytes(self) -> int:
        return self.mw.nbytes

    def describe(self) -> str:
        return (
            f"polynomial MW (Algorithm 1): {self.variables.m} variables "
            f"(literals={self.variables.literals}), t={self.rep.t}, W={self.rep.W:.6g}, "
            f"N={self.rep.N:,}, eta={self.mw.eta:.3g}, B={self.B:,}"
        )


class FullDomainLearner(FullDomainMW):
    pass


@dataclass(frozen=True)
class OnlineAnswer:
    """One answer. ``verified``: covered by the accuracy guarantee (``source`` is not
    ``"refused"``); ``value`` is always private to release."""

    index: int
    value: float
    source: Source
    verified: bool
    updates_used: int
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "answer": self.value,
            "source": self.source,
            "verified": self.verified,
            "updates_used": self.updates_used,
        }
        if self.message:
            out["message"] = self.message
        return out


@dataclass(frozen=True)
class SessionParams:
    """Everything that defines a session (stored with its state; checked on resume)."""

    epsilon: float
    delta: float
    alpha: float
    k: int
    beta: float = 0.05
    max_queries: int = 10**6
    max_updates: int | None = None
    literals: LiteralSet = "both"
    representation: RepresentationKind = "polynomial"
    max_monomials: int = DEFAULT_MAX_MONOMIALS
    m: int | None = None
    sv_share: float = DEFAULT_SV_SHARE
    max_bytes: int = DEFAULT_MAX_BYTES

    def validate(self, d: int) -> None:
        for name in ("epsilon", "alpha", "beta"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise DPQueryError(f"{name} must be a finite number, got {v!r}")
        if not self.epsilon > 0:
            raise DPQueryError(f"epsilon must be > 0, got {self.epsilon!r}")
        if not 0 <= self.delta < 1:
            raise DPQueryError(f"delta must lie in [0, 1), got {self.delta!r}")
        if not 0 < self.alpha < 1:
            raise DPQueryError(f"alpha must lie in (0, 1), got {self.alpha!r}")
        if not 0 < self.beta < 1:
            raise DPQueryError(f"beta must lie in (0, 1), got {self.beta!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= d:
            raise DPQueryError(f"k must be an integer in [1, d={d}], got {self.k!r}")
        if self.max_queries < 1:
            raise DPQueryError(f"max_queries must be >= 1, got {self.max_queries}")
        if self.representation not in ("polynomial", "full-domain"):
            raise DPQueryError(
                f"representation must be 'polynomial' or 'full-domain', got {self.representation!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class PMWSession:
    """Online private multiplicative weights over low-weight polynomials (Small databases,
    Theorem 3.1 = Algorithm 1 + Theorem 3.3), or over the full domain
    (``representation="full-domain"``, Hardt-Rothblum) as the comparator.

    Parameters: ``alpha`` is the promised accuracy of every answer (the IDC runs at
    ``alpha/2``); ``beta`` the failure probability the guarantee is checked against for
    ``max_queries`` queries; ``max_updates`` caps the epochs (default: the mistake bound B; a
    smaller cap buys less noise per epoch but, once used up, further queries are refused);
    ``literals`` fixes the query family (:mod:`dpquery.online.transform`); ``max_monomials``
    and ``m`` steer the representation (:mod:`dpquery.online.parameters`); ``seed`` seeds the
    noise (default: OS entropy). ``state`` (a path) makes the session persistent: see
    :meth:`open`.
    """

    def __init__(
        self,
        data: BinaryData,
        epsilon: float,
        delta: float,
        alpha: float,
        k: int,
        *,
        beta: float = 0.05,
        max_queries: int = 10**6,
        max_updates: int | None = None,
        literals: LiteralSet = "both",
        representation: RepresentationKind = "polynomial",
        max_monomials: int = DEFAULT_MAX_MONOMIALS,
        m: int | None = None,
        sv_share: float = DEFAULT_SV_SHARE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        seed: SeedLike = None,
    ) -> None:
        params = SessionParams(
            float(epsilon), float(delta), float(alpha), k, float(beta), int(max_queries),
            None if max_updates is None else int(max_updates), literals, representation,
            int(max_monomials), m, float(sv_share), int(max_bytes),
        )  # fmt: skip
        self._setup(data, params)
        self.rng = make_rng(seed)

    def _setup(self, data: BinaryData, params: SessionParams) -> None:
        if not isinstance(data, BinaryData):
            raise DPQueryError(f"data must be a BinaryData, got {type(data).__name__}")
        params.validate(data.d)
        self.data, self.params = data, params
        self.budget = (
            Budget.approx(params.epsilon, params.delta)
            if params.delta > 0
            else Budget.pure(params.epsilon)
        )
        self.ledger = Ledger(self.budget)
        self.variables = VariableMap(data.d, params.literals)
        alpha_idc = params.alpha / 2
        self.representation: Representation | None = None
        self.learner: Learner
        if params.representation == "polynomial":
            if params.k > self.variables.m:
                raise DPQueryError(f"k={params.k} exceeds the {self.variables.m} variables")
            self.representation = choose_representation(
                self.variables.m, params.k, alpha_idc,
                max_monomials=params.max_monomials, m=params.m,
            )  # fmt: skip
            self.learner = PolynomialLearner(self.variables, self.representation)
        else:
            self.learner = FullDomainLearner(data.d, alpha_idc, params.max_bytes)
        self.plan: PrivacyPlan = make_plan(
            self.budget, data.n, params.alpha, self.learner.B, params.max_updates,
            params.sv_share,
        )  # fmt: skip
        self.epoch: SparseVectorEpoch | None = None
        self.queries_answered = 0
        self.refused = 0
        self._store: Any = None

    # -- counters -------------------------------------------------------------------------
    @property
    def updates_used(self) -> int:
        return self.learner.updates

    @property
    def mistake_bound(self) -> int:
        return self.learner.B

    @property
    def converged(self) -> bool:
        """``B`` updates done: by Theorem 3.5 the hypothesis is accurate on every query."""
        return self.updates_used >= self.learner.B

    @property
    def epochs_left(self) -> int:
        return max(0, self.plan.epochs - self.updates_used)

    @property
    def epsilon_spent(self) -> float:
        return self.ledger.spent

    @property
    def budget_left(self) -> float:
        return self.ledger.remaining

    def counters(self) -> dict[str, Any]:
        return {
            "queries_answered": self.queries_answered,
            "updates_used": self.updates_used,
            "mistake_bound": self.mistake_bound,
            "epochs_planned": self.plan.epochs,
            "refused": self.refused,
            "converged": self.converged,
            "spent": self.epsilon_spent,
            "budget_left": self.budget_left,
            "budget": self.budget.describe(),
        }

    def guarantee(self) -> str:
        """What the session promises, in words."""
        p = self.plan
        fail = p.failure_probability(self.params.max_queries)
        lines = [
            self.learner.describe(),
            f"privacy: {self.budget.describe()} for the whole session; {p.epochs:,} epochs of "
            f"eps_sv={p.eps_sv:.4g} + eps_lap={p.eps_lap:.4g}, composed by the ledger",
            f"accuracy: each answer within alpha={p.alpha:g} except with probability "
            f"<= {fail:.3g} over the first {self.params.max_queries:,} queries (beta="
            f"{self.params.beta:g}: {'met' if fail <= self.params.beta else 'NOT met'})",
        ]
        if p.epochs < p.mistake_bound:
            lines.append(
                f"the budget pays for {p.epochs:,} updates, fewer than the mistake bound "
                f"B={p.mistake_bound:,}: after them, queries are refused (hypothesis value "
                f"given, unverified)"
            )
        if self.representation is not None:
            lines.append(self.representation.explanation)
        return "\n".join(lines)

    # -- answering ------------------------------------------------------------------------
    def parse(self, query: OnlineQuery | Mapping[str, Any]) -> OnlineQuery:
        """Validate a query (JSON dict or :class:`OnlineQuery`) for this session; no cost."""
        q = (
            query
            if isinstance(query, OnlineQuery)
            else parse_query(query, self.data.domain, self.data.d)
        )
        if any(not 0 <= b < self.data.d for b, _ in q.literals):
            raise DPQueryError(f"query bits must lie in [0, {self.data.d})")
        if len(q.literals) > self.params.k:
            raise DPQueryError(
                f"the query has {len(q.literals)} literals but this session answers queries "
                f"of at most k={self.params.k} (the representation is built for k)"
            )
        if self.representation is not None:
            self.variables.mask(q)  # raises if the literal family cannot express it
        return q

    def hypothesis_answer(self, query: OnlineQuery | Mapping[str, Any]) -> float:
        """The current hypothesis on ``query``, clipped to ``[0, 1]``: post-processing of
        earlier releases, free, with no accuracy guarantee by itself."""
        return min(1.0, max(0.0, self.learner.predict(self.parse(query))))

    def _true_answer(self, q: OnlineQuery) -> float:
        v = float(answer_data(q.workload(self.data.d), self.data)[0])
        return 1.0 - v if q.negated else v

    def answer(self, query: OnlineQuery | Mapping[str, Any]) -> OnlineAnswer:
        """Answer one query (see :mod:`dpquery.online.sparse`). A persistent session commits
        its state (ledger, hypothesis, counters, generator) before returning."""
        q = self.parse(query)
        h = min(1.0, max(0.0, self.learner.predict(q)))
        updated = False
        if self.converged:
            result = self._make(h, "converged", True, "mistake bound reached (Theorem 3.5)")
        elif self.updates_used >= self.plan.epochs:
            self.refused += 1
            result = self._make(
                h, "refused", False,
                f"refused: all {self.plan.epochs:,} updates the privacy budget pays for are "
                f"used (mistake bound B={self.mistake_bound:,} not reached); 'answer' is the "
                f"hypothesis, free but unverified",
            )  # fmt: skip
        else:
            if self.epoch is None:
                self.epoch = SparseVectorEpoch.start(self.plan, self.rng, self.ledger)
            error = abs(self._true_answer(q) - h)
            if not self.epoch.above(error, self.rng):
                result = self._make(h, "hypothesis", True)
            else:
                self.epoch = None
                noisy = laplace_mechanism(
                    [self._true_answer(q)], epsilon=self.plan.eps_lap,
                    sensitivity=self.plan.sensitivity, rng=self.rng, ledger=self.ledger,
                    name=LAPLACE_NAME,
                )  # fmt: skip
                a = min(1.0, max(0.0, float(noisy[0])))
                self.learner.update(q, a)
                updated = True
                result = self._make(a, "measured", True)
        self.queries_answered += 1
        if self._store is not None:
            self._store.commit(self, q, result, updated)
        return result

    def _make(self, value: float, source: Source, verified: bool, msg: str = "") -> OnlineAnswer:
        return OnlineAnswer(self.queries_answered, value, source, verified, self.updates_used, msg)

    # -- persistence ----------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path,
        data: BinaryData,
        params: SessionParams | None = None,
        seed: SeedLike = None,
    ) -> PMWSession:
        """A session persisted in the SQLite file ``path``: resumed exactly if the file exists
        (``params``, if given, must match the stored ones), else created from ``params``."""
        from dpquery.online.store import SessionStore

        return SessionStore(path).open(cls, data, params, seed)

    def export_summary(self, **kwargs: Any) -> Any:
        """The compact summary of Remark 2 (:func:`dpquery.online.summary.export_summary`)."""
        from dpquery.online.summary import export_summary

        return export_summary(self, **kwargs)
