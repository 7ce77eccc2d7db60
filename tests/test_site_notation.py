"""The Notation page: one meaning per symbol, and the pages keep to it."""

import re

import pytest

from attention_scaling.site.notation import NOTATION, notation_problems, notation_table
from attention_scaling.site.sources import label_pages
from page_sources import PAGES, REPO


def test_every_page_follows_the_notation():
    problems = notation_problems(PAGES)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("writing", [
    r"scores drawn from $\mathcal{N}(0, s^2)$",  # the spread written s, as saturation once did
    "Gaussian scores of spread $s$",
    r"with respect to the logits $z = cs$",
    r"the ratio $\rho = \lambda^2 \sigma^2/(2\ln n)$",  # the freezing ratio written as the correlation
    r"multiplying both q and k by $0.1 \ln s + 1$",  # YaRN's ratio written s, the raw score's letter
])
def test_a_second_meaning_is_found_with_its_page_and_line(tmp_path, writing):
    page = tmp_path / "planted.md"
    page.write_text(f"# A page\n\nFirst line.\n{writing}, and more.\n")
    problems = notation_problems([page])
    assert len(problems) == 1 and problems[0].startswith("planted.md:4: ") and "write" in problems[0], problems


def test_each_symbol_has_one_entry_and_a_section_that_introduces_it():
    symbols = [entry.symbol for entry in NOTATION]
    assert len(symbols) == len(set(symbols)), symbols
    labels = label_pages(REPO / "docs")
    missing = [(entry.symbol, entry.introduced) for entry in NOTATION if entry.introduced not in labels]
    assert not missing, f"sections that do not exist: {missing}"
    for pattern, _ in (misuse for entry in NOTATION for misuse in entry.misuses):
        re.compile(pattern)


def test_the_table_has_a_row_per_symbol_and_the_page_shows_it():
    rows = notation_table().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| ${entry.symbol}$" for entry in NOTATION]
    assert "notation_table()" in (REPO / "docs" / "notation.md").read_text(encoding="utf-8")
