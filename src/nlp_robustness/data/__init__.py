"""Data layer: the dataset manifest, checksummed downloads and safe extraction, and the parsers that turn
the published files into tables (parallel test sets, Amazon reviews, MQM human judgements)."""
