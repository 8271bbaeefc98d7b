"""How a bad input reaches the user through Snakemake: one line that names the key, file or line, no traceback.

Snakemake prints an exception raised while it parses the workflow as ``InputError in file
".../rules/common.smk", line 56:`` followed by the message and the traceback through the workflow's own
files, which reads as a fault of the workflow, not of the user's config or data. :func:`plain_input_errors`
makes it print an :class:`~nlp_robustness.errors.InputError` as ``InputError: <message>``, alone. Every other
exception (a bug) keeps Snakemake's report with its traceback, and so does an ``InputError`` raised inside a
job, whose log and Snakemake's job error already say where.

A config file given with ``--configfile`` is read by Snakemake before the Snakefile runs, and Snakemake's reader
(Snakemake 9.27.1: ``snakemake.common.configfile._load_configfile``) says of a syntax error only "Config file is
not valid JSON or YAML", without the file, line or column. :func:`name_config_file_faults` wraps that reader:
when it fails on a config file, :func:`nlp_robustness.config.files.check_config_syntax` reads the file again and its
``InputError`` (``<file>: line L, column C: not valid YAML: <what the YAML parser found>``, the file as the user
wrote it) replaces Snakemake's error. The only code of this repository that runs early enough is a plugin's: while
it builds its command line, Snakemake imports every installed plugin, so the scheduler plugin of this repository
(``snakemake_scheduler_plugin_greedy_urgent``) calls it on import, whichever scheduler the run uses. It fails
safe: a Snakemake without that reader is left as it is, the reader's results and every error that the second
reading does not find (or that is not a config file's) are Snakemake's own, and a fault of the second reading
leaves Snakemake's error in place.
"""

from __future__ import annotations

import os
from typing import Any

from nlp_robustness.errors import InputError

__all__ = ["config_file_fault", "format_input_error", "name_config_file_faults", "plain_input_errors"]

#: Marks a replacement so that a second call (a Snakefile parsed twice, the plugin and a test) does not wrap it again.
_MARK = "_nlp_robustness_wrapped"


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


def config_file_fault(path: Any) -> InputError | None:
    """:func:`~nlp_robustness.config.files.check_config_syntax`'s error for the config file at ``path`` (or that there is no
    such file: Snakemake 9.27.1 answers a missing --configfile with a traceback), or None: no fault found, ``path``
    is not a path (Snakemake's reader also takes an open file), or the check itself failed."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    if not os.path.exists(path):
        return InputError(f"{os.fspath(path)}: no such config file (a relative path is read from the directory snakemake is launched in)")
    try:
        from nlp_robustness.config.files import check_config_syntax

        check_config_syntax(path)
    except InputError as error:
        return error
    except Exception:  # noqa: BLE001 - a fault of this second reading leaves Snakemake's own error in place
        return None
    return None


def name_config_file_faults() -> bool:
    """Make Snakemake's reader of config files name the file, line and column of a syntax error (see the module doc).

    Also makes Snakemake print the ``InputError`` as one line (:func:`plain_input_errors`): the error is raised
    before the Snakefile runs. Safe to call twice (wraps once).

    Returns:
        Whether the reader is wrapped; False on a Snakemake without ``snakemake.common.configfile._load_configfile``,
        which then reports config files its own way.
    """
    try:
        import snakemake.common.configfile as configfile
    except ImportError:
        return False
    original = getattr(configfile, "_load_configfile", None)
    if not callable(original):
        return False
    if getattr(original, _MARK, False):
        return True

    def _load_configfile(configpath_or_obj: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(configpath_or_obj, *args, **kwargs)
        except Exception:
            filetype = kwargs.get("filetype", args[0] if args else "Config")  # "Schema": the workflow's own files
            fault = config_file_fault(configpath_or_obj) if filetype == "Config" else None
            if fault is None:
                raise
            raise fault from None

    setattr(_load_configfile, _MARK, True)
    _load_configfile.__wrapped__ = original  # type: ignore[attr-defined]
    plain_input_errors()
    configfile._load_configfile = _load_configfile
    return True
