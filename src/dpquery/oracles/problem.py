"""``BestResponse``: the data player's optimisation problem, one value type for every oracle.

DualQuery (Section 5.2, and Appendix A for parities) asks each round for a record ``x`` that
maximises the number of sampled queries it satisfies; FEM (Section 6, eq. (3)) adds a linear
perturbation ``<sigma, x>``. Both are instances of

    maximise   sum_c w_c q_c(x) + <linear, x>
    subject to x in {0,1}^d, exactly one bit set in every one-hot group,

where each *clause* ``c`` is a sampled query with its multiplicity ``w_c > 0``:

* conjunction over literals ``L``: ``q_c(x) = 1`` when every literal holds, else 0;
  negated: ``1 - that`` (DualQuery Section 5.2, ``q_abc`` and its negation);
* parity over a set ``S`` of bits: ``q_c(x) = +1`` when an even number of the bits of ``S``
  are set, else ``-1``; negated: the opposite (DualQuery Appendix A, Definition A.1, read with
  0/1 bits exactly as :mod:`dpquery.queries.workload` does).

A literal ``(j, positive)`` holds when ``x_j == 1`` (positive) or ``x_j == 0`` (negative), as
in :class:`~dpquery.queries.workload.Workload`, so the values here equal
:func:`dpquery.queries.answer` on a one-record set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.queries.workload import Workload

ClauseKind = Literal["conjunction", "parity"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _check_groups(groups: np.ndarray, d: int) -> np.ndarray:
    groups = np.asarray(groups, dtype=np.int64).reshape(-1, 2)
    if len(groups):
        starts, stops = groups[:, 0], groups[:, 1]
        if (starts < 0).any() or (stops > d).any() or (stops <= starts).any():
            bad = groups[(starts < 0) | (stops > d) | (stops <= starts)][0].tolist()
            raise DPQueryError(f"one-hot group {bad} is not a non-empty range inside [0, {d}]")
        if (starts[1:] < stops[:-1]).any():
            raise DPQueryError("one-hot groups must be sorted and must not overlap")
    return groups


def _check_clauses(offsets: np.ndarray, bits: np.ndarray, d: int) -> None:
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or (np.diff(offsets) < 0).any():
        raise DPQueryError("clause offsets must be a non-decreasing 1-D array starting at 0")
    if bits.shape != (int(offsets[-1]),):
        raise DPQueryError(f"offsets end at {int(offsets[-1])} literals, bits has {bits.shape}")
    if bits.size and (bits.min() < 0 or bits.max() >= d):
        bad = bits[(bits < 0) | (bits >= d)][0]
        raise DPQueryError(f"literal bit {bad} is outside the {d} bits of the problem")
    # Why: a repeated bit changes a parity's meaning; Workload forbids it, so do we.
    clause_of = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
    keys = np.sort(clause_of * d + bits)
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        c, b = divmod(int(keys[dup[0]]), d)
        raise DPQueryError(f"clause {c} uses bit {b} twice; a bit may appear once per clause")


@dataclass(frozen=True, eq=False)
class BestResponse:
    """Weighted clauses over ``d`` bits, one-hot groups and an optional linear term.

    Clause ``c`` owns literals ``offsets[c]:offsets[c+1]`` of ``bits``/``positive`` (CSR);
    ``parity[c]`` says whether it is a parity (else a conjunction), ``negated[c]`` whether it
    is the negated query, ``weight[c] > 0`` its multiplicity. Parity literals are positive.
    ``onehot_groups`` is ``(g, 2)`` ``[start, stop)`` ranges in which every feasible record
    has exactly one bit set. See the module docstring for the objective.
    """

    d: int
    offsets: np.ndarray
    bits: np.ndarray
    positive: np.ndarray
    parity: np.ndarray
    negated: np.ndarray
    weight: np.ndarray
    onehot_groups: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    linear: np.ndarray | None = None

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, int | np.integer) or self.d < 1:
            raise DPQueryError(f"d must be a positive integer, got {self.d!r}")
        object.__setattr__(self, "d", int(self.d))
        offsets = np.asarray(self.offsets, dtype=np.int64)
        bits = np.asarray(self.bits, dtype=np.int64)
        _check_clauses(offsets, bits, self.d)
        m = offsets.size - 1
        positive = np.asarray(self.positive, dtype=bool)
        if positive.shape != bits.shape:
            raise DPQueryError(f"positive has shape {positive.shape}, bits {bits.shape}")
        parity, negated = (np.asarray(a, dtype=bool) for a in (self.parity, self.negated))
        weight = np.asarray(self.weight, dtype=np.float64)
        for name, a in (("parity", parity), ("negated", negated), ("weight", weight)):
            if a.shape != (m,):
                raise DPQueryError(f"{name} must have one entry per clause ({m}), got {a.shape}")
        if m and (not np.isfinite(weight).all() or (weight <= 0).any()):
            bad = weight[~np.isfinite(weight) | (weight <= 0)][0]
            raise DPQueryError(f"clause weights must be finite and positive, got {bad}")
        literal_parity = np.repeat(parity, np.diff(offsets))
        if (literal_parity & ~positive).any():
            raise DPQueryError("parity clauses take a set of bits: their literals must be positive")
        for name, a in (("offsets", offsets), ("bits", bits), ("positive", positive)):
            object.__setattr__(self, name, _frozen(a))
        for name, a in (("parity", parity), ("negated", negated), ("weight", weight)):
            object.__setattr__(self, name, _frozen(a))
        object.__setattr__(
            self, "onehot_groups", _frozen(_check_groups(self.onehot_groups, self.d))
        )
        if self.linear is not None:
            linear = np.asarray(self.linear, dtype=np.float64)
            if linear.shape != (self.d,) or not np.isfinite(linear).all():
                raise DPQueryError(
                    f"linear must be a finite vector of length d={self.d}, got shape {linear.shape}"
                )
            object.__setattr__(self, "linear", _frozen(linear))

    # -- shape ----------------------------------------------------------------------------
    @property
    def n_clauses(self) -> int:
        return int(self.offsets.size - 1)

    def kind(self, c: int) -> ClauseKind:
        """``"parity"`` or ``"conjunction"`` for clause ``c``."""
        return "parity" if self.parity[c] else "conjunction"

    @property
    def clause_of_literal(self) -> np.ndarray:
        """The clause owning each literal (length ``len(bits)``)."""
        return np.repeat(np.arange(self.n_clauses, dtype=np.int64), np.diff(self.offsets))

    @property
    def group_of_bit(self) -> np.ndarray:
        """Index of each bit's one-hot group, or -1 for a free binary bit."""
        out = np.full(self.d, -1, dtype=np.int64)
        for g, (a, b) in enumerate(self.onehot_groups):
            out[a:b] = g
        return out

    @property
    def touched(self) -> np.ndarray:
        """Bits that appear in some clause or carry a non-zero linear coefficient."""
        out = np.zeros(self.d, dtype=bool)
        out[self.bits] = True
        if self.linear is not None:
            out |= self.linear != 0
        return out

    @property
    def total_weight(self) -> float:
        return float(self.weight.sum())

    # -- objective --------------------------------------------------------------------------
    def clause_values(self, record: np.ndarray) -> np.ndarray:
        """``q_c(x)`` for every clause (negations applied), as float64."""
        x = np.asarray(record).astype(np.int64, copy=False)
        m, sizes, clause_of = self.n_clauses, np.diff(self.offsets), self.clause_of_literal
        holds = (x[self.bits] == 1) == self.positive
        satisfied = np.bincount(clause_of, weights=holds, minlength=m)
        conj = (satisfied == sizes).astype(np.float64)
        ones = np.bincount(clause_of, weights=x[self.bits], minlength=m).astype(np.int64)
        par = np.where(ones % 2 == 0, 1.0, -1.0)
        value = np.where(self.parity, par, conj)
        negation = np.where(self.parity, -value, 1.0 - value)
        return np.where(self.negated, negation, value)

    def objective(self, record: np.ndarray) -> float:
        """``sum_c w_c q_c(x) + <linear, x>``: what every oracle maximises."""
        value = float(self.weight @ self.clause_values(record))
        if self.linear is not None:
            value += float(self.linear @ np.asarray(record, dtype=np.float64))
        return value

    def upper_bound(self) -> float:
        """A trivial bound: every clause at its maximum (1) plus every positive linear term."""
        extra = 0.0 if self.linear is None else float(np.clip(self.linear, 0, None).sum())
        return self.total_weight + extra

    def is_feasible(self, record: np.ndarray) -> bool:
        """Shape ``(d,)``, 0/1 values and exactly one bit in every group."""
        x = np.asarray(record)
        if x.shape != (self.d,) or not np.isin(x, (0, 1)).all():
            return False
        return all(int(x[a:b].sum()) == 1 for a, b in self.onehot_groups)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_workload(
        cls,
        workload: Workload,
        sampled: np.ndarray,
        *,
        onehot_groups: np.ndarray | None = None,
        linear: np.ndarray | None = None,
    ) -> BestResponse:
        """The best response to queries sampled from the closed workload ``Q ∪ ¬Q``.

        ``sampled`` holds closed indices (``i + len(W)`` is the negation of ``i``, see
        :meth:`Workload.closed`); repeated samples become one clause whose weight is the
        multiplicity (DualQuery, Algorithm 2: the data player best-responds to the
        uniform distribution over the s samples). A disjunction ``OR(L)`` is the negated
        conjunction of the flipped literals, ``1 - AND(¬L)``, so it needs no clause kind of
        its own. Groups default to those of the workload's domain.
        """
        sampled = np.asarray(sampled)
        if sampled.ndim != 1 or (sampled.size and not np.issubdtype(sampled.dtype, np.integer)):
            raise DPQueryError(f"sampled must be a 1-D integer array, got {sampled.dtype}")
        q = len(workload)
        if sampled.size and (sampled.min() < 0 or sampled.max() >= 2 * q):
            bad = sampled[(sampled < 0) | (sampled >= 2 * q)][0]
            raise DPQueryError(f"sampled index {bad} is outside the closed workload [0, {2 * q})")
        closed, counts = np.unique(sampled.astype(np.int64), return_counts=True)
        negated = closed >= q
        query = np.where(negated, closed - q, closed)
        sub = workload.subset(query)
        positive = sub.positive
        if workload.kind == "disjunction":
            positive, negated = ~positive, ~negated
        if onehot_groups is None and workload.domain is not None:
            onehot_groups = workload.domain.onehot_groups
        return cls(
            workload.d,
            sub.offsets,
            sub.bits,
            positive,
            np.full(len(query), workload.kind == "parity"),
            negated,
            counts.astype(np.float64),
            np.zeros((0, 2), np.int64) if onehot_groups is None else onehot_groups,
            linear,
        )

    def __repr__(self) -> str:
        par = int(self.parity.sum())
        lin = "" if self.linear is None else ", linear"
        return (
            f"BestResponse(d={self.d}, {self.n_clauses} clauses ({par} parities), "
            f"weight {self.total_weight:g}, {len(self.onehot_groups)} groups{lin})"
        )
