"""Exception types. Every error names the bad value and what was expected."""

from __future__ import annotations


class DPQueryError(ValueError):
    """Base class for errors caused by bad input; the CLI prints them as one line."""


class ParameterError(DPQueryError):
    """A parameter is out of its range (see :mod:`dpquery.validation`)."""


class DomainError(DPQueryError):
    """A domain is malformed, or data does not fit the public domain."""


class DatasetNotFoundError(DPQueryError, FileNotFoundError):
    """A dataset's files are not in $DPQUERY_DATA_DIR nor in the cache."""


class NonPrivateWarning(UserWarning):
    """Something was read from the private data without privacy (e.g. an inferred domain)."""


class LearnedColumnWarning(UserWarning):
    """What a domain learned from the data makes of a column that a user must know (every
    value released as the catch-all, values clipped, dates read): the console's ``note:``
    lines of ``dpquery synth``, warned by the Python API. Read off the learned domain and its
    noisy counts alone (:func:`dpquery.pipeline.learning.column_notes`)."""
