"""The domain a release from the raw table learns (``dpquery synth --data T.csv --epsilon E
--seed S``, the defaults), written as JSON without the fit: the release's learning draws
first from the run's generator, so this is the ``synth.domain.json`` that command writes.
For byte-stability checks of learning rules that only a release's learning runs (its pool:
the second selection, a small table's finer bounds), across versions of ``src``::

    PYTHONPATH=V/src python benchmarks/release_domains.py OUT_DIR --seed 3 --epsilon 1 \
        [--neighbours replace-one] T1.csv T2.csv ...

writes ``OUT_DIR/<table>.json`` (``<table>.error`` with the message when the learning
refuses); then ``cmp`` the files of two versions.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dpquery.cli import build_parser
from dpquery.errors import DPQueryError
from dpquery.pipeline import learning, run
from dpquery.rng import make_rng


def learned_domain(data: Path, seed: int, epsilon: float, neighbours: str | None) -> str:
    """The JSON of the domain ``synth`` learns for ``data`` (its default flags)."""
    argv = ["synth", "--data", str(data), "--epsilon", str(epsilon), "--seed", str(seed),
            "--out", "/dev/null/never-written.csv", "--quiet"]  # fmt: skip
    if neighbours:
        argv += ["--neighbours", neighbours]
    args = build_parser().parse_args(argv)
    from dpquery.cli.synth import _request  # the flags' request, as synth builds it

    request = _request(args, items=False)
    relation = run._relation(request)
    learned = learning.learn(request, make_rng(request.seed), relation)
    assert learned is not None
    return json.dumps(learned.domain.to_dict(), indent=1, sort_keys=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("tables", type=Path, nargs="+")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--neighbours", default=None)
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    for t in a.tables:
        name = f"{t.parent.name}__{t.stem}"
        try:
            (a.out / f"{name}.json").write_text(learned_domain(t, a.seed, a.epsilon, a.neighbours))
        except (DPQueryError, ValueError) as exc:
            (a.out / f"{name}.error").write_text(str(exc))


if __name__ == "__main__":
    main()
