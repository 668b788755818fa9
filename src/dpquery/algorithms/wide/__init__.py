"""The wide, sparse release: records as sets of items over thousands to hundreds of
thousands of items (``docs/wide.md``).

:class:`~dpquery.algorithms.wide.release.WideRelease` (registry name ``wide``) bounds each
record's contribution (:mod:`.bound`), measures every item's count, the records' sizes and
the pairs among the most frequent items with the discrete Gaussian (:mod:`.measure`), shrinks
the noisy counts (:mod:`.shrink`) and fits a sparse record set to them (:mod:`.fit`).
"""
