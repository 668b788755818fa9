"""``dpquery online``: answer JSON-lines queries from stdin privately, one JSON line each.

The session (hypothesis, ledger, counters, the current noise key) lives in the SQLite file
given by ``--state`` (with its ``.counter`` sidecar); it is committed before each answer is
written, so a killed process forgets no spent budget and a restart with the same ``--state``
resumes exactly (parameters may then be omitted; given ones must match). Parameters that
cannot promise the accuracy are refused (no file is written) unless ``--accept-unverified``.
``--export-summary`` writes the Remark 2 summary of a session; ``--summary`` answers queries
from such a summary offline, without data or budget.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from dpquery.cli.common import add_data_args, load_data
from dpquery.errors import DPQueryError
from dpquery.online.session import PMWSession
from dpquery.online.state import SessionParams
from dpquery.online.store import SessionStore, StoreError
from dpquery.online.summary import CompactSummary
from dpquery.privacy.delta import check_delta, default_delta
from dpquery.privacy.neighbours import ADD_REMOVE, RELATIONS, REPLACE_ONE, refuse_add_remove

PARAM_FLAGS = {
    "epsilon": "epsilon", "delta": "delta", "alpha": "alpha", "k": "k", "beta": "beta",
    "max_queries": "max_queries", "max_updates": "max_updates", "literals": "literals",
    "representation": "representation", "max_monomials": "max_monomials", "blocks": "m",
    "accept_unverified": "accept_unverified",
}  # fmt: skip


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "online",
        help="answer marginal queries online with private multiplicative weights",
        description='Read queries as JSON lines on stdin ({"kind": "conjunction", '
        '"literals": [[attribute, value, true], ...]}, the format of \'dpquery workload '
        "show') and write one JSON answer per line, under (epsilon, delta)-DP for the whole "
        "session (Small databases, Theorem 3.1). See docs/online.md.",
    )
    add_data_args(p, required=False)
    p.add_argument("--state", type=Path, metavar="SESSION.db",
                   help="SQLite session state: created if missing, resumed if present")  # fmt: skip
    p.add_argument("--epsilon", type=float, help="privacy budget of the whole session")
    p.add_argument("--delta", type=float,
                   help="delta of the budget (default 1/n^2; 0: pure DP)")  # fmt: skip
    p.add_argument("--alpha", type=float, help="promised accuracy of every answer")
    p.add_argument("--k", type=int, help="largest number of literals per query")
    p.add_argument("--beta", type=float, help="failure probability to check (default 0.05)")
    p.add_argument("--max-queries", type=int, help="queries the guarantee covers (default 1e6)")
    p.add_argument("--max-updates", type=int,
                   help="cap on updates (default: the mistake bound B)")  # fmt: skip
    p.add_argument("--literals", choices=("both", "positive", "complement"),
                   help="query family (default both: every marginal cell)")  # fmt: skip
    p.add_argument("--representation", choices=("polynomial", "full-domain"),
                   help="polynomial (default) or the 2^d full-domain comparator")  # fmt: skip
    p.add_argument("--max-monomials", type=int, help="cap on binom(m, <= t)")
    p.add_argument("--blocks", type=int, help="force the number of blocks m")
    p.add_argument("--accept-unverified", action="store_true", default=None,
                   help="start even if the parameters cannot promise the accuracy "
                   "(no answer is then verified); default: refuse, saying what works")  # fmt: skip
    p.add_argument("--neighbours", choices=RELATIONS, default=REPLACE_ONE, metavar="R",
                   help=f"{REPLACE_ONE} (n public: the relation Small databases proves; "
                   f"the default); {ADD_REMOVE} is refused")  # fmt: skip
    p.add_argument("--seed", type=int, help="seed of the noise (new sessions; default: OS)")
    p.add_argument("--export-summary", type=Path, metavar="SUMMARY.json",
                   help="write the Remark 2 summary of --state and exit")  # fmt: skip
    p.add_argument("--summary-samples", type=int, help="samples of the summary")
    p.add_argument("--summary", type=Path, metavar="SUMMARY.json",
                   help="answer stdin from a summary, offline (no data, no budget)")  # fmt: skip
    p.set_defaults(func=_run)


def _given_params(args: argparse.Namespace) -> dict[str, Any]:
    return {key: getattr(args, flag) for flag, key in PARAM_FLAGS.items()
            if getattr(args, flag) is not None}  # fmt: skip


def _serve(answer: Callable[[dict[str, Any]], dict[str, Any]], stdin: TextIO) -> int:
    out = sys.stdout
    for line_no, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            result = answer(obj)
        except json.JSONDecodeError as exc:
            result = {"line": line_no, "error": f"not valid JSON: {exc}"}
        except RecursionError:
            result = {"line": line_no, "error": "the JSON is nested too deeply to be a query"}
        except StoreError:
            raise  # the state cannot be saved: stop, with the error on stderr
        except DPQueryError as exc:
            result = {"line": line_no, "error": str(exc)}
        out.write(json.dumps(result) + "\n")
        out.flush()
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.neighbours == ADD_REMOVE:  # before any data or state is read
        raise refuse_add_remove("online (private multiplicative weights)")
    if args.summary is not None:
        if args.state is not None or args.data is not None or args.dataset is not None:
            raise DPQueryError("--summary answers offline: give no --state, --data or --dataset")
        summary = CompactSummary.load(args.summary)
        return _serve(lambda q: {"answer": summary.answer(q), "source": "summary"}, sys.stdin)
    if args.state is None:
        raise DPQueryError("give --state SESSION.db (or --summary SUMMARY.json)")
    given = _given_params(args)
    store = SessionStore(args.state)
    saved = store.load()
    store.close()
    data = load_data(args)
    if saved is not None:
        stored = saved.params.to_dict()
        bad = [f"{k}={v!r} (stored {stored[k]!r})" for k, v in given.items() if stored[k] != v]
        if bad:
            raise DPQueryError(
                f"{args.state} is a session with other parameters: {', '.join(bad)}; omit them "
                f"to resume, or use a new --state file"
            )
        seed = None if args.export_summary is not None else args.seed  # seeds the sampling
        session = PMWSession.open(args.state, data, None, seed)
    else:
        if args.export_summary is not None:
            raise DPQueryError(f"{args.state} holds no session to export")
        missing = [f"--{f}" for f in ("epsilon", "alpha", "k") if f not in given]
        if missing:
            raise DPQueryError(f"a new session needs {', '.join(missing)}")
        if "delta" not in given:
            given["delta"] = default_delta(data.n)
        check_delta(given["delta"], data.n)
        session = PMWSession.open(args.state, data, SessionParams(**given), args.seed)
    if args.export_summary is not None:
        summary = session.export_summary(samples=args.summary_samples, seed=args.seed)
        summary.save(args.export_summary)
        print(f"wrote {args.export_summary}: {len(summary.coefficients):,} terms from "
              f"{summary.samples:,} samples (extra error <= {summary.tau:.3g} w.p. "
              f"{1 - summary.beta:g})", file=sys.stderr)  # fmt: skip
        return 0
    print(session.guarantee(), file=sys.stderr)

    def answer(obj: dict[str, Any]) -> dict[str, Any]:
        result = session.answer(obj).to_dict()
        result["spent"] = session.epsilon_spent
        if isinstance(obj, dict) and "id" in obj:
            result["id"] = obj["id"]
        return result

    return _serve(answer, sys.stdin)
