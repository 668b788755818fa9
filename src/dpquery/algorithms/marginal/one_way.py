"""Column refinement: re-measure the 1-way marginals whose noise alone puts them past a target.

After :mod:`dpquery.algorithms.marginal.adaptive_projection` measures every attribute's 1-way
marginal (noise ``sigma_a`` on the counts), the records start from each measurement projected
onto the simplex (:func:`~dpquery.algorithms.marginal.projection.initial_records`). That
projection keeps ``k_a`` cells; on each of them the error is the noise
``e ~ N(0, sigma_a^2)``, of mean absolute size ``sqrt(2/pi) sigma_a`` and variance
``(1 - 2/pi) sigma_a^2``. So the column's total variation from the data's is about

    tv_a = sqrt(2/pi) sigma_a k_a / (2 n),   with standard deviation
    sd_a = sqrt((1 - 2/pi) k_a) sigma_a / (2 n)

(on ACS and adult-pgm at epsilon 1 this is within 10% of the measured total variation of the
projection, the cells it zeroes included: docs/columns.md). ``tv_a`` and ``sd_a`` read only
the noisy counts (through ``k_a``), the public ``sigma_a`` and ``n``: post-processing.

An attribute whose bound ``tv_a + Z sd_a`` exceeds the target ``tau`` is measured again with
Gaussian noise ``sigma'`` chosen so that the inverse-variance combination of its
measurements, of scale ``sigma_c = (sigma_a^-2 + sigma'^-2)^(-1/2)``, brings the bound to
``tau``:

    sigma_c = 2 n tau / (sqrt(2/pi) k_a + Z sqrt((1 - 2/pi) k_a)),
    rho' = 1 / sigma'^2 = 1 / sigma_c^2 - 1 / sigma_a^2

(a 1-way count vector has L2 sensitivity ``sqrt(2)`` under replace-one, so ``N(0, sigma'^2)``
costs ``1 / sigma'^2`` zCDP: Bun and Steinke 2016, Proposition 1.6; under add/remove its
sensitivity is 1 and the cost half that). Less noise keeps more
cells (``k_a`` grows: on ACS's ``INDP`` from about 165 to 220 of 264), so the estimate is
recomputed on the combination and the step repeated, at most :data:`MAX_STEPS` times; the
total cost is that of the final combined scale, however many steps it took.

The refinements together spend at most ``cap``. When the first step's cost for every
attribute past the target exceeds it, nothing is spent (the target is not affordable: a
small budget, where every column is noisy and the rounds are worth more; docs/columns.md);
a later step that does not fit spends what is left of the cap, in proportion.

Two further rules, both off unless asked for (``AdaptiveProjection(refine_shrunk=...,
refine_partial=...)``; docs/learn.md, "The budget split at the noise floor"):

- **A second measurement of a column at the noise floor** (``doubled``): a categorical column
  whose first measurement's James-Stein factor ``B`` (the noise's share of its counts'
  spread, :func:`~dpquery.algorithms.marginal.shrinkage.stein_factor`) is at least
  :data:`~dpquery.algorithms.marginal.shrinkage.SHRINK_MIN_FACTOR` is measured again at its
  first scale (``rho_a = unit / sigma_a^2`` more: the combined noise ``sigma_a / sqrt(2)``),
  before the rule above and within the cap (scaled down together when they do not fit). Such
  a column's counts are as much noise as count (SumHes' 125 countries of 26 records at a
  noise sd of 15): no post-processing parts its real values from the listed ones the table
  lacks, and its target is out of reach of the cap, so the rule above spends nothing on it.
- **A partial first step** (``partial``): when the first step does not fit, the columns in
  order of the excess of their bound over ``tau`` per rho of their step, each whole while it
  fits and the first that does not given the rest of the cap (:func:`partial_step`).

Each re-measurement is charged on the ledger before its draw (``measure``). The amounts depend on
noisy outputs only, and the ledger refuses any charge that would take the total past the
budget: the condition of a zCDP privacy filter (Feldman and Zrnic 2021; Whitehouse, Ramdas,
Rogers and Wu 2023), under which such adaptively chosen budgets compose (docs/privacy.md,
"Adaptive budgets").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpquery.algorithms.marginal.projection import Measurement, simplex_projection
from dpquery.errors import DPQueryError

# The 1-way target in total variation: every column's estimate within 0.05 of the data's.
DEFAULT_COLUMN_TV = 0.05
# At most this fraction of the budget left after the 1-way measurements goes to refinements.
DEFAULT_COLUMN_CAP = 0.4
# Standard deviations of margin between the estimate and the target (one-sided, ~2%).
Z = 2.0
# Re-estimations per refinement (each step's cost is folded into the final scale's).
MAX_STEPS = 4
REFINE = "Gaussian marginal (column refinement)"

Measure = Callable[[int, float], Measurement]


def check_column_tv(column_tv: float | None) -> float | None:
    """``column_tv`` is a total variation in ``(0, 1)``, or None or 0 (no refinement,
    returned as None)."""
    if column_tv is None or column_tv == 0:
        return None
    if not 0 < column_tv < 1:
        raise DPQueryError(f"column_tv must be in (0, 1), or 0 or None (off), got {column_tv!r}")
    return column_tv


def combine(measurements: Sequence[Measurement]) -> tuple[np.ndarray, float]:
    """The inverse-variance combination of measurements of one marginal: ``(y_c, sigma_c)``,
    ``y_c = sum_i y_i / sigma_i^2 / sum_i sigma_i^-2``, ``sigma_c^-2 = sum_i sigma_i^-2``
    (the L2 loss of the records sees the same quadratic). One measurement is returned as
    it is."""
    if len(measurements) == 1:
        return measurements[0].y, measurements[0].sigma
    w = np.array([1.0 / x.sigma**2 for x in measurements])
    y = sum(wi * np.asarray(x.y, dtype=np.float64) for wi, x in zip(w, measurements, strict=True))
    return np.asarray(y) / w.sum(), float(1.0 / math.sqrt(w.sum()))


def kept_cells(y: np.ndarray, n: int) -> int:
    """``k``: the cells the simplex projection of the noisy counts ``y`` (onto ``n``
    records) keeps above zero."""
    return int(np.count_nonzero(simplex_projection(np.asarray(y, dtype=np.float64), float(n))))


def tv_estimate(sigma: float, k: int, n: int) -> tuple[float, float]:
    """``(tv, sd)`` of the module docstring: the expected total variation of ``k`` kept
    cells each off by ``N(0, sigma^2)`` counts, of ``n`` records, and its standard
    deviation."""
    return (math.sqrt(2 / math.pi) * sigma * k / (2 * n),
            math.sqrt((1 - 2 / math.pi) * k) * sigma / (2 * n))  # fmt: skip


def target_sigma(k: int, n: int, tau: float) -> float:
    """The combined scale whose bound ``tv + Z sd`` over ``k`` cells is ``tau``."""
    return 2 * n * tau / (math.sqrt(2 / math.pi) * k + Z * math.sqrt((1 - 2 / math.pi) * k))


def second_rho(sigma: float, sigma_c: float, unit: float = 1.0) -> float:
    """zCDP cost of the measurement that takes a marginal measured at ``sigma`` to the
    combined scale ``sigma_c < sigma``: ``unit (1 / sigma_c^2 - 1 / sigma^2)``, ``unit =
    Delta^2 / 2`` (1 under replace-one, ``Delta = sqrt(2)``; 1/2 under add/remove)."""
    return unit * (1 / sigma_c**2 - 1 / sigma**2)


def refine_columns(
    one_way: Sequence[Measurement], measure: Measure, *, n: int, tau: float, cap: float,
    names: Sequence[str] | None = None, unit: float = 1.0, partial: bool = False,
    doubled: Sequence[int] = (),
) -> tuple[list[Measurement], list[dict[str, Any]]]:  # fmt: skip
    """Re-measure the attributes of ``one_way`` (attribute ``a``'s 1-way measurement at
    index ``a``) whose bound exceeds ``tau`` (module docstring), spending at most ``cap``
    (rho). ``measure(a, sigma)`` charges the ledger, then draws. Returns the new
    measurements and one record per re-measured attribute (its scales, cost and estimates
    before and after). ``unit`` is ``Delta^2 / 2`` for the 1-way count vector's L2
    sensitivity ``Delta`` (1 under replace-one, 1/2 under add/remove): noise ``sigma'``
    costs ``unit / sigma'^2``.

    ``doubled`` (attribute indices, chosen from the noisy 1-way measurements: post-processing)
    are measured a second time at their first measurement's scale before the rule above
    (each ``unit / sigma_a^2``, all scaled down together to fit ``cap``); the rule then
    spends what is left of the cap. With ``partial``, a first step that does not fit is
    not dropped: the attributes are taken in order of ``(bound - tau) / rho_a`` (the bound's
    excess removed per rho), each whole while it fits, the first that does not given what
    is left of the cap, and the refinement stops there (:func:`partial_step`)."""
    groups = [[x] for x in one_way]
    spent = 0.0
    new: list[Measurement] = []
    before = [tv_estimate(x.sigma, kept_cells(x.y, n), n)[0] for x in one_way]
    if doubled and cap > 0:
        ask = {a: unit / one_way[a].sigma ** 2 for a in dict.fromkeys(doubled)}
        scale = min(1.0, cap / sum(ask.values()))
        for a, r in ask.items():
            x = measure(a, math.sqrt(unit) / math.sqrt(r * scale))
            groups[a].append(x)
            new.append(x)
            spent += r * scale
    for step in range(MAX_STEPS):
        need: dict[int, float] = {}
        excess: dict[int, float] = {}
        for a, group in enumerate(groups):
            y, sigma = combine(group)
            k = kept_cells(y, n)
            tv, sd = tv_estimate(sigma, k, n)
            if tv + Z * sd > tau * (1 + 1e-9):
                need[a] = second_rho(sigma, target_sigma(k, n, tau), unit)
                excess[a] = tv + Z * sd - tau
        total, room = sum(need.values()), cap - spent
        if not need or room <= 0:
            break
        last = total > room
        if step == 0 and last:
            if not partial:  # the target is not affordable: nothing (module docstring)
                break
            need = partial_step(need, excess, room)
        elif last:  # spend what is left of the cap, in proportion
            need = {a: r * room / total for a, r in need.items()}
        for a, r in need.items():
            x = measure(a, math.sqrt(unit) / math.sqrt(r))
            groups[a].append(x)
            new.append(x)
            spent += r
        if last:
            break
    records = []
    for a, group in enumerate(groups):
        if len(group) > 1:
            y, sigma = combine(group)
            records.append({
                "attribute": names[a] if names is not None else a,
                "sigmas": [x.sigma for x in group[1:]], "combined_sigma": sigma,
                "rho": sum(unit / x.sigma**2 for x in group[1:]),
                "tv_before": before[a], "tv_after": tv_estimate(sigma, kept_cells(y, n), n)[0],
            })  # fmt: skip
    return new, records


def partial_step(need: dict[int, float], excess: dict[int, float], room: float) -> dict[int, float]:
    """A first step that does not fit in ``room``: the attributes in order of ``excess[a] /
    need[a]`` (the bound's excess over the target removed per rho, largest first; ties by
    index), each given its whole ``need`` while it fits and the first that does not what is
    left of ``room``; the rest nothing. Reads only the noisy estimates: post-processing."""
    out: dict[int, float] = {}
    left = room
    for a in sorted(need, key=lambda a: (-excess[a] / need[a], a)):
        if left <= 0:
            break
        out[a] = min(need[a], left)
        left -= out[a]
    return out


def refinement_report(
    rounds: list[dict[str, Any]], names: Sequence[str], rho: float
) -> dict[str, Any]:
    """The release's account of the refinement, from the run's ``"column refinement"`` rounds
    (whose attribute indices become ``names``, in place): ``refined``, each re-measured
    column's ``rho`` and its share of the budget's ``rho``; ``spent``, their sum; ``columns``,
    each one's scales and estimates before and after."""
    columns: dict[str, dict[str, Any]] = {}
    for r in rounds:
        if r["round"] == "column refinement":
            r["attribute"] = names[r["attribute"]]
            columns[r["attribute"]] = {k: v for k, v in r.items()
                                       if k not in ("round", "attribute")}  # fmt: skip
    return {
        "refined": {k: {"rho": v["rho"], "share": v["rho"] / rho} for k, v in columns.items()},
        "spent": sum(v["rho"] for v in columns.values()), "columns": columns,
    }  # fmt: skip


def one_way_estimates(
    measurements: Sequence[Measurement], g: int
) -> list[tuple[np.ndarray, float]]:
    """Per attribute, its 1-way measurements among ``measurements`` (a 1-way measurement and
    its re-measurements; other marginals are skipped) combined by :func:`combine`: where the
    records start and what the domain compression reads."""
    groups: list[list[Measurement]] = [[] for _ in range(g)]
    for x in measurements:
        if len(x.marginal) == 1 and x.maps is None:
            groups[x.marginal[0]].append(x)
    missing = [a for a in range(g) if not groups[a]]
    if missing:
        raise DPQueryError(f"attribute {missing[0]} has no 1-way measurement")
    return [combine(group) for group in groups]


__all__ = [
    "DEFAULT_COLUMN_CAP",
    "DEFAULT_COLUMN_TV",
    "REFINE",
    "check_column_tv",
    "combine",
    "kept_cells",
    "one_way_estimates",
    "partial_step",
    "refine_columns",
    "refinement_report",
    "second_rho",
    "target_sigma",
    "tv_estimate",
]
