"""Progress: plain lines every few seconds when not on a terminal, tqdm's bar with ETA on a
terminal, nothing when quiet. The clock is injected: no test sleeps."""

from __future__ import annotations

import io

import pytest

from dpquery.progress import Progress, budget_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def run(total, steps, dt, stream, clock, **kw):
    with Progress(total, "DualQuery", unit="rounds", stream=stream, clock=clock, **kw) as bar:
        for _ in range(steps):
            clock.t += dt
            bar.update()
    return bar


def test_plain_lines_every_interval_then_a_last_line():
    out, clock = io.StringIO(), Clock()
    bar = run(100, 110, 0.25, out, clock, interval=5.0)  # overruns its total by 10
    assert bar.mode == "lines"
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines == [
        "DualQuery: 20/100 rounds [00:05<00:20, 4.00 rounds/s]",
        "DualQuery: 40/100 rounds [00:10<00:15, 4.00 rounds/s]",
        "DualQuery: 60/100 rounds [00:15<00:10, 4.00 rounds/s]",
        "DualQuery: 80/100 rounds [00:20<00:05, 4.00 rounds/s]",
        "DualQuery: 100/100 rounds [00:25<00:00, 4.00 rounds/s]",
        "DualQuery: 110/100 rounds [00:27<00:00, 4.00 rounds/s]",
    ]


def test_fast_loops_print_only_the_last_line_and_unknown_totals_work():
    out, clock = io.StringIO(), Clock()
    run(None, 30, 0.01, out, clock)
    assert out.getvalue() == "DualQuery: 30 rounds [00:00, 100.00 rounds/s]\n"


def test_quiet_prints_nothing_anywhere():
    for stream in (io.StringIO(), Terminal()):
        bar = run(50, 50, 1.0, stream, Clock(), quiet=True)
        assert bar.mode == "quiet" and stream.getvalue() == ""


def test_terminal_gets_the_tqdm_bar_with_eta():
    term = Terminal()
    bar = run(40, 40, 0.0, term, Clock())
    assert bar.mode == "bar"
    text = term.getvalue()
    assert "\r" in text and "40/40" in text and "DualQuery" in text and "<" in text


def test_close_once_even_on_error():
    out, clock = io.StringIO(), Clock()
    with pytest.raises(RuntimeError), Progress(10, "FEM", stream=out) as bar:
        bar.update(3)
        raise RuntimeError("solver failed")
    bar.close()
    assert out.getvalue().count("\n") == 1 and out.getvalue().startswith("FEM: 3/10 steps")
    with pytest.raises(ValueError, match="interval must be positive"):
        Progress(10, "x", interval=0)
    assert clock.t == 100.0


class _FakeAccountant:
    def rho(self, totals: float) -> float:
        return totals


class _FakeLedger:
    """What budget_progress reads: the accountant's rho of the ledger's totals."""

    accountant = _FakeAccountant()

    def __init__(self) -> None:
        self.totals = 0.0


def test_budget_progress_shows_the_share_of_the_budget_spent():
    out, ledger = io.StringIO(), _FakeLedger()
    with budget_progress("adaptive-projection", 2.0, ledger, None, stream=out) as on_round:
        assert on_round is not None
        for spent in (0.5, 1.0, 1.9):
            ledger.totals = spent
            on_round({})
    # not a terminal, the loop was faster than the interval: one last line, at 100%
    (line,) = out.getvalue().splitlines()
    assert line.startswith("adaptive-projection: 100/100 % of budget [")


def test_budget_progress_is_silent_when_quiet():
    out = io.StringIO()
    with budget_progress("x", 1.0, _FakeLedger(), False, stream=out) as on_round:
        assert on_round is None
    assert out.getvalue() == ""


def test_a_note_is_shown_beside_the_count():
    out, clock = io.StringIO(), Clock()
    with Progress(3, "DualQuery", unit="rounds", stream=out, clock=clock) as bar:
        clock.t += 6.0
        bar.update(note="oracle 1.0 ms  objective 2.0")
    (line, *_) = out.getvalue().splitlines()
    assert line.startswith("DualQuery: 1/3 rounds [") and line.endswith("objective 2.0")
