"""docs/references.bib has what a course's bibliography needs, for every entry.

Each entry names its authors, its year, where it appeared or which version it
describes, and where to find it (a URL or an arXiv id). A library's
documentation without a year rendered as "n.d." on the Bibliography page;
these tests catch the next entry that would.
"""

from pathlib import Path

import pytest

pybtex_database = pytest.importorskip("pybtex.database", reason="pybtex comes with sphinxcontrib-bibtex (the docs extra)")

BIB = Path(__file__).resolve().parents[1] / "docs" / "references.bib"

# Any one of these says where an entry appeared, or which release it describes.
VENUE_FIELDS = ("journal", "booktitle", "howpublished", "institution", "publisher", "school", "version")
LOCATOR_FIELDS = ("url", "eprint", "doi")
# The popular explanations that the Claims page reviews reached the project as
# text, without an address or a date, and their authors are not all named (the
# entries say so): there is nothing true to add. They still need the rest.
UNDATED_WITHOUT_ADDRESS = {
    "division-vs-subtraction",
    "reddit-not-stability",
    "book-section-5-3",
    "shekhar-sqrt-dk",
    "stabilizing-attention",
}


def missing_fields(entry, exempt=False):
    """What a bibliography entry lacks, as a list of readable names.

    Parameters
    ----------
    entry : pybtex.database.Entry
    exempt : bool, default False
        True for an entry in ``UNDATED_WITHOUT_ADDRESS``: its year and
        locator are not asked for.

    Returns
    -------
    list of str
        Empty when the entry is complete.

    Examples
    --------
    >>> entry = pybtex_database.parse_string(
    ...     "@misc{k, author = {A, B}, howpublished = {Docs}, url = {https://example.org}}", "bibtex"
    ... ).entries["k"]
    >>> missing_fields(entry)
    ['year']
    >>> missing_fields(entry, exempt=True)
    []
    """
    fields = {name.lower(): value.strip() for name, value in entry.fields.items() if value.strip()}
    missing = []
    if not entry.persons.get("author"):
        missing.append("author")
    if not exempt and not fields.get("year", "").isdigit():
        missing.append("year")
    if not any(fields.get(name) for name in VENUE_FIELDS):
        missing.append("venue or version (" + ", ".join(VENUE_FIELDS) + ")")
    if not exempt and not any(fields.get(name) for name in LOCATOR_FIELDS):
        missing.append("url, eprint (arXiv id) or doi")
    return missing


def incomplete_entries(text):
    """``{key: missing fields}`` for the entries of a .bib text that lack something."""
    entries = pybtex_database.parse_string(text, "bibtex").entries
    found = {}
    for key, entry in entries.items():
        missing = missing_fields(entry, exempt=key in UNDATED_WITHOUT_ADDRESS)
        if missing:
            found[key] = missing
    return found


def test_every_reference_is_complete():
    incomplete = incomplete_entries(BIB.read_text(encoding="utf-8"))
    assert not incomplete, "\n".join(f"{key}: no {', '.join(missing)}" for key, missing in incomplete.items())


def test_the_exemptions_name_entries_that_exist():
    # An exemption outliving its entry would hide nothing but mislead the reader.
    keys = set(pybtex_database.parse_file(BIB).entries)
    assert UNDATED_WITHOUT_ADDRESS <= keys, sorted(UNDATED_WITHOUT_ADDRESS - keys)


def test_an_entry_without_a_year_is_caught():
    # The planted fault: PyTorch's documentation entry with its year removed.
    text = BIB.read_text(encoding="utf-8")
    start = text.index("@misc{pytorch-sdpa,")
    end = text.index("\n}", start)
    entry = text[start:end]
    year_lines = [line for line in entry.splitlines() if line.strip().startswith("year")]
    assert len(year_lines) == 1, "the planted fault needs pytorch-sdpa to have one year line"
    planted = text[:start] + entry.replace(year_lines[0] + "\n", "") + text[end:]
    assert incomplete_entries(planted) == {"pytorch-sdpa": ["year"]}
