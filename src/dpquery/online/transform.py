"""From natural marginal queries to monotone disjunctions (Small databases, Section 1.2).

The paper states everything for monotone ``k``-way disjunctions and notes that general
``k``-way marginals follow "via simple transformations on the database and queries". Here
they are. A *variable* is a literal ``(bit j, polarity v)``, true on a record when
``x_j = v``; the transformed database has one 0/1 column per variable. Then, for a query with
literals ``L``:

* disjunction: ``OR_{(j,v) in L} [x_j = v]`` is the monotone disjunction of the variables
  ``L`` (complemented bits for ``v = 0``);
* conjunction (a marginal cell): ``AND_{(j,v) in L} [x_j = v] = 1 - OR_{(j,v) in L}
  [x_j = 1 - v]``, one minus the monotone disjunction of the complemented literals;
* a ``negated`` query (``workload show --negations``) is one minus the above.

Which variables exist is fixed before the first query, because the learner's index set
``Y`` is: ``literals="both"`` (default) keeps every ``(j, 0)`` and ``(j, 1)``, so ``m = 2d``
and every marginal and disjunction of width ``<= k`` is answerable; ``"positive"`` keeps only
``(j, 1)`` (``m = d``: monotone disjunctions, conjunctions of negative literals);
``"complement"`` only ``(j, 0)`` (``m = d``: conjunctions of positive literals, e.g. the cells
of marginals over one-hot attributes).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpquery.data.domain import Binary, Domain
from dpquery.errors import DomainError, DPQueryError
from dpquery.online.representation import set_mask
from dpquery.queries.workload import Workload

LiteralSet = Literal["both", "positive", "complement"]
LITERAL_SETS: tuple[LiteralSet, ...] = ("both", "positive", "complement")


@dataclass(frozen=True)
class OnlineQuery:
    """A conjunction or disjunction of literals ``(bit, positive)``, possibly negated."""

    kind: Literal["conjunction", "disjunction"]
    literals: tuple[tuple[int, bool], ...]
    negated: bool = False

    def workload(self, d: int) -> Workload:
        """This query as a one-query :class:`Workload` over ``d`` bits."""
        return Workload.from_lists(self.kind, d, [list(self.literals)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "negated": self.negated,
            "literals": [["bit", b, p] for b, p in self.literals],
        }


@dataclass(frozen=True)
class VariableMap:
    """The variables ``(bit, polarity)`` of the transformed database, in order."""

    d: int
    literals: LiteralSet

    def __post_init__(self) -> None:
        if self.literals not in LITERAL_SETS:
            raise DPQueryError(f"literals must be one of {LITERAL_SETS}, got {self.literals!r}")

    @property
    def m(self) -> int:
        """Number of variables (the learner's ``m``)."""
        return 2 * self.d if self.literals == "both" else self.d

    def variable(self, bit: int, value: bool) -> int:
        """Index of the variable ``[x_bit = value]``; error if this map lacks it."""
        if self.literals == "both":
            return bit if value else self.d + bit
        if (self.literals == "positive") != value:
            need = "conjunctions of negative literals and disjunctions of positive ones"
            if self.literals == "complement":
                need = "conjunctions of positive literals and disjunctions of negative ones"
            raise DPQueryError(
                f"this session was built with literals={self.literals!r} ({need}); the query "
                f"needs the variable x{bit} = {int(value)}; start a session with literals='both'"
            )
        return bit

    def disjunction(self, query: OnlineQuery) -> tuple[list[int], bool]:
        """``(variables, flip)``: the query's answer is ``D`` or ``1 - D`` (``flip``), with ``D``
        the monotone disjunction of ``variables`` on the transformed database."""
        if query.kind == "disjunction":
            variables = [self.variable(b, p) for b, p in query.literals]
            flip = False
        else:
            variables = [self.variable(b, not p) for b, p in query.literals]
            flip = True
        return variables, flip != query.negated

    def mask(self, query: OnlineQuery) -> tuple[np.ndarray, bool]:
        """The query as a bit mask over the variables (the ``-1`` set of ``y``) and ``flip``."""
        variables, flip = self.disjunction(query)
        return set_mask(variables, self.m), flip

    def transform_rows(self, rows: np.ndarray) -> np.ndarray:
        """The transformed database: one 0/1 column per variable (tests and small data)."""
        rows = np.asarray(rows, dtype=np.uint8)
        if self.literals == "both":
            return np.concatenate([rows, 1 - rows], axis=1)
        return rows if self.literals == "positive" else 1 - rows


def _literal(raw: object, domain: Domain | None, d: int, i: int) -> tuple[int, bool]:
    if not isinstance(raw, Sequence) or isinstance(raw, str) or len(raw) != 3:
        raise DPQueryError(f"literal {i} must be [attribute, value, positive], got {raw!r}")
    name, value, positive = raw
    if not isinstance(positive, bool):
        raise DPQueryError(f"literal {i}: 'positive' must be true or false, got {positive!r}")
    if name == "bit" and (domain is None or "bit" not in domain):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < d:
            raise DPQueryError(f"literal {i}: bit must be an integer in [0, {d}), got {value!r}")
        return value, positive
    if domain is None:
        raise DPQueryError(
            f"literal {i} names attribute {name!r} but the data has no domain; use "
            f'["bit", index, positive]'
        )
    if not isinstance(name, str):
        raise DPQueryError(f"literal {i}: attribute must be a string, got {name!r}")
    attr = domain[name]  # DomainError names the unknown attribute
    if isinstance(attr, Binary) and _same(value, attr.values[0]):
        # a binary attribute has one bit, set for values[1]: "= values[0]" is its negation
        return domain.bits_of(name).start, not positive
    return domain.bit(name, _hashable(value)), positive


def _same(a: object, b: object) -> bool:
    return a == b or str(a) == str(b)


def _hashable(v: object) -> Hashable:
    return tuple(v) if isinstance(v, list) else v


def parse_query(obj: Mapping[str, Any], domain: Domain | None, d: int) -> OnlineQuery:
    """A query in the format of ``dpquery workload show``:
    ``{"kind": "conjunction", "negated": false, "literals": [[attribute, value, positive], ...]}``
    (``["bit", j, positive]`` addresses bit ``j`` directly)."""
    if not isinstance(obj, Mapping):
        raise DPQueryError(f"a query must be a JSON object, got {type(obj).__name__}")
    extra = set(obj) - {"kind", "negated", "literals", "id"}
    if extra:
        raise DPQueryError(f"unknown query keys {sorted(extra)}; expected kind, literals, negated")
    kind = obj.get("kind")
    if kind not in ("conjunction", "disjunction"):
        raise DPQueryError(
            f"query kind must be 'conjunction' or 'disjunction' (marginal cells and "
            f"disjunctions), got {kind!r}"
        )
    negated = obj.get("negated", False)
    if not isinstance(negated, bool):
        raise DPQueryError(f"'negated' must be true or false, got {negated!r}")
    raw = obj.get("literals")
    if not isinstance(raw, list) or not raw:
        raise DPQueryError("'literals' must be a non-empty list of [attribute, value, positive]")
    try:
        lits = tuple(_literal(r, domain, d, i) for i, r in enumerate(raw))
    except DomainError as exc:
        raise DPQueryError(str(exc)) from None
    bits = [b for b, _ in lits]
    if len(set(bits)) != len(bits):
        raise DPQueryError(f"a query may use each bit once; literals use bits {bits}")
    return OnlineQuery(kind, lits, negated)
