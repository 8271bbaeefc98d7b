"""File I/O every layer uses: outputs that appear whole or not at all (:mod:`.atomic`), and files of text --
lines of segments, TSV tables, numbers, JSON records -- read and written the one way (:mod:`.text_files`)."""
