"""A release from its request, step by step (the package docstring lists the steps).

:func:`release` runs them all; :func:`fit` stops after the fit, for a front door that
samples rows later, as often as asked (``DPSynthesizer.sample``). Tables and item data
share the steps and differ where they must: a table is encoded over its domain and fitted
for a workload, item data is fitted by the wide release with no workload.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from dpquery.algorithms.auto import BaselineWarning
from dpquery.backends import PartitionedData
from dpquery.data.encode import note_duplicates
from dpquery.data.raw_items import ItemLabels, note_dropped
from dpquery.errors import DPQueryError
from dpquery.pipeline import inputs, learning, plan, reports, rows, writes
from dpquery.pipeline.fitting import Fitted, fit_items, fit_table
from dpquery.pipeline.learning import Learned
from dpquery.pipeline.request import (
    ItemFile,
    ItemFrame,
    ItemMatrix,
    ReleaseRequest,
    ReleaseResult,
)
from dpquery.pipeline.universe import (
    CutLines,
    LearnedUniverse,
    learn_universe,
    on_all_items,
    universe_plan,
)
from dpquery.privacy.neighbours import ADD_REMOVE
from dpquery.rng import make_rng


def release(request: ReleaseRequest) -> ReleaseResult:
    """Read the data, plan, fit, make the rows, report, evaluate when asked, and write
    the files all or nothing (when the request names them)."""
    writes.check_files(request)  # before any work: no partial output, no overwritten input
    plan.request_estimator(request, None)  # every option checked before the data is read
    if request.items:
        inputs.check_items(request.source, request.backend, request.options)  # type: ignore[arg-type]
        return _release_items(request)
    learning.check(request)
    rng = make_rng(request.seed)  # the run's one generator: a learned domain draws first
    with _said(request):
        learned = learning.learn(request, rng, _relation(request))
        with inputs.open_data(request.source, request.backend, learned) as data:  # type: ignore[arg-type]
            bits = _check_table(request, data)
            fitted = _fit_table(request, data, rng, learned)
            table, made = rows.table_rows(fitted, fitted.domain, request.output, bits=bits)  # type: ignore[arg-type]
            report = reports.table_report(fitted, made)
            evaluation = None
            if request.evaluate:
                source: Any = request.source  # a table's: TableFile, Dataset or Frame
                real = inputs.real_table(source, data.domain, request.backend.name, learned)
                evaluation = reports.table_evaluation(fitted, real, None if bits else table)
    return _written(request, fitted, table, "table", report, evaluation)


def fit(request: ReleaseRequest) -> Fitted:
    """The release's data, plan and fit, in this process: the rows are made later
    (:func:`dpquery.pipeline.rows.table_rows`, :func:`~dpquery.pipeline.rows.item_rows`)."""
    plan.request_estimator(request, None)  # every option checked before the data is read
    if request.items:
        inputs.check_items(request.source, request.backend, request.options)  # type: ignore[arg-type]
        if inputs.learns_items(request.source):
            rng = make_rng(request.seed)  # the run's one generator: the selection draws first
            with _said(request):
                universe = _universe(request, rng)
                assert universe.items is not None
                return _fit_items(request, universe.items, universe, rng)
        items = inputs.load_items(request.source)  # type: ignore[arg-type]
        with _said(request):
            return _fit_items(request, items)
    learning.check(request)
    rng = make_rng(request.seed)  # the run's one generator: a learned domain draws first
    with _said(request):
        learned = learning.learn(request, rng, _relation(request))
        data = inputs.load_data(request.source, learned)  # type: ignore[arg-type]
        _check_table(request, data)
        return _fit_table(request, data, rng, learned)


def _relation(request: ReleaseRequest) -> str:
    """The relation the release holds for, which a learned domain holds for too."""
    return plan.relation_of(plan.request_estimator(request, None))


def _check_table(request: ReleaseRequest, data: Any) -> bool:
    """A table's data has a domain to write its rows in; whether they are written as bits."""
    if data.domain is None:
        raise DPQueryError("synth needs a domain to write records in the input's columns")
    return writes.table_form(request.files, len(data.domain.attributes))


def _fit_table(
    request: ReleaseRequest, data: Any, rng: np.random.Generator, learned: Learned | None
) -> Fitted:
    """Plan (the budget, the workloads, the estimator, auto's check), then fit; after a
    ``learned`` domain, on the release's share of the run's ledger."""
    domain = inputs.output_domain(request.source, data.domain, learned is not None)  # type: ignore[arg-type]
    add_remove = plan.relation_of(plan.request_estimator(request, None)) == ADD_REMOVE
    options = plan.with_default_delta(request.options, data.n, add_remove)
    messages = _say(request, plan.budget_warnings(options, data.n, add_remove))
    n = plan.public_n(data, add_remove)
    workload, fresh = plan.workloads(request.workload, request.k, data, rng, n)
    own = options if learned is None else learning.release_options(options)
    if learned is not None and request.workload is None:  # (the default: conjunctions)
        # a small table's release compresses less (learning.small_release_options)
        own = learning.small_release_options(own, request.algorithm, learned, add_remove)
    model = plan.request_estimator(request, rng, own)
    budget = None if learned is None else learned.release_ledger.budget
    if request.say is not None and not add_remove:  # without it, auto's fit warns itself
        messages += _say(request, plan.baseline_warning(model, data, workload, budget))
    fitted = fit_table(request, model, data, workload, fresh, rng, domain, learned)
    if request.say is not None and add_remove:  # planned on the noisy n, drawn by the fit
        warning = fitted.release.parameters.get("auto", {}).get("warning")
        messages += _say(request, [] if warning is None else [BaselineWarning(warning)])
    fitted.messages = messages
    return fitted


def _universe(
    request: ReleaseRequest, rng: np.random.Generator, lines: CutLines | None = None
) -> LearnedUniverse:  # fmt: skip
    """A raw table's item universe, learned on the run's ledger from ``rng`` under the
    release's relation (:mod:`dpquery.pipeline.universe`), from its ``lines`` (None: read
    here; or held on a cluster)."""
    source: Any = request.source  # a raw table's: ItemFile or ItemFrame, with learn
    read: CutLines = inputs.raw_lines(source) if lines is None else lines
    relation = _relation(request)
    options, share, bound = dict(request.options), source.learn.share, source.learn.bound
    if relation != ADD_REMOVE:  # n public: the plan's threshold against it, before the draw
        planned = universe_plan(options, read.n, share, bound, relation)
        if planned.tau > read.n:
            _warn(request, [BaselineWarning(
                f"the item universe's threshold ({planned.tau:,} users) is above the table's "
                f"{read.n:,} users: no item id is expected to be released; give the public "
                "catalogue, or raise the budget or the universe's share")])  # fmt: skip
    return learn_universe(read, options, share=share, bound=bound, neighbours=relation,
                          rng=rng)  # fmt: skip


def _fit_items(
    request: ReleaseRequest, data: Any, universe: LearnedUniverse | None = None,
    rng: np.random.Generator | None = None,
) -> Fitted:  # fmt: skip
    """Plan (the budget, the estimator, auto's choice and its check), then fit; after a
    ``universe`` learned from the data (drawn from ``rng``, the run's one generator), on
    the release's share of the run's ledger."""
    add_remove = plan.relation_of(plan.request_estimator(request, None)) == ADD_REMOVE
    options = plan.with_default_delta(request.options, data.n, add_remove)
    messages = _say(request, plan.budget_warnings(options, data.n, add_remove))
    rng = make_rng(request.seed) if rng is None else rng
    own = options if universe is None else learning.release_options(options)
    budget = None if universe is None else universe.release_ledger.budget
    model = plan.request_estimator(request, rng, own)
    if request.algorithm == "auto" and not add_remove:  # its plan reads n
        messages += _warn(request, plan.items_noise_warning(model, data, budget))
    fitted = fit_items(request, model, data, rng, universe)
    messages += _warn(request, plan.items_kept_nothing(fitted.release))
    if isinstance(data, PartitionedData):  # the workers read the lines; in memory: on read
        note_duplicates(request.source.path, data.duplicates)  # type: ignore[union-attr]
    fitted.messages = messages
    return fitted


def _release_items(request: ReleaseRequest) -> ReleaseResult:
    source: ItemFile | ItemMatrix | ItemFrame = request.source  # type: ignore[assignment]
    weights = request.output.weights
    labels = inputs.labels_of(source)  # a raw table's catalogue and columns (None: 0-based)
    learns = inputs.learns_items(source)
    if (labels is not None or learns) and weights and request.files is not None:
        raise DPQueryError(
            "weighted records are written with 0-based ids ('row item weight'); a raw "
            "table's release is written without weights"
        )
    if learns and request.files is not None:  # the form's checks, before the selection draws
        writes.item_form(request.files, weights, None)
    universe, rng = None, None
    check = lambda d: writes.item_form(request.files, weights, d)  # noqa: E731
    if inputs.raw_on_cluster(source, request.backend):  # its lines read on the workers
        assert isinstance(source, ItemFile)
        if labels is not None:
            check(len(labels.items))  # the output's form, before the cluster starts
        with inputs.open_raw(source, request.backend) as lines:
            if learns:
                rng = make_rng(request.seed)  # the run's one generator: the selection first
                with _said(request):
                    universe = _universe(request, rng, lines)
                labels = universe.labels
                data = lines.over(labels.items)
            else:
                note_dropped(source.path, lines.dropped)  # as the local reader says it
                data = lines.data()
            return _fit_and_write(request, source, data, check(data.d), universe, rng, labels)
    if learns:
        rng = make_rng(request.seed)  # the run's one generator: the selection draws first
        with _said(request):
            universe = _universe(request, rng)
        assert universe.items is not None
        labels, source = universe.labels, ItemMatrix(universe.items)
    with inputs.open_items(source, request.backend, check) as (items, form):
        return _fit_and_write(request, source, items, form, universe, rng, labels)


def _fit_and_write(
    request: ReleaseRequest, source: ItemFile | ItemMatrix | ItemFrame, data: Any, form: str,
    universe: LearnedUniverse | None, rng: np.random.Generator | None,
    labels: ItemLabels | None,
) -> ReleaseResult:  # fmt: skip
    """Fit item data (in memory or partitioned), make the rows, report, evaluate when asked
    and write."""
    weights = request.output.weights
    with _said(request):
        partitioned = isinstance(data, PartitionedData)
        fitted = _fit_items(request, data, universe, rng)
        reason = None
        if request.algorithm == "auto":
            private = fitted.release.neighbours == ADD_REMOVE  # said from the release
            reason = plan.items_auto_reason(
                fitted.model, data, partitioned, fitted.n if private else None,
                # (after a learned universe the plan has no budget of its own)
                fitted.release.parameters if private or universe is not None else None,
            )  # fmt: skip
    out = rows.item_rows(fitted, request.output)
    report = reports.items_report(fitted, out, form, weights, reason)
    evaluation = None
    if request.evaluate:  # the evaluation reads the real records in this process
        if universe is not None:  # over every id of the table, released or not
            evaluation = reports.items_evaluation(*on_all_items(
                inputs.raw_lines(request.source), universe.labels, out))  # type: ignore[arg-type]  # fmt: skip
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # its notes were said when the release read it
                real = inputs.load_items(source) if partitioned else data
            evaluation = reports.items_evaluation(real, out)
    return _written(request, fitted, out, form, report, evaluation, labels)


def _written(
    request: ReleaseRequest, fitted: Fitted, out: Any, form: str, report: dict[str, Any],
    evaluation: dict[str, Any] | None, labels: ItemLabels | None = None,
) -> ReleaseResult:  # fmt: skip
    if request.files is not None:
        domain = None if fitted.learned is None else fitted.learned.domain
        catalogue = None if fitted.universe is None else fitted.universe.labels.items
        writes.write_release(request.files, out, form, report, evaluation, domain, labels,
                             catalogue)  # fmt: skip
    return ReleaseResult(fitted.release, out, report, evaluation, fitted.messages, labels)


@contextmanager
def _said(request: ReleaseRequest) -> Iterator[None]:
    """With ``say``, the library's Python warnings that ``say`` shows are silenced."""
    with warnings.catch_warnings():
        if request.say is not None:
            for kind in plan.SAID:
                warnings.simplefilter("ignore", kind)
        yield


def _warn(request: ReleaseRequest, messages: list[Warning]) -> list[Warning]:
    """Said through ``say``, or, without it, warned (no estimator warns of these itself)."""
    _say(request, messages)
    if request.say is None:
        for message in messages:
            warnings.warn(message, stacklevel=3)
    return messages


def _say(request: ReleaseRequest, messages: list[Warning]) -> list[Warning]:
    if request.say is not None:
        for message in messages:
            request.say(message)
    return messages
