"""WMT direct-assessment studies: the per-domain tables the engine reads, and bad input named before any job."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.data.wmt_da import rated_segments, read_da_segment_scores, read_line_domains
from nlp_robustness.errors import InputError
from nlp_robustness.studies.human_da import check_da_study, da_domain_means, da_domain_tables

SOURCE = ["s1", "s2", "s3", "s4", "s5"]
# domain, document, position, SID (SIDs follow the documents sorted by id: d-a before d-b)
DOMAINS = "news\td-b\t1\t4\nnews\td-b\t2\t5\nchat\td-a\t1\t1\nchat\td-a\t2\t2\nchat\td-a\t3\t3\n"
SCORES = ("SYS SID RAW.SCR Z.SCR N \nX.0 1 80 0.5 1 \nX.0 4 60 -0.5 2 \nX.0 5 0 0 1 \nY.1 1 70 0.1 1 \nY.1 2 50 -0.2 1 \n"
          "Y.1 4 90 0.9 1 \n")


def _study(tmp_path: Path, scores: str = SCORES, domains: str = DOMAINS, y_lines: int = 5) -> tuple[dict, dict]:
    files = {"scores.csv": scores, "domains.tsv": domains, "source.txt": "\n".join(SOURCE) + "\n",
             "x.txt": "".join(f"x{i}\n" for i in range(1, 6)), "y.txt": "".join(f"y{i}\n" for i in range(1, y_lines + 1))}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    spec = {"format": "wmt-da", "scores": "scores.csv", "domain_file": "domains.tsv", "source": "source.txt",
            "reference": "source.txt", "domains": ["news", "chat"], "systems": {"X": "x.txt", "Y": "y.txt"},
            "rated_references": {}, "ignore_systems": []}
    return spec, {name: str(tmp_path / name) for name in files}  # file value -> its path (path_of)


def test_each_system_keeps_its_own_rated_segments_with_documents(tmp_path: Path) -> None:
    spec, paths = _study(tmp_path)
    check_da_study(spec, "human_studies.t", paths)
    domains = read_line_domains(paths["domains.tsv"], SOURCE)
    scores = rated_segments(read_da_segment_scores(paths["scores.csv"]), domains, "t")
    outputs = {"X": [f"x{i}" for i in range(1, 6)], "Y": [f"y{i}" for i in range(1, 6)]}
    rated, every = da_domain_tables(scores, domains, outputs, SOURCE, SOURCE, "news", "z", True, "t")
    # SID 4 and 5 are lines 1 and 2 (news); X's SID 5 is a placeholder (raw 0, z 0) and is dropped
    assert rated[["system", "segment_id", "document", "hypothesis", "human"]].values.tolist() == [
        ["X", "1", "d-b", "x1", -0.5], ["Y", "1", "d-b", "y1", 0.9]]
    assert every["segment_id"].tolist() == ["1", "2", "1", "2"] and set(every["document"]) == {"d-b"}
    kept, _ = da_domain_tables(scores, domains, outputs, SOURCE, SOURCE, "news", "raw", False, "t")
    assert kept["human"].tolist() == [60.0, 0.0, 90.0]
    chat, _ = da_domain_tables(scores, domains, outputs, SOURCE, SOURCE, "chat", "z", True, "t")
    segments = {"news": rated.assign(bleu=1.0), "chat": chat.assign(bleu=2.0)}
    means = da_domain_means(read_da_segment_scores(paths["scores.csv"]), segments, ["X", "Y"], ["bleu"], None).set_index("system")
    # the organisers' system means keep the placeholder row; the domain means drop it
    assert means.loc["X", "z_all_rows"] == pytest.approx(0.0) and means.loc["X", "placeholder_rows"] == 1
    assert means.loc["X", "news_human"] == -0.5 and means.loc["Y", "chat_segments"] == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (dict(scores=SCORES + "Z.2 3 50 0.0 1 \n"),
         "scores.csv: line 8: system 'Z.2' (human_studies.t) has no output file: give it in human_studies.t.systems "
         "(or rated_references), or list 'Z' in human_studies.t.ignore_systems"),
        (dict(scores=SCORES + "Y.1 9 50 0.0 1 \n"), "SID 9"),
        (dict(scores=SCORES.replace("Z.SCR", "ZSCORE")), "has no column Z.SCR"),
        (dict(domains=DOMAINS + "news\td-b\t3\t6\n"), "has 6 lines, but the source has 5"),
        (dict(y_lines=4), "human_studies.t.systems.Y: "),
    ],
)
def test_bad_input_is_named_before_any_job(tmp_path: Path, edit: dict, message: str) -> None:
    spec, paths = _study(tmp_path, **edit)
    with pytest.raises(InputError) as error:
        check_da_study(spec, "human_studies.t", paths)
    assert message in str(error.value)


def test_a_configured_system_without_scores_and_an_unknown_domain_are_named(tmp_path: Path) -> None:
    spec, paths = _study(tmp_path)
    with pytest.raises(InputError, match=r"human_studies.t.systems: W has no rows in .*scores.csv \(its systems, without"):
        check_da_study({**spec, "systems": {**spec["systems"], "W": "x.txt"}}, "human_studies.t", paths)
    with pytest.raises(InputError, match=r"human_studies.t.domains: 'social' is not a domain of .*domains.tsv \(its domains: chat, news\)"):
        check_da_study({**spec, "domains": ["news", "social"]}, "human_studies.t", paths)
    check_da_study({**spec, "systems": {"X": "x.txt"}, "ignore_systems": ["Y"]}, "human_studies.t", paths)  # ignored on purpose
    assert check_da_study(spec, "human_studies.t", dict.fromkeys(paths)) is None  # nothing on disk yet: the job checks
