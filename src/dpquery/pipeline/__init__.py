"""The release pipeline: one run of ``dpquery synth`` or ``dpquery.synthesize``.

Both front doors build a :class:`ReleaseRequest` (the command line from its flags, the API
from its keyword arguments) and call :func:`release` (or :func:`fit`, then make rows as
often as asked); neither runs a step itself. A release reads as its steps, one module each:

1. ``inputs``: the data (a table, partitions on a cluster, or item sets) and its public
   domain, given, or learned privately from a table given without one (``learning``: on
   the run's one ledger, from a stated share of its budget);
2. ``plan``: the budget and its warnings, the workload, the estimator with its options
   checked, ``auto``'s choice and pre-release check, all before any draw;
3. ``fitting``: the fit, on the estimator's one ledger, with the true answers the evaluation
   needs;
4. ``rows``: the output rows (decoded, sampled, in the domain's dtypes; or bits, or item
   sets);
5. ``reports``: the publishable report and the NOT PRIVATE evaluation;
6. ``writes``: the files, checked before any work and written all or nothing.

``run`` strings them together; ``request`` holds the request and the result. Tables and item
data share every step and differ only where they must.
"""

from dpquery.pipeline.fitting import Fitted
from dpquery.pipeline.request import (
    Backend,
    Dataset,
    Files,
    Frame,
    ItemFile,
    ItemFrame,
    ItemLearning,
    ItemMatrix,
    Learning,
    Output,
    ReleaseRequest,
    ReleaseResult,
    Source,
    TableFile,
    WorkloadKind,
)
from dpquery.pipeline.run import fit, release

__all__ = [
    "Backend", "Dataset", "Files", "Fitted", "Frame", "ItemFile", "ItemFrame", "ItemLearning",
    "ItemMatrix", "Learning",
    "Output", "ReleaseRequest", "ReleaseResult", "Source", "TableFile", "WorkloadKind", "fit",
    "release",
]  # fmt: skip
