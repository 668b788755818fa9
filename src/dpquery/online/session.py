"""The private online session: Algorithm 1 behind the Theorem 3.3 conversion.

``PMWSession(data, epsilon, delta, alpha, k)`` answers conjunction (marginal cell) and
disjunction queries of width ``<= k`` one at a time, each possibly chosen after the earlier
answers, under ``(epsilon, delta)``-DP for the whole sequence (see :mod:`dpquery.online.sparse`
for the mechanism, the accounting and the accuracy bound, and ``docs/online.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.online.fulldomain import DEFAULT_MAX_BYTES, FullDomainMW
from dpquery.online.hypothesis import Learner, PolynomialLearner
from dpquery.online.parameters import DEFAULT_MAX_MONOMIALS, Representation, choose_representation
from dpquery.online.sparse import (
    DEFAULT_SV_SHARE,
    PrivacyPlan,
    make_plan,
    noisy_count,
    sparse_vector_test,
)
from dpquery.online.state import (
    RepresentationKind,
    SessionParams,
    SessionState,
    StoredCharge,
    noise_generator,
    ratchet,
)
from dpquery.online.store import SavedSession, SessionStore
from dpquery.online.summary import CompactSummary, sample_summary
from dpquery.online.transform import LiteralSet, OnlineQuery, VariableMap, parse_query
from dpquery.privacy import Budget, Ledger, PureDP
from dpquery.privacy.delta import check_epsilon, default_delta
from dpquery.privacy.mechanisms import AboveThresholdState
from dpquery.queries.evaluate import data_fingerprint, fold_counts

Source = Literal["hypothesis", "measured", "converged", "refused"]


@dataclass(frozen=True)
class OnlineAnswer:
    """One answer. ``verified``: covered by the accuracy guarantee (the session's plan meets
    ``beta``, the answer is among the first ``max_queries`` and not refused; see
    :mod:`dpquery.online.sparse`); ``value`` is always private to release (a noisy count over
    ``n`` or post-processing of earlier releases).

    ``error_bound`` is the session's ``alpha``: with probability at least ``confidence``
    (``1 - P(not G)``, the accuracy bound of :mod:`dpquery.online.sparse` over the first
    ``max(max_queries, index + 1)`` queries) this answer and every earlier one are within it
    of the truth. A session too small for its ``alpha`` has a confidence near 0: the bound
    then says nothing. A refused answer (the hypothesis, once the budget's updates are used)
    has no bound (None)."""

    index: int
    value: float
    source: Source
    verified: bool
    updates_used: int
    message: str = ""
    error_bound: float | None = None
    confidence: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "answer": self.value,
            "source": self.source,
            "verified": self.verified,
            "updates_used": self.updates_used,
            "error_bound": self.error_bound,
            "confidence": self.confidence,
        }
        if self.message:
            out["message"] = self.message
        return out


class PMWSession:
    """Online private multiplicative weights over low-weight polynomials (Small databases,
    Theorem 3.1 = Algorithm 1 + Theorem 3.3), or over the full domain
    (``representation="full-domain"``, Hardt-Rothblum) as the comparator.

    Parameters: ``delta=None`` is ``1/n^2`` (:func:`dpquery.privacy.delta.default_delta`);
    ``alpha`` is the promised accuracy of every answer (the IDC runs at
    ``alpha/2``); ``beta`` the failure probability allowed over the first ``max_queries``
    queries; ``max_updates`` caps the epochs (default: the mistake bound B; a smaller cap buys
    less noise per epoch but the guarantee then does not hold); ``literals`` fixes the query
    family (:mod:`dpquery.online.transform`); ``max_monomials`` and ``m`` steer the
    representation (:mod:`dpquery.online.parameters`); ``seed`` derives the first noise key
    (default: OS entropy; :mod:`dpquery.online.state`); ``state`` continues a saved session.

    A session whose plan cannot promise the accuracy (:meth:`PrivacyPlan.promises`) refuses
    to start, saying which parameter to change, unless ``accept_unverified=True``; then it runs
    and no answer is marked verified. :meth:`open` makes the session persistent.
    """

    def __init__(
        self,
        data: BinaryData,
        epsilon: float,
        delta: float | None,
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
        accept_unverified: bool = False,
        seed: int | None = None,
        state: SessionState | None = None,
    ) -> None:
        if not isinstance(data, BinaryData):
            raise DPQueryError(f"data must be a BinaryData, got {type(data).__name__}")
        if delta is None:  # the library-wide default (n is public)
            delta = default_delta(data.n)
        params = SessionParams(
            epsilon, delta, alpha, k, beta, max_queries, max_updates, literals, representation,
            max_monomials, m, sv_share, max_bytes, accept_unverified,
        )  # fmt: skip
        params.validate(data.d)
        if state is not None and seed is not None:
            raise DPQueryError("a resumed session continues its own noise key; drop the seed")
        if state is None:  # said when the budget is set, not again on every resume
            check_epsilon(params.epsilon, None, data.n)
        self.data, self.params = data, params
        self.budget = Budget.approx(params.epsilon, params.delta) if params.delta > 0 else (
            Budget.pure(params.epsilon)
        )  # fmt: skip
        self.ledger = Ledger(self.budget)
        self.variables = VariableMap(data.d, params.literals)
        self.representation, self.learner = self._learner()
        self.plan: PrivacyPlan = make_plan(
            self.budget, data.n, params.alpha, self.learner.B, params.max_updates,
            params.sv_share,
        )  # fmt: skip
        self.verified = self.plan.promises(params.max_queries, params.beta)
        self._confidence = 1.0 - self.plan.failure_probability(params.max_queries)
        if not self.verified and not params.accept_unverified:
            raise DPQueryError(self._refusal())
        self._restore(SessionState.new(seed) if state is None else state)
        self._store: SessionStore | None = None

    def _learner(self) -> tuple[Representation | None, Learner]:
        p, alpha_idc = self.params, self.params.alpha / 2
        if p.representation == "full-domain":
            return None, FullDomainMW(self.data.d, alpha_idc, p.max_bytes)
        if p.k > self.variables.m:
            raise DPQueryError(f"k={p.k} exceeds the {self.variables.m} variables")
        rep = choose_representation(
            self.variables.m, p.k, alpha_idc, max_monomials=p.max_monomials, m=p.m
        )
        return rep, PolynomialLearner(self.variables, rep)

    def _restore(self, state: SessionState) -> None:
        for c in state.charges:
            self.ledger.charge(c.mechanism, PureDP(c.epsilon, bounded_range=c.bounded_range),
                               count=c.count)  # fmt: skip
        if state.logw is not None:
            self.learner.set_state(state.logw, state.updates)
        self.queries_answered, self.refused = state.queries_answered, state.refused
        self.epoch: AboveThresholdState | None = state.epoch
        self._key, self._key_origin = state.key, state.key_origin

    def records_needed(self) -> int | None:
        """The fewest records for which this budget promises ``alpha`` over ``max_queries``
        queries at ``beta``: the accuracy bound (:mod:`dpquery.online.sparse`) solved for ``n``
        (:meth:`PrivacyPlan.smallest_n`), on the plan that pays for all ``B`` updates;
        ``None`` beyond 2^62."""
        p, plan = self.params, self.plan
        if plan.epochs < plan.mistake_bound:
            plan = make_plan(self.budget, plan.n, p.alpha, plan.mistake_bound, None, p.sv_share)
        return plan.smallest_n(p.max_queries, p.beta)

    def _too_few_records(self) -> str | None:
        """Said before an unverified session starts when ``n`` is too small for ``alpha``."""
        needed = self.records_needed()
        if needed is not None and needed <= self.plan.n:
            return None
        p = self.params
        need = f"needs n >= {needed:,}" if needed is not None else "needs more than 2^62"
        return (
            f"n={self.plan.n:,} records are too few for alpha={p.alpha:g} at "
            f"{self.budget.describe()}: the accuracy bound (Small databases, Theorem 3.3; "
            f"docs/online.md) {need} records for {p.max_queries:,} queries at beta={p.beta:g}; "
            "answers may be far from the truth (see each answer's error_bound and confidence)"
        )

    def _refusal(self) -> str:
        """Why the plan cannot promise the accuracy, and what would (docs/online.md)."""
        p, plan = self.params, self.plan
        head = (
            f"these parameters cannot promise every answer within alpha={p.alpha:g} with "
            f"probability {1 - p.beta:g} over max_queries={p.max_queries:,} queries"
        )
        tail = "; or pass --accept-unverified (accept_unverified=True): no answer is then verified"
        if plan.epochs < plan.mistake_bound:
            full = make_plan(self.budget, plan.n, p.alpha, plan.mistake_bound, None, p.sv_share)
            return (
                f"{head}: max_updates={p.max_updates:,} pays for fewer updates than the mistake "
                f"bound B={plan.mistake_bound:,}, after which queries are refused; drop "
                f"max_updates, and then {full.what_would_work(p.max_queries, p.beta)}{tail}"
            )
        fail = plan.failure_probability(p.max_queries)
        return (
            f"{head}: the failure bound is {fail:.3g} > beta={p.beta:g} ({plan.epochs:,} "
            f"epochs); change n, epsilon, alpha or max_queries: "
            f"{plan.what_would_work(p.max_queries, p.beta)}{tail}"
        )

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
            "verified": self.verified,
            "spent": self.epsilon_spent,
            "budget_left": self.budget_left,
            "budget": self.budget.describe(),
        }

    def state(self) -> SessionState:
        """The session's state as a value (the hypothesis array is shared, not copied)."""
        charges = []
        for e in self.ledger.entries:
            cost = e.charge.cost
            if not isinstance(cost, PureDP):  # pragma: no cover - sessions charge pure DP only
                raise DPQueryError(f"a session cannot store a {type(cost).__name__} charge")
            charges.append(
                StoredCharge(e.charge.mechanism, cost.epsilon, cost.bounded_range, e.charge.count)
            )
        return SessionState(
            self._key, self._key_origin, self.queries_answered, self.refused,
            self.updates_used, self.learner.state, self.epoch, tuple(charges),
        )  # fmt: skip

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
            f"{self.params.beta:g}: {'met' if self.verified else 'NOT met'})",
        ]
        if not self.verified:
            lines.append("UNVERIFIED session (accept_unverified): no answer is verified")
            too_few = self._too_few_records()
            if too_few is not None:
                lines.append(too_few)
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

    def _true_count(self, q: OnlineQuery) -> int:
        """How many records satisfy ``q`` (exact; NOT private)."""
        n = self.data.n
        c = int(fold_counts(q.workload(self.data.d), self.data)[0])
        if q.kind == "disjunction":  # fold_counts counts the records failing every literal
            c = n - c
        return n - c if q.negated else c

    def answer(self, query: OnlineQuery | Mapping[str, Any]) -> OnlineAnswer:
        """Answer one query (see :mod:`dpquery.online.sparse`). Its noise comes from the
        current key, which is then ratcheted; a persistent session commits its state before
        returning."""
        q = self.parse(query)
        h = min(1.0, max(0.0, self.learner.predict(q)))
        covered = self.verified and self.queries_answered < self.params.max_queries
        if self.converged:
            result = self._make(h, "converged", covered, "mistake bound reached (Theorem 3.5)")
        elif self.updates_used >= self.plan.epochs:
            self.refused += 1
            result = self._make(
                h, "refused", False,
                f"refused: all {self.plan.epochs:,} updates the privacy budget pays for are "
                f"used (mistake bound B={self.mistake_bound:,} not reached); 'answer' is the "
                f"hypothesis, free but unverified",
            )  # fmt: skip
        else:
            result = self._sparse_vector(q, h, covered)
        self.queries_answered += 1
        if self._store is not None:
            self._store.commit(self.state(), q.to_dict(), result.to_dict())
        return result

    def _sparse_vector(self, q: OnlineQuery, h: float, covered: bool) -> OnlineAnswer:
        """One step of the Theorem 3.3 conversion, its noise from the current key ``K_i``;
        ``K_i`` is replaced by ``K_{i+1}`` before anything is returned or stored."""
        rng = noise_generator(self._key)
        self._key = ratchet(self._key)
        count, n = self._true_count(q), self.data.n
        above, self.epoch = sparse_vector_test(
            abs(count / n - h), self.epoch, self.plan, rng, self.ledger
        )
        if not above:
            return self._make(h, "hypothesis", covered)
        a = noisy_count(count, n, self.plan, rng, self.ledger)
        self.learner.update(q, a)
        return self._make(a, "measured", covered)

    def _make(self, value: float, source: Source, verified: bool, msg: str = "") -> OnlineAnswer:
        i = self.queries_answered
        if source == "refused":  # the hypothesis after the budget's updates: no bound
            bound, confidence = None, 0.0
        elif i < self.params.max_queries:
            bound, confidence = self.params.alpha, self._confidence
        else:  # the union bound over the first i + 1 queries
            bound, confidence = self.params.alpha, 1.0 - self.plan.failure_probability(i + 1)
        return OnlineAnswer(i, value, source, verified, self.updates_used, msg, bound, confidence)

    # -- persistence ----------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path,
        data: BinaryData,
        params: SessionParams | None = None,
        seed: int | None = None,
    ) -> PMWSession:
        """A session persisted in the SQLite file ``path``: resumed exactly if the file holds
        one (``params``, if given, must match the stored ones), else created from ``params``
        (nothing is written if they are refused)."""
        store = SessionStore(path)
        saved = store.load()
        if saved is None:
            if params is None:
                raise DPQueryError(f"{store.path} holds no session; give the session parameters")
            session = cls(data, **params.to_dict(), seed=seed)
            store.create(session.params, session.plan, data_fingerprint(data), session.state())
        else:
            _check_resume(store.path, saved, params, data, seed)
            session = cls(data, **saved.params.to_dict(), state=saved.state)
            if session.plan != saved.plan:
                raise DPQueryError(f"{store.path} was planned differently by another version")
        session._store = store
        return session

    def close(self) -> None:
        """Close the state file of a persistent session (everything is already committed)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def export_summary(self, **kwargs: Any) -> CompactSummary:
        """The compact summary of Remark 2 (:func:`dpquery.online.summary.sample_summary`)."""
        mw = getattr(self.learner, "mw", None)
        if mw is None or self.representation is None:
            raise DPQueryError("only the polynomial representation has a compact summary")
        return sample_summary(
            mw, self.representation, self.variables, self.params.k, self.params.alpha,
            self.converged, self.data.domain, **kwargs,
        )  # fmt: skip


def _check_resume(
    path: Path, saved: SavedSession, params: SessionParams | None, data: BinaryData, seed: object
) -> None:
    if params is not None and params != saved.params:
        diff = [
            f"{f.name}={getattr(params, f.name)!r} (stored {getattr(saved.params, f.name)!r})"
            for f in fields(SessionParams)
            if getattr(params, f.name) != getattr(saved.params, f.name)
        ]
        raise DPQueryError(
            f"{path} is a session with other parameters: {', '.join(diff)}; omit them to "
            f"resume, or use a new --state file"
        )
    if saved.fingerprint != data_fingerprint(data):
        raise DPQueryError(f"{path} belongs to a session over different data")
    if seed is not None:
        raise DPQueryError("a resumed session continues its own noise key; drop the seed")
