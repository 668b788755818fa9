"""Run AIM or MST from smartnoise-synth on integer-coded data (the ``peers`` environment).

Runs in the peers interpreter (``DPQUERY_PEERS_PYTHON``, a venv with ``smartnoise-synth``;
see ``pyproject.toml``'s ``peers`` extra), launched by ``bench_utility.py``. The domain is the
public one (each attribute's number of values, passed in), so no budget is spent on
preprocessing and nothing about the domain is read from the data: the mechanisms' own
``AIM``/``MST`` methods are called on an ``mbi`` dataset over that domain, bypassing the
transformer. AIM gets the same workload (marginals over attribute indices) as ours.

Input: an ``.npz`` with ``codes`` (n, g) and ``sizes`` (g,); a JSON list of marginals.
Output: an ``.npz`` with the synthetic ``codes`` (n, g); stdout: a JSON line with the seconds
and the peak resident memory (``ru_maxrss``) of this process.
"""

import argparse
import json
import resource
import time

import numpy as np
import pandas as pd
from mbi import Dataset, Domain
from snsynth.aim import AIMSynthesizer
from snsynth.mst import MSTSynthesizer
from snsynth.utils import cdp_rho


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--input", required=True)
    p.add_argument("--marginals", required=True)
    p.add_argument("--algorithm", choices=("aim", "mst"), required=True)
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    np.random.seed(a.seed)  # noqa: NPY002 (AIM draws its selections from the global generator; its noise is OpenDP's)
    arrays = np.load(a.input)
    codes, sizes = arrays["codes"], arrays["sizes"]
    cols = [f"col{i}" for i in range(codes.shape[1])]
    data = Dataset(pd.DataFrame(codes, columns=cols), Domain(cols, [int(s) for s in sizes]))
    start = time.perf_counter()
    if a.algorithm == "aim":
        with open(a.marginals) as f:
            workload = [tuple(cols[i] for i in m) for m in json.load(f)]
        model = AIMSynthesizer(epsilon=a.epsilon, delta=a.delta, rounds=a.rounds)
        model.rho = cdp_rho(a.epsilon, a.delta)
        model.AIM(data, workload)
        synth = model.synthesizer.synthetic_data(rows=codes.shape[0]).df[cols]
    else:
        model = MSTSynthesizer(epsilon=a.epsilon, delta=a.delta)
        model.MST(data, a.epsilon, a.delta)
        synth = model.undo_compress_fn(model.synthesizer.synthetic_data(rows=codes.shape[0])).df
        synth = synth[cols]
    seconds = time.perf_counter() - start
    np.savez(a.out, codes=synth.to_numpy().astype(np.int64))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak_bytes": peak}))


if __name__ == "__main__":
    main()
