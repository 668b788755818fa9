"""Plans read only public sizes: every registered algorithm plans the same charges on a
:class:`PublicShape` (n and the domain, no records) as on the data itself."""

from __future__ import annotations

import pytest

from dpquery import datasets
from dpquery.algorithms import registry
from dpquery.data.shape import PublicShape
from dpquery.errors import DPQueryError
from dpquery.queries import build_workload

# A workload over 3 of adult's attributes leaves the rest untouched, so the pipeline that
# measures untouched columns plans its extra stage too.
ATTRIBUTES = ["age", "education", "sex"]


@pytest.fixture(scope="module")
def adult():
    data = datasets.load("adult")  # shipped with the package
    workload = build_workload("all-marginals", data.domain, k=2, attributes=ATTRIBUTES)
    return data, workload


@pytest.mark.parametrize("name", registry.names())
def test_every_algorithm_plans_on_the_public_shape_alone(adult, name):
    data, workload = adult
    given = {"epsilon": 1.0}
    if "T" in registry.takes(name) and name not in ("adaptive-projection",):
        given["T"] = 5
    model = registry.build(name, given, seed=0)
    if name == "wide-dense":  # independent free bits only: adult's one-hot groups are refused
        for shown in (data, PublicShape.of(data)):
            with pytest.raises(DPQueryError, match="one-hot groups"):
                model.charges(shown, workload)
        return
    on_data = model.charges(data, workload)
    on_shape = model.charges(PublicShape.of(data), workload)
    assert on_shape == on_data
    # uniform reads nothing; adaptive-projection (auto's choice here) and wide measure every
    # 1-way marginal (every item's count) themselves.
    if name not in ("uniform", "adaptive-projection", "auto", "wide"):
        assert on_shape[0].mechanism == "untouched attributes: 1-way marginals"


def test_the_shape_refuses_what_is_not_a_size():
    domain = datasets.domain("adult")
    with pytest.raises(DPQueryError, match="n must be a positive number of records, got 0"):
        PublicShape(0, domain)
    with pytest.raises(DPQueryError, match="domain must be a Domain"):
        PublicShape(10, {"age": [1, 2]})  # type: ignore[arg-type]
