"""Links that cannot rot: every relative link of README.md and docs/*.md leads to a file (and heading) that exists,
and every ``results/…`` path they name is an output of the default run, or is marked as produced by another config.

The default run's outputs come from Snakemake's own plan of ``config.yaml`` (``snakemake --summary`` into an empty
run directory: every job's outputs, nothing run), plus what ``make run`` adds after the workflow (the report and its
screenshots). A named path is a pattern as the docs write it: ``{a,b}`` alternatives (each must exist),
``{name}`` and ``<name>`` placeholders, ``…`` for the rest of a path. A path under a directory output counts, and so
does one below a checkpoint whose outputs the plan cannot know yet (listed in :data:`AFTER_CHECKPOINTS`).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPOSITORY

DOCUMENTS = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]

#: Written by `make run` after the workflow (the Makefile's `run` target), not by a job of the plan.
MADE_BY_MAKE_RUN = ("results/report.html", "results/report/screenshot.png", "results/report/screenshot-1366x768.png")

#: Outputs of jobs that follow a checkpoint: Snakemake plans them only once the checkpoint has run.
AFTER_CHECKPOINTS = ("results/testsets/perturbed/", "results/translations/")

#: Paths the docs name (expanded) that the default config does not produce → (the rule that writes them, when).
#: Checked: a document still names the pattern, the default run does not produce it, and the rule's outputs hold it.
OTHER_CONFIG: dict[str, tuple[str, str]] = {
    "results/sentiment/predictions/<name>.report.json": ("sentiment_evaluate_model", "with sentiment.models"),
    "results/sentiment/predictions/*.report.json": ("sentiment_evaluate_model", "with sentiment.models"),  # reliability.md's timings
}

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, ``-`` and ``_`` kept),
    spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    """Every heading anchor of a Markdown file, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in _FENCE.sub("", document.read_text(encoding="utf-8")).splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            slug = _slug(match.group(1))
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(document: Path) -> list[str]:
    return [target for target in _LINK.findall(_FENCE.sub("", document.read_text(encoding="utf-8")))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(document: Path) -> None:
    broken = []
    for target in _links(document):
        path, _, anchor = target.partition("#")
        destination = (document.parent / path).resolve() if path else document
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in _anchors(destination):
            broken.append(f"{target}: no heading #{anchor} in {destination.relative_to(REPOSITORY)}")
    assert not broken, f"{document.relative_to(REPOSITORY)}: " + "; ".join(broken)


def test_the_docs_tree_is_linked_from_the_readme() -> None:
    linked = {(REPOSITORY / target.partition("#")[0]).resolve() for target in _links(REPOSITORY / "README.md")}
    unlinked = [path.name for path in DOCUMENTS[1:] if path.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_every_docs_page_opens_with_what_it_is_for() -> None:
    for page in DOCUMENTS[1:]:
        text = page.read_text(encoding="utf-8")
        assert text.startswith("# "), page.name
        assert "What this page is for" in text.split("\n## ")[0], f"{page.name} does not open with what it is for"


# The patterns of named paths.

def _split_alternatives(body: str) -> list[str]:
    """``a,b{c,d},e`` → ``["a", "b{c,d}", "e"]``: commas at the top level of a brace group."""
    parts, depth, current = [], 0, ""
    for character in body:
        if character == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (character == "{") - (character == "}")
        current += character
    return [*parts, current]


def expansions(pattern: str) -> list[str]:
    """Every path a pattern names, one per choice of its ``{a,b}`` alternatives (placeholders kept)."""
    start = next((i for i, character in enumerate(pattern) if character == "{"), None)
    if start is None:
        return [pattern]
    depth = 0
    for end in range(start, len(pattern)):
        depth += (pattern[end] == "{") - (pattern[end] == "}")
        if depth == 0:
            break
    body, rest = pattern[start + 1:end], pattern[end + 1:]
    choices = _split_alternatives(body)
    if len(choices) == 1 and re.fullmatch(r"[\w-]+", body):  # a placeholder such as {study}
        return [pattern[:start] + "<" + body + ">" + tail for tail in expansions(rest)]
    return [path for choice in choices for path in expansions(pattern[:start] + choice + rest)]


def _regex(path: str) -> re.Pattern[str]:
    """A path with ``<placeholder>``\\ s, ``*`` and ``…`` as a regular expression over output paths."""
    pieces = re.split(r"(<[^>]+>|…|\*)", path)
    patterns = {"…": ".+", "*": "[^/]+"}
    return re.compile("".join(patterns.get(piece, ".+" if piece.startswith("<") else re.escape(piece)) for piece in pieces))


def named_results(document: Path) -> list[str]:
    """The ``results/…`` patterns a document names in code spans (fenced blocks excluded)."""
    spans = _CODE_SPAN.findall(_FENCE.sub("", document.read_text(encoding="utf-8")))
    return [span.split()[0].rstrip(".,;:") for span in spans if span.startswith("results/")]


def planned_outputs(configfile: str, run_directory: Path) -> tuple[str, ...]:
    """Every output file of every job Snakemake plans for ``configfile`` in an empty ``run_directory``."""
    completed = subprocess.run(
        [sys.executable, "-m", "snakemake", "--summary", "--configfile", configfile,
         "--config", f"run_directory={run_directory}"],
        cwd=REPOSITORY, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    rows = [line.split("\t")[0] for line in completed.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) > 100, completed.stdout[:2000]
    return tuple(rows)


def _produced(path: str, outputs: tuple[str, ...]) -> bool:
    expression = _regex(path.rstrip("/"))
    return any(expression.fullmatch(output) or expression.fullmatch(output.rsplit("/", 1)[0])
               or (path.endswith("/") and output.startswith(path)) for output in outputs)


def test_pattern_expansion() -> None:
    assert expansions("results/a/{x,y}/{study}.{csv,md}") == [
        "results/a/x/<study>.csv", "results/a/x/<study>.md", "results/a/y/<study>.csv", "results/a/y/<study>.md"]
    assert expansions("results/t/{means.{csv,md},flips.csv}") == [
        "results/t/means.csv", "results/t/means.md", "results/t/flips.csv"]
    assert _produced("results/tables/<study>/bleu/robustness_pool.md", ("results/tables/paper/bleu/robustness_pool.md",))
    assert not _produced("results/tables/<study>/bleu/robustness_pool.md", ("results/tables/paper/bleu/robustness_pool.csv",))
    assert _produced("results/models/…/data-bin/", ("results/models/x/data-bin/dict.en.txt",))


@pytest.fixture(scope="module")
def default_outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """The default run's outputs (about 7 s of planning)."""
    return planned_outputs("config.yaml", tmp_path_factory.mktemp("default-run")) + MADE_BY_MAKE_RUN


def test_every_results_path_the_docs_name_is_an_output_of_the_default_run(default_outputs: tuple[str, ...]) -> None:
    missing = []
    for document in DOCUMENTS:
        for pattern in named_results(document):
            for path in expansions(pattern):
                if path in OTHER_CONFIG:
                    continue
                if not (_produced(path, default_outputs) or path.startswith(AFTER_CHECKPOINTS)):
                    missing.append(f"{document.relative_to(REPOSITORY)}: {path}")
    assert not missing, "named but not produced by the default run:\n" + "\n".join(sorted(set(missing)))


def _rule_text(rule: str) -> str:
    text = "\n".join(path.read_text(encoding="utf-8") for path in sorted((REPOSITORY / "rules").glob("*.smk")))
    match = re.search(rf"^(?:rule|checkpoint) {re.escape(rule)}:\n(.*?)(?=^(?:rule|checkpoint) |\Z)", text, re.S | re.M)
    assert match, f"no rule {rule} in rules/"
    return match.group(1)


def test_paths_marked_as_another_configs_are_written_by_their_rule_and_not_by_the_default(
    default_outputs: tuple[str, ...],
) -> None:
    named = {path for document in DOCUMENTS for pattern in named_results(document) for path in expansions(pattern)}
    for path, (rule, _when) in OTHER_CONFIG.items():
        assert path in named, f"{path} is marked but no document names it any more"
        prefix = re.split(r"[<…*]", path.removeprefix("results/"), maxsplit=1)[0].rstrip("/")
        assert prefix in _rule_text(rule), f"{path}: rule {rule} writes nothing under {prefix}"
        assert not _produced(path, default_outputs), f"{path}: the default run produces it; drop its mark"
