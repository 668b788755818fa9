"""The thirteenth held-out set's draw: FiveThirtyEight's data repository, one snapshot.

The rule (docs/learn.md, "Held-out tables, a thirteenth set"): every ``.csv`` file of the
snapshot with 1,000 to 100,000 data rows and 4 to 40 columns, both counted with Python's
``csv`` module (the header is the first record; a data row is every later record that is
not empty), sorted by path, shuffled by ``random.Random(20261129).shuffle``. A file whose
data the snapshot does not hold (a blob absent from the mirror, or a Git LFS pointer in
place of the file) cannot be counted; it keeps its place in the order and is skipped there,
a forced skip. The other skips (a folder already taken, a derivative, free text, microdata
of persons, a table of only numbers or only text) are judged from the header and the
folder's README and written in the position table; this script prints what they need.

    python benchmarks/heldout13_draw.py GITDIR [--first N]        # the order, with headers
    python benchmarks/heldout13_draw.py GITDIR --write DIR PATH...  # the kept files, SHA-256

Nothing here reads a value beyond the header row, except to count rows and columns.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import random
import subprocess
from pathlib import Path

SEED = 20261129
ROWS = (1_000, 100_000)
COLS = (4, 40)
LFS_HEAD = b"version https://git-lfs.github.com/spec/"


def git(gitdir: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run one git command on the bare snapshot, bytes out."""
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=check)


def csv_files(gitdir: str) -> list[tuple[str, str]]:
    """Every ``.csv`` path of HEAD's tree with its blob id, sorted by path."""
    out = git(gitdir, "ls-tree", "-r", "HEAD").stdout.decode()
    files = []
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        if path.lower().endswith(".csv"):
            files.append((path, meta.split()[2]))
    return sorted(files)


def blob(gitdir: str, sha: str) -> bytes | None:
    """The blob's bytes, or None when the snapshot does not hold its data."""
    if git(gitdir, "cat-file", "-e", sha, check=False).returncode != 0:
        return None
    data = git(gitdir, "cat-file", "blob", sha).stdout
    return None if data.startswith(LFS_HEAD) else data


def shape(data: bytes) -> tuple[int, int, list[str]]:
    """(data rows, columns, header) read with the csv module; the header is the first record."""
    csv.field_size_limit(2**31 - 1)
    reader = csv.reader(io.StringIO(data.decode("utf-8", errors="replace"), newline=""))
    header = next(reader, [])
    rows = sum(1 for rec in reader if rec)
    return rows, len(header), header


def order(gitdir: str) -> list[tuple[str, str, int | None, int | None, list[str]]]:
    """The eligible files (and the uncountable ones) in the rule's shuffled order."""
    kept = []
    for path, sha in csv_files(gitdir):
        data = blob(gitdir, sha)
        if data is None:
            kept.append((path, sha, None, None, []))
            continue
        rows, cols, header = shape(data)
        if ROWS[0] <= rows <= ROWS[1] and COLS[0] <= cols <= COLS[1]:
            kept.append((path, sha, rows, cols, header))
    random.Random(SEED).shuffle(kept)
    return kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gitdir")
    ap.add_argument("--first", type=int, default=40, help="positions to print")
    ap.add_argument("--write", nargs="+", metavar="DIR PATH", help="DIR, then the PATHs to write")
    a = ap.parse_args()
    head = git(a.gitdir, "rev-parse", "HEAD").stdout.decode().strip()
    if a.write:
        out = Path(a.write[0])
        out.mkdir(parents=True, exist_ok=True)
        for p in a.write[1:]:
            data = git(a.gitdir, "show", f"{head}:{p}").stdout
            (out / Path(p).name).write_bytes(data)
            print(hashlib.sha256(data).hexdigest(), Path(p).name)
        return
    rows = order(a.gitdir)
    absent = sum(r[2] is None for r in rows)
    print(f"commit {head}: {len(rows)} in the order, {absent} of them uncountable (absent)")
    for i, (path, sha, n, c, header) in enumerate(rows[: a.first]):
        size = "absent" if n is None else f"{n} x {c}"
        print(f"{i}\t{path}\t{sha[:7]}\t{size}\t{header}")


if __name__ == "__main__":
    main()
