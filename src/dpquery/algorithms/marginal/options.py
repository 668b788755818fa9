"""The options adaptive-projection takes beside the shared ones
(:mod:`dpquery.algorithms.options`): the compression and the column refinement."""

from __future__ import annotations

from dpquery.algorithms.options import Option, zero_or
from dpquery.algorithms.parameters import fraction, positive


def ordinal_names(text: str) -> str | list[str]:
    """``--ordinal``'s value: ``numeric`` (the domain's numeric columns), ``none``, or the
    ordered attributes' names separated by commas."""
    if text in ("numeric", "none"):
        return "numeric" if text == "numeric" else []
    return [name.strip() for name in text.split(",") if name.strip()]


OPTIONS = (
    Option(
        "compress",
        "adaptive-projection: also offer each candidate marginal with the values whose "
        "noisy 1-way count is below compress x sigma merged (default 5; 0: off)",
        check=zero_or(positive),
        metavar="C",
    ),
    Option(
        "column_tv",
        "adaptive-projection: re-measure the columns whose noisy 1-way marginal is "
        "estimated past this total variation, when affordable (default 0.05; 0: off)",
        check=zero_or(fraction),
        metavar="TV",
    ),
    Option(
        "ordinal",
        "adaptive-projection: the attributes whose values are ordered (public), also "
        "offered in candidates cut into a few bins of adjacent values: names separated by "
        "commas, numeric (the domain's numeric columns; the add/remove default) or none "
        "(the replace-one default)",
        ordinal_names,
        metavar="A,B|numeric|none",
    ),
)
