"""The registry of synthetic-data algorithms and the options each takes.

A front end (the ``dpquery synth`` command) reads everything from here: the names, the
options (:mod:`dpquery.algorithms.options`: help, type, choices), which algorithm takes which,
and :func:`build`, which turns a flat mapping of options into an estimator and refuses any
option the algorithm does not take. Adding an algorithm is a :class:`Synthesizer` subclass
listed in :data:`ALGORITHMS` (``docs/architecture.md``).

FEM and sepFEM may also run as the base of a :class:`~dpquery.algorithms.game.reweight.Reweighted`
pipeline: giving them ``fraction`` (the share MWEM reweights with) builds the pipeline.

``auto`` (:mod:`dpquery.algorithms.auto`) chooses one of the others from the data's public
shape when it plans, and builds it here: the registry hands it :func:`takes` and :func:`build`
(:class:`~dpquery.algorithms.auto.Catalog`), so ``auto`` never imports the registry.

Each family declares its options in its own ``options`` module; the registry adds them to the
one table (:func:`~dpquery.algorithms.options.declare`).

Every algorithm that reads the data is built inside a
:class:`~dpquery.algorithms.columns.MeasuredColumns` pipeline, which measures the attributes no
workload query touches, unless the user chose a free-attribute policy (``zeros`` or
``uniform`` leave those columns without information; ``private-density`` measures every bit).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

from dpquery.algorithms.auto import Auto, Catalog
from dpquery.algorithms.columns import DEFAULT_SHARE, NOT_WRAPPED, MeasuredColumns
from dpquery.algorithms.game.dqrs import DQRS
from dpquery.algorithms.game.dualquery import DualQuery
from dpquery.algorithms.game.fem import FEM, SepFEM
from dpquery.algorithms.game.mwem import MWEM
from dpquery.algorithms.game.options import OPTIONS as GAME_OPTIONS
from dpquery.algorithms.game.reweight import Reweighted
from dpquery.algorithms.marginal.adaptive_projection import AdaptiveProjection
from dpquery.algorithms.marginal.options import OPTIONS as MARGINAL_OPTIONS
from dpquery.algorithms.options import Option, declare, options
from dpquery.algorithms.synthesizer import Synthesizer
from dpquery.algorithms.uniform import UniformRecords
from dpquery.algorithms.wide.dense import DenseBits
from dpquery.algorithms.wide.options import OPTIONS as WIDE_OPTIONS
from dpquery.algorithms.wide.release import WideRelease
from dpquery.errors import DPQueryError
from dpquery.privacy.neighbours import (
    ADD_REMOVE,
    REPLACE_ONE,
    check_neighbours,
    refuse_add_remove,
)

declare(*GAME_OPTIONS, *MARGINAL_OPTIONS, *WIDE_OPTIONS)
ALGORITHMS: dict[str, type[Synthesizer]] = {
    cls.name: cls
    for cls in (
        Auto,
        DualQuery,
        DQRS,
        FEM,
        SepFEM,
        MWEM,
        AdaptiveProjection,
        UniformRecords,
        WideRelease,
        DenseBits,
    )
}
# Keywords every estimator may take that are not user options: the seed (the front end's
# generator), the progress display and the oracle's own options.
RUNTIME = ("seed", "progress", "oracle_options")
# The pipeline's options a base algorithm accepts (Reweighted.front_options without the
# budget, size and seed, which every such base takes itself).
PIPELINE_OPTIONS = ("fraction", "reweight_rounds")
# The option of the MeasuredColumns pipeline, taken by every algorithm that reads the data.
COLUMNS_OPTION = "untouched_share"


class OptionError(DPQueryError):
    """Options an algorithm does not take (``refused``), or one given without the option it
    needs (``needs``: ``(given, missing)``). Names are the options' keywords."""

    def __init__(
        self, algorithm: str, refused: Iterable[str] = (), needs: tuple[str, str] | None = None
    ) -> None:
        self.algorithm, self.refused, self.needs = algorithm, tuple(refused), needs
        if self.refused:
            super().__init__(f"{algorithm} does not take {', '.join(self.refused)}")
        else:
            assert needs is not None
            super().__init__(f"{needs[0]} needs {needs[1]}")


def names() -> tuple[str, ...]:
    return tuple(ALGORITHMS)


def algorithm(name: str) -> type[Synthesizer]:
    if name not in ALGORITHMS:
        raise DPQueryError(f"unknown algorithm {name!r}; choose one of {names()}")
    return ALGORITHMS[name]


def takes(name: str) -> tuple[str, ...]:
    """The user options algorithm ``name`` takes (the pipeline's too for FEM's family)."""
    cls = algorithm(name)
    pipeline = PIPELINE_OPTIONS if issubclass(cls, FEM) else ()
    return cls.options + pipeline + ((COLUMNS_OPTION,) if _reads_data(cls) else ())


def _reads_data(cls: type[Synthesizer]) -> bool:
    """Whether the algorithm may leave attributes unmeasured: it reads the data, and the
    pipeline takes it as its base (not in :data:`~dpquery.algorithms.columns.NOT_WRAPPED`:
    AdaptiveProjection, for one, measures every attribute's 1-way marginal itself); ``auto``
    builds its choice here, with the choice's own pipeline."""
    return cls is not UniformRecords and cls.name not in NOT_WRAPPED


def all_options() -> dict[str, Option]:
    """Every option some registered algorithm takes, in declaration order."""
    used = {o for name in ALGORITHMS for o in takes(name)}
    return {k: o for k, o in options().items() if k in used}


def taken_by(option: str) -> tuple[str, ...]:
    return tuple(name for name in ALGORITHMS if option in takes(name))


def supports_add_remove(name: str) -> bool:
    """Whether algorithm ``name`` releases under add/remove neighbours (it takes
    ``neighbours``); the papers' algorithms are proved for replace-one only."""
    return "neighbours" in algorithm(name).parameter_names()


def default_neighbours(name: str) -> str:
    """The relation algorithm ``name`` releases under when none is given: its own default
    (add/remove for the releases ``auto`` picks; replace-one for the papers' algorithms,
    whose theorems are proved for it)."""
    cls = algorithm(name)
    if not supports_add_remove(name):
        return REPLACE_ONE
    default = inspect.signature(cls.__init__).parameters["neighbours"].default
    return str(default)


def build(
    name: str, given: Mapping[str, Any], *, neighbours: str | None = None, **runtime: Any
) -> Synthesizer:
    """The estimator for ``name`` with the user options ``given`` (None values are not
    given), the neighbouring relation (None: the algorithm's default,
    :func:`default_neighbours`; add-remove refused by the algorithms proved for replace-one
    only) and the runtime keywords (:data:`RUNTIME`) it accepts."""
    cls = algorithm(name)
    values = {k: v for k, v in given.items() if v is not None}
    among = values.pop("neighbours", None)  # also accepted among the options
    neighbours = among if neighbours is None else neighbours
    if neighbours is not None:
        check_neighbours(neighbours)
        if supports_add_remove(name):
            values["neighbours"] = neighbours
        elif neighbours == ADD_REMOVE:
            raise refuse_add_remove(name)
    refused = [k for k in values if k not in takes(name) and k != "neighbours"]  # set above
    if refused:
        raise OptionError(name, refused)
    if "reweight_rounds" in values and "fraction" not in values:
        raise OptionError(name, needs=("reweight_rounds", "fraction"))
    unknown = [k for k in runtime if k not in RUNTIME]
    if unknown:
        raise DPQueryError(f"unknown runtime keywords {unknown}; expected some of {RUNTIME}")
    accepted = cls.parameter_names()
    runtime = {k: v for k, v in runtime.items() if v is not None and v != {}}
    if "oracle_options" in runtime and "oracle_options" not in accepted:
        raise OptionError(name, ["oracle_options"])
    # The progress display is shown by the algorithms that have one, and ignored otherwise.
    values.update({k: v for k, v in runtime.items() if k in accepted})
    share = values.pop(COLUMNS_OPTION, None)
    policy = values.get("free_attributes")
    if share is not None and policy is not None:
        raise OptionError(name, needs=(COLUMNS_OPTION, "free_attributes left unset"))
    model: Synthesizer
    if "fraction" in values:
        assert issubclass(cls, FEM)
        model = Reweighted.around(cls, values)
    else:
        model = cls(**values)
    # The user's policy, an algorithm that reads nothing, or explicit parameters (no budget
    # to share): the columns are left as they are, and the report says so.
    if (
        policy is not None
        or not _reads_data(cls)
        or (values.get("epsilon") is None and values.get("rho") is None)
    ):
        return model
    seed = model.seed
    return MeasuredColumns(model.with_params(seed=None), share=share or DEFAULT_SHARE, seed=seed)


Auto.catalog = Catalog(takes, build, supports_add_remove)
