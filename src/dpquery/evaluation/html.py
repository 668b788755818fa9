"""One self-contained HTML page of a synthetic table's evaluation, for the data holder.

``render_html(evaluation, release)`` draws the dict of
:func:`dpquery.evaluation.holder.evaluate_synthetic` (and, when given, the ``release``
section that ``dpquery synth --report`` writes: algorithm, parameters, privacy account) as
tables and matplotlib plots embedded as base64 PNG ``data:`` URIs: no network, no files
beside it. Every number shown is a ``<span data-key="...">`` naming its place in the JSON
embedded at the end of the page (``<script type="application/json">``), so the page and the
JSON cannot disagree. The page is computed on the private data and says so: NOT PRIVATE.

Needs matplotlib (``pip install 'dpquery[report]'``).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.io import atomic_write_text
from dpquery.privacy.conversions import zcdp_to_epsilon
from dpquery.privacy.delta import WEAK_EPSILON, relation_default_delta
from dpquery.privacy.neighbours import ADD_REMOVE, REPLACE_ONE

WORST_MARGINALS_SHOWN = 25
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
.banner{background:#b00020;color:#fff;padding:1em;font-weight:bold;border-radius:4px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px}
td.n{text-align:right;font-variant-numeric:tabular-nums}
figure{display:inline-block;margin:.5em}img{max-width:100%}.muted{color:#666}
"""


def format_number(value: float | int) -> str:
    """How a JSON number is shown: integers with thousands separators, floats to 4
    significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.4g}"


def lookup(doc: Any, key: str) -> Any:
    """The value at a dotted ``key`` (list indices as numbers) in ``doc``."""
    for part in key.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


class _Page:
    """The page's JSON document and the spans that show its values."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def value(self, key: str) -> str:
        v = lookup(self.doc, key)
        if v is None:
            text = "n/a"
        elif isinstance(v, bool | int | float):
            text = format_number(v)
        else:
            text = str(v)
        cls = ' class="num"' if isinstance(v, int | float) and not isinstance(v, bool) else ""
        return f'<span data-key="{html.escape(key)}"{cls}>{html.escape(text)}</span>'

    def cell(self, key: str) -> str:
        v = lookup(self.doc, key)
        numeric = isinstance(v, int | float) and not isinstance(v, bool)
        return f"<td{' class=n' if numeric else ''}>{self.value(key)}</td>"


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


# -- plots ------------------------------------------------------------------------------
def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _ticks(ax: Any, axis: str, labels: list[str]) -> None:
    step = max(1, math.ceil(len(labels) / 25))  # at most 25 labels per axis stay legible
    pos = list(range(0, len(labels), step))
    short = [labels[p][:14] for p in pos]
    if axis == "x":
        ax.set_xticks(pos, short, rotation=60, ha="right", fontsize=7)
    else:
        ax.set_yticks(pos, short, fontsize=7)


def _bars(entry: dict[str, Any]) -> str:
    from matplotlib.figure import Figure  # optional (the report extra)

    k = len(entry["labels"])
    fig = Figure(figsize=(min(12.0, 2.5 + 0.25 * k), 2.6))
    ax = fig.subplots()
    x = np.arange(k)
    ax.bar(x - 0.2, entry["real"], 0.4, label="real", color="#444")
    ax.bar(x + 0.2, entry["synthetic"], 0.4, label="synthetic", color="#e07b00")
    _ticks(ax, "x", entry["labels"])
    ax.set_ylabel("fraction of records")
    ax.set_title(entry["attribute"], fontsize=9)
    ax.legend(fontsize=7)
    return _png(fig)


def _heatmaps(entry: dict[str, Any]) -> str:
    from matplotlib.colors import PowerNorm  # optional (the report extra)
    from matplotlib.figure import Figure  # optional (the report extra)

    real, syn = np.asarray(entry["real"]), np.asarray(entry["synthetic"])
    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    vmax = max(float(real.max()), float(syn.max()), 1e-12)
    for ax, grid, name in zip(axes, (real, syn), ("real", "synthetic"), strict=True):
        # A square-root colour scale: the rare cells, where synthetic data fails, stay visible.
        norm = PowerNorm(0.5, vmin=0, vmax=vmax)
        image = ax.imshow(grid, cmap="viridis", norm=norm, aspect="auto")
        ax.set_title(f"{name}: {entry['attributes'][0]} x {entry['attributes'][1]}", fontsize=9)
        _ticks(ax, "y", entry["labels"][0])
        _ticks(ax, "x", entry["labels"][1])
    fig.colorbar(image, ax=list(axes), label="fraction of records (square-root scale)")
    return _png(fig)


def _figure(src: str, caption: str) -> str:
    return f'<figure><img src="{src}" alt=""><figcaption>{caption}</figcaption></figure>'


# -- sections ---------------------------------------------------------------------------
# How each row of the error tables is labelled: the reference that reads the data says so.
ROW_LABELS = {
    "synthetic": "synthetic",
    "zeros": "zeros",
    "uniform": "uniform",
    "independent": "independent marginals (NOT PRIVATE reference)",
}


def _errors(page: _Page) -> str:
    errors = page.doc["evaluation"]["errors"]
    cols = [c for c in ("mean_tv", "max_tv", "max_error", "mean_error", "rmse")
            if c in errors["synthetic"]]  # fmt: skip
    rows = [[f"<td>{html.escape(ROW_LABELS.get(name, name))}</td>",
             *(page.cell(f"evaluation.errors.{name}.{c}") for c in cols)]
            for name in errors]  # fmt: skip
    header = ["release", *(c.replace("_", " ").replace("tv", "TV") for c in cols)]
    independent = (
        " The independent-marginals row is a reference, not a release: the answers of the "
        "product of the true one-way marginals (every attribute independent of the others), "
        "computed on the private data and NOT PRIVATE. It shows how much of a marginal the "
        "one-way marginals alone explain: a release near it has captured the columns but "
        "not how they depend on each other; one below it has captured some of that."
        if "independent" in errors
        else ""
    )
    return (
        "<h2>Workload error</h2><p>Errors are fractions of records: |released answer - true "
        "answer| over the queries of the workload. TV is the total variation distance "
        "of a whole marginal (half the sum of its cells' errors; zero when the two tables "
        "agree, one when they share nothing), and mean TV its average over the workload's "
        "marginals: read it first, as a mean over cells shrinks with their number whatever "
        "the release. The zeros baseline answers from one all-zero record, the uniform "
        "baseline from the uniform distribution over the domain: neither reads the data, so "
        f"a release should beat both.{independent}</p>" + _table(header, rows)
    )


def _per_marginal(page: _Page) -> str:
    entries = page.doc["evaluation"]["per_marginal"]
    if not entries:
        return ""
    order = sorted(range(len(entries)), key=lambda j: -entries[j]["tv"]["synthetic"])
    shown = [b for b in ("synthetic", "zeros", "uniform", "independent") if b in entries[0]["tv"]]
    rows = []
    for j in order[:WORST_MARGINALS_SHOWN]:
        attrs = " x ".join(html.escape(a) for a in entries[j]["attributes"])
        cells = [page.cell(f"evaluation.per_marginal.{j}.tv.{b}") for b in shown]
        rows.append([f"<td>{attrs}</td>", *cells])
    header = [f"TV {b}" + (" (NOT PRIVATE)" if b == "independent" else "") for b in shown]
    return (
        "<h2>Workload marginals</h2><p>Total variation of each marginal of the workload, the "
        "worst first (all of them are in the embedded JSON).</p>"
        + _table(["marginal", *header], rows)
    )


def _one_way(page: _Page) -> str:
    entries = page.doc["evaluation"]["one_way"]
    rows = [[f"<td>{html.escape(e['attribute'])}</td>",
             page.cell(f"evaluation.one_way.{i}.tv.synthetic"),
             page.cell(f"evaluation.one_way.{i}.tv.uniform")]
            for i, e in enumerate(entries)]  # fmt: skip
    figures = "".join(_figure(_bars(e), html.escape(e["attribute"])) for e in entries)
    return (
        "<h2>One-way marginals, real and synthetic</h2>"
        + _table(["attribute", "TV synthetic", "TV uniform"], rows)
        + figures
    )


def _two_way(page: _Page) -> str:
    two = page.doc["evaluation"]["two_way"]
    if not two.get("worst"):
        return "<h2>Two-way marginals</h2><p>Not computed: the domain has too many cells.</p>"
    summary = (
        f"<p>{page.value('evaluation.two_way.pairs')} attribute pairs; TV of their "
        f"marginals: max {page.value('evaluation.two_way.max_tv')}, mean "
        f"{page.value('evaluation.two_way.mean_tv')}. The worst pairs:</p>"
    )
    figures = []
    for i, e in enumerate(two["worst"]):
        caption = (f"{html.escape(' x '.join(e['attributes']))}: TV synthetic "
                   f"{page.value(f'evaluation.two_way.worst.{i}.tv.synthetic')}, TV uniform "
                   f"{page.value(f'evaluation.two_way.worst.{i}.tv.uniform')}")  # fmt: skip
        figures.append(_figure(_heatmaps(e), caption))
    return "<h2>Two-way marginals, real and synthetic</h2>" + summary + "".join(figures)


def _coherence(page: _Page) -> str:
    coherence = page.doc["evaluation"].get("coherence")
    if coherence is None:
        return (
            "<h2>Coherence</h2><p>Not measured: it needs both tables in their own columns "
            "(not encoded <code>.npz</code> files).</p>"
        )
    rows = [[page.cell(f"evaluation.coherence.worst.{i}.{c}")
             for c in ("constraint", "evidence", "violated_fraction")]
            for i in range(len(coherence["worst"]))]  # fmt: skip
    return (
        "<h2>Coherence</h2><p>Rules that EVERY real record keeps (value pairs that never occur "
        "together although both are frequent; numeric bounds implied by a category; numeric "
        "ranges), read off the private data, and the fraction of synthetic records that break "
        f"them. Of {page.value('evaluation.coherence.constraints')} rules, at least one is "
        f"broken by a fraction {page.value('evaluation.coherence.incoherent_fraction')} of the "
        "synthetic records; of the "
        f"{page.value('evaluation.coherence.categorical.constraints')} rules among categorical "
        "attributes (a numeric value is drawn inside its public bin, which can break rules "
        "whatever the release), by a fraction "
        f"{page.value('evaluation.coherence.categorical.incoherent_fraction')}. Evidence: "
        "the records independence predicts for a forbidden pair, "
        "or the fraction of real records beyond an implied bound. The most broken rules:</p>"
        + _table(["rule", "evidence", "fraction of synthetic records breaking it"], rows)
    )


def _flat(obj: Any, key: str) -> Iterator[str]:
    """Dotted keys of the scalars under ``key`` (lists of scalars included, lists of
    objects left to :func:`_records`)."""
    value = lookup(obj, key)
    if isinstance(value, dict):
        for k in value:
            yield from _flat(obj, f"{key}.{k}")
    elif isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            for i in range(len(value)):
                yield f"{key}.{i}"
    else:
        yield key


def _name_cell(name: str) -> str:
    """A table cell naming a key of the page's JSON (``epsilon0``, ``one_way.2``): a label,
    marked so that its digits are not taken for a number shown on the page."""
    return f'<td class="name">{html.escape(name)}</td>'


def _records(page: _Page, key: str) -> str:
    items = lookup(page.doc, key)
    cols: list[str] = []
    for item in items:
        cols += [c for c in item if c not in cols and not isinstance(item[c], dict | list)]
    rows = [[page.cell(f"{key}.{i}.{c}") if c in item else "<td></td>" for c in cols]
            for i, item in enumerate(items)]  # fmt: skip
    return _table(cols, rows)


def _asked_for(page: _Page, privacy: dict[str, Any]) -> str:
    """The guarantee the user asked for, first: the budget and what the ledger spent."""
    budget = privacy.get("budget")
    if not isinstance(budget, dict):
        return ""
    zcdp = budget.get("measure") == "zcdp"  # its delta field is not part of the guarantee
    given = [k for k in ("epsilon", "delta", "rho")
             if budget.get(k) is not None and not (zcdp and k == "delta")]  # fmt: skip
    asked = ", ".join(f"{k} {page.value(f'release.privacy.budget.{k}')}" for k in given)
    text = f"<p><strong>Asked for: {asked}</strong>"
    if "spent" in privacy and "accountant" in privacy:
        text += (f"; spent {page.value('release.privacy.spent')} under "
                 f"{page.value('release.privacy.accountant')}")  # fmt: skip
    text += ".</p>"
    # What the guarantee does not cover, beside it (Release.privacy: "warning", "seeded").
    for key in ("warning", "seeded"):
        if isinstance(privacy.get(key), str):
            text += f"<p><strong>{html.escape(privacy[key])}</strong></p>"
    return text


# What the release's parameters mean (adaptive-projection's, the default release's; AIM).
PARAMETER_MEANING = {
    "rho": "the budget as zCDP (an epsilon budget is converted to the largest rho that fits)",
    "T": "rounds: each selects a marginal and measures it with Gaussian noise",
    "alpha": "the share of rho spent measuring; the rest selects which marginal each round "
    "measures (AIM's alpha)",
    "sigma0": "the noise scale (standard deviation, in records) of a round's measurement",
    "epsilon0": "the epsilon of a round's selection (exponential mechanism)",
    "records": "the synthetic records fitted to the measurements",
    "column_tv": "columns whose noisy one-way marginal is estimated past this total variation "
    "are measured again, when affordable",
    "column_cap": "the most rho those re-measurements may spend",
    "pair_candidates": "two-way marginals offered to the selection besides the workload's",
    "workload_marginals": "the workload's marginals",
    "compress": "candidates are also offered with the values whose noisy one-way count is "
    "below compress x sigma merged",
    "sweeps": "passes of the fit over the measurements each round",
    "final_sweeps": "passes of the final fit",
    "accountant": "the accountant whose statement is the guarantee asked for",
}


def _meaning(page: _Page, key: str) -> str:
    """A cell saying what parameter ``key`` (``alpha``, ``one_way.3``) means, or empty."""
    name, _, index = key.partition(".")
    if name == "one_way" and index.isdigit():
        attributes = page.doc["evaluation"].get("one_way", [])
        shown = len(attributes) == len(page.doc["release"]["parameters"]["one_way"])
        who = page.value(f"evaluation.one_way.{index}.attribute") if shown else "an attribute"
        return (f"<td>the noise scale (standard deviation, in records) of the one-way "
                f"marginal measured for {who}</td>")  # fmt: skip
    if name == "budget":
        return "<td>the budget asked for</td>"
    return f"<td>{html.escape(PARAMETER_MEANING.get(key, ''))}</td>"


def _promise_numbers(release: dict[str, Any]) -> dict[str, float] | None:
    """The ``(epsilon, delta)`` the promise is stated in (a zCDP budget's from the report's
    own (epsilon, delta) statement) and the odds factor ``e^epsilon``; None without one."""
    privacy = release.get("privacy", {})
    budget = privacy.get("budget")
    if not isinstance(budget, dict):
        return None
    epsilon, delta = budget.get("epsilon"), budget.get("delta")
    extra: dict[str, float] = {}
    if epsilon is None:
        stated = [g for g in privacy.get("guarantees", [])
                  if g.get("measure") == "approx"
                  and isinstance(g.get("epsilon"), int | float)]  # fmt: skip
        rho, n = budget.get("rho"), release.get("parameters", {}).get("n")
        add_remove = _relation(release) == ADD_REMOVE
        if stated:
            epsilon, delta = stated[0]["epsilon"], stated[0]["delta"]
        elif isinstance(rho, int | float) and (add_remove or (isinstance(n, int) and n >= 1)):
            # rho-zCDP implies (epsilon, delta)-DP for every delta (CKS); stated at the default
            # delta (1/n^2; under add/remove, where n is private, 1e-9).
            delta = relation_default_delta(n, add_remove)
            epsilon = zcdp_to_epsilon(float(rho), delta)
            extra = {"rho": float(rho)}
        else:
            return None
    if not isinstance(epsilon, int | float) or not math.isfinite(epsilon):
        return None
    return {"epsilon": float(epsilon), "delta": float(delta or 0.0),
            "odds_factor": math.exp(min(float(epsilon), 700.0)), **extra}  # fmt: skip


def _relation(release: dict[str, Any]) -> str:
    """The relation the release's guarantee is stated for (a report without one: the
    replace-one, the relation a report that names none was made under)."""
    privacy = release.get("privacy", {})
    return str(
        privacy.get("neighbours", release.get("parameters", {}).get("neighbours", REPLACE_ONE))
    )


def _promise(page: _Page) -> str:
    """What the data holder can promise, in plain words, first; the accountants' terms
    below it."""
    head = "<h2>What you can promise</h2>"
    numbers = page.doc.get("promise")
    if numbers is None:
        return head + (
            "<p>Not known here: pass the JSON report of the release "
            "(<code>--release-report</code>) to see what publishing it promises.</p>"
        )
    if numbers["delta"]:
        unless = f"except with a probability of at most {page.value('promise.delta')}"
    else:
        unless = "without exception"
    weak = (
        " At this epsilon the factor is so large that the promise protects nothing one could "
        "rely on: a meaningful epsilon is at most a few."
        if numbers["epsilon"] > WEAK_EPSILON
        else ""
    )
    privacy = page.doc["release"].get("privacy", {})
    add_remove = _relation(page.doc["release"]) == ADD_REMOVE
    if "rho" in numbers:
        at = ("a delta of 1e-9 (the number of records is private)" if add_remove
              else "a delta of one over the number of records squared")  # fmt: skip
        weak += (
            f" (The budget is rho = {page.value('promise.rho')} zCDP, which gives this epsilon "
            f"at {at}, by the Canonne-Kamath-Steinke conversion.)"
        )
    if add_remove:
        had = "had your record been left out of the data, or another person's added"
        count = ("The number of records is protected too: the publication holds only a noisy "
                 "count of them.")  # fmt: skip
    else:
        had = "had your record been replaced by anyone else's"
        count = "The number of records is treated as public."
    return head + (
        "<p>Publish the synthetic table and its release report, never this page. To every "
        "person whose record is in the data you can promise: <strong>whatever anyone learns "
        f"from the publication, they would learn almost as well {had}.</strong> Almost: the "
        "probability of any conclusion about you "
        f"changes by at most a factor of {page.value('promise.odds_factor')} (e to the power "
        f"epsilon, epsilon = {page.value('promise.epsilon')}), {unless}. {count}{weak}</p>"
        "<p>In the accountants' terms (the full account is at the end of the page):</p>"
        + _asked_for(page, privacy)
    )


def _release(page: _Page) -> str:
    release = page.doc.get("release")
    if release is None:
        return (
            "<h2>Privacy account and parameters</h2><p>Not given: pass the JSON report of the "
            "release (<code>dpquery evaluate ... --release-report R.json</code>, the file "
            "<code>dpquery synth --report</code> wrote).</p>"
        )
    parts = ["<h2>Privacy account</h2>"]
    if "algorithm" in release:
        parts.append(f"<p>algorithm: {page.value('release.algorithm')}</p>")
    privacy = release.get("privacy", {})
    scalars = [k for k in _flat(page.doc, "release.privacy")]
    if scalars:
        parts.append(_table(["quantity", "value"],
                            [[_name_cell(k[len('release.privacy.'):]),
                              page.cell(k)] for k in scalars]))  # fmt: skip
    headings = {
        "guarantees": "The guarantee in each measure",
        "by_accountant": "Other accountants (bounds on the same release, for comparison)",
        "per_mechanism": "Mechanisms",
    }
    for name, heading in headings.items():
        if isinstance(privacy.get(name), list) and privacy[name]:
            parts.append(f"<h3>{heading}</h3>")
            parts.append(_records(page, f"release.privacy.{name}"))
    if isinstance(release.get("parameters"), dict):
        keys = list(_flat(page.doc, "release.parameters"))
        parts.append("<h2>Parameters</h2>")
        names = [k[len("release.parameters.") :] for k in keys]
        parts.append(_table(["parameter", "value", "meaning"],
                            [[_name_cell(name), page.cell(k), _meaning(page, name)]
                             for name, k in zip(names, keys, strict=True)]))  # fmt: skip
    return "".join(parts)


def _without_n(evaluation: dict[str, Any]) -> dict[str, Any]:
    """``evaluation`` without the real table's number of records (``data.records``)."""
    out = dict(evaluation)
    for name in ("data",):
        if isinstance(out.get(name), dict):
            out[name] = {k: v for k, v in out[name].items() if k != "records"}
    for k, v in out.items():  # item data: the measures' own section
        if isinstance(v, dict) and isinstance(v.get("data"), dict) and k != "data":
            out[k] = {**v, "data": {a: b for a, b in v["data"].items() if a != "records"}}
    return out


def _real_records(page: _Page, key: str) -> str:
    """The real table's number of records, or under add/remove, where ``n`` is private, a
    note in its place: the page may be shown beyond the curator, and nothing else on it
    tells ``n``."""
    release = page.doc.get("release")
    if isinstance(release, dict) and _relation(release) == ADD_REMOVE:
        return "(private under add/remove neighbours: not shown)"
    return page.value(key)


def _summary(page: _Page) -> str:
    return (
        f"<p>Real data: {_real_records(page, 'evaluation.data.records')} records, "
        f"{page.value('evaluation.data.attributes')} attributes, "
        f"{page.value('evaluation.data.bits')} bits. Synthetic: "
        f"{page.value('evaluation.synthetic.records')} records (weighted: "
        f"{page.value('evaluation.synthetic.weighted')}). Workload: "
        f"{page.value('evaluation.workload.queries')} queries of kind "
        f"{page.value('evaluation.workload.kind')}.</p>"
    )


def _plain(x: object) -> object:
    if isinstance(x, np.integer | np.floating | np.bool_):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


# -- item data (dpquery.evaluation.wide) ---------------------------------------------------
def _wide_body(page: _Page) -> str:
    """The page of item data: sizes, the measures, and their errors beside the references."""
    ev = "evaluation"
    scores = page.doc[ev]["scores"]
    rows = []
    for measure in ("one_way", "pairs", "triples"):
        cells = [f"<td>{html.escape(measure.replace('_', '-'))}</td>",
                 f"<td>{page.value(f'{ev}.measures.{measure}')}</td>"]  # fmt: skip
        for name in scores:
            key = f"{ev}.scores.{name}.{measure}"
            cells.append(f"<td class=n>{page.value(key + '.max')} / "
                         f"{page.value(key + '.mean')}</td>")  # fmt: skip
        rows.append(cells)
    header = ["measure", "measured", *(f"{name}: max / mean" for name in scores)]
    return "".join([
        "<h1>dpquery: evaluation of synthetic item sets</h1>",
        f'<div class="banner">{page.value(f"{ev}.note")}</div>',
        f"<p>Real data: {_real_records(page, f'{ev}.data.records')} records over "
        f"{page.value(f'{ev}.data.items')} items, {page.value(f'{ev}.data.ones')} ones. "
        f"Synthetic: {page.value(f'{ev}.synthetic.records')} records, "
        f"{page.value(f'{ev}.synthetic.ones')} ones (weighted: "
        f"{page.value(f'{ev}.synthetic.weighted')}).</p>",
        "<h2>Errors on item data (NOT PRIVATE)</h2><p>Errors are fractions of records: "
        "|released - true| over each measure's queries. The references are computed from the "
        "same data: <em>zeros</em> is the all-zero table (it reads no data, and on sparse "
        "data it is hard to beat: its mean error on the item frequencies is the mean item "
        "frequency), <em>indep</em> the product of the true item frequencies (it reads the "
        "data: a non-private reference), <em>uniform</em> every item with probability one "
        "half.</p>",
        _table(header, rows),
        _release(page),
    ])  # fmt: skip


def require_matplotlib(what: str = "the HTML report", then: str = "") -> None:
    """Fail with a clear error when matplotlib (the ``report`` extra) is missing: ``what``
    draws its plots with it; ``then`` is said after the advice to install it."""
    try:
        import matplotlib  # noqa: F401  # optional (the report extra)
    except ImportError:
        raise DPQueryError(
            f"{what} draws its plots with matplotlib, which is not installed: "
            f"pip install 'dpquery[report]'{then}"
        ) from None


def render_html(evaluation: dict[str, Any], release: dict[str, Any] | None = None) -> str:
    """The page (a string); ``release`` is the ``release`` section of a synth report."""
    require_matplotlib()
    doc: dict[str, Any] = {"evaluation": evaluation}
    if release is not None:
        # As the JSON report holds it (tuples as lists, numpy scalars as numbers), whether it
        # comes from a file or from Release.to_dict().
        section = {k: v for k, v in release.items() if k != "rounds"}
        doc["release"] = json.loads(json.dumps(section, default=_plain))
        promise = _promise_numbers(release)
        if promise is not None:
            doc["promise"] = promise
        if _relation(release) == ADD_REMOVE:  # n is private: not on the page, nor in its JSON
            doc["evaluation"] = _without_n(evaluation)
    page = _Page(doc)
    payload = json.dumps(doc, allow_nan=False).replace("</", "<\\/")
    if "scores" in evaluation:  # item data: dpquery.evaluation.wide's measures
        return _document(_wide_body(page), payload)
    body = "".join([
        "<h1>dpquery: evaluation of a synthetic table</h1>", _promise(page),
        f'<div class="banner">NOT PRIVATE (this page, below): '
        f'{page.value("evaluation.note")}</div>',
        _summary(page), _errors(page), _per_marginal(page), _one_way(page), _two_way(page),
        _coherence(page), _release(page),
    ])  # fmt: skip
    return _document(body, payload)


def _document(body: str, payload: str) -> str:
    """The whole page: its body, then the JSON its numbers are read from."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>dpquery evaluation (NOT PRIVATE)</title>"
        f"<style>{_STYLE}</style></head><body>{body}"
        f'<script type="application/json" id="dpquery-evaluation">{payload}</script>'
        "</body></html>\n"
    )


def write_html(
    path: str | Path,
    evaluation: dict[str, Any],
    release: dict[str, Any] | None = None,
    *,
    overwrite: bool = True,
) -> None:
    """Render the page and write it atomically (nothing is written when rendering fails)."""
    atomic_write_text(path, render_html(evaluation, release), overwrite=overwrite)
