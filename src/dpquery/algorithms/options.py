"""The hyperparameters a front end may set, declared once: name, help, type, range.

Each :class:`Option` is an estimator keyword; a command line turns it into ``--name`` (with
dashes; :attr:`Option.flag` overrides). :func:`check_options` is the one place a value's
range is checked (how values combine is each plan's business). An algorithm lists the
options it takes in its ``options`` class attribute; the registry
(:mod:`dpquery.algorithms.registry`) reads both.

The options every family shares are declared here; each family declares its own in its
``options`` module (:mod:`dpquery.algorithms.game.options`,
:mod:`dpquery.algorithms.marginal.options`), and the registry, which lists every algorithm,
adds them to the one table with :func:`declare`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dpquery.algorithms.parameters import fraction, positive_int
from dpquery.errors import DPQueryError


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


def one_of(choices: tuple[str, ...]) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if value not in choices:
            raise DPQueryError(f"{name} must be one of {choices}, got {value!r}")
        return value

    return check


def zero_or(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """``check``, except that 0 (the option turned off) passes."""

    def zero_or(name: str, value: Any) -> Any:
        return value if value == 0 else check(name, value)

    return zero_or


# The budget every algorithm spends, the records it releases, and the share the pipeline
# measuring untouched attributes takes (:mod:`dpquery.algorithms.columns`).
SHARED = (
    Option("epsilon", "privacy budget epsilon"),
    Option("delta", "delta (default 1e-9; replace-one: 1/n^2; 0: pure DP)"),
    Option("rho", "zCDP budget"),
    Option(
        "size",
        "records in the output (fem, sepfem: a resample of the release)",
        int,
        check=positive_int,
    ),
    Option(
        "untouched_share",
        "share of the budget measuring the 1-way marginals of attributes no query "
        "touches (default 0.01; not with --free-attributes zeros/uniform)",
        check=fraction,
        metavar="FRACTION",
    ),
)

_TABLE: dict[str, Option] = {o.name: o for o in SHARED}


def declare(*declared: Option) -> None:
    """Add a family's options to the table; a name is declared once."""
    for option in declared:
        if _TABLE.get(option.name, option) is not option:
            raise DPQueryError(f"option {option.name!r} is declared twice")
        _TABLE[option.name] = option


def options() -> dict[str, Option]:
    """Every declared option, by keyword."""
    return _TABLE


def check_options(values: Mapping[str, Any]) -> None:
    """Check each given (not None) value whose option declares a range."""
    table = options()
    for name, value in values.items():
        option = table.get(name)
        if value is not None and option is not None and option.check is not None:
            option.check(name, value)
