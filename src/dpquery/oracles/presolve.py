"""Presolve: fix every bit that no live clause can want changed, and repeat.

The rules are dominance arguments: a fixing is made only when, from *every* feasible record,
moving to the fixed value never lowers the objective, so the reduced problem keeps an optimum
of the original one (and its optimum plus a constant is the original optimum).

Say a live literal on bit ``j`` *pulls j up* if raising ``x_j`` can only raise its clause's
value, and *pulls j down* if lowering it can only raise it:

* conjunction, not negated: a positive literal pulls up, a negative one down (the clause
  wants all its literals true; DualQuery Section 5.2, ``x_a + x_b + x_c >= 3 c``);
* negated conjunction: the reverse (it wants some literal false);
* parity: both ways (flipping any bit flips the clause);
* the linear term: ``linear_j > 0`` pulls up, ``< 0`` down.

Then, until nothing changes:

1. *Clauses.* A conjunction with a literal fixed false, or with all its literals fixed true,
   or asking two bits of one group to be set (never true on a feasible record), is a
   constant: it is dropped. Literals fixed true are dropped from their conjunction; fixed bits
   leave a parity, flipping it when they are set. A parity with no bit left is a constant.
2. *Free bits* (in no group): a bit pulled only up is fixed to 1, one not pulled up is fixed
   to 0 (a bit nothing pulls is untouched: 0 here, the caller's free-attribute policy later).
3. *Groups* (exactly one bit set): if some unfixed bit ``a`` is not pulled down, every other
   unfixed bit ``b`` not pulled up is fixed to 0, because moving the group's one from ``b``
   to ``a`` cannot lower any clause. ``a`` is a bit pulled only up when there is one, else an
   untouched one. A group with one unfixed bit left sets it; a set bit clears its group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from dpquery.oracles.problem import BestResponse

UNFIXED = -1


@numba.njit(cache=True)
def _simplify_clauses(offsets, bits, positive, parity, group_of, fixed, live):  # pragma: no cover
    """Rule 1: mark clauses that have become constants as not live."""
    for c in range(offsets.size - 1):
        if not live[c]:
            continue
        unknown = 0
        dead = False
        for t in range(offsets[c], offsets[c + 1]):
            v = fixed[bits[t]]
            if v == UNFIXED:
                unknown += 1
            elif not parity[c] and (v == 1) != positive[t]:
                dead = True  # a false literal: the conjunction is 0 for good
        if not dead and not parity[c]:
            # two positive unfixed literals in one group can never hold together
            for t in range(offsets[c], offsets[c + 1]):
                g = group_of[bits[t]]
                if g < 0 or not positive[t] or fixed[bits[t]] != UNFIXED:
                    continue
                for u in range(t + 1, offsets[c + 1]):
                    if positive[u] and group_of[bits[u]] == g and fixed[bits[u]] == UNFIXED:
                        dead = True
        if dead or unknown == 0:
            live[c] = False


@numba.njit(cache=True)
def _pulls(offsets, bits, positive, parity, negated, linear, fixed, live):  # pragma: no cover
    """Which unfixed bits some live literal (or the linear term) pulls up / down."""
    d = fixed.size
    up = np.zeros(d, dtype=np.bool_)
    down = np.zeros(d, dtype=np.bool_)
    for c in range(offsets.size - 1):
        if not live[c]:
            continue
        for t in range(offsets[c], offsets[c + 1]):
            j = bits[t]
            if fixed[j] != UNFIXED:
                continue
            if parity[c]:
                up[j] = True
                down[j] = True
            elif positive[t] != negated[c]:
                up[j] = True
            else:
                down[j] = True
    for j in range(d):
        if linear[j] > 0:
            up[j] = True
        elif linear[j] < 0:
            down[j] = True
    return up, down


@numba.njit(cache=True)
def _fix_group(a0, b0, up, down, fixed):  # pragma: no cover
    """Rule 3 on the group of bits ``a0..b0-1``; returns whether anything was fixed."""
    changed = False
    for j in range(a0, b0):
        if fixed[j] == 1:  # the group is decided
            for i in range(a0, b0):
                if i != j and fixed[i] == UNFIXED:
                    fixed[i] = 0
                    changed = True
            return changed
    keeper = -1
    for j in range(a0, b0):  # prefer a bit pulled only up, else an untouched one
        if fixed[j] == UNFIXED and not down[j] and (keeper < 0 or (up[j] and not up[keeper])):
            keeper = j
    if keeper >= 0:
        for j in range(a0, b0):
            if j != keeper and fixed[j] == UNFIXED and not up[j]:
                fixed[j] = 0
                changed = True
    left, last = 0, -1
    for j in range(a0, b0):
        if fixed[j] == UNFIXED:
            left += 1
            last = j
    if left == 1:
        fixed[last] = 1
        changed = True
    return changed


@numba.njit(cache=True)
def _presolve_kernel(
    offsets, bits, positive, parity, negated, linear, group_start, group_stop, group_of
):  # pragma: no cover
    d = group_of.size
    fixed = np.full(d, UNFIXED, dtype=np.int8)
    live = np.ones(offsets.size - 1, dtype=np.bool_)
    rounds = 0
    changed = True
    while changed:
        rounds += 1
        changed = False
        _simplify_clauses(offsets, bits, positive, parity, group_of, fixed, live)
        up, down = _pulls(offsets, bits, positive, parity, negated, linear, fixed, live)
        for j in range(d):  # rule 2
            if group_of[j] >= 0 or fixed[j] != UNFIXED:
                continue
            if not up[j]:
                fixed[j] = 0
                changed = True
            elif not down[j]:
                fixed[j] = 1
                changed = True
        for g in range(group_start.size):
            if _fix_group(group_start[g], group_stop[g], up, down, fixed):
                changed = True
    return fixed, live, rounds


@dataclass(frozen=True, eq=False)
class Presolved:
    """A reduced problem over the unfixed bits, and how to map its records back.

    ``fixed[j]`` is 0/1 for a fixed bit and -1 for a kept one; ``kept`` lists the kept bits
    in order (bit ``i`` of the reduced problem is ``kept[i]``). For every reduced record
    ``y``, ``original.objective(lift(y)) == reduced.objective(y) + constant``.
    ``reduced`` is None when every bit was fixed.
    """

    original: BestResponse
    reduced: BestResponse | None
    fixed: np.ndarray
    kept: np.ndarray
    constant: float
    rounds: int

    def lift(self, reduced_record: np.ndarray | None) -> np.ndarray:
        """The full record: fixed bits, then the reduced record on the kept bits."""
        x = np.where(self.fixed == 1, 1, 0).astype(np.uint8)
        if reduced_record is not None and self.kept.size:
            x[self.kept] = reduced_record
        return x

    @property
    def kept_bits(self) -> int:
        return int(self.kept.size)

    @property
    def live_clauses(self) -> int:
        return 0 if self.reduced is None else self.reduced.n_clauses


def _kernel_inputs(problem: BestResponse) -> tuple[np.ndarray, ...]:
    linear = np.zeros(problem.d) if problem.linear is None else problem.linear
    groups = problem.onehot_groups
    return (
        problem.offsets, problem.bits, problem.positive, problem.parity, problem.negated,
        linear, groups[:, 0].copy(), groups[:, 1].copy(), problem.group_of_bit,
    )  # fmt: skip


def presolve(problem: BestResponse) -> Presolved:
    """Apply the rules of the module docstring until nothing changes."""
    fixed, live, rounds = _presolve_kernel(*_kernel_inputs(problem))
    return _reduce(problem, fixed, live, int(rounds))


def no_presolve(problem: BestResponse) -> Presolved:
    """The identity reduction (every bit kept), for oracles run without presolve."""
    fixed = np.full(problem.d, UNFIXED, dtype=np.int8)
    return Presolved(problem, problem, fixed, np.arange(problem.d), 0.0, 0)


def _reduce(problem: BestResponse, fixed: np.ndarray, live: np.ndarray, rounds: int) -> Presolved:
    kept = np.flatnonzero(fixed == UNFIXED)
    if kept.size == 0:
        return Presolved(problem, None, fixed, kept, problem.objective(_lift(fixed)), rounds)
    new_index = np.full(problem.d, -1, dtype=np.int64)
    new_index[kept] = np.arange(kept.size)
    clause_of = problem.clause_of_literal
    keep_lit = live[clause_of] & (fixed[problem.bits] == UNFIXED)
    # Why: a set bit that leaves a parity flips it, which is the same as negating the clause.
    set_ones = np.bincount(clause_of, weights=fixed[problem.bits] == 1, minlength=live.size)
    flips = problem.parity & (set_ones.astype(np.int64) % 2 == 1)
    sizes = np.bincount(clause_of[keep_lit], minlength=live.size)[live]
    groups = [
        (new_index[kept_in[0]], new_index[kept_in[-1]] + 1)
        for a, b in problem.onehot_groups
        if (kept_in := kept[(kept >= a) & (kept < b)]).size
    ]
    reduced = BestResponse(
        int(kept.size),
        np.concatenate([[0], np.cumsum(sizes)]),
        new_index[problem.bits[keep_lit]],
        problem.positive[keep_lit],
        problem.parity[live],
        (problem.negated ^ flips)[live],
        problem.weight[live],
        np.array(groups, dtype=np.int64).reshape(-1, 2),
        None if problem.linear is None else problem.linear[kept],
    )
    # The dropped clauses and the fixed bits' linear terms are constants, so the difference
    # of the two objectives at any one lifted record is that constant (exactly, by rule 1).
    y = np.zeros(kept.size, dtype=np.uint8)
    y[reduced.onehot_groups[:, 0]] = 1
    lifted = _lift(fixed)
    lifted[kept] = y
    constant = problem.objective(lifted) - reduced.objective(y)
    return Presolved(problem, reduced, fixed, kept, constant, rounds)


def _lift(fixed: np.ndarray) -> np.ndarray:
    return np.where(fixed == 1, 1, 0).astype(np.uint8)
