"""The options the game family's algorithms take (:mod:`dpquery.algorithms.options`): the
game's sizes, FEM's, MWEM's and the reweighting pipeline's own, and the data player's oracle
and free attributes."""

from __future__ import annotations

from dpquery.algorithms.game.fem_plan import ACCOUNTINGS, AUTHORS_ADULT
from dpquery.algorithms.game.free import POLICIES, check_policy
from dpquery.algorithms.game.reweight import ROUNDS_AT_EPSILON_1
from dpquery.algorithms.options import Option, one_of
from dpquery.algorithms.parameters import fraction, positive, positive_int
from dpquery.oracles import oracle_names

OPTIONS = (
    # the game's sizes
    Option("eta", "step (dualquery, dqrs) or noise scale (fem, sepfem)", check=positive),
    Option(
        "T",
        "rounds (default: set by the budget)",
        int,
        check=positive_int,
        flag="--T",
    ),
    Option(
        "samples",
        "queries sampled (dualquery, dqrs) or FTPL solves (fem, sepfem) per round: the papers' s",
        int,
        check=positive_int,
        aliases=("--s",),
    ),
    Option("alpha", "target accuracy (theory mode)"),
    Option("beta", "failure probability (theory mode)"),
    Option("epsilon0", "per-round exponential mechanism", check=positive),
    Option("c", "FEM's scaling epsilon0 = c sqrt(epsilon)", check=positive),
    # FEM's, MWEM's and the reweighting pipeline's own
    Option(
        "preset",
        "the FEM authors' Adult values",
        str,
        tuple(AUTHORS_ADULT),
        one_of(tuple(AUTHORS_ADULT)),
    ),
    Option("noise_multiple", "FEM noise: eta = noise_multiple sqrt(T)", check=positive),
    Option(
        "accounting",
        "FEM's per-round accounting (default bounded-range)",
        str,
        ACCOUNTINGS,
        one_of(ACCOUNTINGS),
    ),
    Option("workers", "processes for a round's independent solves", int, check=positive_int),
    Option(
        "measurement",
        "MWEM's measurement",
        str,
        ("laplace", "gaussian"),
        one_of(("laplace", "gaussian")),
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
    # the data player's oracle and free attributes
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
        one_of(("fallback", "raise")),
    ),
)
