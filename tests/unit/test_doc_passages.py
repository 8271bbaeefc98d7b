"""The passages of a Markdown page and the numbers each prints (nlp_robustness.outputs.doc_passages), as the docs'
number check reads them."""

from __future__ import annotations

import pytest

from nlp_robustness.outputs.doc_passages import number_tokens, passages, same_token

PAGE = """# Paper 000: a title with 2 numbers

A paragraph of 1,000 resamples
that goes on for 95 % of a line.

- **A finding.** −6.8 [−9.4, −4.2] points,
  Holm p < 0.001.
  - a nested item at p = 0.3
- another item
lazily continued with 12 pairs

| system | score |
|---|---:|
| a | 0.59 [0.55, 0.64] |
| b \\| c | 0.13 |

```yaml
resamples: 1000
```
"""


@pytest.mark.parametrize(("text", "tokens"), [
    ("−6.8 [−9.4, −4.2] points, +0.02 and -1", ["−6.8", "−9.4", "−4.2", "+0.02", "-1"]),
    ("4,399 (de→fr) and 500, 21.", ["4,399", "500", "21"]),
    (".092/.193 → .135", [".092", ".193", ".135"]),
    ("WMT22, β2, WMT'14, MiniLM-L6, 3.8.0, 1e-14, 6.6M, n−1 and the 90th", []),
    ("paper 000, issue 52's tests, Tables 3–6, Table 2, Section 4.1 and Algorithms 5/6 of 2 papers", ["2"]),
    ("(paper 0.137) and (Tables 7, 8, Figure 5)", ["0.137", "8"]),
    ("rank (#2, 1–4) at 0.93–0.97", ["2", "1", "4", "0.93", "0.97"]),
    ("weights 7095f5cf4f4320c5, commit 46d3bbd", ["7095f5cf4f4320c5"]),
    ("[More](docs/x.md#section-2) than 3", ["3"]),
])
def test_numbers_are_read_as_printed_and_names_are_not_numbers(text: str, tokens: list[str]) -> None:
    assert number_tokens(text) == tokens


def test_a_sign_and_a_leading_zero_are_the_same_number_not_a_plus() -> None:
    assert same_token("−0.32", "-0.32") and same_token(".135", "0.135") and same_token("−.5", "-0.5")
    assert not same_token("+0.02", "0.02") and not same_token("0.30", "0.3")


def test_a_page_is_cut_into_headings_paragraphs_items_tables_and_code() -> None:
    found = passages(PAGE)
    assert [(passage.kind, passage.line) for passage in found] == [
        ("heading", 1), ("paragraph", 3), ("item", 6), ("item", 8), ("item", 9), ("table", 12), ("code", 18)]
    assert [number_tokens(passage.text) for passage in found] == [
        ["2"], ["1,000", "95"], ["−6.8", "−9.4", "−4.2", "0.001"], ["0.3"], ["12"],
        ["0.59", "0.55", "0.64", "0.13"], ["1000"]]
    assert found[2].lead == "A finding. −6.8 [−9.4, −4.2] points,"
    assert found[4].words[-3:] == ("with", "12", "pairs")
    assert found[5].rows == (("system", "score"), ("a", "0.59 [0.55, 0.64]"), ("b \\| c", "0.13"))
    assert found[5].lead == "system | score a | 0.59"
