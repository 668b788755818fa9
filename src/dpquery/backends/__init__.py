"""Backends that compute workload true answers away from the algorithm's loop.

* ``local`` (the default everywhere): :func:`dpquery.queries.evaluate.answer_data` on one
  :class:`~dpquery.data.binary.BinaryData` in memory.
* ``dask``: :class:`PartitionedData` on a Dask cluster (a local one by default, or a
  scheduler by address, see :func:`connect`): partitions are encoded and counted by workers
  with the same kernels, and the integer counts summed exactly.
"""

from dpquery.backends.cluster import DaskBackend, connect
from dpquery.backends.partitioned import PartitionedData
from dpquery.backends.partitions import (
    Partition,
    biased_bits_partitions,
    count_partition,
    frame_partitions,
    table_partitions,
)

__all__ = [
    "DaskBackend", "Partition", "PartitionedData", "biased_bits_partitions",
    "connect", "count_partition", "frame_partitions", "table_partitions",
]  # fmt: skip
