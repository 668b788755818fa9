"""The options adaptive-projection takes beside the shared ones
(:mod:`dpquery.algorithms.options`): the compression and the column refinement."""

from __future__ import annotations

from dpquery.algorithms.options import Option, zero_or
from dpquery.algorithms.parameters import fraction, positive

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
)
