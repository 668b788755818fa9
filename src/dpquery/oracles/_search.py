"""Compiled iterated local search for the best-response problem (numba kernels).

State: the record ``x`` and, per clause, ``count[c]`` = number of true literals
(conjunction) or number of set bits (parity), so the change of the objective when one bit
flips is a sum over that bit's clauses only. Moves: flip a free bit, or move a group's one to
another bit of the group. A run is: random feasible start, first-improvement passes until no
move improves (a local optimum), then ``kicks`` times perturb the best record at a few random
units and descend again, keeping the result when it is at least as good. Every random choice
comes from a splitmix64 stream seeded by the caller, so a seed reproduces a run exactly.
"""

from __future__ import annotations

import numba
import numpy as np

EPS = 1e-9


@numba.njit(cache=True)
def _next(state):  # pragma: no cover - jit
    """splitmix64: returns a uniform uint64 and advances ``state[0]``."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def _below(state, n):  # pragma: no cover - jit
    """A uniform integer in ``[0, n)``."""
    return np.int64(_next(state) % np.uint64(n))


@numba.njit(cache=True)
def _value(count, k, is_parity, is_negated, w):  # pragma: no cover - jit
    """w * q_c(x) from the clause's count (see the module docstring)."""
    if is_parity:
        v = 1.0 if count % 2 == 0 else -1.0
        return -w * v if is_negated else w * v
    v = 1.0 if count == k else 0.0
    return w * (1.0 - v) if is_negated else w * v


@numba.njit(cache=True)
def _gain(
    j, x, inc_ptr, inc_clause, inc_positive, count, sizes, parity, negated, weight, linear
):  # pragma: no cover
    """Objective change if bit j flips."""
    g = linear[j] * (1.0 - 2.0 * x[j])
    for t in range(inc_ptr[j], inc_ptr[j + 1]):
        c = inc_clause[t]
        if parity[c]:
            new = count[c] + (1 if x[j] == 0 else -1)
        else:
            holds = (x[j] == 1) == inc_positive[t]
            new = count[c] - 1 if holds else count[c] + 1
        g += _value(new, sizes[c], parity[c], negated[c], weight[c])
        g -= _value(count[c], sizes[c], parity[c], negated[c], weight[c])
    return g


@numba.njit(cache=True)
def _flip(j, x, inc_ptr, inc_clause, inc_positive, count, parity):  # pragma: no cover - jit
    for t in range(inc_ptr[j], inc_ptr[j + 1]):
        c = inc_clause[t]
        if parity[c]:
            count[c] += 1 if x[j] == 0 else -1
        else:
            count[c] += -1 if (x[j] == 1) == inc_positive[t] else 1
    x[j] = 1 - x[j]


@numba.njit(cache=True)
def _recount(x, offsets, bits, positive, parity, count):  # pragma: no cover - jit
    for c in range(offsets.size - 1):
        n = 0
        for t in range(offsets[c], offsets[c + 1]):
            if parity[c]:
                n += x[bits[t]]
            elif (x[bits[t]] == 1) == positive[t]:
                n += 1
        count[c] = n


@numba.njit(cache=True)
def _total(x, count, sizes, parity, negated, weight, linear):  # pragma: no cover - jit
    s = 0.0
    for c in range(count.size):
        s += _value(count[c], sizes[c], parity[c], negated[c], weight[c])
    for j in range(x.size):
        s += linear[j] * x[j]
    return s


@numba.njit(cache=True)
def _set_unit(
    u, x, unit_start, unit_stop, unit_group, state, inc, count, parity
):  # pragma: no cover
    """Give unit u a random value: a random bit of a group, or a flip of a free bit."""
    a, b = unit_start[u], unit_stop[u]
    if not unit_group[u]:
        _flip(a, x, inc[0], inc[1], inc[2], count, parity)
        return
    target = a + _below(state, b - a)
    for j in range(a, b):
        if x[j] == 1 and j != target:
            _flip(j, x, inc[0], inc[1], inc[2], count, parity)
    if x[target] == 0:
        _flip(target, x, inc[0], inc[1], inc[2], count, parity)


@numba.njit(cache=True)
def _force_literal(
    j, want, x, unit_of, unit_start, unit_stop, unit_group, state, inc, count, parity
):  # pragma: no cover
    """Make ``x_j == want``, keeping the record feasible (a group's one moves on or off j)."""
    if x[j] == want:
        return
    u = unit_of[j]
    if not unit_group[u]:
        _flip(j, x, inc[0], inc[1], inc[2], count, parity)
        return
    a, b = unit_start[u], unit_stop[u]
    if b - a == 1:
        return
    if want == 1:
        target = j
    else:  # move the one to another random bit of the group
        target = a + _below(state, b - a - 1)
        if target >= j:
            target += 1
    for i in range(a, b):
        if x[i] == 1:
            _flip(i, x, inc[0], inc[1], inc[2], count, parity)
    _flip(target, x, inc[0], inc[1], inc[2], count, parity)


@numba.njit(cache=True)
def _clause_kick(
    x,
    offsets,
    bits,
    positive,
    parity,
    negated,
    unit_of,
    unit_start,
    unit_stop,
    unit_group,
    state,
    inc,
    count,
):  # pragma: no cover
    """Satisfy a random unsatisfied conjunction outright (a move no single flip can make:
    a 3-way marginal cell over three groups needs three groups to move at once)."""
    m = offsets.size - 1
    for _ in range(16):  # a few tries to find an unsatisfied one; else give up this kick
        c = _below(state, m)
        k = offsets[c + 1] - offsets[c]
        if parity[c] or negated[c] or count[c] == k:
            continue
        for t in range(offsets[c], offsets[c + 1]):
            _force_literal(
                bits[t],
                1 if positive[t] else 0,
                x,
                unit_of,
                unit_start,
                unit_stop,
                unit_group,
                state,
                inc,
                count,
                parity,
            )
        return


@numba.njit(cache=True)
def _improve_unit(
    u, x, unit_start, unit_stop, unit_group, inc, count, sizes, parity, negated, weight, linear
):  # pragma: no cover
    """Best move of unit u if it improves; returns the gain made (0 if none)."""
    a, b = unit_start[u], unit_stop[u]
    ptr, cl, pos = inc[0], inc[1], inc[2]
    if not unit_group[u]:  # a free bit: flip it
        g = _gain(a, x, ptr, cl, pos, count, sizes, parity, negated, weight, linear)
        if g > EPS:
            _flip(a, x, ptr, cl, pos, count, parity)
            return g
        return 0.0
    if b - a == 1:  # a group of one bit has no move
        return 0.0
    cur = a
    while x[cur] == 0:
        cur += 1
    # Move the one off `cur`, then price every landing bit against that state.
    off = _gain(cur, x, ptr, cl, pos, count, sizes, parity, negated, weight, linear)
    _flip(cur, x, ptr, cl, pos, count, parity)
    best, best_gain = cur, 0.0
    for j in range(a, b):
        if j == cur:
            continue
        g = off + _gain(j, x, ptr, cl, pos, count, sizes, parity, negated, weight, linear)
        if g > best_gain + EPS:
            best, best_gain = j, g
    _flip(best, x, ptr, cl, pos, count, parity)
    return best_gain


@numba.njit(cache=True)
def _descend(
    x,
    order,
    unit_start,
    unit_stop,
    unit_group,
    inc,
    count,
    sizes,
    parity,
    negated,
    weight,
    linear,
    state,
    max_passes,
):  # pragma: no cover
    """First-improvement passes (units in a fresh random order each pass) to a local optimum."""
    n = order.size
    for _ in range(max_passes):
        for i in range(n - 1, 0, -1):  # Fisher-Yates shuffle
            r = _below(state, i + 1)
            order[i], order[r] = order[r], order[i]
        improved = False
        for i in range(n):
            if (
                _improve_unit(
                    order[i],
                    x,
                    unit_start,
                    unit_stop,
                    unit_group,
                    inc,
                    count,
                    sizes,
                    parity,
                    negated,
                    weight,
                    linear,
                )
                > 0.0
            ):
                improved = True
        if not improved:
            return


@numba.njit(cache=True)
def local_search(
    offsets,
    bits,
    positive,
    parity,
    negated,
    weight,
    linear,
    unit_start,
    unit_stop,
    unit_group,
    unit_of,
    inc_ptr,
    inc_clause,
    inc_positive,
    seed,
    restarts,
    kicks,
    kick_size,
    max_passes,
    start,
):  # pragma: no cover - jit
    """Iterated local search; returns the best record found and its objective.

    ``start`` (length d, or length 0 for none) is a feasible record used as the first
    restart's starting point; other restarts start from random feasible records.
    """
    d = linear.size
    sizes = offsets[1:] - offsets[:-1]
    inc = (inc_ptr, inc_clause, inc_positive)
    state = np.zeros(1, dtype=np.uint64)
    state[0] = np.uint64(seed)
    n_units = unit_start.size
    order = np.arange(n_units)
    count = np.zeros(offsets.size - 1, dtype=np.int64)
    best_x = np.zeros(d, dtype=np.uint8)
    best_v = -np.inf
    x = np.zeros(d, dtype=np.uint8)
    for r in range(restarts):
        if r == 0 and start.size == d:
            x[:] = start
        else:
            x[:] = 0
            for u in range(n_units):
                if unit_group[u] or _below(state, 2) == 1:
                    x[unit_start[u] + _below(state, unit_stop[u] - unit_start[u])] = 1
        _recount(x, offsets, bits, positive, parity, count)
        _descend(
            x,
            order,
            unit_start,
            unit_stop,
            unit_group,
            inc,
            count,
            sizes,
            parity,
            negated,
            weight,
            linear,
            state,
            max_passes,
        )
        run_x = x.copy()
        run_v = _total(x, count, sizes, parity, negated, weight, linear)
        for _ in range(kicks):
            if _below(state, 2) == 0:
                _clause_kick(
                    x,
                    offsets,
                    bits,
                    positive,
                    parity,
                    negated,
                    unit_of,
                    unit_start,
                    unit_stop,
                    unit_group,
                    state,
                    inc,
                    count,
                )
            strength = _below(state, kick_size + 1)
            for _s in range(strength):
                _set_unit(
                    _below(state, n_units),
                    x,
                    unit_start,
                    unit_stop,
                    unit_group,
                    state,
                    inc,
                    count,
                    parity,
                )
            _descend(
                x,
                order,
                unit_start,
                unit_stop,
                unit_group,
                inc,
                count,
                sizes,
                parity,
                negated,
                weight,
                linear,
                state,
                max_passes,
            )
            v = _total(x, count, sizes, parity, negated, weight, linear)
            if v >= run_v - EPS:  # accept sideways moves: plateaus are common
                run_x[:] = x
                run_v = v
            else:
                x[:] = run_x
                _recount(x, offsets, bits, positive, parity, count)
        if run_v > best_v + EPS:
            best_x[:] = run_x
            best_v = run_v
    return best_x, best_v
