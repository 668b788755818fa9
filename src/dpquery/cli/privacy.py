"""``dpquery privacy ...``: plan privacy costs before any data is touched (issue 4)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("privacy", help="print privacy costs of an algorithm's parameters")
    p.set_defaults(func=lambda args: p.print_help())
