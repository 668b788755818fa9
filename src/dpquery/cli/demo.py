"""``dpquery demo``: the default release on real data, end to end (what ``make demo`` runs).

Releases Adult (shipped with the package: no data folder, no network) over its public domain
through the pipeline ``dpquery synth`` runs (:mod:`dpquery.pipeline`), with its defaults:
``--algorithm auto`` on the default workload (every 3-way marginal of at most 50,000 cells:
under add/remove neighbours, the default, ``n`` is private), at (1, 1e-9)-DP for add/remove
neighbours. It prints the guarantee, which algorithm ran and why, a
few synthetic records in Adult's own columns and then, labelled NOT PRIVATE (computed on the
private data), the release's errors beside the baselines and how often its records break a
rule every real record keeps (:mod:`dpquery.evaluation.coherence`). The seed is fixed so the
demo is repeatable; real releases take no seed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from dpquery import datasets, pipeline
from dpquery.algorithms.release import Release
from dpquery.algorithms.uniform import uniform_records
from dpquery.cli.summary import error_lines, qualified_guarantee
from dpquery.data.binary import BinaryData
from dpquery.data.decode import decode
from dpquery.data.records import Records
from dpquery.evaluation.coherence import canonical_table, coherence_section
from dpquery.evaluation.release_report import release_report
from dpquery.pipeline.plan import PUBLIC_N_BOUND
from dpquery.pipeline.rows import table_rows
from dpquery.queries import Workload, answer

RECORDS_SHOWN = 5
RULES_SHOWN = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="release a private synthetic Adult with the defaults")
    p.add_argument("--dataset", default="adult", help="built-in dataset (default adult)")
    p.add_argument("--k", type=int, default=3, help="marginal order (default 3)")
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    p.add_argument("--delta", type=float, help="privacy delta (default 1e-9)")
    p.add_argument("--seed", type=int, default=0, help="seed (demo only: fixed for research)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    table, domain = datasets.load_table(args.dataset)
    # n is private under add/remove: its exact value is shown only in the NOT PRIVATE part
    print(f"== {args.dataset} (found: {datasets.source_of(args.dataset)}): "
          f"{len(domain)} attributes -> {domain.d} bits "
          f"({time.perf_counter() - start:.2f} s to read)")  # fmt: skip
    request = pipeline.ReleaseRequest(
        pipeline.Frame(table, domain), options={"epsilon": args.epsilon, "delta": args.delta},
        k=args.k, seed=args.seed, progress=False if args.quiet else None,
    )  # fmt: skip
    fitted = pipeline.fit(request)  # add/remove: delta = 1e-9 unless given, n private
    release, data, workload = fitted.release, fitted.data, fitted.workload
    assert workload is not None  # a table's release is fitted for a workload
    marginals = len(workload.marginals) - 1 if workload.marginals is not None else 0
    print(f"== workload (the default): {marginals} {args.k}-way marginals of at most "
          f"{PUBLIC_N_BOUND:,} cells, {len(workload):,} cells")  # fmt: skip
    privacy = release.privacy()
    print(f"\n== privacy: {qualified_guarantee(privacy)}, {privacy['neighbouring']}")
    print(f"   algorithm: {release.algorithm}, chosen by auto: "
          f"{release.parameters['auto']['reason']}")  # fmt: skip
    print(f"   {release.records.m:,} synthetic records")
    synthetic, _ = table_rows(fitted, domain, pipeline.Output())
    print(f"\n== {RECORDS_SHOWN} of the {len(synthetic):,} synthetic rows (a noisy n, as "
          "`dpquery synth` writes them), numeric columns shown by their public bin:")  # fmt: skip
    shown = canonical_table(synthetic.head(RECORDS_SHOWN), domain)
    print(shown.to_string(index=False))
    _evaluation(args, release, data, workload, table, synthetic)
    return 0


def _evaluation(
    args: argparse.Namespace, release: Release, data: BinaryData, workload: Workload,
    table: pd.DataFrame, synthetic: pd.DataFrame,
) -> None:  # fmt: skip
    """The NOT PRIVATE part: errors beside the baselines, and coherence."""
    assert data.domain is not None  # encoded from the dataset's domain
    report = release_report(release, data, workload, true_answers=answer(workload, data),
                            seed=args.seed)  # fmt: skip
    ev = report["evaluation"]
    print(f"\n== {ev['label']}:")
    # the fit's time depends on the data: it belongs here, not beside the guarantee
    print(f"   the real table: {len(table):,} records; the release took "
          f"{release.timings['total_s']:.1f} s")  # fmt: skip
    rows = [("the release", ev["errors"]["workload"], "the synthetic records above")]
    for line in error_lines(ev, rows):
        print(f"   {line.replace('; it is in the file', '')}")
    coherence = coherence_section(table, synthetic, data.domain, limit=RULES_SHOWN)
    rng = np.random.default_rng(args.seed)
    drawn = uniform_records(data.d, data.onehot_groups, len(synthetic), rng)
    uniform, _ = decode(Records(drawn, None, data.domain), data.domain, seed=rng)
    reference = coherence_section(table, uniform, data.domain)
    print(f"\n   coherence: {coherence['incoherent_fraction']:.1%} of the synthetic rows break at "
          f"least one of {coherence['constraints']} rules that every real record keeps (numeric "
          f"attributes by their bins; {reference['incoherent_fraction']:.1%} of records drawn "
          "uniformly); the most broken:")  # fmt: skip
    for rule in coherence["worst"]:
        print(f"     {rule['violated_fraction']:.1%}  {rule['constraint']}")
