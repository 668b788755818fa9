"""The second step of a release: its plan, before any draw.

From public quantities only (``n``, the domain, the options): the budget (``delta``
defaulting to ``1/n^2``) and the warnings the user must see about it, the workload (every
``k``-way marginal of at most n cells when none is given), the estimator with its options
checked, and ``auto``'s choice with its pre-release check ("not expected to beat the
baselines", said before the fit).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.algorithms import registry
from dpquery.algorithms.auto import Auto, BaselineWarning
from dpquery.algorithms.marginal.adaptive_projection import DEFAULT_MAX_RECORDS
from dpquery.algorithms.wide.release import noise_warning
from dpquery.errors import DPQueryError
from dpquery.pipeline.request import ReleaseRequest, WorkloadKind
from dpquery.privacy import Budget
from dpquery.privacy.delta import (
    LargeDeltaWarning,
    WeakBudgetWarning,
    check_delta,
    check_epsilon,
    relation_default_delta,
)
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE
from dpquery.queries import (
    Workload,
    build_workload,
    check_same_domain,
    default_workload,
)
from dpquery.queries.build import MissingParameterError

PUBLIC_N_BOUND = DEFAULT_MAX_RECORDS
"""Under add/remove neighbours the default workload's marginals have at most this many cells
(in place of ``n``, private): the records adaptive-projection fits by default."""
SAID = (LargeDeltaWarning, WeakBudgetWarning, BaselineWarning)
"""The warnings a front door with ``say`` shows itself (the library's are then silenced)."""
ITEMS_AUTO_REASON = (
    "item data ({n} records x {d} items): the wide release measures every item's count, the "
    "record sizes and the pairs among the {K} most frequent items, and fits sparse records "
    "to them (docs/choosing.md)"
)
HEAD_REASON = (
    "item data ({n} records x {d} items): the wide release's head mode (the cut item counts "
    "would be swamped by noise at this n) picks the {K} most frequent items by the "
    "exponential mechanism, counts them and the picked items per record, and fits records "
    "to them; under add/remove it also measures the other items' total and spreads it thinly "
    "over them (docs/wide.md)"
)


def algorithm_of(request: ReleaseRequest) -> str:
    """The algorithm to run: ``auto`` is the wide release on item data (docs/choosing.md)."""
    return "wide" if request.items and request.algorithm == "auto" else request.algorithm


class InvalidOption(DPQueryError):
    """An option's value out of its declared range (the message names the option)."""


def estimator(
    algorithm: str, options: Mapping[str, Any], *, oracle_options: Mapping[str, float],
    seed: np.random.Generator | None, progress: bool | None, neighbours: str | None = None,
) -> Any:  # fmt: skip
    """The algorithm's estimator with ``options`` (the registry's names; None: not given)
    under ``neighbours`` (None: the algorithm's default), every value's range checked before
    the data is read. Raises :class:`~dpquery.algorithms.registry.OptionError` for an option
    it does not take, :class:`InvalidOption` for a value out of range, and
    :class:`~dpquery.errors.DPQueryError` for add-remove asked of an algorithm proved for
    replace-one only."""
    model = registry.build(
        algorithm,
        options,
        seed=seed,
        oracle_options=dict(oracle_options),
        progress=progress,
        neighbours=neighbours,
    )
    try:
        model.validate()
    except DPQueryError as exc:
        raise InvalidOption(str(exc)) from None
    return model


def request_estimator(
    request: ReleaseRequest, rng: np.random.Generator | None,
    options: Mapping[str, Any] | None = None,
) -> Any:  # fmt: skip
    """The request's estimator (with ``options`` in place of its own, when given)."""
    return estimator(
        algorithm_of(request), request.options if options is None else options,
        oracle_options=request.oracle_options, seed=rng, progress=request.progress,
        neighbours=neighbours_of(request),
    )  # fmt: skip


def neighbours_of(request: ReleaseRequest) -> str | None:
    """The relation asked for: the request's, or by default add/remove for ``auto`` (its
    releases support it; on item data ``auto`` is the wide release; a domain learned from
    the data holds for the release's relation), else None (the algorithm's own default)."""
    if request.neighbours is not None:
        return request.neighbours
    return ADD_REMOVE if request.algorithm == "auto" else None


def relation_of(model: Any) -> str:
    """The relation ``model`` releases under (replace-one for those without one)."""
    return str(getattr(model, "relation", REPLACE_ONE))


def with_default_delta(
    options: Mapping[str, Any], n: int, add_remove: bool = False
) -> dict[str, Any]:
    """The one default: ``delta = 1/n^2`` with ``epsilon`` and no ``rho``; under add/remove
    neighbours (``n`` private, not read) the public 1e-9."""
    given = dict(options)
    if given.get("delta") is None and given.get("epsilon") is not None and given.get("rho") is None:
        given["delta"] = relation_default_delta(n, add_remove)
    return given


def budget_warnings(options: Mapping[str, Any], n: int, add_remove: bool = False) -> list[Warning]:
    """The warnings at ``delta >= 1/n`` (under add/remove, ``n`` unread: at a public
    threshold, :func:`dpquery.privacy.delta.check_delta`) and at ``epsilon > 10``
    (:func:`dpquery.privacy.delta.check_epsilon`), as values: the caller says them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LargeDeltaWarning)
        warnings.simplefilter("ignore", WeakBudgetWarning)
        delta = check_delta(options.get("delta"), n, add_remove)
        epsilon = check_epsilon(options.get("epsilon"), options.get("rho"), n, add_remove)
    return [
        kind(message)
        for kind, message in ((LargeDeltaWarning, delta), (WeakBudgetWarning, epsilon))
        if message is not None
    ]


def workload_of_kind(kind: str, domain: Any, **kwargs: Any) -> Workload:
    """:func:`dpquery.queries.build_workload`, its missing parameters named as flags."""
    try:
        return build_workload(kind, domain, **kwargs)
    except MissingParameterError as exc:
        raise DPQueryError(f"workload kind {kind} needs --{exc.parameter}") from None


def public_n(data: Any, add_remove: bool) -> int:
    """The number of records the workload's rules read: ``n`` (public under replace-one), or
    under add/remove, where ``n`` is private and the noisy ``n`` is drawn later by the fit,
    the public bound :data:`PUBLIC_N_BOUND`."""
    return PUBLIC_N_BOUND if add_remove else int(data.n)


def workloads(
    given: Workload | Path | WorkloadKind | None,
    k: int,
    data: Any,
    rng: np.random.Generator,
    n: int | None = None,
) -> tuple[Workload, Workload | None]:
    """The workload to release for and, when it is drawn at random, a fresh one of the same
    kind to evaluate on (None for the default, given and all-marginals workloads); ``n`` is
    the public number of records its rules read (default the data's, :func:`public_n`)."""
    n = int(data.n) if n is None else n
    if given is None:
        if data.domain is None:
            raise DPQueryError("the default workload needs the data's domain")
        return default_workload(data.domain, n, k=k, seed=rng), None
    if isinstance(given, Workload | Path):
        workload = given if isinstance(given, Workload) else Workload.load(given)
        check_same_domain(workload, data.d, data.domain)
        return workload, None
    if data.domain is None:
        raise DPQueryError("generating a workload needs the data's domain")
    make = {
        "k": k, "count": given.count, "marginals": given.marginals,
        "attributes": None if given.attributes is None else list(given.attributes), "n": n,
    }  # fmt: skip
    workload = workload_of_kind(given.kind, data.domain, seed=rng, **make)
    fresh = None if given.kind == "all-marginals" else workload_of_kind(
        given.kind, data.domain, seed=rng, **make
    )  # fmt: skip
    return workload, fresh


def baseline_warning(
    model: Any, data: Any, workload: Workload, budget: Budget | None = None
) -> list[Warning]:
    """The public pre-release check of ``auto`` (docs/choosing.md), before the fit
    (``budget``: the ledger's it will spend, when not its own)."""
    if isinstance(model, Auto):
        warning = model.plan(data, workload, budget=budget).warning
        if warning is not None:
            return [BaselineWarning(warning)]
    return []


def items_noise_warning(model: Any, data: Any, budget: Budget | None = None) -> list[Warning]:
    """The wide release's public pre-release check (docs/wide.md, Shapes), before the fit
    (``budget``: the ledger's it will spend, when not its own): where noise swamps the item
    counts, the release is expected no better than the all-zeros table."""
    wide = model.name == "wide"
    warning = noise_warning(model.plan(data, budget=budget), data.n) if wide else None
    return [] if warning is None else [BaselineWarning(warning)]


class EmptyReleaseWarning(UserWarning):
    """Every released record is empty: the release is the all-zeros table."""


def items_kept_nothing(release: Any) -> list[Warning]:
    """After the fit, said also with ``--quiet``: every released record is empty."""
    if release.parameters.get("items_kept") != 0 or "kept_warning" in release.parameters:
        return []  # items kept, or said before the fit (core.say_kept)
    return [EmptyReleaseWarning("no item's noisy count stood out of the noise: every "
                                "released record is empty (the all-zeros table)")]  # fmt: skip


def items_auto_reason(
    model: Any, data: Any, partitioned: bool, n: int | None = None,
    released: dict[str, Any] | None = None,
) -> str:  # fmt: skip
    """Why ``auto`` runs the wide release on item data, in one sentence (``n``: the number
    of records to say, the release's noisy ``n`` under add/remove, default the data's;
    ``released``: the release's parameters, whose mode and ``K`` are said under add/remove,
    where the plan's, made on ``n``, would tell it)."""
    if released is not None and "mode" in released and "K" in released:
        mode, K = released["mode"], released["K"]
    else:
        parameters = model.plan(data).parameters
        mode, K = parameters.mode, parameters.K
    text = HEAD_REASON if mode == "head" else ITEMS_AUTO_REASON
    said = data.n if n is None else f"about {n} (a noisy count)"
    reason = text.format(n=said, d=data.d, K=K)
    if partitioned:
        reason += "; its counts computed on the cluster, in two passes"
    return reason
