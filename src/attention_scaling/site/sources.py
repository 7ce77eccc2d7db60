"""What the site's MyST sources define: the labels on each page, and the order of the chapters.

The graph page links each result to the page that states it, and lists the
results chapter by chapter; the tests check the pages' own markup. Both read
the sources through these functions, so that a page's example of MyST (the
Contributing page shows one) is never taken for the page's own.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["chapters", "label_pages", "page_source"]

_ROLE_LABEL = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$", re.MULTILINE)
_OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>[A-Za-z0-9_.:-]+)\s*$", re.MULTILINE)
_EXAMPLE = re.compile(r"^(`{5,})md[ \t]*\n.*?^\1[ \t]*$", re.M | re.S)
# The Chapters part of the contents: a toctree with that caption, its options, a blank line, one page a line.
_CHAPTERS = re.compile(r"^```\{toctree\}\n:caption: Chapters\n(?::[^\n]*\n)*\n(?P<pages>(?:[^\n`]+\n)*)```", re.M)


def page_source(path: str | Path) -> str:
    r"""A page's MyST source without the MyST it shows as an example, in a code block fenced `````md.

    Such an example (the Contributing page's) defines no label, theorem,
    figure or exercise of the site; whatever reads a page's own markup reads this.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as docs:
    ...     page = Path(docs) / "guide.md"
    ...     _ = page.write_text("(guide)=\n`````md\n(NAME)=\n`````\nText.\n")
    ...     page_source(page)
    '(guide)=\n\nText.\n'
    """
    return _EXAMPLE.sub("", Path(path).read_text(encoding="utf-8"))


def label_pages(docs: str | Path) -> dict[str, str]:
    """The page of every label the site's sources define: ``(label)=`` targets and ``:label:`` options.

    Parameters
    ----------
    docs : str or Path
        The directory of the pages (``docs/``); each ``*.md`` in it is a page
        named by its stem.

    Returns
    -------
    dict of str to str
        Label → page: page by page (by name), each page's labels in the
        order it defines them.

    Raises
    ------
    ValueError
        If a label is defined on two pages (Sphinx would not know which to link).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as docs:
    ...     _ = (Path(docs) / "scaling.md").write_text("(scaling)=\\n# Scaling\\n:label: thm-scaled-variance\\n")
    ...     label_pages(docs)
    {'scaling': 'scaling', 'thm-scaled-variance': 'scaling'}
    """
    found: dict[str, str] = {}
    for path in sorted(Path(docs).glob("*.md")):
        text = page_source(path)
        for match in sorted((*_ROLE_LABEL.finditer(text), *_OPTION_LABEL.finditer(text)), key=lambda m: m.start()):
            label = match["label"]
            if found.get(label, path.stem) != path.stem:
                raise ValueError(f"label {label!r} is defined on two pages: {found[label]} and {path.stem};"
                                 " labels are unique across the site: rename the newer one")
            found[label] = path.stem
    return found


def chapters(docs: str | Path) -> list[str]:
    r"""The chapters, in the order of the contents: the pages of the toctree captioned "Chapters" in ``index.md``.

    Parameters
    ----------
    docs : str or Path
        The directory of the pages (``docs/``).

    Returns
    -------
    list of str
        Page names, first chapter first.

    Raises
    ------
    ValueError
        If ``index.md`` has no toctree captioned "Chapters".

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as docs:
    ...     _ = (Path(docs) / "index.md").write_text("```{toctree}\n:caption: Chapters\n:numbered: 1\n\nscaling\nsaturation\n```\n")
    ...     chapters(docs)
    ['scaling', 'saturation']
    """
    found = _CHAPTERS.search(Path(docs, "index.md").read_text(encoding="utf-8"))
    if found is None:
        raise ValueError(f"{Path(docs, 'index.md')} has no toctree captioned Chapters; the contents list the chapters there")
    return found["pages"].split()
