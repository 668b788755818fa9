"""``dpquery privacy ...``: plan privacy costs before any data is touched.

``dualquery``, ``dqrs`` and ``fem`` print, for given parameters, the guarantee under every
accountant (one line each, naming it); given a budget (``--epsilon [--delta]`` or ``--rho``)
instead of ``--T``, the largest ``T`` under each (``T`` passes, ``T + 1`` exceeds). ``fem``
with ``--T`` and a budget prints the largest per-round ``epsilon_0`` (and ``rho_0 = rho / T``).
``--json`` prints one JSON object instead.

``synth`` (:mod:`dpquery.cli.plan_synth`) plans what ``dpquery synth`` with the same flags
would spend, stage by stage, from the public domain and ``n`` alone: no data is read.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence

from dpquery.algorithms.game.fem_plan import DEFAULT_C
from dpquery.algorithms.parameters import budget_of, positive, positive_int
from dpquery.cli import plan_synth
from dpquery.cli.common import flag_errors
from dpquery.errors import DPQueryError
from dpquery.privacy import (
    Accountant,
    Budget,
    Charge,
    Composition,
    Tightest,
    ZCDPAccountant,
    all_accountants,
    zcdp_to_epsilon,
)
from dpquery.privacy.budget import require_measurable
from dpquery.privacy.conversions import CONVERSIONS
from dpquery.privacy.dqrs import dqrs_max_rounds, dqrs_max_rounds_as_printed, dqrs_plan, dqrs_rho
from dpquery.privacy.dualquery import dualquery_max_rounds, dualquery_plan
from dpquery.privacy.fem import (
    fem_algorithm_1_round,
    fem_max_epsilon0,
    fem_max_rounds,
    fem_plan,
    fem_round_epsilon,
)
from dpquery.validation import open_unit

Row = dict[str, object]

_DQRS_PRINTED = "zCDP, rho_t as printed in the proof of Theorem 17 (fresh samples at 2 eta (t-1)/n)"
_FEM_ALG1 = "Algorithm 1: rho0 = rho/T, epsilon0 = sqrt(2 rho0) (Lemma 4)"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg,unused-ignore]
    p = sub.add_parser(
        "privacy",
        help="print privacy costs of an algorithm's parameters",
        description="Plan privacy costs before any data is touched.",
    )
    algs = p.add_subparsers(dest="privacy_command", metavar="ALGORITHM", required=True)
    dq = algs.add_parser("dualquery", help="DualQuery (Gaboardi et al., Section 4.1)")
    _add_mw_args(dq)
    dq.set_defaults(func=_dualquery)
    rs = algs.add_parser("dqrs", help="DQRS (Oracle-efficient, Algorithm 4, Theorem 17)")
    _add_mw_args(rs)
    rs.set_defaults(func=_dqrs)
    fem = algs.add_parser("fem", help="FEM / sepFEM (Oracle-efficient, Algorithm 1, Theorem 8)")
    fem.add_argument("--T", type=int, help="number of rounds")
    fem.add_argument("--epsilon0", type=float, help="exponential-mechanism parameter per round")
    _add_budget_args(fem)
    fem.set_defaults(func=_fem)
    plan_synth.register(algs)


def _add_mw_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, required=True, help="number of records")
    p.add_argument("--eta", type=float, required=True, help="multiplicative-weights step size")
    p.add_argument(
        "--samples", "--s", dest="samples", type=int, required=True, help="samples per round (s)"
    )
    p.add_argument("--T", type=int, help="number of rounds (else: the largest T for the budget)")
    _add_budget_args(p)


def _add_budget_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--epsilon", type=float, help="target epsilon (with --delta: approximate DP)")
    p.add_argument("--delta", type=float, help="delta of the (epsilon, delta) guarantee")
    p.add_argument("--rho", type=float, help="target rho (zCDP)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


# --- shared ---------------------------------------------------------------------------------


def _budget(args: argparse.Namespace) -> Budget | None:
    """The budget of ``--epsilon [--delta]`` or ``--rho`` (the library's one constructor
    path), or None when neither is given (``--delta`` alone states the guarantee's delta)."""
    with flag_errors("delta", "epsilon", "rho"):
        if args.delta is not None:
            open_unit("delta", args.delta)
        if args.epsilon is None and args.rho is None:
            return None
        return budget_of(args.epsilon, args.delta, args.rho)


def _row(acc: Accountant | str, name: str = "", **values: object) -> Row:
    if isinstance(acc, str):
        return {"accountant": acc, "name": name, **values}
    return {"accountant": acc.key, "name": acc.name, **values}


def _guarantee_rows(charges: Sequence[Charge], delta: float | None) -> list[Row]:
    """Every accountant's guarantee for ``charges``."""
    totals = Composition(charges).totals()
    rows: list[Row] = []
    for acc in all_accountants():
        row = _row(acc)
        if isinstance(acc, ZCDPAccountant):
            row["rho"] = acc.rho(totals)
        if acc.key == "basic":
            row.update(epsilon=acc.epsilon(totals, 0.0), delta=0.0)
        elif delta is not None:
            row.update(epsilon=acc.epsilon(totals, delta), delta=delta)
        elif not isinstance(acc, ZCDPAccountant):
            row["note"] = "needs --delta"
        rows.append(row)
    return rows


def _search_rows(budget: Budget, field: str, search: Callable[[Accountant], object]) -> list[Row]:
    """Every accountant's answer to a calibration ``search`` (e.g. largest T) for ``budget``."""
    rows: list[Row] = []
    for acc in all_accountants():
        try:
            require_measurable(budget, acc)
        except DPQueryError:
            rows.append(_row(acc, note=f"cannot certify {budget.describe()}"))
        else:
            row = _row(acc)
            row[field] = search(acc)
            rows.append(row)
    return rows


def _fmt_value(key: str, v: object) -> str:
    return f"{key}={v:.6g}" if isinstance(v, float) else f"{key}={v}"


def _emit(
    args: argparse.Namespace,
    header: str,
    payload: dict[str, object],
    rows: list[Row],
    field: str,
    pick: Callable[[list[float]], float],
) -> int:
    candidates = [r for r in rows if isinstance(r.get(field), int | float)]
    best = None
    if candidates:
        value = pick([float(r[field]) for r in candidates])  # type: ignore[arg-type]
        best = next(r for r in candidates if r[field] == value)
    if args.json:

        def clean(v: object) -> object:
            return "inf" if isinstance(v, float) and math.isinf(v) else v

        results = [{k: clean(v) for k, v in r.items()} for r in rows]
        tight = None if best is None else best["accountant"]
        print(json.dumps({**payload, "results": results, "tightest": tight}, indent=2))
        return 0
    print(header)
    for r in rows:
        keys = ("T", "epsilon0", "rho0", "epsilon", "delta", "rho")
        text = ", ".join(_fmt_value(k, r[k]) for k in keys if k in r)
        if "note" in r:
            text = f"{text} ({r['note']})".strip()
        print(f"  {text:<46} [{r['accountant']}] {r['name']}")
    if best is not None:
        print(
            f"tightest proved ({Tightest().key}, the default): "
            f"{_fmt_value(field, best[field])} by [{best['accountant']}]"
        )
    return 0


def _rounds_or_budget(args: argparse.Namespace) -> Budget | None:
    budget = _budget(args)
    if (args.T is None) == (budget is None):
        raise DPQueryError(
            "give --T (to print the guarantee) or a budget via --epsilon [--delta] or --rho "
            "(to print the largest T), not both"
        )
    if args.T is not None and args.T < 1:
        raise DPQueryError(f"--T must be an integer >= 1; got {args.T}")
    return budget


# --- dualquery ------------------------------------------------------------------------------


def _dualquery(args: argparse.Namespace) -> int:
    budget = _rounds_or_budget(args)
    kw = {"eta": args.eta, "s": args.samples, "n": args.n}
    where = f"n={args.n}, eta={args.eta:g}, s={args.samples}"
    if budget is None:
        rows = _guarantee_rows(dualquery_plan(T=args.T, **kw), args.delta)
        header = (
            f"DualQuery, {where}, T={args.T}, delta={args.delta}: privacy under each accountant "
            f"([basic] is Theorem 4.2, [advanced-lemma-2.4] is Theorem 4.3 as printed)"
        )
        payload: dict[str, object] = {
            "algorithm": "dualquery",
            "parameters": {**kw, "T": args.T, "delta": args.delta},
        }
        return _emit(args, header, payload, rows, "epsilon", min)
    rows = _search_rows(budget, "T", lambda acc: dualquery_max_rounds(budget, accountant=acc, **kw))
    header = f"DualQuery, {where}: largest T within {budget.describe()} (T passes, T+1 exceeds)"
    payload = {
        "algorithm": "dualquery",
        "parameters": kw,
        "budget": budget.to_dict(),
    }
    return _emit(args, header, payload, rows, "T", max)


# --- dqrs -----------------------------------------------------------------------------------


def _dqrs(args: argparse.Namespace) -> int:
    budget = _rounds_or_budget(args)
    kw = {"eta": args.eta, "s": args.samples, "n": args.n}
    where = f"n={args.n}, eta={args.eta:g}, s={args.samples}"
    if budget is None:
        rows = _guarantee_rows(dqrs_plan(T=args.T, **kw), args.delta)
        rho = dqrs_rho(T=args.T, as_printed=True, **kw)
        for conv in CONVERSIONS:
            row = _row(f"dqrs-printed-{conv}", f"{_DQRS_PRINTED}, {conv} conversion", rho=rho)
            if args.delta is not None:
                row.update(epsilon=zcdp_to_epsilon(rho, args.delta, conv), delta=args.delta)
            rows.append(row)
        header = (
            f"DQRS, {where}, T={args.T}, delta={args.delta}: privacy under each accountant "
            f"(Algorithm 4 as written; Lemmas 18-19; the last two lines follow the proof's "
            f"printed rho_t, which undercounts the fresh samples)"
        )
        payload: dict[str, object] = {
            "algorithm": "dqrs",
            "parameters": {**kw, "T": args.T, "delta": args.delta},
        }
        return _emit(args, header, payload, rows, "epsilon", min)
    rows = _search_rows(budget, "T", lambda acc: dqrs_max_rounds(budget, accountant=acc, **kw))
    if budget.measure != "pure":
        for conv in CONVERSIONS if budget.measure == "approx" else ("standard",):
            T = dqrs_max_rounds_as_printed(budget, conversion=conv, **kw)
            name = f"{_DQRS_PRINTED}, {conv} conversion"
            rows.append(_row(f"dqrs-printed-{conv}", name, T=T))
    header = f"DQRS, {where}: largest T within {budget.describe()} (T passes, T+1 exceeds)"
    payload = {"algorithm": "dqrs", "parameters": kw, "budget": budget.to_dict()}
    return _emit(args, header, payload, rows, "T", max)


# --- fem ------------------------------------------------------------------------------------


def _fem(args: argparse.Namespace) -> int:
    budget = _budget(args)
    scaled = ""
    if budget is not None and budget.epsilon is not None and args.T is args.epsilon0 is None:
        # A budget alone: FEM's default, epsilon0 = c sqrt(epsilon) and the largest T.
        args.epsilon0 = DEFAULT_C * math.sqrt(budget.epsilon)
        scaled = f" (the default scaling epsilon0 = c sqrt(epsilon), c={DEFAULT_C:g})"
    if sum(x is not None for x in (args.T, args.epsilon0, budget)) != 2:
        raise DPQueryError(
            "give two of --T, --epsilon0 and a budget (--epsilon [--delta] or --rho): T and "
            "epsilon0 -> the guarantee; epsilon0 and a budget -> the largest T; T and a budget "
            "-> the largest epsilon0 and rho0; an epsilon budget alone -> FEM's default "
            "epsilon0 = c sqrt(epsilon) and the largest T"
        )
    with flag_errors("T", "epsilon0"):
        if args.T is not None:
            positive_int("T", args.T)
        if args.epsilon0 is not None:
            positive("epsilon0", args.epsilon0)
    if budget is None:
        rows = _guarantee_rows(fem_plan(T=args.T, epsilon0=args.epsilon0), args.delta)
        header = (
            f"FEM, T={args.T}, epsilon0={args.epsilon0:g}, delta={args.delta}: privacy under "
            f"each accountant (Oracle-efficient Theorem 8)"
        )
        params = {"T": args.T, "epsilon0": args.epsilon0, "delta": args.delta}
        return _emit(args, header, {"algorithm": "fem", "parameters": params}, rows, "epsilon", min)
    if args.T is None:
        rows = _search_rows(
            budget, "T", lambda acc: fem_max_rounds(budget, epsilon0=args.epsilon0, accountant=acc)
        )
        header = (
            f"FEM, epsilon0={args.epsilon0:g}{scaled}: largest T within {budget.describe()} "
            f"(T passes, T+1 exceeds)"
        )
        payload: dict[str, object] = {
            "algorithm": "fem",
            "parameters": {"epsilon0": args.epsilon0},
            "budget": budget.to_dict(),
        }
        return _emit(args, header, payload, rows, "T", max)
    rows = _search_rows(
        budget, "epsilon0", lambda acc: fem_max_epsilon0(budget, T=args.T, accountant=acc)
    )
    for r, acc in zip(rows, all_accountants(), strict=True):
        if isinstance(acc, ZCDPAccountant) and "epsilon0" in r:
            e0 = float(r["epsilon0"])  # type: ignore[arg-type]
            r["rho0"] = acc.rho(Composition(fem_plan(T=1, epsilon0=e0)).totals())
    if budget.measure != "pure":
        for conv in CONVERSIONS if budget.measure == "approx" else ("standard",):
            rho0 = fem_algorithm_1_round(budget, args.T, conv)
            name = _FEM_ALG1 + (f", rho by {conv} conversion" if budget.measure == "approx" else "")
            rows.append(
                _row(f"algorithm-1-{conv}", name, rho0=rho0, epsilon0=fem_round_epsilon(rho0))
            )
    header = f"FEM, T={args.T}: largest epsilon0 per round within {budget.describe()}"
    payload = {
        "algorithm": "fem",
        "parameters": {"T": args.T},
        "budget": budget.to_dict(),
    }
    return _emit(args, header, payload, rows, "epsilon0", max)
