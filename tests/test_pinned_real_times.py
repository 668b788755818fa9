"""Raw-table releases pinned byte for byte, of a table whose dates are written with real
times of day (ISO 8601 to the minute and to the second, ``M/D/YYYY H:MM`` hourly from
midnight, ``D.M.YYYY H:MM:SS``; each holds some values at midnight) beside dates without a
time. Recorded from the code before the midnight cells (``docs/learn.md``, "A time that is
always midnight"): their noise is drawn from a stream of their own and their rule reads only
noisy counts, so such a table's learned domain and release are unchanged, under both
relations.

Regenerate (only for a deliberate change of outputs): ``python -m tests.test_pinned_real_times``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests import test_pinned_raw_forms as raw_forms

PINNED = {
    "add-remove": "b0772439190204727fecdf3f23d2fdc9930c2905c87410a78f4692623b9495d4",
    "replace-one": "59e878a5f937b1c3bc877f3b324b4607ee44ad5873fad00169bf04fe810977f9",
}


def table(n: int = 2000, seed: int = 7) -> pd.DataFrame:
    """Four columns of times of day, two of dates, a category and an amount."""
    rng = np.random.default_rng(seed)
    start = dt.datetime(2018, 1, 1)
    secs = rng.integers(0, 2 * 365 * 86400, n)
    stamps = [start + dt.timedelta(seconds=int(s)) for s in secs]
    hours = [start + dt.timedelta(hours=i) for i in range(n)]
    return pd.DataFrame({
        "iso_min": [t.strftime("%Y-%m-%d %H:%M") for t in stamps],
        "iso_sec": [t.strftime("%Y-%m-%dT%H:%M:%S") for t in stamps],
        "hourly": [f"{t.month}/{t.day}/{t.year} {t.hour}:00" for t in hours],
        "de": [f"{t.day}.{t.month}.{t.year} {t.hour}:{t.minute:02d}:{t.second:02d}"
               for t in stamps],
        "day": [t.strftime("%Y-%m-%d") for t in stamps],
        "us": [f"{t.month}/{t.day}/{t.year}" for t in stamps],
        "kind": rng.choice(["a", "b", "c"], n),
        "amount": [f"{v:.2f}" for v in rng.lognormal(3, 1, n)],
    })  # fmt: skip


def digest(folder: Path, neighbours: str) -> str:
    return raw_forms.digest(folder, neighbours, table)


@pytest.mark.parametrize("neighbours", sorted(PINNED))
def test_a_raw_release_with_real_times_is_byte_identical(neighbours: str, tmp_path: Path) -> None:
    assert digest(tmp_path, neighbours) == PINNED[neighbours]


if __name__ == "__main__":  # print the table above from the current code
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for name in sorted(PINNED):
            print(f"    {name!r}: {digest(Path(d), name)!r},")
