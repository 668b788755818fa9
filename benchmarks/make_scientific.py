"""A generated table of numbers written in scientific notation, for ``docs/learn.md``
("Numbers written in scientific notation"): ``python benchmarks/make_scientific.py OUTDIR``
writes ``assays.csv`` (seeded).

5,000 assays: ``p_value`` (log-normal, ``exp(N(-7, 4))`` capped at 1: about ``10^-8`` to 1,
written ``%.3e``), ``conc`` (a concentration in mol/L, log-normal around ``10^-6``, written
``%.2e``), ``rate`` (a rate constant, log-normal around ``10^-3``, written as pandas writes a
float: its shortest repr, with an exponent only below ``10^-4``, about 12% of the values),
``dose`` (1 to 5) and ``assay`` (four named assays)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np


def main(out: Path, n: int = 5000, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    dose = rng.integers(1, 6, n)
    p = np.minimum(1.0, np.exp(rng.normal(-7.0, 4.0, n) + 0.5 * dose))
    conc = np.exp(rng.normal(np.log(1e-6), 1.5, n)) * dose
    rate = np.exp(rng.normal(np.log(1e-3), 2.0, n))
    assays = ["elisa", "pcr", "western", "flow"]
    path = out / "assays.csv"
    out.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["p_value", "conc", "rate", "dose", "assay"])
        for i in range(n):
            w.writerow([f"{p[i]:.3e}", f"{conc[i]:.2e}", repr(float(rate[i])), int(dose[i]),
                        assays[int(rng.choice(4, p=[0.4, 0.3, 0.2, 0.1]))]])  # fmt: skip
    return path


if __name__ == "__main__":
    print(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
