"""Raw-table releases pinned byte for byte, of a table holding none of the written forms
learned from text: no date written with a month's name in any spelling and no number written
with an exponent (text, month and weekday names alone, decimals, counts, ISO dates, common
formats). Recorded from the code before the spellings' cells and the mixed columns'
notation (``docs/learn.md``, "Dates in other spellings", "Mixed columns"): their cells'
noise is drawn from streams of their own and their rules read only noisy counts, so such a
table's learned domain and release are unchanged, under both relations.

Regenerate (only for a deliberate change of outputs): ``python -m tests.test_pinned_raw_forms``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpquery.cli import main

PINNED = {
    "add-remove": "e5fd1fb3ec097305ead5a45829af6d47c9d0d2d4ed870e0b28f54f909292f88a",
    "replace-one": "84b348046dd6f21a95729e3f8a61ad3a713a9951f9fbbee26c2afacb9733e6a9",
}


def table(n: int = 1500, seed: int = 5) -> pd.DataFrame:
    """Text, names of months and weekdays alone, decimals, counts, ISO and M/D/YYYY dates."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "color": rng.choice(["red", "green", "blue"], n),
        "month": rng.choice(["jan", "DEC", "Sept.", "May"], n),
        "weekday": rng.choice(["Mon", "Tuesday", "fri"], n),
        "x": [f"{v:.3f}" for v in rng.lognormal(0, 1, n)],
        "count": [str(v) for v in rng.poisson(40, n)],
        "when": [f"2019-{m:02d}-{d:02d}" for m, d in zip(rng.integers(1, 13, n),
                                                         rng.integers(1, 29, n), strict=True)],
        "us": [f"{m}/{d}/2019" for m, d in zip(rng.integers(1, 13, n), rng.integers(13, 29, n),
                                               strict=True)],
    })  # fmt: skip


def digest(folder: Path, neighbours: str, make: Callable[[], pd.DataFrame] = table) -> str:
    """The SHA-256 of a release of ``make()``'s table and its learned domain."""
    data, out = folder / "T.csv", folder / f"{neighbours}.csv"
    if not data.exists():
        make().to_csv(data, index=False)
    assert main(["synth", "--data", str(data), "--epsilon", "2", "--seed", "11",
                 "--neighbours", neighbours, "--quiet", "--out", str(out)]) == 0  # fmt: skip
    h = hashlib.sha256(out.read_bytes())
    h.update(out.with_suffix(".domain.json").read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize("neighbours", sorted(PINNED))
def test_a_raw_release_without_these_forms_is_byte_identical(
    neighbours: str, tmp_path: Path
) -> None:
    assert digest(tmp_path, neighbours) == PINNED[neighbours]


if __name__ == "__main__":  # print the table above from the current code
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for name in sorted(PINNED):
            print(f"    {name!r}: {digest(Path(d), name)!r},")
