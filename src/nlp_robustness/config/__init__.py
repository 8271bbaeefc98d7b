"""The validation of the workflow config: its shape and its cross-references (:mod:`.validation`), what it names
outside itself -- manifest datasets and models, human studies' files (:mod:`.references`) -- and the config files
as written: their syntax and keys written twice (:mod:`.files`). Every error names the offending config key (or
file and line).

It sits at the top layer: it reads the names and limits of the layers it configures (the engine's whole-pool
label, fairseq's reserved options). :mod:`nlp_robustness.planning` runs it before any job.
"""
