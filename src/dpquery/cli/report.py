"""``dpquery evaluate --html report.html [--release-report R.json]``: the data holder's
HTML evaluation page (see :mod:`dpquery.evaluation.html`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.data.encode import read_table
from dpquery.data.records import Records
from dpquery.errors import DPQueryError
from dpquery.evaluation.coherence import coherence_section
from dpquery.evaluation.holder import evaluate_synthetic
from dpquery.evaluation.html import require_matplotlib, write_html
from dpquery.pipeline import inputs
from dpquery.pipeline.request import Dataset, TableFile
from dpquery.queries.workload import Workload


def add_html_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", type=Path, metavar="REPORT.html",
                        help="also write one self-contained HTML page: errors beside the "
                             "baselines, marginals plotted, the privacy account (NOT PRIVATE; "
                             "needs matplotlib: pip install 'dpquery[report]')")  # fmt: skip
    parser.add_argument("--release-report", type=Path, metavar="R.json",
                        help="the JSON report 'dpquery synth --report' wrote; the HTML page "
                             "shows its privacy account and parameters")  # fmt: skip


def check_html_support(args: argparse.Namespace) -> None:
    """With ``--html``, fail before any work when matplotlib (the ``report`` extra) is
    missing: the page cannot be drawn, so nothing is computed, printed or written."""
    if args.html is not None:
        require_matplotlib(
            f"--html {args.html}", " (or drop --html); nothing was computed or written"
        )


def load_release_report(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``release`` section of ``--release-report`` (checked before any work)."""
    if args.release_report is None:
        return None
    if args.html is None:
        raise DPQueryError("--release-report is shown in the HTML page: give --html too")
    path: Path = args.release_report
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DPQueryError(f"release report {path} does not exist") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DPQueryError(f"{path}: not a JSON release report ({exc})") from None
    release = obj.get("release") if isinstance(obj, dict) else None
    if not isinstance(release, dict):
        raise DPQueryError(
            f"{path}: expected the JSON written by 'dpquery synth --report' (an object with a "
            "'release' section)"
        )
    return release


def real_table(args: argparse.Namespace, domain: Domain | None) -> pd.DataFrame | None:
    """The real table in its own columns (the coherence measurement needs raw values), or
    None when the data is only encoded (.npz) or partitioned (dask)."""
    if args.dataset is None and args.data is None:
        return None
    source = Dataset(args.dataset) if args.dataset is not None else TableFile(args.data)
    return inputs.real_table(source, domain, getattr(args, "backend", "local"))


def _tables(
    args: argparse.Namespace, data: BinaryData
) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The real and synthetic tables in their own columns, when neither is an encoded .npz."""
    if args.synthetic.suffix == ".npz":
        return None, None
    real = real_table(args, data.domain)
    return (None, None) if real is None else (real, read_table(args.synthetic, None))


def coherence_of(
    args: argparse.Namespace, data: BinaryData, limit: int = 15
) -> dict[str, Any] | None:
    """``dpquery evaluate``'s coherence section (NOT PRIVATE), or None without raw tables."""
    real, synthetic = _tables(args, data)
    if real is None or synthetic is None or data.domain is None:
        return None
    return coherence_section(real, synthetic, data.domain, limit=limit)


def describe_coherence(coherence: dict[str, Any] | None) -> str:
    """One line for the console (the evaluation's NOT PRIVATE label is printed above it)."""
    if coherence is None:
        return "coherence: not measured (needs the real and synthetic tables, not .npz)"
    categorical = coherence["categorical"]
    if not coherence["constraints"]:
        return "coherence: no rule holds on every real record here, so none to break"
    among = (
        f"{categorical['incoherent_fraction']:.4f} one of the {categorical['constraints']} "
        "among categorical attributes"
        if categorical["constraints"]
        else "none of them is among categorical attributes alone"
    )
    return (
        f"coherence: {coherence['incoherent_fraction']:.4f} of synthetic records break at "
        f"least one of {coherence['constraints']} rules every real record keeps; {among}"
    )


def write_html_report(
    args: argparse.Namespace,
    data: BinaryData,
    synthetic: BinaryData | Records,
    workload: Workload,
    true: np.ndarray,
    release: dict[str, Any] | None,
) -> None:
    real_table, synthetic_table = _tables(args, data)
    evaluation = evaluate_synthetic(
        data, synthetic, workload, true_answers=true,
        real_table=real_table, synthetic_table=synthetic_table,
    )  # fmt: skip
    write_html(args.html, evaluation, release, overwrite=args.overwrite)
    print(f"wrote {args.html} (NOT PRIVATE: for the data holder)")


def write_wide_html_report(
    args: argparse.Namespace, evaluation: dict[str, Any], release: dict[str, Any] | None
) -> None:
    """The HTML page of item data's wide measures (NOT PRIVATE)."""
    write_html(args.html, evaluation, release, overwrite=args.overwrite)
    print(f"wrote {args.html} (NOT PRIVATE: for the data holder)")
