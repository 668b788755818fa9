"""The game family: the seed papers' query-release game (:mod:`.loop`) and the algorithms that
play it: DualQuery, DQRS, FEM, sepFEM, MWEM and the FEM-then-MWEM pipeline, with their
players, plans and options (``docs/architecture.md``)."""
