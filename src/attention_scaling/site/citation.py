r"""What a course can cite: theorems, figures and exercises, with BibTeX.

Nothing here is kept by hand. The build (``docs/_ext/citations.py``) finds
every theorem, lemma, figure and exercise in the pages Sphinx has read, with
the label, title and page it has there and the number Sphinx gave it, and
hands them to :func:`citables`. That function checks them (each one needs a
stable label of its kind, and a number) and puts them in the order of the
site; :func:`bibtex` and :func:`site_bibtex` write the entries that the Cite
page shows, and :func:`bibliography` the one file that holds them all. The
entries are LaTeX that pdfLaTeX accepts (:func:`latex_text`), with an
absolute ``url`` when the site's address is known. The functions are pure,
so pytest checks them without a build.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from attention_scaling import __version__

__all__ = [
    "KINDS",
    "SITE_TITLE",
    "YEAR",
    "BIB_FILE",
    "Citable",
    "CitationError",
    "bibliography",
    "bibtex",
    "caption_title",
    "citables",
    "latex_text",
    "site_bibtex",
]

SITE_TITLE = "Why √d_k: executable, checked derivations of the scaling in attention"
#: The file, at the root of the built site, that holds every entry.
BIB_FILE = "whysqrtdk.bib"
#: The year in every entry (the year of the version the site was built from).
YEAR = 2026

#: What can be cited, in the order of the Cite page, with the prefix its
#: labels must carry (labels are stable, descriptive public names: courses cite them).
#: Theorems and lemmas share a group, so they appear in the order of the site.
KINDS = {"theorem": "thm-", "lemma": "lem-", "figure": "fig-", "exercise": "ex-"}
_GROUP = {"theorem": 0, "lemma": 0, "figure": 1, "exercise": 2}


class CitationError(ValueError):
    """An item on the site cannot be cited as it stands (no label, no number, ...)."""


@dataclass(frozen=True)
class Citable:
    """One citable item, as the built site shows it.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`: ``"theorem"``, ``"lemma"``, ``"figure"`` or ``"exercise"``.
    label : str
        The stable label (``thm-...``, ``lem-...``, ``fig-...``, ``ex-...``).
    title : str
        The title on the page; mathematics in ``$...$``.
    page : str
        The page (Sphinx document name) that shows it.
    number : str
        Its number on the site, such as ``"2.1"``.
    """

    kind: str
    label: str
    title: str
    page: str
    number: str

    @property
    def anchor(self) -> str:
        """Path and anchor of the item, relative to the site root."""
        return f"{self.page}.html#{self.label}"


def citables(found: Iterable[tuple[str, str, str, str]], numbers: Mapping[str, tuple[int, ...]]) -> list[Citable]:
    r"""Check the items found on the site and put them in the order of the Cite page.

    Parameters
    ----------
    found : iterable of (kind, label, title, page)
        Every theorem, lemma, figure and exercise on the site, in the order of
        its page (as ``docs/_ext/citations.py`` collects them).
    numbers : mapping of str to tuple of int
        The number Sphinx gave each label, such as ``(2, 1)`` for "2.1".

    Returns
    -------
    list of Citable
        Theorems and lemmas, then figures, then exercises, each group by number.

    Raises
    ------
    CitationError
        If an item's kind is unknown, its label lacks the prefix of its kind
        (an unlabelled theorem gets a generated one such as ``theorem-3``), it
        has no title or no number, or two items share a label.

    Examples
    --------
    >>> from attention_scaling.site.citation import citables
    >>> found = [("figure", "fig-a", "A figure", "p"), ("theorem", "thm-b", "A theorem", "p")]
    >>> [(item.label, item.number) for item in citables(found, {"fig-a": (3, 1), "thm-b": (3, 1)})]
    [('thm-b', '3.1'), ('fig-a', '3.1')]
    """
    items: list[Citable] = []
    seen: dict[str, str] = {}
    for kind, label, title, page in found:
        if kind not in KINDS:
            raise CitationError(f"kind must be one of {', '.join(KINDS)}; got {kind!r} for {label!r} on page {page!r}")
        if not label.startswith(KINDS[kind]):
            raise CitationError(
                f"the {kind} {title!r} on page {page!r} has label {label!r}; a citable {kind} needs a stable label "
                f"starting with {KINDS[kind]!r} (for example :label: {KINDS[kind]}...)"
            )
        if label in seen:
            raise CitationError(f"label {label!r} is used twice, on pages {seen[label]!r} and {page!r}")
        seen[label] = page
        if not title.strip():
            raise CitationError(f"the {kind} {label!r} on page {page!r} has no title")
        if label not in numbers:
            raise CitationError(f"the {kind} {label!r} on page {page!r} has no number (is numfig on, and the page in a toctree?)")
        items.append(Citable(kind, label, title.strip(), page, ".".join(str(part) for part in numbers[label])))
    # sorted() is stable: a lemma and a theorem with the same number keep the order of their page.
    return sorted(items, key=lambda item: (_GROUP[item.kind], numbers[item.label]))


def caption_title(caption: str) -> str:
    r"""The title of a figure: the first sentence of its caption.

    Examples
    --------
    >>> from attention_scaling.site.citation import caption_title
    >>> caption_title("Softmax of $n$ scores. Left: the entropy; right: the largest weight.")
    'Softmax of $n$ scores'
    """
    text = " ".join(caption.split())
    # A sentence ends at a full stop before a capital letter, outside $...$.
    first = re.split(r"(?<=\.)\s+(?=[A-Z])(?=(?:[^$]*\$[^$]*\$)*[^$]*$)", text, maxsplit=1)[0]
    return first.removesuffix(".")


def _key(label: str) -> str:
    return "whysqrtdk-" + label


# Outside $...$: the site's notation (a root of an indexed symbol, an indexed
# symbol), LaTeX's special characters, and the typography pdfLaTeX spells in ASCII.
_MATH = re.compile(r"(\$[^$]*\$)")
_PLAIN = re.compile(r"√(?P<root>[A-Za-z]+(?:_[A-Za-z0-9]+)?)|(?P<indexed>\b[A-Za-z]+_[A-Za-z0-9]+\b)|(?P<char>[&%#_{}~^\\’‘“”–—\u00a0])")
_SPECIAL = re.compile(r"[&%#_{}~^$\\]")
_CHARACTERS = {"&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}", "$": r"\$", "~": r"\textasciitilde{}",
               "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", "’": "'", "‘": "`", "“": "``", "”": "''",
               "–": "--", "—": "---", "\u00a0": "~"}


def _indexed(symbol: str) -> str:
    base, index = symbol.split("_", 1)
    # d_model is d with the word "model" below it, not five italic letters.
    return f"{base}_{{\\mathrm{{{index}}}}}" if len(index) > 1 and index.isalpha() else f"{base}_{{{index}}}"


def _plain(match: re.Match) -> str:
    # Mathematics goes in braces: classic BibTeX styles lowercase a title, but not inside braces.
    if match["root"]:
        return f"{{$\\sqrt{{{_indexed(match['root']) if '_' in match['root'] else match['root']}}}$}}"
    if match["indexed"]:
        return f"{{${_indexed(match['indexed'])}$}}"
    return _CHARACTERS[match["char"]]


def _escaped(text: str) -> str:
    """``text`` with LaTeX's specials escaped and nothing else changed (a page's anchor)."""
    return _SPECIAL.sub(lambda match: _CHARACTERS[match.group()], text)


def latex_text(text: str) -> str:
    r"""``text`` as LaTeX that pdfLaTeX compiles: ASCII, its specials escaped, its notation as mathematics.

    Mathematics already in ``$...$`` is kept as written, in braces (which keep
    a BibTeX style from lowercasing it). Outside it, ``√d_k`` becomes
    ``{$\sqrt{d_{k}}$}``, an indexed symbol such as ``W_Q`` becomes
    ``{$W_{Q}$}`` (``d_model``: ``{$d_{\mathrm{model}}$}``), LaTeX's special
    characters are escaped, and quotes and dashes are spelled in ASCII.

    Raises
    ------
    CitationError
        If a ``$`` opens no formula (an odd number of them), or a character
        is left that pdfLaTeX would reject: a Greek letter
        outside ``$...$`` (write it as mathematics on the page) or inside it
        (write it as a command, ``\sigma``).

    Examples
    --------
    >>> from attention_scaling.site.citation import latex_text
    >>> print(latex_text("Why √d_k: 10 %–90 % of W_Q, and $\\sqrt{\\ln n}$"))
    Why {$\sqrt{d_{k}}$}: 10 \%--90 \% of {$W_{Q}$}, and {$\sqrt{\ln n}$}
    >>> latex_text("μP")
    Traceback (most recent call last):
    ...
    attention_scaling.site.citation.CitationError: cannot write 'μ' of 'μP' in LaTeX: write it as $...$ mathematics on the page
    """
    if text.count("$") % 2:
        raise CitationError(f"{text!r} has a $ that opens no formula: close the formula, or write the sign as a word")
    parts = _MATH.split(text)
    for part in parts[1::2]:
        left = next((character for character in part if not character.isascii()), None)
        if left is not None:
            raise CitationError(f"cannot write {left!r} of {text!r} in LaTeX: write it as a LaTeX command inside $...$")
    written = "".join(f"{{{part}}}" if index % 2 else _PLAIN.sub(_plain, part) for index, part in enumerate(parts))
    left = next((character for character in written if not character.isascii()), None)
    if left is not None:
        raise CitationError(f"cannot write {left!r} of {text!r} in LaTeX: write it as $...$ mathematics on the page")
    return written


_AUTHOR = "{The Why {$\\sqrt{d_{k}}$} authors}"


def site_bibtex(version: str = __version__, year: int = YEAR, url: str | None = None) -> str:
    r"""BibTeX for the site as a whole, with its version, and its address when ``url`` is given.

    Examples
    --------
    >>> from attention_scaling.site.citation import site_bibtex
    >>> print(site_bibtex("1.2.3", url="https://example.org/whysqrtdk/"))  # doctest: +NORMALIZE_WHITESPACE
    @misc{whysqrtdk,
      title   = {Why {$\sqrt{d_{k}}$}: executable, checked derivations of the scaling in attention},
      author  = {{The Why {$\sqrt{d_{k}}$} authors}},
      year    = {2026},
      version = {1.2.3},
      note    = {Version 1.2.3},
      url     = {https://example.org/whysqrtdk/}
    }
    """
    fields = [("title  ", latex_text(SITE_TITLE)), ("author ", _AUTHOR), ("year   ", str(year)),
              ("version", version), ("note   ", f"Version {version}")]
    return _entry("whysqrtdk", fields + ([("url    ", url)] if url else []))


def bibtex(item: Citable, version: str = __version__, year: int = YEAR, base_url: str | None = None) -> str:
    r"""BibTeX for one item; ``crossref`` points at the site entry.

    With the site's address (``base_url``) the entry has the item's absolute
    ``url``; without it, the note names the page and anchor, relative to the
    site's root.

    Examples
    --------
    >>> from attention_scaling.site.citation import Citable, bibtex
    >>> item = Citable("lemma", "lem-product-variance", "Variance of a product", "dot-product-variance", "2.1")
    >>> print(bibtex(item, "1.2.3", base_url="https://example.org/whysqrtdk/"))  # doctest: +NORMALIZE_WHITESPACE
    @misc{whysqrtdk-lem-product-variance,
      title    = {Lemma 2.1: Variance of a product},
      author   = {{The Why {$\sqrt{d_{k}}$} authors}},
      year     = {2026},
      note     = {Why {$\sqrt{d_{k}}$}, version 1.2.3},
      url      = {https://example.org/whysqrtdk/dot-product-variance.html#lem-product-variance},
      crossref = {whysqrtdk}
    }
    >>> print(bibtex(item, "1.2.3").splitlines()[4])
      note     = {Why {$\sqrt{d_{k}}$}, version 1.2.3, dot-product-variance.html\#lem-product-variance},
    """
    note = f"{latex_text('Why √d_k')}, version {version}"
    fields = [("title   ", latex_text(f"{item.kind.capitalize()} {item.number}: {item.title}")), ("author  ", _AUTHOR),
              ("year    ", str(year))]
    if base_url:
        fields += [("note    ", note), ("url     ", base_url + item.anchor)]
    else:
        fields += [("note    ", f"{note}, {_escaped(item.anchor)}")]
    return _entry(_key(item.label), fields + [("crossref", "whysqrtdk")])


def _entry(key: str, fields: list[tuple[str, str]]) -> str:
    return f"@misc{{{key},\n" + ",\n".join(f"  {name} = {{{value}}}" for name, value in fields) + "\n}"


def bibliography(items: Iterable[Citable], version: str = __version__, year: int = YEAR, base_url: str | None = None) -> str:
    """The file :data:`BIB_FILE`: the site's entry, then every item's, as the Cite page lists them.

    Examples
    --------
    >>> from attention_scaling.site.citation import Citable, bibliography
    >>> text = bibliography([Citable("figure", "fig-a", "A figure", "p", "3.1")], "1.2.3")
    >>> [line for line in text.splitlines() if line.startswith("@")]
    ['@misc{whysqrtdk,', '@misc{whysqrtdk-fig-a,']
    """
    entries = [site_bibtex(version, year, base_url)] + [bibtex(item, version, year, base_url) for item in items]
    return "\n\n".join(entries) + "\n"
