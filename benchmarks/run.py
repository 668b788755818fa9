"""Run every benchmark (``make bench``): each ``benchmarks/bench_*.py`` exposes ``main()``.

Usage: ``python benchmarks/run.py [NAME ...]`` (e.g. ``data`` for bench_data.py).
Benchmarks on real data need ``DPQUERY_DATA_DIR`` (the Makefile sets it).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    files = sorted(HERE.glob("bench_*.py"))
    if argv:
        files = [f for f in files if f.stem.removeprefix("bench_") in argv]
    for path in files:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and postponed annotations look it up
        spec.loader.exec_module(module)
        print(f"\n=== {path.stem} ===", flush=True)
        start = time.perf_counter()
        module.main()
        print(f"--- {path.stem}: {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
