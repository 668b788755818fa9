"""The wide, sparse release: records as sets of items over thousands to hundreds of
thousands of items (``docs/wide.md``).

:class:`~dpquery.algorithms.wide.release.WideRelease` (registry name ``wide``) bounds each
record's contribution (:mod:`.bound`), counts every item, the records' sizes and the pairs
among the most frequent items where the records are (:mod:`.counts`: in this process or on a
cluster), measures them with the discrete Gaussian (:mod:`.measure`), shrinks
the noisy counts (:mod:`.shrink`) and fits a sparse record set to them (:mod:`.fit`).
"""
