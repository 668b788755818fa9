"""Draw the breadth sweep's sample of CSVs from a bare git snapshot (docs/learn.md,
"A breadth sweep of unseen CSVs").

Every ``.csv`` whose blob is present, read with the ``csv`` module alone; 1,000 to 200,000
data rows and 3 to 60 columns; sorted by path, shuffled with a fixed seed, the first 40
taken, skipping a file whose header and row count match one already taken. ``--offset K``
takes positions ``K`` to ``K + 39`` of that order instead (the same skipping, counted over
the whole order), named by their position (``p40_...`` for ``--offset 40``).

    python benchmarks/sweep_sample.py GIT_DIR OUT_DIR [--offset 40] > sample.md
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import subprocess
import sys
from pathlib import Path

SEED = 20261130
TAKE = 40


def _blob(git_dir: str, sha: str) -> bytes | None:
    if subprocess.run(["git", "--git-dir", git_dir, "cat-file", "-e", sha]).returncode:
        return None  # absent from the snapshot
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "cat-file", "blob", sha], capture_output=True
    )
    return out.stdout


def main(git_dir: str, out_dir: str, offset: int = 0) -> None:
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "-l", "HEAD"], capture_output=True, text=True
    ).stdout
    paths = []
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        if path.lower().endswith(".csv"):
            paths.append((path, meta.split()[2]))
    paths.sort()
    info: dict[str, tuple[tuple[str, ...], int, str, bytes]] = {}
    for path, sha in paths:
        raw = _blob(git_dir, sha)
        if raw is None:
            continue
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        try:
            rows = list(csv.reader(io.StringIO(text)))
        except csv.Error:
            continue
        if not rows:
            continue
        n = len(rows) - 1
        if 1000 <= n <= 200000 and 3 <= len(rows[0]) <= 60:
            info[path] = (tuple(rows[0]), n, hashlib.sha256(raw).hexdigest(), raw)
    eligible = sorted(info)
    random.Random(SEED).shuffle(eligible)
    taken: list[str] = []
    seen: set[tuple[tuple[str, ...], int]] = set()
    for path in eligible:
        key = (info[path][0], info[path][1])
        if key in seen:
            continue
        seen.add(key)
        taken.append(path)
        if len(taken) == offset + TAKE:
            break
    taken = taken[offset:]
    print(f"{len(paths)} csv; {len(eligible)} eligible", file=sys.stderr)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    listing_rows = []
    for i, path in enumerate(taken, start=offset):
        header, n, digest, raw = info[path]
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        name = "".join(c if c.isalnum() or c in "_-" else "_" for c in f"p{i:02d}_{stem}")[:40]
        (out / f"{name}.csv").write_bytes(raw)
        listing_rows.append(
            {"path": path, "name": name, "rows": n, "cols": len(header), "sha256": digest}
        )
        print(f"| {i} | `{path}` | {name} | {n:,} x {len(header)} | {digest[:16]} |")
    (out / "sample.json").write_text(json.dumps(listing_rows, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--offset", type=int, default=0, help="the first position taken")
    args = parser.parse_args()
    if args.offset < 0:
        parser.error(f"--offset must be 0 or more, got {args.offset}")
    main(args.git_dir, args.out_dir, args.offset)
