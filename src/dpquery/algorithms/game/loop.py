"""The query-release game, played by every oracle-efficient algorithm.

All of dpquery's synthetic-data algorithms play one two-player game (Oracle-efficient,
Section 3; DualQuery, Section 3): a *data player* proposes records, a *query player* looks for
queries they answer badly. They differ in who learns and who best-responds:

* dual (DualQuery Algorithm 2, DQRS Algorithm 4): the query player learns by multiplicative
  weights and privately samples queries; the data player best-responds with a record;
* primal (FEM/sepFEM Algorithm 1, MWEM): the data player learns (follow the perturbed
  leader, or multiplicative weights over the domain); the query player privately selects a
  badly answered query (the exponential mechanism).

:func:`play` is the one loop. Each round the query player ``select``\\ s (the private step:
it charges the ledger before drawing), the data player ``respond``\\ s (an oracle; untrusted,
post-processing) and the query player ``observe``\\ s the data player's new answers on the
workload. A primal data player makes its first play in ``start``, before round 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from dpquery.algorithms.synthesizer import RoundStats
from dpquery.data.binary import BinaryData
from dpquery.data.records import Records
from dpquery.progress import Progress as Display
from dpquery.queries import Workload, answer


class QueryPlayer(Protocol):
    def select(self, t: int) -> Any:
        """Round ``t``'s private choice of queries (charged to the ledger first)."""
        ...

    def observe(self, t: int, answers: np.ndarray) -> None:
        """The data player's answers on the workload after round ``t`` (0: its first play)."""
        ...


class DataPlayer(Protocol):
    def start(self) -> np.ndarray | None:
        """A primal learner's first play, as answers on the workload; None for a dual one."""
        ...

    def respond(self, t: int, selection: Any) -> RoundStats:
        """Play round ``t`` against the query player's ``selection``; return its statistics."""
        ...

    def answers(self) -> np.ndarray:
        """Answers on the workload of the data player's latest play."""
        ...


def play(
    query_player: QueryPlayer,
    data_player: DataPlayer,
    T: int,
    on_round: Callable[[RoundStats], None] | None = None,
) -> list[RoundStats]:
    """Play ``T`` rounds; return the per-round statistics (with their timings)."""
    first = data_player.start()
    if first is not None:
        query_player.observe(0, first)
    stats: list[RoundStats] = []
    for t in range(1, T + 1):
        t0 = time.perf_counter()
        selection = query_player.select(t)
        t1 = time.perf_counter()
        info = data_player.respond(t, selection)
        t2 = time.perf_counter()
        query_player.observe(t, data_player.answers())
        info.update(round=t, select_s=t1 - t0, respond_s=t2 - t1,
                    observe_s=time.perf_counter() - t2)  # fmt: skip
        stats.append(info)
        if on_round is not None:
            on_round(info)
    return stats


def to_unit(workload: Workload, answers: np.ndarray) -> np.ndarray:
    """``answers`` of ``workload`` rescaled to [0, 1] (parities: (1 + p) / 2), the range the
    privacy proofs assume: with them every score has sensitivity ``1/n`` per round."""
    lo, hi = workload.value_range
    return (np.asarray(answers, dtype=np.float64) - lo) / (hi - lo)


def unit_answers(workload: Workload, target: BinaryData | Records) -> np.ndarray:
    """The answers of ``workload`` on ``target``, rescaled to [0, 1] (:func:`to_unit`)."""
    return to_unit(workload, answer(workload, target))


class Progress:
    """An ``on_round`` callback showing the rounds on stderr (:class:`dpquery.progress.Progress`:
    a bar with ETA on a terminal, a plain line every few seconds otherwise) with the oracle's
    time and ``describe(info)``; it shows nothing derived from the private data beyond the
    release. ``show=False`` shows nothing."""

    def __init__(
        self, name: str, T: int, describe: Callable[[RoundStats], str], show: bool | None
    ) -> None:
        self.describe = describe
        self.on = show is not False
        self.display = Display(T, name, unit="rounds", quiet=not self.on)

    @property
    def callback(self) -> Callable[[RoundStats], None] | None:
        return self.show if self.on else None

    def show(self, info: RoundStats) -> None:
        note = f"oracle {info['respond_s'] * 1e3:.1f} ms  {self.describe(info)}"
        self.display.update(note=note.strip())

    def close(self) -> None:
        self.display.close()
