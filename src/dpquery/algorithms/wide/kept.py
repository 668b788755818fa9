"""The wide release's measured check: what its noisy counts kept, said before the fit.

The plan's check (:func:`dpquery.algorithms.wide.release.noise_warning`) reads public facts
only (``n``, ``d``, the budget), and on some tables it cannot tell a release that keeps
nothing from one that beats the all-zeros table: CiteULike's libraries at epsilon 0.1 (5,551
x 16,980, no article in more than 5.8% of them) and MovieLens' ratings at epsilon 1 have head
mode plans of nearly the same threshold share, 0.469 and 0.42-0.46 (``docs/wide.md``, "Why
`citeulike` is empty"). The release itself
measures before it fits: the bound, the probe and the items' (or the picks') noisy counts,
each charged. Which counts clear the level that no noise draw reaches is a function of those
noisy counts (post-processing), so a warning read off them is private at no further cost,
and it comes before any record is fitted. It fires where

* no item is kept (every record empty but the tail fill's: the all-zeros table), or
* fewer than :data:`FEW_KEPT` items are kept (every other item answered as zeros does).
"""

from __future__ import annotations

import numpy as np

# Fewer kept items than this: the release answers all but these items as the all-zeros table
# does, and says so. One or two kept items make every pair and triple of the release hold at
# most one kept item pair.
FEW_KEPT = 3


class WideKeptWarning(UserWarning):
    """The release's measured check (:func:`kept_warning`): its noisy counts kept no item,
    or too few to answer more than the all-zeros table does; said before the fit."""


def kept_warning(
    kept: int, noisy: np.ndarray, level: float, sigma: float, n: int, filled: bool = False
) -> str | None:
    """The message of the measured check, or None: where ``kept`` (the items the release
    keeps) is below :data:`FEW_KEPT`. ``noisy``: the measured counts the kept items were
    chosen from (each with noise ``sigma``), ``level``: the count an item must clear to be
    kept (no noise draw is expected to reach it), ``n``: the records every rule reads (under
    add/remove a noisy count), ``filled``: the head mode's tail fill puts the unpicked items
    in a few records each (``core.tail_fill``). Reads noisy, charged quantities only
    (post-processing)."""
    if kept >= FEW_KEPT:
        return None
    top = float(noisy.max()) if noisy.size else 0.0
    rest = (
        "every item it did not measure is put at random in the same small share of the "
        "records (the tail fill), every other item it measured is left out"
        if filled
        else "every other item is left out, answered as the all-zeros table answers it"
    )
    what = (
        f"kept no item it measured: {rest}"
        if filled
        else "kept no item: every released record is empty (the all-zeros table)"
    ) if kept == 0 else f"kept only {kept} item{'s' * (kept > 1)}: {rest}"  # fmt: skip
    return (
        f"the wide release measured its item counts and {what}. An item is kept only where "
        f"its noisy count clears {level:,.0f} records ({level / max(n, 1):.1%} of about "
        f"{n:,}; the noise's standard deviation is {sigma:,.0f} records), and the largest "
        f"noisy count was {top:,.0f}: at this budget the noise swamps all but the commonest "
        "items. To keep more: raise epsilon, give a smaller public universe of the items "
        "that matter (--item-list), or release a table of more records"
    )
