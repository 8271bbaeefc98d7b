"""Studies: what each branch measures robustness of (MT test domains, sentiment domains, human judgements),
expressed as units with a domain label and a score for the engine of :mod:`nlp_robustness.statistics.engine`."""
