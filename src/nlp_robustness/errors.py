"""Errors raised on bad input: each names the file, line or config key at fault."""


class InputError(Exception):
    """Bad input data or configuration; the message names the offending file, line or key."""
