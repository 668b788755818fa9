"""``dpquery privacy synth``: what ``dpquery synth`` with the same flags would spend.

From the public shape alone (``--dataset``, whose domain and row count are public,
``--domain`` with ``--n``, or item data's ``--n`` with ``--items``), it plans the run on a
:class:`~dpquery.data.shape.PublicShape` and prints every charge stage by stage: the
measurement of the attributes no workload query touches (which, and their share), the
algorithm's charges, ``auto``'s choice and its pre-release warning, adaptive-projection's
column refinement (its cap: the amount is decided from the noisy 1-way marginals, so no plan
can know it), the guarantee asked for first and the other accountants after. No data is read.

With ``--n`` alone (a raw table, no domain), it plans the split of a run that learns its
domain (:mod:`dpquery.pipeline.learning`): the share of rho the learning spends, the delta
of its category selections, and what remains for the release, whose charges depend on the
learned domain (plan them with ``--domain`` once it is written).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpquery import datasets
from dpquery.algorithms.auto import AutoPlan
from dpquery.algorithms.columns import ColumnsPlan, column_sources
from dpquery.algorithms.marginal.adaptive_projection import AdaptivePlan
from dpquery.algorithms.marginal.spelling_style import STYLE_SIGMAS
from dpquery.algorithms.wide import measure
from dpquery.algorithms.wide.core import BOUND_FIRST, HEAD_PAIR_BOUND, PROBE_SHARE, TAIL_BOUND
from dpquery.algorithms.wide.measure import pick_epsilon
from dpquery.algorithms.wide.release import head_mode_rule, head_threshold_share, noise_warning
from dpquery.cli import synth
from dpquery.cli.common import flag_errors
from dpquery.cli.release_flags import add_learn_items_args, add_learning_args, add_release_args
from dpquery.data.domain import Domain
from dpquery.data.raw_items import read_item_list
from dpquery.data.shape import PublicShape
from dpquery.domain_learning import (
    CAP_SIGMAS,
    DEFAULT_DOMAIN_SHARE,
    LARGE_BORROW_SHARE,
    LARGE_OTHER_SHARE,
    LEARNING_NOISY_N_SHARE,
    MIN_CATEGORY_SHARE,
    MIN_SMALL_SHARE,
    PROFILE_SHARE,
    SECOND_SHARE,
    SECOND_TAIL_SHARE,
    SMALL_BORROW_SHARE,
    WITHIN_SHARE,
    forms_plan,
    lattice_plan,
    membership_plan,
    size_limits,
)
from dpquery.errors import DPQueryError
from dpquery.pipeline.learning import epsilon_share, large_borrow_rho, run_budget
from dpquery.pipeline.plan import public_n, relation_of, workloads
from dpquery.pipeline.universe import (
    DEFAULT_UNIVERSE_BOUND,
    DEFAULT_UNIVERSE_SHARE,
    SELECTION,
    UNIVERSE_STAGE,
    check_bound,
    check_universe_share,
    universe_plan,
)
from dpquery.privacy import ZCDP, Ledger
from dpquery.privacy.neighbours import ADD_REMOVE, NOISY_N, NOISY_N_SHARE, noisy_n_rho
from dpquery.privacy.neighbours import describe as describe_relation
from dpquery.rng import make_rng

PLAN_COLUMNS = (6, 12, 24)
"""Column counts the plan states the small-table limits for (it reads no data)."""

NOISY_N_NOTE = (
    f": the run reads no n; it draws a noisy n first ({NOISY_N_SHARE:.0%} of rho, charged "
    "below) and plans on it, so the plan below is for a noisy n near the n given here"
)


def register(algs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    plan = algs.add_parser(
        "synth",
        help="what `dpquery synth` with the same flags would spend, stage by stage",
        description="Plan a `dpquery synth` run from the public domain and n: every charge, "
        "stage by stage, and the guarantee; from n alone (a raw table, its domain learned), "
        "the learning's share and what remains for the release. Reads no data.",
    )
    g = plan.add_argument_group("public shape (--dataset, or --domain with --n)")
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset: its domain and n")
    g.add_argument("--domain", type=Path, metavar="DOMAIN.json", help="the public domain")
    g.add_argument("--n", type=int, help="number of records (public)")
    g.add_argument("--items", type=int, metavar="D",
                   help="item data (synth --transactions): its number of items")  # fmt: skip
    g.add_argument("--item-list", type=Path, metavar="FILE",
                   help="item data from a raw user x item CSV: its public item list (one id "
                   "per line), whose length is the number of items")  # fmt: skip
    add_release_args(plan)
    add_learning_args(plan)
    add_learn_items_args(plan)
    plan.add_argument("--seed", type=int, help="seed of a generated random workload")
    plan.add_argument("--json", action="store_true", help="print one JSON object")
    # synth's --data, taken here only to refuse it: argparse would otherwise read it as an
    # abbreviation of --dataset and report the file as an unknown built-in dataset
    plan.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    plan.set_defaults(func=_synth_plan, quiet=True)


def _shape(args: argparse.Namespace) -> PublicShape:
    if (args.dataset is None) == (args.domain is None):
        raise DPQueryError("give --dataset NAME, or --domain DOMAIN.json with --n N (or --n "
                           "N alone: a raw table, its domain learned)")  # fmt: skip
    if args.dataset is not None:
        n = args.n if args.n is not None else datasets.info(args.dataset).rows
        return PublicShape(n, datasets.domain(args.dataset))
    if args.n is None:
        raise DPQueryError("--domain needs --n, the public number of records")
    return PublicShape(args.n, Domain.load(args.domain))


def _items_plan(args: argparse.Namespace) -> int:
    """The plan of ``synth`` on item data of ``--n`` records over ``--items`` items: the wide
    release's three measurements, its bounds and the guarantee (``auto`` runs it there)."""
    if args.n is None or args.dataset is not None or args.domain is not None:
        raise DPQueryError("item data is planned from --n N and --items D (no domain)")
    if args.items < 1 or args.n < 1:
        raise DPQueryError(f"--n and --items must be positive, got {args.n} and {args.items}")
    chosen = args.algorithm == "auto"
    if chosen:
        args.algorithm = "wide"
    if args.algorithm != "wide":
        raise DPQueryError(f"item data is planned for the wide release, not {args.algorithm}")
    synth.estimator(args, None)
    options = synth.budget_rule(args, args.n)
    model = synth.estimator(args, None, options)
    plan = model.plan(_Sizes(args.n, args.items))
    ledger = Ledger(plan.budget, model.plan_accountant(plan))
    for c in plan.charges():
        ledger.charge(c.mechanism, c.cost, count=c.count)
    report = ledger.report()
    p = plan.parameters
    bounds: dict[str, Any] = {"s": p.s, "s2": p.s2, "K": p.K}
    if p.grid:  # chosen privately from the grid (the plan's s only decides the mode)
        bounds.update(s=None, s_grid=list(p.grid), s_quantile=p.quantile)
    rule = head_mode_rule(plan, args.n)
    if args.json:
        print(json.dumps({
            "algorithm": "wide", "n": args.n, "items": args.items, "auto": chosen,
            "mode": p.mode, "rule": rule, "bounds": bounds, "budget": plan.budget.to_dict(),
            "charges": [c.to_dict() for c in report.per_mechanism],
            "switch": list(p.switch),
            "head_charges": [c.mechanism for c in plan.head_charges()],
            "planned_spend": report.spent,
            "guarantees": [g.to_dict() for g in report.guarantees],
        }, indent=2, default=str))  # fmt: skip
        return 0
    print(f"dpquery synth --algorithm wide{' (chosen by auto)' if chosen else ''}: n={args.n} "
          f"records x {args.items} items; no data read")  # fmt: skip
    print(f"  budget: {plan.budget.describe()}")
    print(f"  mode: {p.mode} ({rule})")
    cut = "sqrt(s)" if p.neighbours == ADD_REMOVE else "sqrt(2s)"  # the cut item counts' L2
    if p.mode == "head":
        share = head_threshold_share(plan, args.n)
        kept = (
            f"where some picked count clears every noise draw (an item held by {share:.0%} of "
            "the records or more), each nonnegative count kept at its James-Stein estimate; "
            "weights exp(epsilon_0 c), the counts monotone under add/remove"
            + (
                f"; the unpicked items each record holds, cut at {TAIL_BOUND} (sensitivity "
                f"{TAIL_BOUND}), their total spread thin over them"
                if p.tail_rho() > 0
                else ""
            )
            + (
                (
                    f"; the picks' pairs over each record's {HEAD_PAIR_BOUND} picks of smallest "
                    f"keyed hash (sensitivity sqrt(C({HEAD_PAIR_BOUND}, 2)))"
                    if HEAD_PAIR_BOUND > 0
                    else "; the picks' pairs, each record's weighted 1 / sqrt(C(a, 2)) for its "
                    "a picks (L2 norm 1: sensitivity 1, the Gaussian mechanism)"
                )
                + ", the fit following them"
                if p.head_pairs_rho() > 0
                else ""
            )
            if p.neighbours == ADD_REMOVE
            else f"a picked item is kept where its count clears every noise draw, held by "
            f"{share:.0%} of the records or more"
        )
        print(f"  the k={p.K} commonest items picked one at a time by the exponential mechanism "
              f"(sensitivity 1, epsilon_0={pick_epsilon(p.rhos()[0], p.K):.4g} each), counted "
              f"whole (sensitivity sqrt(k)); the number of picked items per record (sqrt 2); "
              f"{kept}")  # fmt: skip
    elif p.mode == BOUND_FIRST:
        head = f"the head mode on the rest (k={p.picks} items picked, counted whole)"
        where = [f"if s is one of {list(p.switch)}, {head}"] * bool(p.switch) + [
            f"if s is one of {list(p.probe)}, the (k + 1)-th largest whole item count "
            f"(k = {p.picks}) first (sensitivity 1, {PROBE_SHARE:.0%} of the rho after the "
            f"bound), then {head} where it is below the sparse mode's keep level at s"
        ] * bool(p.probe)
        print(f"  contribution bound s chosen from {list(p.grid)} as the record lengths' "
              f"{p.quantile:g}-quantile by the exponential mechanism, first (rank utility, "
              f"sensitivity 1; {p.bound_rho() / p.rho:.0%} of rho); {'; '.join(where)}; else "
              f"the sparse mode at s (count sensitivity {cut}), pairs among the K={p.K} "
              f"largest noisy counts, s2=min({p.s2}, s) of them per record")  # fmt: skip
    elif p.grid:
        print(f"  contribution bound s chosen from {list(p.grid)} as the record lengths' "
              f"{p.quantile:g}-quantile by the exponential mechanism (rank utility, "
              f"sensitivity 1; {p.bound_rho() / p.rho:.0%} of rho), before the cut (count "
              f"sensitivity {cut}); pairs among the K={p.K} largest noisy counts, "
              f"s2=min({p.s2}, s) of them per record")  # fmt: skip
    else:
        print(f"  contribution bound s={p.s} items per record (count sensitivity {cut}); "
              f"pairs among the K={p.K} largest noisy counts, s2={p.s2} of them per "
              "record")  # fmt: skip
    if p.lengths_rho() > 0:  # the top-up's lengths: one cell a record
        one = "1" if p.neighbours == ADD_REMOVE else "sqrt 2"
        print(f"  the records that reached the cut topped up after the fit, from a histogram of "
              f"the whole records' lengths (no cut; sensitivity {one}, "
              f"{p.lengths_rho() / p.rho:.1%} of rho; docs/wide.md)")  # fmt: skip
    warning = noise_warning(plan, args.n)
    if warning:
        print(f"  warning: {warning}")
    print("  charges planned before any data is read:")
    for m in report.per_mechanism:
        if m.rho is not None:
            print(f"    {m.mechanism}: {m.invocations} x, total rho={m.rho:.6g}")
        else:  # the picks: epsilon-bounded range, epsilon^2 / 8 zCDP each (Cesar and Rogers)
            each = (m.epsilon or 0.0) / max(m.invocations, 1)
            print(f"    {m.mechanism}: {m.invocations} x epsilon={each:.6g} (bounded range), "
                  f"total rho={m.invocations * each**2 / 8:.6g}")  # fmt: skip
    if p.mode == BOUND_FIRST:  # the other branch, the same rho after the bound
        print("  or, where the bound drawn takes the head mode, after it instead:")
        for c in plan.head_charges():
            if c.mechanism == measure.PROBE:  # the probe, before the head mode's charges
                print(f"    {c.mechanism}: 1 x, rho={c.cost.rho:.6g}")
        eps0 = pick_epsilon(p.head_branch().rhos()[0], p.picks)
        print(f"    {measure.PICKS}: {p.picks} x epsilon={eps0:.6g} (bounded range), total "
              f"rho={p.picks * eps0**2 / 8:.6g}")  # fmt: skip
        for c in plan.head_charges():
            if c.mechanism not in (measure.PICKS, measure.PROBE):
                print(f"    {c.mechanism}: 1 x, rho={c.cost.rho:.6g}")
    for g in report.guarantees:
        print(f"  {g.describe()}")
    return 0


@dataclass(frozen=True)
class _Sizes:
    """The public sizes of item data."""

    n: int
    d: int


def _learning_plan(args: argparse.Namespace) -> int:
    """The split of ``synth`` on a raw table of ``--n`` records whose domain is learned:
    the learning's share of rho, the selections' delta, what remains for the release."""
    synth.check_budget_given(args)
    relation = relation_of(synth.estimator(args, None))  # the release's; the learning's too
    add_remove = relation == ADD_REMOVE
    if args.n < 1:
        raise DPQueryError(f"--n must be positive, got {args.n}")
    share = DEFAULT_DOMAIN_SHARE if args.domain_share is None else args.domain_share
    options = synth.budget_rule(args, args.n, add_remove)
    with flag_errors("domain_share"):
        budget = run_budget(options, args.n, share, add_remove)
    alone = epsilon_share(budget)
    domain_rho = (1 - WITHIN_SHARE) * budget.learn_rho  # the rest buys decoding weights
    limits = {c: size_limits(domain_rho, budget.delta_tail, c, add_remove) for c in PLAN_COLUMNS}
    public = list(Domain.load(args.domain).names) if args.domain is not None else []
    if args.json:
        by_columns = {str(c): {"small_below": s, "refused_below": r}
                      for c, (s, r) in limits.items()}  # fmt: skip
        print(json.dumps({"n": args.n, "neighbours": relation,
                          "learned_domain": budget.to_dict(),
                          "public_columns": public,
                          "learning_epsilon_alone": alone * budget.epsilon,
                          "small_table_borrow_rho": SMALL_BORROW_SHARE * budget.release_rho,
                          "large_table_borrow_rho": large_borrow_rho(budget),
                          "membership_test": membership_plan(),
                          "lattice_test": lattice_plan(),
                          "written_forms": forms_plan(),
                          "table_size_by_columns": by_columns}, indent=2))  # fmt: skip
        return 0
    b = budget
    print(f"dpquery synth on a raw table of n={args.n} records, its domain learned from the "
          "data (docs/learn.md); no data read")  # fmt: skip
    print(f"  neighbours: {describe_relation(relation)}"
          + (f"; the learning buys a noisy n with {LEARNING_NOISY_N_SHARE:.0%} of its rho, the "
             f"release its own with {NOISY_N_SHARE:.0%} of its, and their rules read it"
             if add_remove else ""))  # fmt: skip
    print(f"  budget: (epsilon={b.epsilon:g}, delta={b.delta:.3g})-DP for the whole run")
    print(f"  delta: {b.ledger_delta:.3g} for the ledger (rho={b.rho:.6g} converts to "
          f"epsilon={b.epsilon:g} at it), {b.selection_delta:.3g} for the category selections "
          f"(tail {b.delta_tail:.3g} = (delta / 2) / (1 + e^epsilon))")  # fmt: skip
    print(f"  domain learning: rho={b.learn_rho:.6g} ({b.share:.0%} of rho; alone, epsilon="
          f"{alone * b.epsilon:.3g} at delta {b.ledger_delta:.3g}), charged on the run's "
          "ledger before the release draws")  # fmt: skip
    if public:
        shown = ", ".join(public[:6]) + (", ..." if len(public) > 6 else "")
        print(f"    the {len(public)} columns of {args.domain} ({shown}) are public: nothing "
              "is read or spent on them; the columns it leaves out share the learning (the "
              "table sizes below count those)")  # fmt: skip
    weights = WITHIN_SHARE - SECOND_SHARE
    print(f"    of it, {weights:.0%} (rho={weights * b.learn_rho:.6g}) buys decoding "
          "weights, a noisy histogram of sub-bins inside each learned numeric bin, split "
          "equally over the numeric columns (unspent with --no-within)")  # fmt: skip
    print(f"    of it, {SECOND_SHARE:.0%} (rho={SECOND_SHARE * b.learn_rho:.6g}, and "
          f"{SECOND_TAIL_SHARE:.0%} of the selections' tail) is a pool for a second partition "
          "selection over the categories the first did not release, split equally over the "
          "categorical columns whose noisy count left out can reach its threshold; what no "
          "column needs goes to the release (all of it in a small table)")  # fmt: skip
    print(f"    each undeclared column's kind is read off its profile ({PROFILE_SHARE:.0%} of the "
          "column's share, charged before it draws): one discrete Gaussian histogram of its "
          "missing values, numbers and dates (ISO 8601; the common formats' order classes; "
          "times of day), one record in one cell")  # fmt: skip
    member = membership_plan()
    print(f"    a text column whose selection leaves {member['other_share']:.0%} or more of it "
          f"<other> is tested for a public vocabulary ({', '.join(member['vocabularies'][-4:-2])}"
          ", country codes (ISO 3166-1 alpha-2, alpha-3)"
          f", and {len(member['vocabularies']) - 4} more; {member['classes']} classes by "
          f"writing case): cells of its profile's histogram ({PROFILE_SHARE:.0%} of the "
          "column's share, charged before the profile draws), no further charge; a class "
          f"holding {member['class_share']:.0%} of the noisy non-missing count and "
          f"{member['sigmas']:g} noise sd lists that vocabulary's members")  # fmt: skip
    keys = member["released_keys"]
    print(f"    a text column whose selection released {keys['keys']} or more keys, all place "
          "names of one vocabulary in one style (spaces or hyphens), and left out "
          f"{keys['left_out_share']:.0%} of it and {keys['left_out_sigmas']:g} sd, lists "
          "that vocabulary's places: no charge (post-processing of the released keys and "
          "noisy counts); the release gives no record to a listed place its 1-way "
          "measurements cannot tell from empty"
          + (", and writes a column of country names in the style (UN M49, ISO 3166-1 or "
             f"the World Bank's names) those measurements read at {STYLE_SIGMAS:g} sd: no "
             "charge (post-processing)" if add_remove else ""))  # fmt: skip
    forms = forms_plan()
    print(f"    a number column's precision histogram also counts its whole numbers written "
          f"with a leading zero (widths {forms['widths'][0]} to {forms['widths'][-1]}) or as "
          f"a day {forms['date_form']} ({forms['date_years'][0]} to "
          f"{forms['date_years'][1] - 1}), one record in one cell, under the precision's "
          f"charge: a width holding {forms['width_share']:.0%} of the noisy numbers and "
          f"{forms['sigmas']:g} noise sd is written back zero-padded; the day form holding "
          f"{forms['date_share']:.0%} of them makes a date column written %Y%m%d; before "
          "that, an undeclared column's days so written are a cell of its profile (its "
          "charge), and passing the number rule's test make it a date column as a declared "
          "date:%Y%m%d is")  # fmt: skip
    sci = forms["scientific"]
    print(f"    and its numbers written with an exponent (4.070e-04), by the mantissa's "
          f"decimals (0 to {sci['mantissa_decimals']}), under the same charge: a cell holding "
          f"{sci['sigmas']:g} noise sd, the cells together {sci['share']:.0%} of the noisy "
          "numbers, make "
          f"the column learned down to {sci['learned_to']:g} and written back in scientific "
          "notation, its significant digits those of the most precise mantissa holding "
          f"5%: every value so when the cells hold {sci['every_value']['share']:.0%} of the "
          f"numbers less {sci['every_value']['sigmas']:g} sd, otherwise only below (or from) "
          "the power of ten where the bounds' noisy buckets hold the share so written (no "
          "further charge)")  # fmt: skip
    named = forms["named_dates"]
    print(f"    a text column the ISO test did not take counts its dates written with a month's "
          f"English name ({', '.join(named['formats'])}) in cells of its profile (its charge): "
          f"a format holding {named['share']:.0%} of the noisy non-missing values less "
          f"{named['sigmas']:g} sd makes a date column in it; failing those, "
          f"{len(named['spellings']) - len(named['formats'])} other spellings (lower and upper "
          "case, Jan., a weekday first, 03-Jan-2020, 3-JAN-20) in further cells alike, clear "
          f"of 0 by {named['spellings_sigmas']:g} sd")  # fmt: skip
    lat = lattice_plan()
    print(f"    in a small table, an integer column whose bounds are a narrow band far from 0 "
          f"(a year) gives {lat['share_of_band']:.0%} of its band's finer histogram (from the "
          f"pool) to a lattice test, a charge of its own: its integers by residue mod "
          f"{' and mod '.join(map(str, lat['moduli']))}, one discrete Gaussian histogram; a "
          f"class holding {lat['on_sigmas']:g} noise sd, the rest plus {lat['off_sigmas']:g} "
          f"sd at most {lat['off_ratio']:.0%} of it, puts the column on a lattice "
          "(elections every 4 years: 1932, 1936, ...), its values decoded to its "
          "points")  # fmt: skip
    print("    in a small table under add/remove, a band that holds its column's noisy count of "
          "numbers (within 2 sd): a band below 0 (a longitude) draws a finer histogram from "
          "the pool as one above 0 does, and a finer run broken by empty cells (points with "
          "gaps: hospitals' latitudes) is looked for again on its noisy counts summed 2 to "
          "100 cells at a time, its edges inside the band (no further charge)")  # fmt: skip
    print("    a number column's maximum on a bucket's edge: in a table that is not small, an "
          "atom on the lower edge of the top bucket holding the noisy mass from there up "
          f"(within {CAP_SIGMAS:g} sd) ends the bounds at the atom's bin, no charge "
          "(post-processing of the probe and the bounds)")  # fmt: skip
    print("    a number column one atom holds: in a table that is not small, an atom whose "
          f"noisy count holds the column's noisy count of numbers (within {CAP_SIGMAS:g} sd) "
          "is the column's one bin, decoded as its value, no charge (post-processing of the "
          "probe and the profile)")  # fmt: skip
    borrow = SMALL_BORROW_SHARE * b.release_rho
    print(f"    a small table draws no decoding weights: their part joins the pool, and the "
          f"pool may borrow {SMALL_BORROW_SHARE:.0%} of the release's rho besides "
          f"(rho={borrow:.6g}), spent only on the columns its second step takes (a second "
          "selection, a narrow band's finer histogram); the release gets what the pool "
          "left")  # fmt: skip
    print(f"    a table that is not small: when a column's first selection released a key "
          f"and left out at least {LARGE_OTHER_SHARE:.0%} of the (noisy) records, the pool "
          f"borrows {LARGE_BORROW_SHARE:.0%} of the release's rho (rho="
          f"{large_borrow_rho(b):.6g}) for its second selection; the release gets what the "
          "pool left")  # fmt: skip
    n_kind = "a noisy n" if add_remove else "n"
    sizes = "; ".join(f"{c} columns: below {s:,}, refused below {r:,}" for c, (s, r) in
                      limits.items())  # fmt: skip
    print(f"    small tables ({n_kind} where a category needs more than "
          f"{MIN_CATEGORY_SHARE:.0%} of the records): no probe, bounds grown from the mode, "
          f"integer codes from 0 (from 1 when the 0's noisy count is low); refused where it "
          f"needs more than {MIN_SMALL_SHARE:.0%}. "
          f"By the table's columns: {sizes} (docs/learn.md)")  # fmt: skip
    print(f"  release: the rest, rho={b.release_rho:.6g} ({1 - b.share:.0%} of rho), on the "
          "same ledger; its charges depend on the learned domain: plan them with --domain "
          "<out stem>.domain.json once synth has written it (reusing it costs "
          "nothing)")  # fmt: skip
    return 0


def _universe_plan(args: argparse.Namespace) -> int:
    """The split of ``synth --learn-items`` on a raw user x item table of ``--n`` users: the
    selection's share of rho, its noise, threshold and delta, what remains for the release
    (whose charges depend on the number of ids released: plan them with ``--item-list``)."""
    if args.n is None or args.items is not None or args.item_list is not None:
        raise DPQueryError("--learn-items plans a raw user x item table's learned universe "
                           "from --n N (its users), without --items or --item-list")  # fmt: skip
    if args.dataset is not None or args.domain is not None:
        raise DPQueryError("item data is planned from --n N (no domain or dataset)")
    if args.n < 1:
        raise DPQueryError(f"--n must be positive, got {args.n}")
    synth.check_budget_given(args)
    relation = relation_of(synth.estimator(args, None))  # the release's; the selection's too
    share = DEFAULT_UNIVERSE_SHARE if args.learn_items_share is None else args.learn_items_share
    bound = DEFAULT_UNIVERSE_BOUND if args.learn_items_bound is None else args.learn_items_bound
    check_universe_share(share, "--learn-items-share")
    check_bound(bound, "--learn-items-bound")
    if args.rho is not None or args.delta == 0:
        raise DPQueryError("--learn-items needs an (epsilon, delta) budget: give --epsilon")
    options = {"epsilon": args.epsilon, "delta": args.delta}
    plan = universe_plan(options, args.n, share, bound, relation)
    b = plan.budget
    if args.json:
        print(json.dumps({"n": args.n, "neighbours": relation, "universe": plan.to_dict(),
                          "charges": [{"mechanism": f"{UNIVERSE_STAGE}: {SELECTION}",
                                       "rho": b.learn_rho}],
                          "release_rho": b.release_rho}, indent=2))  # fmt: skip
        return 0
    print(f"dpquery synth --learn-items on a raw user x item table of n={args.n} users, its "
          "item universe learned from the data (docs/wide.md); no data read")  # fmt: skip
    print(f"  neighbours: {describe_relation(relation)}")
    print(f"  budget: (epsilon={b.epsilon:g}, delta={b.delta:.3g})-DP for the whole run")
    print(f"  delta: {b.ledger_delta:.3g} for the ledger (rho={b.rho:.6g} converts to "
          f"epsilon={b.epsilon:g} at it), {b.selection_delta:.3g} for the selection's tail "
          f"(tail {b.delta_tail:.3g} = (delta / 2) / (1 + e^epsilon), {plan.key_tail:.3g} per "
          f"item id: a user adds at most s={plan.bound} ids)")  # fmt: skip
    print(f"  {UNIVERSE_STAGE}: {SELECTION}, rho={b.learn_rho:.6g} ({b.share:.0%} of rho), "
          "charged on the run's ledger before it draws: each user's distinct items cut to a "
          f"uniform random subset of at most s={plan.bound}, each id's count + discrete "
          f"Gaussian noise (L2 sensitivity {plan.sensitivity:.4g}, sd "
          f"{plan.sigma2 ** 0.5:.4g}); an id is released when its noisy count reaches "
          f"{plan.tau:,}")  # fmt: skip
    if relation != ADD_REMOVE and plan.tau > args.n:
        print(
            f"  warning: the threshold {plan.tau:,} is above the n={args.n:,} users: no id "
            "can be released; give --item-list, or raise --epsilon or --learn-items-share"
        )
    print(f"  release: the rest, rho={b.release_rho:.6g} ({1 - b.share:.0%} of rho), on the "
          "same ledger; its charges depend on the number of ids released: plan them with "
          "--item-list <out stem>.items.txt once synth has written it (reusing it costs "
          "nothing)")  # fmt: skip
    return 0


DATA_REFUSED = (
    "dpquery privacy synth reads no data, so it takes no --data: plan a raw table from its "
    "number of records, --n N (with --types, --domain-share as synth takes them), a table "
    "with a public domain from --domain DOMAIN.json --n N, a raw user x item table from "
    "--n N with --item-list FILE or --learn-items"
)
"""The refusal of ``--data``: a plan is made from public numbers alone."""


def _synth_plan(args: argparse.Namespace) -> int:
    if args.data is not None:
        raise DPQueryError(DATA_REFUSED)
    if args.learn_items:
        return _universe_plan(args)
    if args.learn_items_share is not None or args.learn_items_bound is not None:
        raise DPQueryError("--learn-items-share and --learn-items-bound plan an item universe "
                           "learned from the data: give --learn-items")  # fmt: skip
    if args.item_list is not None:  # a public catalogue: its length is d
        if args.items is not None:
            raise DPQueryError("give --items D or --item-list FILE (its length is D), not both")
        args.items = len(read_item_list(args.item_list))
    if args.items is not None:
        return _items_plan(args)
    if args.learn_rest and (args.domain is None or args.n is None):
        raise DPQueryError("--learn-rest plans a domain learned for the columns a partial "
                           "domain leaves out: give that domain (--domain) and --n")  # fmt: skip
    if args.dataset is None and args.n is not None and (args.domain is None or args.learn_rest):
        return _learning_plan(args)
    if args.domain_share is not None or args.types:
        raise DPQueryError("--domain-share and --types plan a domain learned from a raw table: "
                           "give --n without --domain or --dataset (or a partial domain with "
                           "--learn-rest)")  # fmt: skip
    shape = _shape(args)
    relation = relation_of(synth.estimator(args, None))  # every option checked first
    add_remove = relation == ADD_REMOVE
    synth.check_budget_given(args)
    options = synth.budget_rule(args, shape.n, add_remove)
    rng = make_rng(args.seed)
    workload, _ = workloads(synth.workload_of(args), args.k, shape, rng,
                            public_n(shape, add_remove))  # fmt: skip
    model = synth.estimator(args, rng, options)
    plan = model.plan(shape, workload)
    ledger = Ledger(plan.budget, model.plan_accountant(plan))
    if add_remove:  # drawn first, before the plan the run makes on it
        ledger.charge(NOISY_N, ZCDP(noisy_n_rho(plan.budget)))
    for c in plan.charges():  # a plan fits its budget: these charges never raise
        ledger.charge(c.mechanism, c.cost, count=c.count)
    report = ledger.report()
    inner = plan.inner if isinstance(plan, AutoPlan) else plan
    inner = inner.base_plan if isinstance(inner, ColumnsPlan) else inner
    rest = "adaptive" if isinstance(inner, AdaptivePlan) else "unspent"
    payload: dict[str, Any] = {
        "algorithm": model.name,
        "neighbours": relation,
        "n": shape.n,
        "workload": {"queries": len(workload), "kind": args.workload or "default"},
        "budget": plan.budget.to_dict(),
        "untouched": _untouched(model, plan, shape),
        "charges": [c.to_dict() for c in report.per_mechanism],
        "planned_spend": report.spent,
        "remaining": {"amount": report.remaining, "use": rest},
        "rho_shares": _rho_shares(inner, report) if rest == "adaptive" else None,
        "column_refinement": _refinement(inner),
        "guarantees": [g.to_dict() for g in report.guarantees],
    }
    if isinstance(plan, AutoPlan):
        payload["auto"] = {"algorithm": plan.choice.algorithm, "reason": plan.choice.reason,
                           "warning": plan.warning}  # fmt: skip
    if args.json:
        print(json.dumps(payload, indent=2, default=str))
        return 0
    print(f"dpquery synth --algorithm {model.name}: n={shape.n}, {len(workload)} queries "
          f"({args.workload or 'default'}); no data read")  # fmt: skip
    print(f"  neighbours: {describe_relation(relation)}{NOISY_N_NOTE if add_remove else ''}")
    print(f"  budget: {plan.budget.describe()}")
    if isinstance(plan, AutoPlan):
        print(f"  auto runs {plan.choice.algorithm}: {plan.choice.reason}")
        if plan.warning is not None:
            print(f"  warning: {plan.warning}")
    untouched = payload["untouched"]
    if untouched["attributes"]:
        print(f"  untouched attributes ({', '.join(untouched['attributes'])}): 1-way marginals, "
              f"{untouched['share']:.0%} of the budget")  # fmt: skip
    else:
        print("  untouched attributes: none (the workload touches every attribute)")
    print("  charges planned before any data is read, stage by stage:")
    for m in report.per_mechanism:
        cost = f"rho={m.rho:.6g}" if m.rho is not None else f"epsilon={m.epsilon:.6g}"
        print(f"    {m.mechanism}: {m.invocations} x, total {cost}")
    asked = [g for g in report.guarantees if g.measure == plan.budget.measure]
    for g in asked:
        print(f"  planned charges: {g.describe()}")
    others = [g for g in report.guarantees if g not in asked]
    if others:
        print("  other accountants:")
        for g in others:
            print(f"    {g.describe()}")
    refinement = payload["column_refinement"]
    if refinement is not None:
        print(f"  column refinement: up to rho={refinement['cap_rho']:.6g} "
              f"({refinement['cap_share']:.1%} of rho), decided from the noisy 1-way "
              f"marginals: columns estimated past total variation {refinement['target']:g} are "
              "re-measured; the amount depends on the data and cannot be known in advance, "
              "and the rounds spend what it leaves")  # fmt: skip
    shares = payload["rho_shares"]
    if shares is not None:  # zCDP composes by adding rho: the shares add up, epsilons do not
        print(f"  rho shares (zCDP adds rho; the budget is rho={shares['rho']:.6g}): planned "
              f"charges rho={shares['planned']:.6g} ({shares['planned_share']:.1%}); the rest, "
              f"rho={shares['rest']:.6g} ({shares['rest_share']:.1%}), is spent by adaptive "
              "rounds, each charged before it draws, never past the budget")  # fmt: skip
    elif report.remaining > 1e-9 * plan.budget.limit:
        left = f"{report.remaining:.6g} of {plan.budget.limit:.6g}"
        print(f"  unspent: {left} (the largest plan that fits the budget leaves it)")
    return 0


def _rho_shares(plan: AdaptivePlan, report: Any) -> dict[str, float]:
    """adaptive-projection's budget as zCDP (``plan.rho``, an epsilon budget converted), the
    planned charges' rho and the rest the adaptive rounds spend: shares that add up."""
    planned = sum(m.rho or 0.0 for m in report.per_mechanism)
    rest = max(0.0, plan.rho - planned)
    return {"rho": plan.rho, "planned": planned, "planned_share": planned / plan.rho,
            "rest": rest, "rest_share": rest / plan.rho}  # fmt: skip


def _refinement(plan: Any) -> dict[str, Any] | None:
    """adaptive-projection's column refinement: its target and cap (None: off)."""
    if not isinstance(plan, AdaptivePlan) or plan.column_tv is None:
        return None
    return {"target": plan.column_tv, "cap_rho": plan.column_cap,
            "cap_share": plan.column_cap / plan.rho,
            "decided": "from the noisy 1-way marginals"}  # fmt: skip


def _untouched(model: Any, plan: Any, shape: PublicShape) -> dict[str, Any]:
    """The attributes the pipeline measures before the algorithm runs, and their share."""
    if isinstance(plan, AutoPlan):
        model, plan = plan.model, plan.inner
    if not isinstance(plan, ColumnsPlan) or plan.measurement is None:
        return {"attributes": [], "share": 0.0}
    sources = column_sources(shape, plan.untouched, "measured")  # type: ignore[arg-type]
    return {"attributes": [k for k, v in sources.items() if v == "measured"], "share": model.share}
