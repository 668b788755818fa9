"""The marginal family: adaptive-projection (AIM-style selection of whole marginals, measured
and fitted by a record set, :mod:`.adaptive_projection`), with its projection, compression,
column refinement and options (``docs/architecture.md``)."""
