"""A generated table of dates written with the month's English name, for ``docs/learn.md``
("Dates written with a month's name"): ``python benchmarks/make_named_dates.py OUTDIR``
writes ``orders.csv`` and ``letters.csv`` (seeded).

4,000 orders over 2018-2020: ``ordered`` written ``%d %b %Y`` (``05 Feb 2020``), ``shipped``
(``ordered`` plus a few days) written as ``February 7, 2020`` (no leading zero; ``May`` is
both styles), ``amount`` (dollars and cents, lognormal) and ``region`` (four names).

``letters.csv`` ("Dates in other spellings"): 4,000 letters over 2018-2020, the same days,
each written in another spelling: ``sent`` as e-mail writes it (RFC 2822 without the time,
``Mon, 05 Feb 2018``), ``due`` (14 to 60 days later) ``Monday, February 19, 2018``,
``booked`` as Oracle writes it (``05-FEB-18``), ``opened`` in lower case (``5 feb 2018``),
``paid`` in AP style (``Feb. 5, 2018``, ``March 1, 2018``, ``Sept. 4, 2018``), and ``cost``
(dollars and cents)."""

from __future__ import annotations

import csv
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np


def main(out: Path, n: int = 4000, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    start = date(2018, 1, 1)
    growth = np.linspace(1.0, 2.0, 1096)
    ordered = rng.choice(1096, size=n, p=growth / growth.sum())
    path = out / "orders.csv"
    out.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ordered", "shipped", "amount", "region"])
        for i in range(n):
            o = start + timedelta(int(ordered[i]))
            s = o + timedelta(int(rng.geometric(0.3)))
            w.writerow([o.strftime("%d %b %Y"), f"{s.strftime('%B')} {s.day}, {s.year}",
                        f"{rng.lognormal(4, 1):.2f}",
                        ["north", "south", "east", "west"][int(rng.integers(0, 4))]])  # fmt: skip
    return path


AP_MONTHS = ("Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.",
             "Nov.", "Dec.")  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip


def letters(out: Path, n: int = 4000, seed: int = 1) -> Path:
    """``letters.csv``: the days of :func:`main`'s kind, in five other spellings (English
    names written by hand: no locale)."""
    rng = np.random.default_rng(seed)
    start = date(2018, 1, 1)
    growth = np.linspace(1.0, 2.0, 1096)
    sent = rng.choice(1096, size=n, p=growth / growth.sum())
    path = out / "letters.csv"
    out.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sent", "due", "booked", "opened", "paid", "cost"])
        for i in range(n):
            d = start + timedelta(int(sent[i]))
            e = d + timedelta(int(rng.integers(14, 61)))
            o = d + timedelta(int(rng.geometric(0.4)))
            p = o + timedelta(int(rng.geometric(0.1)))
            mon = MONTHS[d.month - 1][:3]
            w.writerow([
                f"{WEEKDAYS[d.weekday()][:3]}, {d.day:02d} {mon} {d.year}",
                f"{WEEKDAYS[e.weekday()]}, {MONTHS[e.month - 1]} {e.day}, {e.year}",
                f"{d.day:02d}-{mon.upper()}-{d.year % 100:02d}",
                f"{o.day} {MONTHS[o.month - 1][:3].lower()} {o.year}",
                f"{AP_MONTHS[p.month - 1]} {p.day}, {p.year}",
                f"{rng.lognormal(4, 1):.2f}",
            ])  # fmt: skip
    return path


if __name__ == "__main__":
    where = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    print(main(where))
    print(letters(where))
