"""Connecting to Dask: a local cluster by default, or a running scheduler by address."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpquery.errors import DPQueryError

if TYPE_CHECKING:
    from distributed import Client

DEFAULT_WORKERS = 2
CONNECT_TIMEOUT_S = 10.0
# Every socket of the local cluster (scheduler, dashboard, nannies, workers) is bound here:
# the dashboard shows workers' memory, task counts and error text, which are for the
# curator alone, and a port with only a number (":0") binds every interface.
LOOPBACK = "127.0.0.1"


def _import_distributed() -> Any:
    try:
        import distributed  # optional (the dask extra): a clear error when absent
    except ImportError:
        raise DPQueryError(
            "the Dask backend needs dask.distributed: pip install 'dpquery[dask]'"
        ) from None
    return distributed


@dataclass
class DaskBackend:
    """A Dask client, and the local cluster behind it when this backend started one.

    ``kernel_threads`` caps the numba threads of each task (None: numba's default, all
    cores of the worker's machine). Use as a context manager, or call :meth:`close`.
    """

    client: Client
    local: bool
    kernel_threads: int | None = None
    _cluster: Any = None

    @property
    def address(self) -> str:
        return str(self.client.scheduler.address)

    def workers(self) -> int:
        """Number of workers currently connected to the scheduler."""
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

    def describe(self) -> dict[str, Any]:
        """For reports: where the work ran (no credentials: the address only)."""
        return {
            "scheduler": "local" if self.local else self.address,
            "workers": self.workers(),
            "kernel_threads": self.kernel_threads,
        }

    def close(self) -> None:
        """Close the client, and the local cluster if this backend started it."""
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self) -> DaskBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(
    scheduler: str | None = None,
    *,
    workers: int = DEFAULT_WORKERS,
    memory_limit: str | float | None = "auto",
    timeout: float | None = None,
) -> DaskBackend:
    """A backend on the scheduler at ``scheduler`` (e.g. ``tcp://10.0.0.5:8786``), or on a
    new ``LocalCluster`` of ``workers`` single-threaded worker processes on loopback.

    In the local cluster each task's kernels get ``cores // workers`` numba threads, so the
    machine's cores are used once, not ``workers`` times over. ``timeout`` (default
    :data:`CONNECT_TIMEOUT_S`) bounds the wait for a scheduler that does not answer.
    """
    distributed = _import_distributed()
    timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
    if scheduler is None:
        if workers < 1:
            raise DPQueryError(f"workers must be a positive integer, got {workers}")
        # Processes, not threads: encoding and pandas hold the GIL for long stretches. The
        # scheduler's HTTP endpoint takes a free port on loopback, never a fixed one; `host`
        # binds the scheduler, and LocalCluster passes it on to the nannies and workers.
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host=LOOPBACK,
            dashboard_address=f"{LOOPBACK}:0", worker_dashboard_address=None,
            memory_limit=memory_limit,
        )  # fmt: skip
        client = distributed.Client(cluster, timeout=timeout)
        threads = max(1, (os.cpu_count() or 1) // workers)
        return DaskBackend(client, True, threads, cluster)
    try:
        client = _client(distributed, scheduler, timeout)
    except (ValueError, TypeError) as exc:
        raise DPQueryError(
            f"{scheduler!r} is not a Dask scheduler address such as tcp://10.0.0.5:8786 ({exc})"
        ) from None
    except OSError as exc:
        raise DPQueryError(
            f"cannot connect to the Dask scheduler at {scheduler!r} within {timeout:g} s: {exc}"
        ) from None
    return DaskBackend(client, False)


def _client(distributed: Any, scheduler: str, timeout: float) -> Any:
    """``distributed.Client(scheduler)``; when it raises, the half-built client is collected
    here and now. Left to the garbage collector, its ``__del__`` can run inside the next
    Client's start and wait on the event-loop lock that start holds (a deadlock seen in the
    test suite after a refused address)."""
    try:
        return distributed.Client(scheduler, timeout=timeout)
    except BaseException:
        gc.collect()
        raise
