"""Stage ``topology``: the perturbation trees' shapes and the precedents' robustness
(:mod:`countercase.topology.run`)."""
