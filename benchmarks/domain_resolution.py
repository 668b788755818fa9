"""How finely a learned domain cuts each numeric column of the real table, two versions side
by side (docs/learn.md, "Points in a band far from 0 in a small table: a gapped run"). NOT
private: it reads the real table, to compare code only.

For each ``T-s<seed>.json`` of ``benchmarks/release_domains.py`` present in both ``BASE``
and ``NEW`` whose learned domains differ, and each numeric column whose edges differ: the
largest share of the real values in one learned bin (values outside the edges in the end
bins), and the KS statistic between the real values and the same values each drawn
uniformly inside its bin (seeded): what a release that measured every bin exactly and
decoded it uniformly would score on that column alone. Prints one row per column.

    python benchmarks/domain_resolution.py BASE NEW T1.csv T2.csv ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp


def resolution(edges: list[float], v: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """The largest bin's share of ``v`` and the KS of ``v`` against its bin-uniform draw."""
    e = np.asarray(edges, dtype=np.float64)
    b = np.clip(np.searchsorted(e, v, side="right") - 1, 0, e.size - 2)
    largest = float(np.bincount(b).max() / v.size)
    u = np.random.default_rng(seed).uniform(e[b], e[b + 1])
    return largest, float(ks_2samp(v, u).statistic)


def main(base: str, new: str, tables: list[str]) -> None:
    paths = {Path(t).stem: Path(t) for t in tables}
    for f in sorted(Path(new).glob("*.json")):
        g = Path(base) / f.name
        stem = f.stem.rsplit("-s", 1)[0]
        if not g.exists() or stem not in paths:
            continue
        x, y = json.loads(g.read_text()), json.loads(f.read_text())
        if x == y or "domain" not in x or "domain" not in y:
            continue
        real = pd.read_csv(paths[stem], dtype=str, keep_default_na=False)
        pairs = zip(x["domain"]["attributes"], y["domain"]["attributes"], strict=True)
        for a, b in pairs:
            if a == b or a.get("type") != "numeric" or b.get("type") != "numeric":
                continue
            v = pd.to_numeric(real[a["name"]], errors="coerce").dropna().to_numpy(np.float64)
            if v.size == 0:
                continue
            (la, ka), (lb, kb) = resolution(a["edges"], v), resolution(b["edges"], v)
            print(f"| {f.stem} | {a['name']} | {len(a['edges']) - 1} in [{a['edges'][0]:g}, "
                  f"{a['edges'][-1]:g}] | {la:.2f} | {ka:.3f} | {len(b['edges']) - 1} in "
                  f"[{b['edges'][1]:g}, {b['edges'][-2]:g}] | {lb:.2f} | {kb:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
