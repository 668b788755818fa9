"""Session state in SQLite (stdlib ``sqlite3``): a kill never forgets spent budget.

Everything a session needs to resume exactly lives in one file: parameters and plan, the
data's fingerprint, every ledger charge, the hypothesis (log-weights), the counters, the
noise generator's state, the open sparse-vector epoch (its noisy threshold) and a log of the
answers. :meth:`SessionStore.commit` writes all of it in one transaction (``synchronous=FULL``)
*before* the answer is returned to the caller, so an answer that was seen has always been
paid for; a crash between a charge and its commit loses only a charge whose noise was never
released, and the resumed generator redraws exactly that noise.

The file is as sensitive as the data: it holds the generator state (future noise) and the
sparse vector's noisy threshold. Keep it with the data, never with the released answers.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.errors import DPQueryError
from dpquery.online.sparse import PrivacyPlan, SparseVectorEpoch
from dpquery.privacy import PureDP
from dpquery.queries.evaluate import data_fingerprint
from dpquery.rng import SeedLike, make_rng

if TYPE_CHECKING:
    from dpquery.online.session import OnlineAnswer, PMWSession, SessionParams
    from dpquery.online.transform import OnlineQuery

FORMAT = "dpquery-online-session/1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS charges (
    idx INTEGER PRIMARY KEY, mechanism TEXT NOT NULL, epsilon REAL NOT NULL,
    bounded_range INTEGER NOT NULL, count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS hypothesis (
    id INTEGER PRIMARY KEY CHECK (id = 0), updates INTEGER NOT NULL, logw BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    idx INTEGER PRIMARY KEY, query TEXT NOT NULL, answer TEXT NOT NULL);
"""


class SessionStore:
    """One session's SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise DPQueryError(f"session state {self.path} is not a file")
        if not self.path.parent.exists():
            raise DPQueryError(f"cannot create {self.path}: folder {self.path.parent} is missing")
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None)
            tables = {
                r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if not tables <= {"meta", "charges", "hypothesis", "answers"}:
                raise DPQueryError(
                    f"{self.path} is an SQLite file of something else (tables {sorted(tables)})"
                )
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.executescript(SCHEMA)
            self.meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise DPQueryError(f"{self.path} is not a dpquery session file ({exc})") from None
        if self.meta and self.meta.get("format") != FORMAT:
            raise DPQueryError(
                f"{self.path} is not a dpquery session file (format "
                f"{self.meta.get('format')!r}, expected {FORMAT!r})"
            )

    # -- open ---------------------------------------------------------------------------
    def open(
        self,
        cls: type[PMWSession],
        data: BinaryData,
        params: SessionParams | None,
        seed: SeedLike,
    ) -> PMWSession:
        from dpquery.online.session import SessionParams

        fingerprint = data_fingerprint(data)
        if "format" not in self.meta:
            if params is None:
                raise DPQueryError(f"{self.path} holds no session; give the session parameters")
            session = cls.__new__(cls)
            session._setup(data, params)
            # the store persists a PCG64 state, so an unseeded persistent session is an
            # OS-seeded PCG64, not the secure generator of a one-shot release
            session.rng = make_rng(seed) if seed is not None else np.random.default_rng()
            self._create(session, fingerprint)
            session._store = self
            return session
        stored = SessionParams(**json.loads(self.meta["params"]))
        if params is not None and params != stored:
            diff = [
                f"{f.name}={getattr(params, f.name)!r} (stored {getattr(stored, f.name)!r})"
                for f in fields(SessionParams)
                if getattr(params, f.name) != getattr(stored, f.name)
            ]
            raise DPQueryError(
                f"{self.path} is a session with other parameters: {', '.join(diff)}; omit them "
                f"to resume, or use a new --state file"
            )
        if self.meta["fingerprint"] != fingerprint:
            raise DPQueryError(f"{self.path} belongs to a session over different data")
        if seed is not None:
            raise DPQueryError("a resumed session continues its own generator; drop the seed")
        session = cls.__new__(cls)
        session._setup(data, stored)
        session.plan = PrivacyPlan(**json.loads(self.meta["plan"]))
        for mech, eps, br, count in self.conn.execute(
            "SELECT mechanism, epsilon, bounded_range, count FROM charges ORDER BY idx"
        ):
            session.ledger.charge(mech, PureDP(eps, bounded_range=bool(br)), count=count)
        row = self.conn.execute("SELECT updates, logw FROM hypothesis WHERE id = 0").fetchone()
        session.learner.set_state(np.frombuffer(row[1], dtype="<f8"), row[0])
        counters = json.loads(self.meta["counters"])
        session.queries_answered = counters["queries_answered"]
        session.refused = counters["refused"]
        session.rng = np.random.Generator(np.random.PCG64())
        session.rng.bit_generator.state = json.loads(self.meta["rng"])
        epoch = json.loads(self.meta["epoch"])
        session.epoch = None if epoch is None else SparseVectorEpoch(**epoch)
        session._store = self
        return session

    def _create(self, session: PMWSession, fingerprint: str) -> None:
        if not isinstance(session.rng.bit_generator, np.random.PCG64):
            raise DPQueryError("a persistent session needs a PCG64 generator (an int seed)")
        with _transaction(self.conn):
            self._put("format", FORMAT)
            self._put("params", json.dumps(session.params.to_dict()))
            self._put("plan", json.dumps(session.plan.to_dict()))
            self._put("fingerprint", fingerprint)
            self._write_state(session)
            self._write_hypothesis(session)
        self.meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    # -- commit -------------------------------------------------------------------------
    def commit(
        self, session: PMWSession, query: OnlineQuery, answer: OnlineAnswer, updated: bool
    ) -> None:
        """Write the state after one answer, in one transaction, before it is released."""
        with _transaction(self.conn):
            self._write_state(session)
            if updated:
                self._write_hypothesis(session)
            self.conn.execute(
                "INSERT INTO answers (idx, query, answer) VALUES (?, ?, ?)",
                (answer.index, json.dumps(query.to_dict()), json.dumps(answer.to_dict())),
            )

    def _put(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _write_state(self, session: PMWSession) -> None:
        stored = self.conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0]
        for entry in session.ledger.entries[stored:]:
            cost = entry.charge.cost
            if not isinstance(cost, PureDP):  # pragma: no cover - sessions charge pure DP only
                raise DPQueryError(f"cannot store a {type(cost).__name__} charge")
            self.conn.execute(
                "INSERT INTO charges (idx, mechanism, epsilon, bounded_range, count) "
                "VALUES (?, ?, ?, ?, ?)",
                (entry.index, entry.charge.mechanism, cost.epsilon, int(cost.bounded_range),
                 entry.charge.count),
            )  # fmt: skip
        counters = {"queries_answered": session.queries_answered, "refused": session.refused}
        self._put("counters", json.dumps(counters))
        self._put("rng", json.dumps(session.rng.bit_generator.state))
        self._put("epoch", json.dumps(None if session.epoch is None else session.epoch.to_dict()))

    def _write_hypothesis(self, session: PMWSession) -> None:
        logw = np.ascontiguousarray(session.learner.state, dtype="<f8")
        self.conn.execute(
            "INSERT OR REPLACE INTO hypothesis (id, updates, logw) VALUES (0, ?, ?)",
            (session.updates_used, logw.tobytes()),
        )

    def answers(self) -> list[dict[str, Any]]:
        """The logged answers, in order."""
        rows = self.conn.execute("SELECT answer FROM answers ORDER BY idx").fetchall()
        return [json.loads(r[0]) for r in rows]

    def close(self) -> None:
        self.conn.close()


class _transaction:
    """``BEGIN IMMEDIATE ... COMMIT`` (rollback on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
