"""A session's parameters and state as plain values, and the forward-secure noise key.

:class:`SessionParams` defines a session; :class:`SessionState` is everything that changes as
it answers (counters, hypothesis, the open sparse-vector epoch, ledger charges, the noise
key). Both are frozen values the store writes and reads; neither knows about the session or
the store.

**Key ratchet (forward security).** The noise of answer ``i`` comes from a generator seeded
with ``SHA-256("noise" || K_i)``; after the answer, ``K_{i+1} = SHA-256("ratchet" || K_i)``
replaces ``K_i``, which is kept nowhere. Only the current key is ever saved, and recovering
``K_i`` from ``K_{i+1}`` means inverting SHA-256, so a saved state determines no past noise
(the textbook generator state it replaces could be stepped backwards). The first key is 32
bytes of OS entropy (``secrets.token_bytes``), or, for research and tests, a hash of the
seed (``key_origin`` says which).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

import numpy as np

from dpquery.errors import DPQueryError
from dpquery.online.fulldomain import DEFAULT_MAX_BYTES
from dpquery.online.parameters import DEFAULT_MAX_MONOMIALS
from dpquery.online.sparse import DEFAULT_SV_SHARE
from dpquery.online.transform import LiteralSet
from dpquery.privacy import _validate
from dpquery.privacy.mechanisms import AboveThresholdState

RepresentationKind = Literal["polynomial", "full-domain"]
KeyOrigin = Literal["os-entropy", "seed"]
KEY_BYTES = 32


@dataclass(frozen=True)
class SessionParams:
    """Everything that defines a session (stored with its state; checked on resume).

    ``accept_unverified``: run even when the plan cannot promise the accuracy (then no answer
    is marked verified)."""

    epsilon: float
    delta: float
    alpha: float
    k: int
    beta: float = 0.05
    max_queries: int = 10**6
    max_updates: int | None = None
    literals: LiteralSet = "both"
    representation: RepresentationKind = "polynomial"
    max_monomials: int = DEFAULT_MAX_MONOMIALS
    m: int | None = None
    sv_share: float = DEFAULT_SV_SHARE
    max_bytes: int = DEFAULT_MAX_BYTES
    accept_unverified: bool = False

    def validate(self, d: int) -> None:
        """Range checks (the shared privacy validators for the privacy parameters)."""
        _validate.positive("epsilon", self.epsilon)
        _validate.delta("delta", self.delta)
        _validate.open_unit("alpha", self.alpha)
        _validate.open_unit("beta", self.beta)
        _validate.open_unit("sv_share", self.sv_share)
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= d:
            raise DPQueryError(f"k must be an integer in [1, d={d}], got {self.k!r}")
        _validate.integer("max_queries", self.max_queries, minimum=1)
        if self.max_updates is not None:
            _validate.integer("max_updates", self.max_updates, minimum=1)
        if self.representation not in ("polynomial", "full-domain"):
            raise DPQueryError(
                f"representation must be 'polynomial' or 'full-domain', got {self.representation!r}"
            )
        if not isinstance(self.accept_unverified, bool):
            raise DPQueryError(
                f"accept_unverified must be true or false, got {self.accept_unverified!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> SessionParams:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise DPQueryError(f"unknown session parameters {unknown}")
        return cls(**obj)


@dataclass(frozen=True)
class StoredCharge:
    """One ledger entry of a session (sessions charge pure DP only)."""

    mechanism: str
    epsilon: float
    bounded_range: bool
    count: int


@dataclass(frozen=True, eq=False)
class SessionState:
    """Everything a session needs to continue exactly, besides its parameters and data."""

    key: bytes
    key_origin: KeyOrigin
    queries_answered: int = 0
    refused: int = 0
    updates: int = 0
    logw: np.ndarray | None = None  # the hypothesis; None: the learner's uniform start
    epoch: AboveThresholdState | None = None
    charges: tuple[StoredCharge, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.key, bytes) or len(self.key) != KEY_BYTES:
            raise DPQueryError(f"the session key must be {KEY_BYTES} bytes")
        if self.key_origin not in ("os-entropy", "seed"):
            raise DPQueryError(f"unknown key origin {self.key_origin!r}")

    @classmethod
    def new(cls, seed: int | None) -> SessionState:
        """The state of a new session: its first key from ``seed`` or from OS entropy."""
        return cls(*initial_key(seed))


def initial_key(seed: int | None) -> tuple[bytes, KeyOrigin]:
    """``K_0``: 32 bytes of OS entropy, or ``SHA-256("seed" || decimal seed)`` for a seed."""
    if seed is None:
        return secrets.token_bytes(KEY_BYTES), "os-entropy"
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise DPQueryError(f"seed must be a non-negative integer or None; got {seed!r}")
    return hashlib.sha256(b"dpquery-online-seed:" + str(int(seed)).encode()).digest(), "seed"


def ratchet(key: bytes) -> bytes:
    """``K_{i+1} = SHA-256("ratchet" || K_i)``: one-way, so ``K_{i+1}`` does not give ``K_i``."""
    return hashlib.sha256(b"ratchet" + key).digest()


def noise_generator(key: bytes) -> np.random.Generator:
    """The generator of one answer's noise: PCG64 seeded with ``SHA-256("noise" || K_i)``
    (domain-separated from the ratchet, so the next key says nothing about this seed)."""
    seed = int.from_bytes(hashlib.sha256(b"noise" + key).digest(), "little")
    return np.random.Generator(np.random.PCG64(seed))
