"""The HTML evaluation page as a data holder reads it: what publishing the release promises,
in plain words, first; what the release's parameters mean; and a labelled NOT PRIVATE
reference row (independent marginals: the product of the true 1-way marginals) to judge TV
against."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpquery.algorithms import registry
from dpquery.data import encode
from dpquery.evaluation.holder import evaluate_synthetic
from dpquery.evaluation.html import format_number, render_html
from dpquery.evaluation.marginals import total_variation
from dpquery.evaluation.release_report import publishable_report
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.queries import all_kway_marginals
from test_evaluation_html import DOMAIN, check_numbers_match_the_json, parse, small_table

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def page_and_doc():
    table = small_table(400, 11)
    data = encode(table, DOMAIN)
    workload = all_kway_marginals(DOMAIN, 2)
    model = registry.build("adaptive-projection", {"epsilon": 1.0}, seed=0, progress=False)
    release = model.fit(data, workload)
    ev = evaluate_synthetic(data, release.records, workload)
    # The release section as `dpquery synth --report` writes it (JSON).
    section = json.loads(json.dumps(publishable_report(release)["release"], default=float))
    text = render_html(ev, section)
    page = parse(text)
    return text, page, check_numbers_match_the_json(page), table, ev


def test_the_promise_comes_first_in_plain_words(page_and_doc) -> None:
    text, page, doc, *_ = page_and_doc
    assert text.index("What you can promise") < text.index('class="banner"')
    assert text.index("What you can promise") < text.index("Workload error")
    words = " ".join(page.other_text)
    # the release's relation: add/remove one record (the default), n private
    assert ("they would learn almost as well had your record been left out of the data, or "
            "another person's added") in words  # fmt: skip
    assert "The number of records is protected too" in words
    assert "replaced" not in words
    spans = dict(page.spans)
    assert doc["promise"]["epsilon"] == 1.0
    assert spans["promise.odds_factor"] == format_number(math.e)  # e^epsilon
    assert spans["promise.delta"] == format_number(doc["release"]["privacy"]["budget"]["delta"])
    # The accountants' statement follows the plain words.
    assert text.index("almost as well") < text.index("Asked for")


def test_under_replace_one_the_promise_says_replaced_and_n_public() -> None:
    table = small_table(400, 11)
    data = encode(table, DOMAIN)
    workload = all_kway_marginals(DOMAIN, 2)
    model = registry.build("adaptive-projection", {"epsilon": 1.0}, seed=0, progress=False,
                           neighbours="replace-one")  # fmt: skip
    release = model.fit(data, workload)
    ev = evaluate_synthetic(data, release.records, workload)
    section = json.loads(json.dumps(publishable_report(release)["release"], default=float))
    words = " ".join(parse(render_html(ev, section)).other_text)
    assert "they would learn almost as well had your record been replaced" in words
    assert "The number of records is treated as public." in words


def test_the_parameters_are_explained(page_and_doc) -> None:
    text, _, doc, *_ = page_and_doc
    parameters = doc["release"]["parameters"]
    assert len(parameters["one_way"]) == len(DOMAIN)
    for i, name in enumerate(DOMAIN.names):
        cell = f'<td class="name">one_way.{i}</td>'
        row = text[text.index(cell) : text.index("</tr>", text.index(cell))]
        assert "noise scale (standard deviation, in records)" in row
        assert f'data-key="evaluation.one_way.{i}.attribute">{name}<' in row
    row = text[text.index('<td class="name">alpha</td>') :].split("</tr>")[0]
    assert "the share of rho spent measuring" in row


def test_the_independent_reference_row_is_labelled_and_right(page_and_doc) -> None:
    text, _, doc, table, _ = page_and_doc
    ev = doc["evaluation"]
    assert "independent marginals (NOT PRIVATE reference)" in text
    assert "TV independent (NOT PRIVATE)" in text
    # Each 2-way marginal's reference TV, recomputed from the table by pandas.
    binned = table.assign(age=np.minimum(table["age"] // 10, 9))
    for entry in ev["per_marginal"]:
        a, b = entry["attributes"]
        joint = pd.crosstab(binned[a], binned[b], normalize=True)
        outer = np.outer(joint.sum(axis=1), joint.sum(axis=0))
        expected = total_variation(joint.to_numpy().ravel(), outer.ravel())
        assert entry["tv"]["independent"] == pytest.approx(expected, abs=1e-9), (a, b)
    assert len(ev["per_marginal"]) == 6 and ev["errors"]["independent"]["mean_tv"] > 0


def test_a_zcdp_budget_is_promised_through_its_epsilon(page_and_doc) -> None:
    """rho = 0.05 zCDP on n = 400 records, stated at delta = 1/n^2 by the CKS conversion."""
    *_, ev = page_and_doc
    release = {
        "algorithm": "adaptive-projection",
        "privacy": {"budget": {"measure": "zcdp", "epsilon": None, "delta": 0.0, "rho": 0.05},
                    "guarantees": [{"measure": "zcdp", "accountant": "zCDP", "rho": 0.05}]},
        "parameters": {"n": 400},
    }  # fmt: skip
    text = render_html(ev, release)
    page = parse(text)
    doc = check_numbers_match_the_json(page)
    assert doc["promise"]["epsilon"] == pytest.approx(zcdp_to_epsilon(0.05, 1 / 400**2))
    assert doc["promise"]["delta"] == pytest.approx(1 / 400**2)
    words = " ".join(page.other_text)
    assert "zCDP, which gives this epsilon" in words
    asked = text[text.index("Asked for") :].split("</p>")[0]
    assert "rho" in asked and "delta" not in asked  # a rho budget's delta field is not asked
