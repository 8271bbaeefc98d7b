"""Systems under test: Apertium pivot chains and fairseq ConvS2S models (MT), the sentiment classifiers."""
