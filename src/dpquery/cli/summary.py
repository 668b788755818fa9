"""What ``dpquery synth`` prints: the publishable account of a release on stdout, the
guarantee asked for first, and the curator's NOT PRIVATE evaluation under its label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpquery.backends.partitioned import describe_partitions
from dpquery.cli.output import describe_output
from dpquery.cli.report import describe_coherence
from dpquery.evaluation.wide import describe_wide
from dpquery.privacy.ledger import NOT_PRIVATE, SEEDED, Guarantee


def asked_guarantee(budget: dict[str, Any]) -> str:
    """The guarantee the user asked for, in one phrase: ``(1, 2.0e-09)-DP``."""
    if budget["measure"] == "zcdp":
        return f"rho = {budget['rho']:g} zCDP"
    if budget["measure"] == "pure" or not budget["delta"]:
        return f"({budget['epsilon']:g}, 0)-DP (pure)"
    return f"({budget['epsilon']:g}, {budget['delta']:.1e})-DP"


def qualified_guarantee(privacy: dict[str, Any]) -> str:
    """The guarantee asked for (:func:`asked_guarantee`), said with what it does not cover:
    NOT PRIVATE first when the domain was read from the data, and, with a seed, that it does
    not hold against anyone who knows the seed (:class:`~dpquery.privacy.ledger.Guarantee`)."""
    asked = asked_guarantee(privacy["budget"])
    if "seeded" in privacy:
        asked += f" ({SEEDED})"
    if any(g.get("not_private") for g in privacy["guarantees"]):
        return f"{NOT_PRIVATE} (accounted as {asked}, which would hold for a public domain)"
    return asked


def learned_lines(learned: dict[str, Any], privacy: dict[str, Any]) -> list[str]:
    """A domain learned from the data (the report's ``domain``): what was learned, and
    what it cost on the run's ledger and in delta."""
    b, kinds, spent = learned["budget"], learned["kinds"], learned["spent_rho"]
    release = learned.get("release_rho", b["release_rho"])  # with the weights' part, if moved
    moved = release - b["release_rho"]
    split = privacy["delta_split"]
    lines = [
        f"domain: learned from the data at rho={b['learn_rho']:.4g} ({b['share']:.0%} of the "
        f"budget's rho={b['rho']:.4g}): {kinds['categorical']} categorical, "
        f"{kinds['numeric']} numeric columns"
        + (f" ({kinds['date']} of them dates)" if kinds.get("date") else "")
        + (
            f" ({kinds['public']} of them from the public domain given, at no cost)"
            if kinds.get("public")
            else ""
        )
        + "; docs/learn.md",
        f"  cost: rho={spent:.4g} charged on the run's ledger before the release drew "
        f'("domain learning: ..." in the report\'s account), and delta '
        f"{split['partition_selection']:.3g} of its category selections besides it; the "
        f"release spent the rest, rho={release:.4g} ({release / b['rho']:.0%}); delta "
        f"= {split['ledger']:.3g} (ledger) + {split['partition_selection']:.3g} (selections)",
    ]
    if moved > 1e-6 * b["learn_rho"]:  # not a float's residue
        lines.append(f"  the decoding weights' part and the second selection's unused pool, "
                     f"rho={moved:.3g}, went to the release (weights when no column gets them "
                     "at this size, the pool what no column needed; docs/learn.md)")  # fmt: skip
    if -moved > 1e-6 * b["learn_rho"]:  # a loan (spent on the second selection)
        lines.append(f"  borrowed: rho={-moved:.3g} of the release's share (net of the parts "
                     "returned to it), spent on a second selection of the categories too rare "
                     "for the first (a small table's loan, or a table's whose column left "
                     "out many records; docs/learn.md)")  # fmt: skip
    unspent = b["learn_rho"] - spent - moved
    if unspent > 1e-6 * b["learn_rho"]:
        lines.append(f"  unspent: rho={unspent:.3g} of the learning's share (a column found "
                     "to be a code spends no more on it; the decoding weights' part is left "
                     "when none is drawn; docs/learn.md)")  # fmt: skip
    lines += [f"  note: {note}" for note in learned.get("notes", [])]
    within = learned.get("within")
    if within and within["sub_bins"]:
        cols = ", ".join(f"{n} ({k} per bin)" for n, k in within["sub_bins"].items())
        lines.append(f"  decoding weights: rho={within['rho']:.4g} of it on noisy sub-bin "
                     f"histograms (sigma={within['sigma']:.3g}): {cols}")  # fmt: skip
    return lines


def universe_lines(universe: dict[str, Any], privacy: dict[str, Any]) -> list[str]:
    """An item universe learned from the data (the report's ``universe``): what was
    learned, and what it cost on the run's ledger and in delta."""
    b, split = universe["budget"], privacy["delta_split"]
    return [
        f"item universe: learned from the data at rho={b['learn_rho']:.4g} ({b['share']:.0%} "
        f"of the budget's rho={b['rho']:.4g}): a partition selection over the item ids, each "
        f"user's items cut to a random subset of at most s={universe['bound']}, noise sd "
        f"{universe['sigma']:.3g} (L2 sensitivity {universe['sensitivity']:.3g}), threshold "
        f"{universe['threshold']:,}; {universe['released']:,} ids released; docs/wide.md",
        f"  cost: rho={b['learn_rho']:.4g} charged on the run's ledger before the selection "
        f'drew ("item universe: ..." in the report\'s account), and delta '
        f"{split['partition_selection']:.3g} of its tail besides it; the release spent the "
        f"rest, rho={universe['release_rho']:.4g}; delta = {split['ledger']:.3g} (ledger) + "
        f"{split['partition_selection']:.3g} (selection)",
    ]


# Why a run that learned its domain may leave part of the budget unspent.
LEARNING_UNSPENT = (
    "the domain learning's unspent rho (above), and any rounds of the release that would not "
    "fit whole"
)
# Why an algorithm may leave part of the budget unspent (its rounds come whole).
UNSPENT_REASON = (
    "the algorithm's rounds come whole, and one more would exceed the budget; ask for fewer "
    "rounds or a larger step to spend it"
)


def summary(
    report: dict[str, Any], out: Path, rows: int, quiet: bool, domain: Path | None = None
) -> None:
    """The publishable account on stdout, the guarantee asked for first (nothing with
    ``--quiet``): the domain learned and its cost (written to ``domain``), what ran and why,
    what was written to ``out``, then the other accountants."""
    if quiet:
        return
    rel = report["release"]
    privacy, p = rel["privacy"], rel["parameters"]
    budget = privacy["ledger_budget"] if "ledger_budget" in privacy else privacy["budget"]
    print(f"privacy: {qualified_guarantee(privacy)}, {privacy['neighbouring']}")
    if "domain" in rel:
        for line in learned_lines(rel["domain"], privacy):
            print(line)
        if domain is not None:
            print(f"  wrote the domain to {domain}: give it as --domain to release again at "
                  "no further cost")  # fmt: skip
    if "universe" in rel:
        for line in universe_lines(rel["universe"], privacy):
            print(line)
        if domain is not None:
            print(f"  wrote the {rel['universe']['released']} item ids released to {domain}: "
                  "give it as --item-list to release again at no further cost")  # fmt: skip
    if "auto" in p:
        print(f"algorithm: {rel['algorithm']}, chosen by auto: {p['auto']['reason']}")
    else:
        print(f"algorithm: {rel['algorithm']} (--algorithm)")
    shown = _shown_parameters(p)
    if shown:
        print(f"  parameters: {shown}")
    print(f"wrote {rows} rows to {out}: {describe_output(rel['output'], rel['d'])}")
    _columns_summary(rel.get("columns", {}))
    limit = budget["rho"] if budget["measure"] == "zcdp" else budget["epsilon"]
    unit = "rho" if budget["measure"] == "zcdp" else "epsilon"
    remaining = privacy["remaining"]
    if isinstance(remaining, float | int) and remaining > 1e-6 * limit:
        reason = LEARNING_UNSPENT if "domain" in rel else UNSPENT_REASON
        print(f"unspent: {remaining:.3g} of {unit} {limit:g} ({remaining / limit:.0%}): "
              f"{reason}")  # fmt: skip
    print("other accountants (the same run, proved in other measures):")
    for g in privacy["guarantees"]:
        print(f"  {Guarantee.from_dict(g).describe()}")
    print(f"noise: {rel['randomness']['bit_generator']} ({rel['randomness']['note']})")
    backend = report.get("backend", {})
    if backend.get("name") == "dask":
        print(f"backend: dask, {describe_partitions(backend)}")


def _shown_parameters(p: dict[str, Any]) -> str:
    if "base" in p:  # reweighted: the base's parameters, then MWEM's share and rounds
        p = {**p["base"], "reweight": p["fraction"], "mwem_T": p["mwem"]["T"]}
    keys = ("T", "s", "eta", "epsilon0", "mode", "reweight", "mwem_T", "records")
    return ", ".join(f"{k}={p[k]:g}" if isinstance(p[k], float) else f"{k}={p[k]}"
                     for k in keys if k in p)  # fmt: skip


def _columns_summary(columns: dict[str, Any]) -> None:
    unmeasured = [k for k, v in columns.get("sources", {}).items() if v.startswith("not measured")]
    if "share" in columns:
        print(f"columns: {columns['measured']} no query touches, measured as 1-way "
              f"marginals ({columns['share']:.0%} of the budget)")  # fmt: skip
    elif columns.get("measured"):
        print(f"columns: all {columns['measured']} measured as 1-way marginals")
    if unmeasured:
        print(f"columns: {', '.join(unmeasured)} not measured: no information about the data")
    refined = columns.get("refined", {})
    if refined:
        costs = ", ".join(f"{k} (rho={v['rho']:.3g}, {v['share']:.1%} of rho)"
                          for k, v in refined.items())  # fmt: skip
        print(f"columns: re-measured, their noisy 1-way marginals estimated past the target: "
              f"{costs}")  # fmt: skip


BASELINE_MEANING = {
    "zeros": "one all-zero record; reads no data",
    "uniform": "the uniform distribution over the domain; reads no data",
}


def evaluation_summary(ev: dict[str, Any], path: Path | None, quiet: bool) -> None:
    """The evaluation's numbers, on stdout, under their NOT PRIVATE label, each baseline
    explained (nothing with ``--quiet``: they are in the file)."""
    if quiet:
        return
    print(f"{ev['label']} (written to {path}):")
    if "backend_s" in ev["timings"]:
        print(f"  backend: {ev['timings']['backend_s']:.1f} s computing true answers")
    if "total_s" in ev["timings"]:
        print(f"  time: {ev['timings']['total_s']:.1f} s to release (its steps read the data)")
    rows = [("release", ev["errors"]["workload"], "the synthetic records, on the workload")]
    if "fresh_workload" in ev["errors"]:
        rows.append(("fresh workload", ev["errors"]["fresh_workload"],
                     "the records, on queries drawn afresh"))  # fmt: skip
    for line in error_lines(ev, rows):
        print(f"  {line}")
    print(f"  {describe_coherence(ev.get('coherence'))}")


def error_lines(ev: dict[str, Any], rows: list[tuple[str, dict[str, Any], str]]) -> list[str]:
    """The error table of an evaluation (``rows``: the release's, then the baselines'), the
    mean total variation per marginal first: a mean over cells shrinks with their number,
    whatever the release. The Laplace-per-query baseline is said in one line, not shown as a
    row: its noise grows with the number of queries and would dwarf the table."""
    errors = rows[0][1]
    if "mean_tv" in errors:
        lines = [f"errors as fractions of records: mean TV, the total variation between the "
                 f"released and the true table of each of the workload's "
                 f"{errors['n_marginals']:,} marginals (0: identical, 1: disjoint), averaged; "
                 f"max/mean error, |released - true| per cell, over its {errors['n_queries']:,} "
                 "cells"]  # fmt: skip
    else:
        lines = [f"errors as fractions of records: |released - true| per query, over its "
                 f"{errors['n_queries']:,} queries"]  # fmt: skip
    width = max(16, *(len(name) + 2 for name, _, _ in rows))
    lines.append(f"{'':<{width}}{'mean TV':>9}{'max error':>11}{'mean error':>12}  what it is")
    rows = rows + [(f"{k} baseline", v, BASELINE_MEANING[k]) for k, v in ev["baselines"].items()
                   if k in BASELINE_MEANING]  # fmt: skip
    for name, e, meaning in rows:
        tv = f"{e['mean_tv']:>9.4f}" if "mean_tv" in e else f"{'-':>9}"
        lines.append(f"{name:<{width}}{tv}{e['max_error']:>11.4f}{e['mean_error']:>12.4f}  "
                     f"{meaning}")  # fmt: skip
    laplace = ev["baselines"].get("laplace")
    if laplace is not None:
        lines.append(f"(not shown: the Laplace baseline, each of the {laplace['n_queries']:,} "
                     f"queries answered with its own noise at epsilon {laplace['epsilon']:g}, "
                     "noise that grows with the number of queries: mean error "
                     f"{laplace['mean_error']:.3g}, useless; it is in the file)")  # fmt: skip
    return lines


def items_evaluation_summary(evaluation: dict[str, Any], path: Path | None, quiet: bool) -> None:
    """Item data's wide measures (NOT private), and where they were written."""
    if not quiet:
        print(f"{describe_wide(evaluation)}\n(written to {path})")
