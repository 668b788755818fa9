"""Oracles by name: ``get_oracle("cpsat", time_limit=10)``.

``"heuristic"`` is the default (fast, seed-reproducible, no proof); ``"cpsat"`` the exact,
certifying oracle; ``"highs"`` an alternative exact MIP oracle; ``"brute"`` enumerates all
records (tests only). See ``docs/oracles.md`` for how to choose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpquery.errors import DPQueryError
from dpquery.oracles.brute import BruteForceOracle
from dpquery.oracles.cpsat import CPSatOracle
from dpquery.oracles.heuristic import HeuristicOracle
from dpquery.oracles.highs import HighsOracle
from dpquery.oracles.result import Oracle

DEFAULT_ORACLE = "heuristic"

_REGISTRY: dict[str, Callable[..., Oracle]] = {
    "heuristic": HeuristicOracle,
    "cpsat": CPSatOracle,
    "highs": HighsOracle,
    "brute": BruteForceOracle,
}


def oracle_names() -> tuple[str, ...]:
    """The names :func:`get_oracle` accepts."""
    return tuple(_REGISTRY)


def get_oracle(name: str = DEFAULT_ORACLE, **options: Any) -> Oracle:
    """The oracle called ``name``, configured with ``options`` (its dataclass fields)."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise DPQueryError(f"unknown oracle {name!r}; choose one of {oracle_names()}") from None
    try:
        return factory(**options)
    except TypeError as exc:
        raise DPQueryError(f"bad options for oracle {name!r}: {exc}") from None
