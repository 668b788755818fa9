"""Session state in SQLite (stdlib ``sqlite3``): a kill never forgets spent budget.

One file holds what a session needs to resume exactly: parameters and plan, the data's
fingerprint, every ledger charge, the hypothesis (log-weights), the counters, the current
noise key (:mod:`dpquery.online.state`), the open sparse-vector epoch and a log of the
answers. :meth:`SessionStore.commit` writes all of it in one transaction (``synchronous=FULL``)
*before* the answer is returned, so an answer that was seen has always been paid for; a crash
between a charge and its commit loses only a charge whose noise was never released, and the
resumed key redraws exactly that noise.

**Forward security.** The file holds only the current key ``K_i`` (``secure_delete`` zeroes
overwritten content in the file), never the keys of past answers, so it determines no past
noise. It still holds the open epoch's noisy threshold, needed for the next answers: keep the
file as secret as the data.

**Restored copies.** A counter, raised by every commit, lives in the file and in the sidecar
``<file>.counter`` (with the session's random id). On open they must agree (or the file be
exactly one commit ahead: a crash between the two writes, repaired); an older copy of the file
is refused, since resuming it would spend again budget already spent and reuse its noise.
Restoring *both* files together, or copying both and running the copies side by side, cannot
be detected this way (docs/online.md).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.io import atomic_write_text
from dpquery.online.sparse import PrivacyPlan
from dpquery.online.state import SessionParams, SessionState, StoredCharge
from dpquery.privacy.mechanisms import AboveThresholdState

FORMAT = "dpquery-online-session/2"
TABLES = {"meta", "charges", "hypothesis", "answers"}
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


class StoreError(DPQueryError):
    """The state file cannot be read or written: the session must stop (not skip a query)."""


@dataclass(frozen=True)
class SavedSession:
    """What a session file holds, as values."""

    params: SessionParams
    plan: PrivacyPlan
    fingerprint: str
    state: SessionState


class SessionStore:
    """One session's SQLite file and its counter sidecar. Nothing is written until
    :meth:`create`: a session whose parameters are refused leaves no file behind."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.counter_path = self.path.with_name(self.path.name + ".counter")
        self.conn: sqlite3.Connection | None = None
        self.meta: dict[str, str] = {}
        if self.path.exists() and not self.path.is_file():
            raise DPQueryError(f"session state {self.path} is not a file")
        if not self.path.parent.exists():
            raise DPQueryError(f"cannot create {self.path}: folder {self.path.parent} is missing")
        if self.path.exists():
            self._connect()
            if self.meta:
                self._check_counter()

    def _connect(self) -> None:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None)
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            if not tables <= TABLES:
                raise DPQueryError(
                    f"{self.path} is an SQLite file of something else (tables {sorted(tables)})"
                )
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                detail = " ".join(str(check and check[0]).split())  # one line
                raise sqlite3.DatabaseError(f"integrity check: {detail}")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA secure_delete=ON")  # overwritten keys are zeroed in the file
            conn.executescript(SCHEMA)
            self.meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path} is not a dpquery session file or is corrupted ({exc})"
            ) from None
        self.conn = conn
        if self.meta and self.meta.get("format") != FORMAT:
            raise DPQueryError(
                f"{self.path} is not a dpquery session file (format "
                f"{self.meta.get('format')!r}, expected {FORMAT!r})"
            )

    @property
    def holds_session(self) -> bool:
        return "format" in self.meta

    # -- the counter bound to the file ---------------------------------------------------
    def _check_counter(self) -> None:
        try:
            stored = int(self.meta["counter"])
        except (KeyError, ValueError):
            raise StoreError(f"{self.path}: damaged session state (no commit counter)") from None
        try:
            side = json.loads(self.counter_path.read_text())
            side_id, side_counter = side["session"], int(side["counter"])
        except FileNotFoundError:
            raise DPQueryError(
                f"{self.counter_path} is missing: it records how far {self.path.name} has run, "
                f"and without it a restored older copy cannot be told apart; keep the two "
                f"files together"
            ) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DPQueryError(f"{self.counter_path} is not a session counter ({exc})") from None
        if side_id != self.meta["session"]:
            raise DPQueryError(f"{self.counter_path} belongs to another session file")
        if stored == side_counter + 1:  # killed between the commit and the sidecar write
            self._write_counter(stored)
        elif stored < side_counter:
            raise DPQueryError(
                f"{self.path} is at commit {stored} but was last used at commit "
                f"{side_counter}: it is a restored older copy; resuming it would reuse noise "
                f"and forget spent budget, so it is refused"
            )
        elif stored != side_counter:
            raise DPQueryError(
                f"{self.path} is at commit {stored} but {self.counter_path.name} says "
                f"{side_counter}: the counter file is an older copy; refused"
            )

    def _write_counter(self, counter: int) -> None:
        body = json.dumps({"session": self.meta["session"], "counter": counter})
        atomic_write_text(self.counter_path, body + "\n")

    # -- load and create ------------------------------------------------------------------
    def load(self) -> SavedSession | None:
        """The stored session, or ``None`` when the file holds none."""
        if not self.holds_session or self.conn is None:
            return None
        try:
            params = SessionParams.from_dict(json.loads(self.meta["params"]))
            plan = PrivacyPlan(**json.loads(self.meta["plan"]))
            charges = tuple(
                StoredCharge(mech, float(eps), bool(br), int(count))
                for mech, eps, br, count in self.conn.execute(
                    "SELECT mechanism, epsilon, bounded_range, count FROM charges ORDER BY idx"
                )
            )
            row = self.conn.execute("SELECT updates, logw FROM hypothesis WHERE id = 0").fetchone()
            counters = json.loads(self.meta["counters"])
            epoch = json.loads(self.meta["epoch"])
            state = SessionState(
                key=bytes.fromhex(self.meta["key"]),
                key_origin=self.meta["key_origin"],  # type: ignore[arg-type]
                queries_answered=int(counters["queries_answered"]),
                refused=int(counters["refused"]),
                updates=0 if row is None else int(row[0]),
                logw=None if row is None else np.frombuffer(row[1], dtype="<f8").copy(),
                epoch=None if epoch is None else AboveThresholdState.from_dict(epoch),
                charges=charges,
            )
        except (KeyError, TypeError, ValueError, sqlite3.DatabaseError) as exc:
            raise StoreError(f"{self.path}: damaged session state ({exc})") from None
        return SavedSession(params, plan, self.meta["fingerprint"], state)

    def create(
        self, params: SessionParams, plan: PrivacyPlan, fingerprint: str, state: SessionState
    ) -> None:
        """Write a new session's file and counter; on failure, leave neither behind."""
        if self.holds_session:
            raise DPQueryError(f"{self.path} already holds a session")
        created = not self.path.exists()
        try:
            self._connect()
            assert self.conn is not None
            with _transaction(self.conn):
                self._put("format", FORMAT)
                self._put("session", secrets.token_hex(16))
                self._put("params", json.dumps(params.to_dict()))
                self._put("plan", json.dumps(plan.to_dict()))
                self._put("fingerprint", fingerprint)
                self._put("counter", "0")
                self._write_state(state)
            self.meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
            self._write_counter(0)
        except BaseException:
            self.close()
            if created:
                self.path.unlink(missing_ok=True)
                self.counter_path.unlink(missing_ok=True)
            raise

    # -- commit -------------------------------------------------------------------------
    def commit(self, state: SessionState, query: dict[str, Any], answer: dict[str, Any]) -> None:
        """Write the state after one answer, in one transaction, then raise the counter in
        the sidecar; both before the answer is released."""
        if self.conn is None:
            raise DPQueryError(f"{self.path} holds no session")
        counter = int(self.meta["counter"]) + 1
        try:
            with _transaction(self.conn):
                self._write_state(state)
                self._put("counter", str(counter))
                self.conn.execute(
                    "INSERT INTO answers (idx, query, answer) VALUES (?, ?, ?)",
                    (answer["index"], json.dumps(query), json.dumps(answer)),
                )
            self.meta["counter"] = str(counter)
            self._write_counter(counter)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot save the session to {self.path} ({exc}); the answer was not released"
            ) from None

    def _put(self, key: str, value: str) -> None:
        assert self.conn is not None
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _write_state(self, state: SessionState) -> None:
        conn = self.conn
        assert conn is not None
        stored = conn.execute("SELECT COUNT(*) FROM charges").fetchone()[0]
        for idx, c in enumerate(state.charges[stored:], start=stored):
            conn.execute(
                "INSERT INTO charges (idx, mechanism, epsilon, bounded_range, count) "
                "VALUES (?, ?, ?, ?, ?)",
                (idx, c.mechanism, c.epsilon, int(c.bounded_range), c.count),
            )
        counters = {"queries_answered": state.queries_answered, "refused": state.refused}
        self._put("counters", json.dumps(counters))
        self._put("key", state.key.hex())
        self._put("key_origin", state.key_origin)
        self._put("epoch", json.dumps(None if state.epoch is None else state.epoch.to_dict()))
        row = conn.execute("SELECT updates FROM hypothesis WHERE id = 0").fetchone()
        if state.logw is not None and (row is None or row[0] != state.updates):
            logw = np.ascontiguousarray(state.logw, dtype="<f8")
            conn.execute(
                "INSERT OR REPLACE INTO hypothesis (id, updates, logw) VALUES (0, ?, ?)",
                (state.updates, logw.tobytes()),
            )

    def answers(self) -> list[dict[str, Any]]:
        """The logged answers, in order."""
        if self.conn is None:
            return []
        rows = self.conn.execute("SELECT answer FROM answers ORDER BY idx").fetchall()
        return [json.loads(r[0]) for r in rows]

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class _transaction:
    """``BEGIN IMMEDIATE ... COMMIT`` (rollback on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
