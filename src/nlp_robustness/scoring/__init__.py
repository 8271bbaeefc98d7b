"""Quality scores of single outputs (sentence BLEU and chrF) that robustness is measured on."""
