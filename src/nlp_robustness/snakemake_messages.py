"""How a bad input reaches the user through Snakemake: one line that names the key, file or line, no traceback.

Snakemake prints an exception raised while it parses the workflow as ``InputError in file
".../rules/common.smk", line 56:`` followed by the message and the traceback through the workflow's own
files, which reads as a fault of the workflow, not of the user's config or data. :func:`plain_input_errors`
makes it print an :class:`~nlp_robustness.errors.InputError` as ``InputError: <message>``, alone. Every other
exception (a bug) keeps Snakemake's report with its traceback, and so does an ``InputError`` raised inside a
job, whose log and Snakemake's job error already say where.
"""

from __future__ import annotations

from typing import Any

from nlp_robustness.errors import InputError

__all__ = ["format_input_error", "plain_input_errors"]

#: Marks the replacement so that a second call (a Snakefile parsed twice) does not wrap it again.
_MARK = "_nlp_robustness_plain_input_errors"


def format_input_error(error: BaseException) -> str | None:
    """``InputError: <message>`` for an :class:`InputError`, its message folded to one line; None for anything else."""
    if not isinstance(error, InputError):
        return None
    return f"InputError: {' '.join(str(error).split())}"


def plain_input_errors() -> None:
    """Make Snakemake print a planning :class:`InputError` as one line (see the module doc).

    Snakemake formats every error it prints through ``snakemake.exceptions.format_exception_to_string``;
    the replacement answers for an ``InputError`` and hands every other exception to the original.
    """
    import snakemake.exceptions as exceptions

    original = exceptions.format_exception_to_string
    if getattr(original, _MARK, False):
        return

    def format_exception_to_string(ex: BaseException, linemaps: Any = None) -> str:
        return format_input_error(ex) or original(ex, linemaps)

    setattr(format_exception_to_string, _MARK, True)
    exceptions.format_exception_to_string = format_exception_to_string
