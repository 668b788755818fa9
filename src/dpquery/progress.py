"""Progress of a long loop (rounds of a game, passes over data), with tqdm.

* on a terminal: tqdm's bar with rate and ETA, redrawn in place;
* when the stream is not a terminal (a log file, a pipe, CI): one plain line every
  ``interval`` seconds (``DualQuery: 120/1783 rounds [00:12<02:31, 9.80 rounds/s]``) and a last
  line when the loop ends, so logs show progress without carriage returns;
* with ``quiet=True``: nothing at all.

Use::

    with Progress(T, "DualQuery", unit="rounds", quiet=quiet) as bar:
        for t in range(T):
            ...
            bar.update()

Progress lines go to stderr by default and depend only on counters and the clock, never on
private data.

:func:`budget_progress` is the display of a loop whose length is not known in advance but
whose end is: an adaptive mechanism that runs until its privacy budget is spent
(adaptive-projection's rounds) shows the percentage of the budget its ledger has charged, a
public quantity (the charges are planned from public sizes and the mechanisms' outputs).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Protocol, TextIO

from tqdm import tqdm


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Progress:
    """A progress display for ``total`` steps (None when unknown); see the module docstring."""

    def __init__(
        self,
        total: int | None,
        desc: str,
        *,
        unit: str = "steps",
        quiet: bool = False,
        stream: TextIO | None = None,
        interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        self.total, self.desc, self.unit = total, desc, unit
        self.stream = sys.stderr if stream is None else stream
        self.quiet, self.interval, self.clock = quiet, interval, clock
        self.n = 0
        self.note = ""  # a short public status shown beside the count (e.g. a round's oracle)
        self._shown: int | None = None  # the count of the last plain line
        self._start = self._last = clock()
        self._bar: tqdm | None = None
        self._closed = False
        if not quiet and _is_terminal(self.stream):
            self._bar = tqdm(total=total, desc=desc, unit=f" {unit}", file=self.stream,
                             dynamic_ncols=True, leave=True)  # fmt: skip

    @property
    def mode(self) -> str:
        """``quiet``, ``bar`` (terminal) or ``lines`` (anything else)."""
        return "quiet" if self.quiet else "bar" if self._bar is not None else "lines"

    def update(self, n: int = 1, note: str | None = None) -> None:
        """``n`` more steps are done; ``note`` replaces the status shown beside the count."""
        self.n += n
        if note is not None:
            self.note = note
        if self._bar is not None:
            if note is not None:
                self._bar.set_postfix_str(note, refresh=False)
            self._bar.update(n)
        elif not self.quiet and self.clock() - self._last >= self.interval:
            self._line()

    def _line(self) -> None:
        now = self.clock()
        self._last, self._shown = now, self.n
        elapsed = now - self._start
        rate = self.n / elapsed if elapsed > 0 else None
        timing = tqdm.format_interval(elapsed)
        count = f"{self.n}"
        if self.total is not None:
            count += f"/{self.total}"
            if rate:  # the ETA at the mean rate so far, as tqdm computes it
                timing += "<" + tqdm.format_interval(max(self.total - self.n, 0) / rate)
        speed = f"{rate:.2f} {self.unit}/s" if rate else f"? {self.unit}/s"
        note = f"  {self.note}" if self.note else ""
        self.stream.write(f"{self.desc}: {count} {self.unit} [{timing}, {speed}]{note}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the display: the bar's last state, or a last plain line (unless quiet)."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif not self.quiet and self._shown != self.n:
            self._line()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Ledger(Protocol):
    @property
    def accountant(self) -> Any: ...

    @property
    def totals(self) -> Any: ...


@contextmanager
def budget_progress(
    desc: str, rho: float, ledger: _Ledger, show: bool | None, *, stream: TextIO | None = None
) -> Iterator[Callable[[dict[str, Any]], None] | None]:
    """An ``on_round`` callback showing the percentage of ``rho`` (zCDP) that ``ledger`` has
    charged (None when ``show`` is False: no display at all). ``show=None`` shows it: a bar
    with ETA on a terminal, a plain line every few seconds elsewhere."""
    if show is False:
        yield None
        return
    with Progress(100, desc, unit="% of budget", stream=stream) as bar:

        def on_round(_info: dict[str, Any]) -> None:
            spent = ledger.accountant.rho(ledger.totals) / rho if rho > 0 else 1.0
            bar.update(max(0, min(100, int(100 * spent)) - bar.n))

        yield on_round
        bar.update(100 - bar.n)  # the run ended: the budget is spent
