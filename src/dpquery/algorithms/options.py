"""The hyperparameters a front end may set, declared once: name, help, type, range.

Each :class:`Option` is an estimator keyword; a command line turns it into ``--name`` (with
dashes; :attr:`Option.flag` overrides). :func:`check_options` is the one place a value's
range is checked (how values combine is each plan's business). An algorithm lists the
options it takes in its ``options`` class attribute; the registry
(:mod:`dpquery.algorithms.registry`) reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dpquery.algorithms.parameters import fraction, positive, positive_int


@dataclass(frozen=True)
class Option:
    """One hyperparameter: its keyword, a one-line help, the type a front end parses it
    as, its choices (if a fixed set) and the check of its range (None: free)."""

    name: str
    help: str
    type: Callable[[str], Any] = float
    choices: tuple[str, ...] | None = None
    check: Callable[[str, Any], Any] | None = None
    flag: str | None = None
    metavar: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")


def _choice(choices: tuple[str, ...]) -> Callable[[str, Any], Any]:
    from dpquery.errors import DPQueryError

    def check(name: str, value: Any) -> Any:
        if value not in choices:
            raise DPQueryError(f"{name} must be one of {choices}, got {value!r}")
        return value

    return check


def _zero_or(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """``check``, except that 0 (the option turned off) passes."""

    def zero_or(name: str, value: Any) -> Any:
        return value if value == 0 else check(name, value)

    return zero_or


def _options() -> dict[str, Option]:
    return {
        o.name: o
        for o in [*_game_options(), *_stage_options(), *_oracle_options(), *_wide_options()]
    }


def _game_options() -> list[Option]:
    """The budget and the game's sizes."""
    return [
        Option("epsilon", "privacy budget epsilon"),
        Option("delta", "privacy budget delta (default 1/n^2 with epsilon; 0: pure DP)"),
        Option("rho", "zCDP budget"),
        Option("eta", "step (dualquery, dqrs) or noise scale (fem, sepfem)", check=positive),
        Option(
            "T",
            "rounds (default: the largest the budget allows)",
            int,
            check=positive_int,
            flag="--T",
        ),
        Option(
            "samples",
            "queries sampled (dualquery, dqrs) or FTPL solves (fem, sepfem) per "
            "round: the papers' s",
            int,
            check=positive_int,
            aliases=("--s",),
        ),
        Option("alpha", "target accuracy (theory mode)"),
        Option("beta", "failure probability (theory mode)"),
        Option("epsilon0", "per-round exponential mechanism", check=positive),
        Option("c", "FEM's scaling epsilon0 = c sqrt(epsilon)", check=positive),
    ]


def _stage_options() -> list[Option]:
    """FEM's, MWEM's and the reweighting pipeline's own."""
    from dpquery.algorithms.fem_plan import ACCOUNTINGS, AUTHORS_ADULT
    from dpquery.algorithms.reweight import ROUNDS_AT_EPSILON_1

    return [
        Option(
            "preset",
            "the FEM authors' Adult values",
            str,
            tuple(AUTHORS_ADULT),
            _choice(tuple(AUTHORS_ADULT)),
        ),
        Option("noise_multiple", "FEM noise: eta = noise_multiple sqrt(T)", check=positive),
        Option(
            "accounting",
            "FEM's per-round accounting (default bounded-range)",
            str,
            ACCOUNTINGS,
            _choice(ACCOUNTINGS),
        ),
        Option(
            "size",
            "records in the output (fem, sepfem: a resample of the release)",
            int,
            check=positive_int,
        ),
        Option("workers", "processes for a round's independent solves", int, check=positive_int),
        Option(
            "measurement",
            "MWEM's measurement",
            str,
            ("laplace", "gaussian"),
            _choice(("laplace", "gaussian")),
        ),
        Option("max_cells", "MWEM's largest explicit domain", int, check=positive_int),
        Option("passes", "MWEM's replays of the measurements per round", int, check=positive_int),
        Option("selection_share", "MWEM's share of a round's budget on selection", check=fraction),
        Option(
            "fraction",
            "share of the budget the reweighting stage (MWEM) spends",
            check=fraction,
            flag="--reweight",
            metavar="FRACTION",
        ),
        Option(
            "reweight_rounds",
            f"MWEM rounds of the reweighting (default {ROUNDS_AT_EPSILON_1} sqrt(epsilon))",
            int,
            check=positive_int,
            metavar="T",
        ),
        Option(
            "compress",
            "adaptive-projection: also offer each candidate marginal with the values whose "
            "noisy 1-way count is below compress x sigma merged (default 5; 0: off)",
            check=_zero_or(positive),
            metavar="C",
        ),
        Option(
            "column_tv",
            "adaptive-projection: re-measure the columns whose noisy 1-way marginal is "
            "estimated past this total variation, when affordable (default 0.05; 0: off)",
            check=_zero_or(fraction),
            metavar="TV",
        ),
        Option(
            "untouched_share",
            "share of the budget measuring the 1-way marginals of attributes no query "
            "touches (default 0.01; not with --free-attributes zeros/uniform)",
            check=fraction,
            metavar="FRACTION",
        ),
    ]


def _oracle_options() -> list[Option]:
    """The data player's oracle and free attributes."""
    from dpquery.algorithms.free import POLICIES, check_policy
    from dpquery.oracles import oracle_names

    return [
        Option("oracle", "best-response oracle (default heuristic)", str, oracle_names()),
        Option(
            "free_attributes",
            "policy for bits no query constrains (default zeros)",
            str,
            POLICIES,
            lambda name, value: check_policy(value),
        ),
        Option(
            "density_epsilon",
            "epsilon spent on the private density (private-density only)",
            check=positive,
        ),
        Option(
            "on_error",
            "what an oracle exception does: fallback (a random record) or raise",
            str,
            ("fallback", "raise"),
            _choice(("fallback", "raise")),
        ),
    ]


def _wide_options() -> list[Option]:
    """The sparse release's bounds and sizes (docs/wide.md)."""
    return [
        Option(
            "bound",
            "items kept per record, the public contribution bound s (default 32)",
            int,
            check=positive_int,
            metavar="S",
        ),
        Option(
            "pair_bound",
            "head items per record for the pair counts (default 8)",
            int,
            check=positive_int,
            metavar="S2",
        ),
        Option(
            "head",
            "items whose pairs are measured, the largest noisy counts (default 300)",
            int,
            check=positive_int,
            metavar="K",
        ),
        Option(
            "pool", "candidate head sets the fit weighs (default 200000)", int, check=positive_int
        ),
    ]


_TABLE: dict[str, Option] = {}


def options() -> dict[str, Option]:
    """Every declared option, by keyword."""
    if not _TABLE:
        _TABLE.update(_options())
    return _TABLE


def check_options(values: Mapping[str, Any]) -> None:
    """Check each given (not None) value whose option declares a range."""
    table = options()
    for name, value in values.items():
        option = table.get(name)
        if value is not None and option is not None and option.check is not None:
            option.check(name, value)
