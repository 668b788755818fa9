"""Privacy core: mechanisms, accountants, calibration and the ledger (issue 4).

Every privacy-spending call charges a :class:`Ledger` before it draws; costs are stated in the
measure they are proved in (:class:`PureDP`, :class:`ZCDP`); accountants turn charges into
guarantees, the default being the tightest proved (:class:`Tightest`). The papers' own formulas
(DualQuery Theorems 4.2/4.3 and Remark 4.7; FEM's ``rho_0 = rho/T``; DQRS's ``rho_t``) are
named functions. See ``docs/privacy.md``.
"""

from __future__ import annotations

from dpquery.privacy.accountants import (
    Accountant,
    AdvancedComposition,
    BasicComposition,
    Tightest,
    ZCDPAccountant,
    all_accountants,
    default_accountant,
)
from dpquery.privacy.budget import Budget, fits, spend
from dpquery.privacy.calibration import largest_float, largest_integer, max_rounds
from dpquery.privacy.composition import (
    Composition,
    CompositionTotals,
    advanced_composition,
    advanced_composition_heterogeneous,
)
from dpquery.privacy.conversions import (
    zcdp_delta_cks,
    zcdp_delta_standard,
    zcdp_epsilon_cks,
    zcdp_epsilon_standard,
    zcdp_rho_for,
    zcdp_to_epsilon,
)
from dpquery.privacy.costs import (
    ZCDP,
    Charge,
    Cost,
    PureDP,
    bounded_range_to_zcdp,
    gaussian_rho,
    gaussian_sigma,
    pure_to_zcdp,
)
from dpquery.privacy.dqrs import (
    dqrs_fresh_samples,
    dqrs_gamma,
    dqrs_max_rounds,
    dqrs_plan,
    dqrs_rho,
    dqrs_round_charges,
    dqrs_round_rho,
    dqrs_round_rho_as_printed,
)
from dpquery.privacy.dualquery import (
    DualQueryParameters,
    dualquery_epsilon_heterogeneous,
    dualquery_epsilon_theorem_4_3,
    dualquery_max_eta,
    dualquery_max_rounds,
    dualquery_max_samples,
    dualquery_plan,
    dualquery_pure_epsilon,
    dualquery_rho,
    dualquery_round_charge,
    dualquery_round_epsilon,
    dualquery_sample_round,
    remark_4_7_epsilon,
    remark_4_7_parameters,
)
from dpquery.privacy.errors import (
    AccountingError,
    BudgetExceededError,
    CalibrationError,
    PrivacyParameterError,
)
from dpquery.privacy.fem import (
    fem_max_epsilon0,
    fem_max_rounds,
    fem_plan,
    fem_rho,
    fem_round_epsilon,
    fem_round_rho,
)
from dpquery.privacy.ledger import Guarantee, Ledger, LedgerEntry, LedgerReport, MechanismSpend
from dpquery.privacy.mechanisms import (
    AboveThreshold,
    above_threshold,
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    report_noisy_max,
)
from dpquery.privacy.sampling import sample_from_log_weights

__all__ = [
    "ZCDP",
    "AboveThreshold",
    "Accountant",
    "AccountingError",
    "AdvancedComposition",
    "BasicComposition",
    "Budget",
    "BudgetExceededError",
    "CalibrationError",
    "Charge",
    "Composition",
    "CompositionTotals",
    "Cost",
    "DualQueryParameters",
    "Guarantee",
    "Ledger",
    "LedgerEntry",
    "LedgerReport",
    "MechanismSpend",
    "PrivacyParameterError",
    "PureDP",
    "Tightest",
    "ZCDPAccountant",
    "above_threshold",
    "advanced_composition",
    "advanced_composition_heterogeneous",
    "all_accountants",
    "bounded_range_to_zcdp",
    "default_accountant",
    "dqrs_fresh_samples",
    "dqrs_gamma",
    "dqrs_max_rounds",
    "dqrs_plan",
    "dqrs_rho",
    "dqrs_round_charges",
    "dqrs_round_rho",
    "dqrs_round_rho_as_printed",
    "dualquery_epsilon_heterogeneous",
    "dualquery_epsilon_theorem_4_3",
    "dualquery_max_eta",
    "dualquery_max_rounds",
    "dualquery_max_samples",
    "dualquery_plan",
    "dualquery_pure_epsilon",
    "dualquery_rho",
    "dualquery_round_charge",
    "dualquery_round_epsilon",
    "dualquery_sample_round",
    "exponential_mechanism",
    "fem_max_epsilon0",
    "fem_max_rounds",
    "fem_plan",
    "fem_rho",
    "fem_round_epsilon",
    "fem_round_rho",
    "fits",
    "gaussian_mechanism",
    "gaussian_rho",
    "gaussian_sigma",
    "laplace_mechanism",
    "largest_float",
    "largest_integer",
    "max_rounds",
    "pure_to_zcdp",
    "remark_4_7_epsilon",
    "remark_4_7_parameters",
    "report_noisy_max",
    "sample_from_log_weights",
    "spend",
    "zcdp_delta_cks",
    "zcdp_delta_standard",
    "zcdp_epsilon_cks",
    "zcdp_epsilon_standard",
    "zcdp_rho_for",
    "zcdp_to_epsilon",
]
