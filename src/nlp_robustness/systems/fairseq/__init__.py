"""fairseq ConvS2S (fconv) translation systems: subword pipeline, training and batched generation.

Two flavours share everything after the model is in hand (a *model bundle*: checkpoint, source and
target dictionaries, subword-nmt BPE codes):

* **pretrained** -- fairseq's published ``wmt14.v2.en-fr.fconv-py`` archive (``model.pt``,
  ``dict.en.txt``, ``dict.fr.txt``, ``bpecodes`` under ``wmt14.en-fr.fconv-py/``);
* **in-house** -- trained here: Moses tokenization and joint BPE learnt on the training corpus,
  ``fairseq-preprocess``, ``fairseq-train`` with early stopping on a development set.

Modules, in the order the data flows through them:

* :mod:`.subwords` -- Moses tokenization and subword-nmt BPE, and the way back;
* :mod:`.corpus` -- an in-house model's training and development text (holdout, joint BPE);
* :mod:`.runtime` -- running fairseq's commands: device, threads, environment, errors;
* :mod:`.binarize` -- ``fairseq-preprocess`` of BPE-encoded splits;
* :mod:`.training` -- ``fairseq-train`` settings, command and run;
* :mod:`.training_log` -- what a training run reports (its log, the per-model summary table);
* :mod:`.checkpoints` -- a model's files and the check that its checkpoint loads;
* :mod:`.generate` -- ``fairseq-generate``: beam search settings, command, output in input order;
* :mod:`.translate` -- translating a list of segments with a model bundle.
"""
