"""Best-response oracles: the data player's integer program behind one interface.

See ``docs/oracles.md``. An oracle maps a :class:`BestResponse` (weighted conjunction,
negated-conjunction and parity clauses, one-hot groups, an optional linear term; DualQuery
Section 5.2 and Appendix A, FEM Section 6) to an :class:`OracleResult`. Oracles are
untrusted: privacy never depends on them, and :func:`validate_record` checks (or repairs)
whatever they return.
"""

from dpquery.oracles.brute import BruteForceOracle
from dpquery.oracles.cpsat import CPSatOracle
from dpquery.oracles.heuristic import HeuristicOracle
from dpquery.oracles.highs import HighsOracle
from dpquery.oracles.presolve import Presolved, presolve
from dpquery.oracles.problem import BestResponse, ClauseKind
from dpquery.oracles.registry import DEFAULT_ORACLE, get_oracle, oracle_names
from dpquery.oracles.result import Oracle, OracleResult, free_mask, validate_record

__all__ = [
    "DEFAULT_ORACLE",
    "BestResponse",
    "BruteForceOracle",
    "CPSatOracle",
    "ClauseKind",
    "HeuristicOracle",
    "HighsOracle",
    "Oracle",
    "OracleResult",
    "Presolved",
    "free_mask",
    "get_oracle",
    "oracle_names",
    "presolve",
    "validate_record",
]
