"""What a plan may read of a dataset: its sizes and domain, and no records.

The domain is public. The number of records ``n`` is public under replace-one neighbours
(bounded DP); under add/remove neighbours (:mod:`dpquery.privacy.neighbours`) it is private,
and a fit plans on a noisy ``n`` instead: a shape's ``n`` is then the planner's estimate.
:class:`PublicShape` carries these, with the attributes a
:class:`~dpquery.data.binary.BinaryData` exposes for them, so a synthesizer's ``plan`` can run
before any data is read (``dpquery privacy synth``). A plan that touched the records would fail
on it: the shape has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpquery.data.binary import BinaryData
from dpquery.data.domain import Domain
from dpquery.errors import DPQueryError


@dataclass(frozen=True)
class PublicShape:
    """``n`` records over ``domain`` (the domain public; ``n`` public under replace-one, an
    estimate under add/remove), without the records."""

    n: int
    domain: Domain

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 1:
            raise DPQueryError(f"n must be a positive number of records, got {self.n!r}")
        if not isinstance(self.domain, Domain):
            raise DPQueryError(f"domain must be a Domain, got {type(self.domain).__name__}")

    @classmethod
    def of(cls, data: BinaryData) -> PublicShape:
        """The public part of ``data`` (its ``n`` and domain)."""
        if data.domain is None:
            raise DPQueryError("the data has no domain: its shape is not known publicly")
        return cls(data.n, data.domain)

    @property
    def d(self) -> int:
        return self.domain.d

    @property
    def onehot_groups(self) -> np.ndarray:
        return self.domain.onehot_groups
