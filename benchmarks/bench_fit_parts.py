"""Where a wide release's client time goes: ``dpquery`` run in this process with a wall-clock
timer around each part of the fit (``docs/dask.md``, "The client's mechanism, profiled").

The arguments are the command's own; on exit the parts' seconds are printed to stderr: the
fit (``release_sparse``), the counting passes, the shrinkage (all of ``wide.shrink.shrink``
and its NPMLE priors), the pool's draws, the maximum-entropy fit, the discrete Gaussian
draws and the write of a raw release. Wall time, so it carries the machine's load; run it
``nice``, one at a time::

    nice .venv/bin/python benchmarks/bench_fit_parts.py synth \\
        --data /tmp/dpquery-bench-raw/netflix-48019-0.ratings.csv --item-list items.txt \\
        --epsilon 1 --seed 10 --out /tmp/out.transactions.csv --quiet --overwrite

(``items.txt``: the ids ``1..17770``, one a line; ``--learn-items`` instead of
``--item-list`` for the learned universe.) With ``PYTHONPATH`` at another checkout's ``src``
the same command times that code.
"""

from __future__ import annotations

import atexit
import importlib
import sys
import time
from collections.abc import Callable
from typing import Any

SPENT: dict[str, float] = {}


def timed(module: str, name: str, label: str) -> Callable[..., Any]:
    """Replace ``module.name`` by a wrapper adding its wall seconds to ``SPENT[label]``;
    returns the wrapper (for the modules that imported the name before)."""
    mod = importlib.import_module(module)
    plain = getattr(mod, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return plain(*args, **kwargs)
        finally:
            SPENT[label] = SPENT.get(label, 0.0) + time.perf_counter() - start

    setattr(mod, name, wrapper)
    return wrapper


def main(argv: list[str]) -> int:
    import dpquery.algorithms.wide.core as core
    import dpquery.algorithms.wide.release as release
    import dpquery.pipeline.writes as writes
    import dpquery.privacy.integer_mechanisms as mechanisms

    timed("dpquery.algorithms.wide.shrink", "npmle_prior", "NPMLE priors")
    core.shrink = timed("dpquery.algorithms.wide.shrink", "shrink", "shrinkage (all)")
    timed("dpquery.algorithms.wide.fit", "maxent_weights", "maximum entropy")
    timed("dpquery.algorithms.wide.fit", "head_pool", "pool's draws")
    mechanisms.sample_discrete_gaussian = timed(
        "dpquery.privacy.discrete", "sample_discrete_gaussian", "discrete Gaussian draws"
    )
    core.count_records = timed("dpquery.queries.counts", "count_records", "counting passes")
    release.release_sparse = timed("dpquery.algorithms.wide.core", "release_sparse", "fit")
    writes.write_raw_item_sets = timed("dpquery.data.raw_items", "write_raw_item_sets", "write")
    start = time.perf_counter()

    def report() -> None:
        parts = "; ".join(f"{k} {v:.2f} s" for k, v in sorted(SPENT.items()))
        print(f"parts: {parts}; whole {time.perf_counter() - start:.2f} s", file=sys.stderr)

    atexit.register(report)
    from dpquery.cli import main as dpquery

    return int(dpquery(argv) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
