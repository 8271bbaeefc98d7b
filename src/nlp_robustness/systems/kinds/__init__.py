"""System kinds: one module per value of ``systems.<name>.kind`` (see :mod:`nlp_robustness.systems.registry`)."""
