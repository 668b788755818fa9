"""The fourth step of a release: its records as output rows (post-processing).

A table's rows are decoded into the domain's columns and dtypes, sampled from the release
(systematic sampling by weight; :func:`dpquery.data.output_table`), or kept as packed bits
(:func:`dpquery.data.sample.output_bits`); item data's are item sets
(:func:`dpquery.algorithms.wide.release.sample_items`). Every draw comes from the run's one
generator.
"""

from __future__ import annotations

from typing import Any

from dpquery.algorithms.wide.release import sample_items
from dpquery.data.domain import Domain
from dpquery.data.items import ItemSets, dense_records
from dpquery.data.sample import OutputReport, output_bits, output_table
from dpquery.pipeline.fitting import Fitted
from dpquery.pipeline.request import Output


def table_rows(
    fitted: Fitted, domain: Domain, output: Output, *, bits: bool = False
) -> tuple[Any, OutputReport]:
    """The release's rows over ``domain`` and how they were made: a DataFrame, or, with
    ``bits``, the bits and their weights (None unless ``output.weights``)."""
    records = dense_records(fitted.records, domain)  # wide: item sets
    rows = output.count(fitted.n)
    if bits:
        packed, weights, made = output_bits(
            records, domain, rows=rows, weights=output.weights, seed=fitted.rng
        )
        return (packed, weights), made
    return output_table(
        records, domain, rows=rows, weights=output.weights, numeric=output.numeric,
        seed=fitted.rng,
    )  # fmt: skip


def item_rows(fitted: Fitted, output: Output) -> ItemSets:
    """``rows`` records sampled from the released item sets, or the released records with
    their weights."""
    items: ItemSets = fitted.records
    return sample_items(items, output.count(fitted.n), fitted.rng)
