"""What an oracle returns, the oracle interface, and the checks that make oracles untrusted.

Privacy never depends on an oracle. In every oracle-based algorithm of dpquery (DualQuery
Algorithm 2, DQRS, FEM) the privacy cost is paid where the private data is touched (sampling
queries, the exponential mechanism); the best response is a function of already-private
quantities only, so by post-processing any record, even an adversarial one, keeps the
guarantee. What an oracle can break is *accuracy* and *well-formedness*; the algorithms call
:func:`validate_record` on every answer so a buggy or hostile oracle fails cleanly (or is
repaired) instead of emitting records that violate the one-hot groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.oracles.problem import BestResponse
from dpquery.rng import SeedLike


@dataclass(frozen=True, eq=False)
class OracleResult:
    """A best-response record and how it was found.

    ``objective`` is recomputed by dpquery from ``record`` (never a solver's claim);
    ``bound`` is the best proven upper bound on the optimum, or None; ``optimal`` is True
    only when ``objective`` reaches ``bound`` (up to rounding). ``free`` marks bits the
    objective does not care about: a free bit outside the groups may take either value; in a
    group whose set bit is free, the one may move to any other free bit of that group. The
    caller applies its free-attribute policy to them (DualQuery footnote 6).
    """

    record: np.ndarray
    objective: float
    bound: float | None
    optimal: bool
    seconds: float
    status: str
    timed_out: bool
    free: np.ndarray
    oracle: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """``bound - objective`` when a bound is known."""
        return None if self.bound is None else max(0.0, self.bound - self.objective)


@runtime_checkable
class Oracle(Protocol):
    """Anything with a name that maps a :class:`BestResponse` to an :class:`OracleResult`."""

    @property
    def name(self) -> str: ...

    def solve(self, problem: BestResponse, *, seed: SeedLike = None) -> OracleResult: ...


def free_mask(problem: BestResponse, record: np.ndarray) -> np.ndarray:
    """The ``free`` mask of :class:`OracleResult` for ``record`` (see there)."""
    untouched = ~problem.touched
    free = untouched.copy()
    for a, b in problem.onehot_groups:
        chosen = a + int(np.argmax(record[a:b]))
        # Why: inside a group only the position of the one matters; if it sits on a bit no
        # clause looks at, every untouched bit of the group is an equally good place for it.
        free[a:b] = untouched[a:b] if untouched[chosen] else False
    return free


OPTIMALITY_TOLERANCE = 1e-6


def is_optimal(objective: float, bound: float | None, scale: float) -> bool:
    """Whether ``bound`` certifies ``objective``: ``bound - objective <= 1e-6 * scale``.

    ``scale`` is the problem's trivial bound (total weight plus positive linear terms). The
    tolerance absorbs solvers' float arithmetic (CP-SAT scales float objectives to integers);
    with integer multiplicities and no linear term, distinct objective values differ by at
    least 1, so it never hides a real gap there.
    """
    return bound is not None and bound - objective <= OPTIMALITY_TOLERANCE * max(1.0, abs(scale))


def validate_record(problem: BestResponse, record: object, *, repair: bool = False) -> np.ndarray:
    """Check an oracle's record; return it as a ``uint8`` vector of length ``d``.

    Raises :class:`DPQueryError` when the shape is wrong or a value is not finite, and, unless
    ``repair``, when a value is not 0/1 or a one-hot group does not hold exactly one bit.
    With ``repair``, values are rounded to 0/1 (``>= 0.5`` is 1) and each broken group gets
    the one bit of the group that scores best with the rest of the record fixed (ties to the
    lowest index), so the record is always sensible.
    """
    try:
        x = np.asarray(record, dtype=np.float64)
    except (TypeError, ValueError):
        raise DPQueryError(f"an oracle returned a record that is not numeric: {record!r}") from None
    if x.shape != (problem.d,):
        raise DPQueryError(
            f"an oracle returned a record of shape {x.shape}, expected ({problem.d},)"
        )
    if not np.isfinite(x).all():
        raise DPQueryError("an oracle returned a record with non-finite values")
    binary = np.isin(x, (0.0, 1.0))
    if not binary.all():
        if not repair:
            bad = x[~binary][0]
            raise DPQueryError(f"an oracle returned a record with the non-binary value {bad}")
        x = (x >= 0.5).astype(np.float64)
    out = x.astype(np.uint8)
    for g, (a, b) in enumerate(problem.onehot_groups):
        ones = int(out[a:b].sum())
        if ones == 1:
            continue
        if not repair:
            raise DPQueryError(
                f"an oracle returned a record with {ones} bits set in one-hot group {g} "
                f"(bits {a}..{b - 1}); exactly one is required"
            )
        out[a:b] = 0
        out[_best_in_group(problem, out, a, b)] = 1
    return out


def _best_in_group(problem: BestResponse, record: np.ndarray, a: int, b: int) -> int:
    best, best_value = a, -np.inf
    for j in range(a, b):
        record[j] = 1
        value = problem.objective(record)
        record[j] = 0
        if value > best_value:
            best, best_value = j, value
    return best
