"""The data holder's evaluation: marginals from the indicator Gram matrix, the evaluation
dict, and the self-contained HTML page of ``dpquery evaluate --html`` (parses, embeds decodable
PNGs, every number shown equals the JSON evaluation, loads nothing from the network)."""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import sys
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import dpquery.evaluation.marginals as marginals_module
from cli_process import dpquery_cli
from dpquery.data import Binary, Categorical, Domain, Numeric, encode
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.evaluation.holder import evaluate_synthetic
from dpquery.evaluation.html import format_number, lookup, render_html
from dpquery.evaluation.marginals import Indicators, gram, total_variation, two_way
from dpquery.evaluation.metrics import error_report
from dpquery.queries import all_kway_marginals, answer

pytest.importorskip("matplotlib")

DOMAIN = Domain((
    Categorical("sex", ("F", "M")),
    Categorical("relationship", ("Husband", "Wife", "Own-child", "Unmarried")),
    Numeric.equal_width("age", 0, 100, 10, integer=True),
    Binary("smoker", ("no", "yes")),
))  # fmt: skip


def small_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    rel = np.where(sex == "F", rng.choice(["Wife", "Own-child", "Unmarried"], n),
                   rng.choice(["Husband", "Own-child", "Unmarried"], n))  # fmt: skip
    return pd.DataFrame({"sex": sex, "relationship": rel, "age": rng.integers(0, 100, n),
                         "smoker": rng.choice(["no", "yes"], n)})  # fmt: skip


# -- marginals --------------------------------------------------------------------------
def test_gram_blocks_are_the_crosstabs(monkeypatch):
    table = small_table(1000, 0)
    table["age_bin"] = np.minimum(table["age"] // 10, 9)
    monkeypatch.setattr(marginals_module, "_CHUNK_WORDS", 3)  # several passes over the rows
    data = encode(table[list(DOMAIN.names)], DOMAIN)
    g = gram(data, DOMAIN)
    ind = Indicators(DOMAIN)
    expected = pd.crosstab(table["relationship"], table["smoker"], normalize=True)
    got = two_way(g, ind, 1, 3)
    rel = DOMAIN["relationship"]
    assert isinstance(rel, Categorical)
    expected = expected.reindex(index=list(rel.values), columns=["no", "yes"], fill_value=0)
    assert np.allclose(got, expected.to_numpy())
    ages = table["age_bin"].value_counts(normalize=True).reindex(range(10), fill_value=0)
    assert np.allclose(np.diag(g)[ind.offsets[2] : ind.offsets[3]], ages.to_numpy())
    assert np.isclose(g.sum(), len(DOMAIN) ** 2)  # every block sums to 1


def test_gram_of_weighted_records():
    rows = encode(small_table(3, 1), DOMAIN).to_dense()
    g = gram(Records(rows, np.array([1.0, 0.0, 3.0]), DOMAIN), DOMAIN, pairs=False)
    dense_g = gram(Records(rows[[0, 2, 2, 2]], None, DOMAIN), DOMAIN, pairs=False)
    assert np.allclose(g, dense_g)


def test_per_marginal_tv_agrees_with_the_gram_marginals():
    """Two code paths (workload answers; the Gram matrix) give the same 2-way TV."""
    data = encode(small_table(500, 2), DOMAIN)
    synthetic = Records(encode(small_table(40, 3), DOMAIN).to_dense(), None, DOMAIN)
    workload = all_kway_marginals(DOMAIN, 2)
    ev = evaluate_synthetic(data, synthetic, workload)
    assert (
        ev["errors"]["synthetic"]
        == error_report(answer(workload, data), answer(workload, synthetic), workload).to_dict()
    )
    ind = Indicators(DOMAIN)
    g_real, g_syn = gram(data, DOMAIN), gram(synthetic, DOMAIN)
    by_pair = {tuple(e["attributes"]): e["tv"]["synthetic"] for e in ev["per_marginal"]}
    assert len(by_pair) == 6
    for i, j in itertools.combinations(range(len(DOMAIN)), 2):
        names = (DOMAIN.names[i], DOMAIN.names[j])
        direct = total_variation(two_way(g_real, ind, i, j), two_way(g_syn, ind, i, j))
        assert by_pair[names] == pytest.approx(direct, abs=1e-12)
    assert ev["two_way"]["max_tv"] == pytest.approx(max(by_pair.values()), abs=1e-12)
    assert all(e["tv"]["zeros"] == pytest.approx(0.5) for e in ev["per_marginal"])


# -- the page -----------------------------------------------------------------------------
class Page(HTMLParser):
    """Collects the data-key spans, images, links, the embedded JSON and the other text."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[str, str]] = []
        self.images: list[str] = []
        self.refs: list[str] = []
        self.other_text: list[str] = []
        self.names: list[str] = []  # cells naming a JSON key (class="name")
        self._naming = False
        self.json = ""
        self._key: str | None = None
        self._in: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._in.append(tag)
        if tag == "span" and "data-key" in a:
            self._key, self._text = a["data-key"], ""
        if tag == "td" and a.get("class") == "name":
            self.names.append("")
            self._naming = True
        if tag == "img":
            self.images.append(a["src"])
            self._in.pop()  # a void element
        self.refs += [v for k, v in attrs if k in ("src", "href") and v]
        if tag in ("link", "iframe") or (tag == "script" and "src" in a):
            self.refs.append(f"<{tag}>")

    def handle_endtag(self, tag):
        if self._in and self._in[-1] == tag:
            self._in.pop()
        if tag == "td":
            self._naming = False
        if tag == "span" and self._key is not None:
            self.spans.append((self._key, self._text))
            self._key = None

    def handle_data(self, data):
        if self._in and self._in[-1] == "script":
            self.json += data
        elif self._in and self._in[-1] == "style":
            return
        elif self._key is not None:
            self._text += data
        elif self._naming:
            self.names[-1] += data
        else:
            self.other_text.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


def _has(doc: dict, key: str) -> bool:
    try:
        lookup(doc, key)
    except (KeyError, IndexError, ValueError, TypeError):
        return False
    return True


def check_numbers_match_the_json(page: Page) -> dict:
    doc = json.loads(page.json)
    assert page.spans
    for key, text in page.spans:
        value = lookup(doc, key)
        if value is None:
            assert text == "n/a"
        elif isinstance(value, bool) or not isinstance(value, int | float):
            assert text == (format_number(value) if isinstance(value, bool) else str(value))
        else:
            assert text == format_number(value), key
            assert float(text.replace(",", "")) == pytest.approx(value, rel=5e-4, abs=1e-12)
    # A cell naming a key (epsilon0, one_way.2) names one of the JSON's release keys.
    for name in page.names:
        assert any(_has(doc, f"release.{part}.{name}") for part in ("parameters", "privacy")), name
    # No number on the page comes from anywhere but the JSON.
    stray = re.findall(r"\d", " ".join(page.other_text))
    assert not stray, [t for t in page.other_text if re.search(r"\d", t)]
    return doc


def check_images(page: Page, at_least: int) -> None:
    from matplotlib.image import imread

    assert len(page.images) >= at_least
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        raw = base64.b64decode(src.split(",", 1)[1], validate=True)
        assert raw.startswith(b"\x89PNG\r\n\x1a\n")
        assert imread(io.BytesIO(raw), format="png").ndim == 3
    assert all(r.startswith("data:") for r in page.refs), page.refs  # nothing from a network


def test_render_html_without_a_release():
    data = encode(small_table(300, 4), DOMAIN)
    synthetic = encode(small_table(50, 5), DOMAIN)
    ev = evaluate_synthetic(data, synthetic, all_kway_marginals(DOMAIN, 1))
    page = parse(render_html(ev))
    doc = check_numbers_match_the_json(page)
    assert doc == {"evaluation": json.loads(json.dumps(ev))}
    check_images(page, len(DOMAIN) + 3)
    assert "NOT PRIVATE" in " ".join(page.other_text)
    assert "--release-report" in " ".join(page.other_text)
    assert "Coherence" in " ".join(page.other_text) and "coherence" not in doc["evaluation"]


def test_render_html_needs_matplotlib(monkeypatch):
    data = encode(small_table(30, 6), DOMAIN)
    ev = evaluate_synthetic(data, data, all_kway_marginals(DOMAIN, 1))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(DPQueryError, match=r"dpquery\[report\]"):
        render_html(ev)


@pytest.fixture
def files(tmp_path):
    small_table(300, 7).to_csv(tmp_path / "people.csv", index=False)
    DOMAIN.save(tmp_path / "domain.json")
    all_kway_marginals(DOMAIN, 2).save(tmp_path / "W.npz")
    return tmp_path


DATA = ["--data", "people.csv", "--domain", "domain.json"]


@pytest.mark.slow
def test_evaluate_html_end_to_end(files):
    """A real release (``dpquery synth``), then ``dpquery evaluate --html``."""
    synth = dpquery_cli("synth", *DATA, "--algorithm", "dualquery", "--epsilon", "1",
                        "--delta", "1e-3", "--workload", "W.npz", "--out", "S.csv", "--report",
                        "R.json", "--seed", "0", "--quiet", cwd=files)  # fmt: skip
    assert synth.code == 0, synth.err
    result = dpquery_cli("evaluate", *DATA, "--synthetic", "S.csv", "--workload", "W.npz",
                         "--report", "E.json", "--html", "page.html", "--release-report",
                         "R.json", cwd=files)  # fmt: skip
    assert result.code == 0, result.err
    assert "NOT PRIVATE" in result.out  # the label stands beside the numbers
    page = parse((files / "page.html").read_text(encoding="utf-8"))
    doc = check_numbers_match_the_json(page)
    check_images(page, len(DOMAIN) + 3)
    # The page's JSON is the JSON evaluation and the release's own account.
    saved = json.loads((files / "E.json").read_text())
    assert saved.pop("coherence") == doc["evaluation"]["coherence"]  # the same measurement
    assert doc["evaluation"]["errors"]["synthetic"] == saved
    release = json.loads((files / "R.json").read_text())["release"]
    assert doc["release"]["privacy"] == release["privacy"]
    assert doc["release"]["parameters"] == release["parameters"]
    shown = {key for key, _ in page.spans}
    assert any(k.startswith("release.privacy.guarantees.") for k in shown)
    assert "Asked for" in " ".join(page.other_text)  # the requested guarantee comes first
    assert {"release.privacy.budget.epsilon", "release.privacy.spent"} <= shown
    assert any(k.startswith("release.parameters.") for k in shown)
    assert "evaluation.errors.uniform.max_error" in shown
    # coherence, measured on the two tables in their own columns
    assert "evaluation.coherence.incoherent_fraction" in shown
    rules = [text for key, text in page.spans if key.endswith(".constraint")]
    assert "never sex = 'M' with relationship = 'Wife'" in rules


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--release-report", "R.json"], "give --html too"),
        (["--html", "page.html", "--release-report", "absent.json"], "does not exist"),
        (["--html", "page.html", "--release-report", "bad.json"], "'release' section"),
        (["--html", "folder"], "it is a folder"),
    ],
)
def test_evaluate_html_bad_input_writes_nothing(files, extra, fragment):
    (files / "bad.json").write_text('{"evaluation": {}}')
    (files / "folder").mkdir()
    small_table(20, 8).to_csv(files / "S.csv", index=False)
    before = sorted(p.name for p in files.iterdir())
    result = dpquery_cli("evaluate", *DATA, "--synthetic", "S.csv", "--workload", "W.npz",
                         *extra, cwd=files)  # fmt: skip
    assert result.code == 2 and fragment in result.err, result.err
    assert sorted(p.name for p in files.iterdir()) == before
