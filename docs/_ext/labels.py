r"""Every theorem, lemma, equation, figure and exercise in objects.inv, under a title a reader can use.

A course that links to the site through intersphinx (``:ref:`whysqrtdk:LABEL```)
gets, as the link's text, the name that objects.inv gives the label. Sphinx
alone would give poor ones: sphinx-proof and the math domain keep their labels
to themselves (so theorems and equations would not be listed at all), and a
figure is listed under its whole caption, mathematics as raw LaTeX
("c\, q \cdot k ...") and line breaks included (which split its entry in
two). This extension does four things:

1. ``env-updated``: theorems, lemmas and numbered equations become
   ``std:label`` targets, so objects.inv lists them. Figures and exercises
   are ``std:label`` targets already.
2. ``env-get-updated``: the name each label is listed under. This is the
   first event that knows the numbers: Sphinx numbers figures, equations and
   the nodes of sphinx-proof and sphinx-exercise per page
   (``env.toc_fignumbers``, filled by the toctree collector's handler of the
   same event, which runs before this one), and the pages show exactly those
   numbers. The names read "Theorem 2.1 (Mean and variance of the dot
   product)", "Equation (2.3)", "Figure 5.3: The three regimes: ..." (the
   caption's first sentence), "Exercise 2.1 (Standard deviation at dₖ =
   512)"; a section whose title holds mathematics is listed under that title
   in plain text. Titles are the ones :mod:`citations` records for the Cite
   page, with their mathematics turned into plain Unicode text by
   :func:`plain_text`, and a reference in them (still a label when the page
   is read) as the page shows it, "Theorem 13.3". A title that cannot be
   turned into text is a warning, which fails the strict build, rather than
   LaTeX in a course's notes; :func:`readable` guards every name.
3. ``build-finished``: objects.inv is written again under those names. Only
   the inventory changes: while the pages were written, the labels kept the
   titles Sphinx gave them, so the site's own references (an exercise cited
   with ``{ref}``, say) read as before.
4. ``html-page-context``: the search page gets the number, name and
   address of every numbered item, so that a search for "Theorem 2.1"
   offers the theorem itself first (``docs/_static/search_numbers.js``).

Section titles are recorded as each page is read (``doctree-read``) and
merged from parallel readers; the rest runs in the main process once every
page is read, so parallel reads are safe.
"""

from __future__ import annotations

import json
import re
import unicodedata
from contextlib import contextmanager

from docutils import nodes
from sphinx.util import logging

from citations import marked_text

__all__ = ["export_labels", "inventory_names", "latex_text", "numbered_labels", "plain_text", "readable", "search_numbers",
           "setup"]

logger = logging.getLogger(__name__)

# -- mathematics as plain text ----------------------------------------------------------------

# TeX's classes of math atoms, which decide the spacing: "bin" (a binary
# operator) and "rel" (a relation) get a space on each side, "punct" one after,
# "op" (a named operator such as log) one before an ordinary atom that follows.
_GREEK = dict(zip(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho "
    "sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split(),
    "αβγδεεζηθϑικλμνξπρστυφφχψωΓΔΘΛΞΠΣΥΦΨΩ",
    strict=True,
))
_COMMANDS = {name: ("ord", letter) for name, letter in _GREEK.items()} | {
    **{name: ("bin", symbol) for name, symbol in (
        ("cdot", "·"), ("times", "×"), ("pm", "±"), ("mp", "∓"), ("circ", "∘"), ("odot", "⊙"), ("otimes", "⊗"),
        ("oplus", "⊕"), ("setminus", "∖"), ("cup", "∪"), ("cap", "∩"), ("ast", "∗"), ("div", "÷"),
    )},
    **{name: ("rel", symbol) for name, symbol in (
        ("le", "≤"), ("leq", "≤"), ("ge", "≥"), ("geq", "≥"), ("ne", "≠"), ("neq", "≠"), ("approx", "≈"),
        ("sim", "∼"), ("simeq", "≃"), ("propto", "∝"), ("equiv", "≡"), ("to", "→"), ("rightarrow", "→"),
        ("leftarrow", "←"), ("mapsto", "↦"), ("Rightarrow", "⇒"), ("implies", "⟹"), ("iff", "⟺"), ("in", "∈"),
        ("notin", "∉"), ("subset", "⊂"), ("subseteq", "⊆"), ("ll", "≪"), ("gg", "≫"), ("mid", "|"),
    )},
    **{name: ("ord", symbol) for name, symbol in (
        ("infty", "∞"), ("partial", "∂"), ("nabla", "∇"), ("ell", "ℓ"), ("ldots", "…"), ("dots", "…"),
        ("cdots", "⋯"), ("top", "⊤"), ("prime", "′"), ("forall", "∀"), ("exists", "∃"), ("emptyset", "∅"),
        ("Vert", "‖"), ("vert", "|"), ("{", "{"), ("}", "}"), ("%", "%"), ("_", "_"), ("&", "&"), ("#", "#"),
        ("$", "$"), ("|", "‖"),
    )},
    **{name: ("open", symbol) for name, symbol in (("lVert", "‖"), ("lvert", "|"), ("langle", "⟨"), ("lfloor", "⌊"), ("lceil", "⌈"))},
    **{name: ("close", symbol) for name, symbol in (("rVert", "‖"), ("rvert", "|"), ("rangle", "⟩"), ("rfloor", "⌋"), ("rceil", "⌉"))},
    **{name: ("op", name) for name in "log ln exp max min sup inf lim arg det dim sin cos tan tanh Pr".split()},
    **{name: ("op", symbol) for name, symbol in (("sum", "∑"), ("prod", "∏"), ("int", "∫"))},
    # Spacing: a thin space (as in "c\, q") is a space in text; \! and the
    # style switches are nothing.
    **{name: ("space", " ") for name in (",", ":", ";", " ", "quad", "qquad", "enspace", "thinspace")},
    **{name: ("skip", "") for name in ("!", "displaystyle", "textstyle", "limits", "nolimits",
                                       "left", "right", "middle", "big", "Big", "bigg", "Bigg",
                                       "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr")},
}
# Commands with one argument: the argument in another font is the same text.
_FONTS = {"mathrm", "mathit", "mathbf", "mathsf", "mathtt", "mathcal", "boldsymbol", "bm"}
_TEXTS = {"text", "textrm", "textit", "textbf", "textnormal", "mbox"}
_ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303", "bar": "\u0304",
            "overline": "\u0304", "vec": "\u20d7", "dot": "\u0307", "ddot": "\u0308"}
_CHARACTERS = {**dict.fromkeys("=<>:", "rel"), **dict.fromkeys("+-*", "bin"), **dict.fromkeys(",;", "punct"),
               **dict.fromkeys("([", "open"), **dict.fromkeys(")]", "close")}
_SUBSCRIPTS = dict(zip("0123456789+-−=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True))
_SUPERSCRIPTS = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzT⊤′", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀᵀ′", strict=True))
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(\s+)|(.)", re.S)


class _Math:
    """A recursive-descent reader of one formula, turning it into atoms: (class, text) pairs."""

    def __init__(self, latex: str):
        self.latex = latex
        # (command or None, whether it is white space, character)
        self.tokens = [(match[1], bool(match[2]), match[3]) for match in _TOKEN.finditer(latex)]
        self.position = 0

    def fail(self, why: str) -> ValueError:
        return ValueError(f"{why} in ${self.latex}$")

    def next(self) -> tuple[str | None, bool, str | None]:
        if self.position == len(self.tokens):
            raise self.fail("a command lacks its argument")
        self.position += 1
        return self.tokens[self.position - 1]

    def peek(self, char: str) -> bool:
        """Whether the next token is ``char``; if so, it is taken."""
        if self.position < len(self.tokens) and self.tokens[self.position][2] == char:
            self.position += 1
            return True
        return False

    def pieces(self, until: str | None = None, text: bool = False) -> list[tuple[str, str]]:
        """The atoms up to the closing ``until`` (or to the end); in text mode (``text``) spaces count."""
        pieces: list[tuple[str, str]] = []
        while self.position < len(self.tokens):
            token = self.next()
            if until is not None and token[2] == until:
                return pieces
            self.read(token, pieces, text)
        if until is not None:
            raise self.fail(f"no closing {until!r}")
        return pieces

    def argument(self, text: bool = False) -> list[tuple[str, str]]:
        """The atoms of the next group ``{...}``, or of the next token."""
        token = self.next()
        while token[1]:
            token = self.next()
        if token[2] == "{":
            return self.pieces("}", text)
        pieces: list[tuple[str, str]] = []
        self.read(token, pieces, text)
        return pieces

    def read(self, token, pieces: list[tuple[str, str]], text: bool) -> None:
        """Add the atoms of ``token``, and of the arguments it takes, to ``pieces``."""
        command, space, char = token
        if command:
            pieces.extend(self.command(command))
        elif space:
            if text:
                pieces.append(("ord", " "))
        elif char == "{":
            pieces.append(("ord", _join(self.pieces("}", text))))
        elif char in ("^", "_") and not text:
            script = _script(_join(self.argument()), _SUPERSCRIPTS if char == "^" else _SUBSCRIPTS, char)
            kind, base = pieces.pop() if pieces else ("ord", "")
            pieces.append((kind, base + script))
        elif char in ("}", "&", "#"):
            raise self.fail(f"an unexpected {char!r}")
        else:
            pieces.append(("ord" if text else _CHARACTERS.get(char, "ord"), "′" if char == "'" else char))

    def command(self, name: str) -> list[tuple[str, str]]:
        """The atoms of ``\\name`` and its arguments."""
        if name in _COMMANDS:
            kind, text = _COMMANDS[name]
            if name in ("left", "right"):
                self.peek(".")  # \left. is no delimiter at all
            return [] if kind == "skip" else [(kind, text)]
        if name in _FONTS:
            return [("ord", _join(self.argument()))]
        if name == "operatorname":
            return [("op", _join(self.argument()))]
        if name in _TEXTS:
            return [("ord", _join(self.argument(text=True)))]
        if name == "mathbb":
            return [("ord", "".join(_double_struck(char) for char in _join(self.argument())))]
        if name in _ACCENTS:
            return [("ord", "".join(char + _ACCENTS[name] for char in _join(self.argument())))]
        if name == "sqrt":
            index = _script(_join(self.pieces("]")), _SUPERSCRIPTS, "^") if self.peek("[") else ""
            return [("ord", index + "√" + _grouped(_join(self.argument())))]
        if name in ("frac", "dfrac", "tfrac"):
            numerator, denominator = _join(self.argument()), _join(self.argument())
            return [("ord", f"{_grouped(numerator)}/{_grouped(denominator)}")]
        raise self.fail(f"no plain-text form for \\{name} (labels._COMMANDS lists the commands there are)")


def _join(pieces: list[tuple[str, str]]) -> str:
    """The atoms as text, spaced as TeX spaces them."""
    text, previous = "", None
    for kind, piece in pieces:
        if kind == "bin" and previous in (None, "bin", "rel", "open", "punct", "op"):
            kind = "ord"  # a sign, as in -x
        if kind in ("bin", "rel"):
            text += f" {piece} "
        elif kind == "punct":
            text += piece + " "
        elif (kind == "op" and previous in ("ord", "close", "op")) or (kind == "ord" and previous == "op"):
            text += " " + piece
        else:
            text += piece
        previous = kind
    return " ".join(text.split())


def _grouped(text: str) -> str:
    """``text`` as one factor: in parentheses unless it is one already, such as ``dₖ`` or ``√(d + 1)``."""
    outside = text
    while outside != (outside := re.sub(r"\([^()]*\)", "", outside)):
        pass
    return text if text and not re.search(r"[\s/_^]", outside) else f"({text})"


def _script(text: str, forms: dict[str, str], mark: str) -> str:
    """A sub- or superscript in Unicode's small forms, or written out when a character has none."""
    tight = text.replace(" ", "")  # scripts are set tight: i=1, not i = 1
    if tight and all(char in forms for char in tight):
        return "".join(forms[char] for char in tight)
    return mark + (text if text.isalnum() else f"({text})")


def _double_struck(char: str) -> str:
    for name in (f"DOUBLE-STRUCK CAPITAL {char}", f"MATHEMATICAL DOUBLE-STRUCK CAPITAL {char}"):
        try:
            return unicodedata.lookup(name)
        except KeyError:
            pass
    return char


def latex_text(latex: str) -> str:
    r"""A formula in plain text, as a reader would read it aloud from the page.

    Raises
    ------
    ValueError
        If the formula uses a command with no plain-text form here, or its
        braces do not match.

    Examples
    --------
    >>> latex_text(r"c\, q \cdot k / \sqrt{d_k}")
    'c q · k/√dₖ'
    >>> latex_text(r"\operatorname{Var}[q \cdot k] = d_k")
    'Var[q · k] = dₖ'
    >>> latex_text(r"\frac{q^\top k}{\sqrt{d_{\text{model}}}}")
    'qᵀk/√(d_model)'
    """
    return _join(_Math(latex).pieces())


def plain_text(marked: str) -> str:
    r"""A title in plain text: each formula between ``$`` signs turned into text.

    The result never holds a backslash, a dollar sign or a braced script:
    a title that would is an error, not a half-converted formula.

    Raises
    ------
    ValueError
        If a formula cannot be turned into text (see :func:`latex_text`), a
        ``$`` is left unpaired, or the text still looks like LaTeX.

    Examples
    --------
    >>> plain_text(r"The variance grows like $d_k$")
    'The variance grows like dₖ'
    >>> plain_text(r"Softmax of $\beta z$ as $\beta \to \infty$")
    'Softmax of βz as β → ∞'
    """
    parts = re.split(r"(?<!\\)\$", marked)
    if len(parts) % 2 == 0:
        raise ValueError(f"an unpaired $ in {marked!r}")
    text = " ".join("".join(latex_text(part) if index % 2 else part for index, part in enumerate(parts)).split())
    return readable(text)


def readable(title: str) -> str:
    """``title``, checked to be free of LaTeX: the guard on every name written to objects.inv.

    Raises
    ------
    ValueError
        If ``title`` holds a backslash, a dollar sign or a braced script (``_{``, ``^{``).
    """
    leftover = re.search(r"\\|\$|[_^]\{", title)
    if leftover:
        raise ValueError(f"{title!r} still reads as LaTeX (found {leftover.group()!r})")
    return title


# -- the labels and their names -----------------------------------------------------------------

# What the pages call each kind of numbered item (sphinx-proof's kinds come from the proof itself).
_WORDS = {"figure": "Figure", "table": "Table", "code-block": "Listing", "exercise": "Exercise"}


def export_labels(app, env) -> None:
    """``env-updated``: register theorems, lemmas and numbered equations as ``std:label`` targets."""
    std = env.get_domain("std")
    for label, info in getattr(env, "proof_list", {}).items():
        if label.startswith(("thm-", "lem-")):
            std.labels[label] = (info["docname"], label, f"{info['realtype'].capitalize()} {label}")
            std.anonlabels[label] = (info["docname"], label)
    for label, (docname, number) in env.get_domain("math").equations.items():
        std.labels[label] = (docname, f"equation-{label}", f"Equation {label}")
        std.anonlabels[label] = (docname, f"equation-{label}")


def record_section_titles(app, doctree) -> None:
    """``doctree-read``: the titles, mathematics marked ``$...$``, of the page's sections that hold mathematics.

    Sphinx lists a section under the text of its title, where a formula
    is its LaTeX source with the dollars gone; only these need another name.
    """
    titles = {}
    for section in doctree.findall(nodes.section):
        title = section.next_node(nodes.title)
        if title is not None and next(iter(title.findall(nodes.math)), None) is not None:
            titles.update(dict.fromkeys(section["ids"], marked_text(title)))
    app.env.section_math_titles = getattr(app.env, "section_math_titles", {}) | {app.env.docname: titles}


def numbered_labels(env) -> dict[str, tuple[str, str, str]]:
    """label -> (docname, kind of item, how the pages cite it: "Theorem 2.1", "Equation (2.3)") of every numbered label."""
    proofs = getattr(env, "proof_list", {})
    eqref = env.config.math_eqref_format or "({number})"
    numbered = {}
    for label, (docname, anchor, _) in env.get_domain("std").labels.items():
        for kind, numbers in env.toc_fignumbers.get(docname, {}).items():
            if anchor in numbers:
                number = ".".join(map(str, numbers[anchor]))
                if kind == "displaymath":
                    numbered[label] = (docname, kind, "Equation " + eqref.format(number=number))
                else:
                    word = proofs[label]["realtype"].title() if label in proofs else _WORDS.get(kind, kind.title())
                    numbered[label] = (docname, kind, f"{word} {number}")
                break
    return numbered


def inventory_names(app, env) -> list[str]:
    """``env-get-updated``: the name objects.inv gives each numbered label (see the module docstring)."""
    titles = {label: title for found in getattr(env, "citables_found", {}).values() for _, label, title, _ in found}
    sections = getattr(env, "section_math_titles", {})
    numbered = numbered_labels(env)
    # A reference in a caption ({prf:ref}`thm-...`) is still its label when the
    # page is read; the page shows the item's number there, and so does the name.
    cited = re.compile(r"(?<![\w-])(" + "|".join(re.escape(label) for label in sorted(numbered, key=len, reverse=True)) + r")(?![\w-])")
    names = {}
    for label, (docname, anchor, _) in env.get_domain("std").labels.items():
        try:
            if label in numbered:
                _, kind, number = numbered[label]
                title = plain_text(cited.sub(lambda match: numbered[match[1]][2], titles.get(label, "")))
                # The pages write "Theorem 2.1 (Title)" and "Exercise 3.1 (Title)", but "Fig. 5.2 Caption".
                after = "" if not title else f": {title}" if kind in ("figure", "table", "code-block") else f" ({title})"
                names[label] = readable(number + after)
            elif anchor in sections.get(docname, {}):
                names[label] = plain_text(sections[docname][anchor])
        except ValueError as error:
            logger.warning(f"no readable name in objects.inv for {label!r}: {error}", location=docname, type="labels")
    env.inventory_names = names
    # The search page's lookup: "theorem 2.1" -> (page, anchor, name), rebuilt on every build.
    env.numbered_items = {
        number.replace("(", "").replace(")", "").lower(): (docname, env.get_domain("std").labels[label][1], names[label])
        for label, (docname, _, number) in numbered.items() if label in names
    }
    return []


def search_numbers(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context``: on the search page, every numbered item's number, name and address.

    Sphinx's search matches words, and the words "theorem" and "2.1" are on
    almost every page. An index entry per number would be matched whole, but
    Sphinx 9.0 keeps index entries in the search index only for the pages it
    writes in that build, so an incremental build would lose most of them.
    This lookup is written with the search page on every build, and
    ``search_numbers.js`` shows the item named by the query above the results.
    """
    if pagename != "search":
        return
    items = {number: [app.builder.get_relative_uri("search", docname) + "#" + anchor, name]
             for number, (docname, anchor, name) in sorted(getattr(app.env, "numbered_items", {}).items())}
    # JSON inside a script element: "</" would end the element early.
    app.add_js_file(None, body="const SITE_NUMBERS = " + json.dumps(items, ensure_ascii=False).replace("</", "<\\/") + ";")
    app.add_js_file("search_numbers.js")


@contextmanager
def _listed_as(std, names: dict[str, str]):
    """The std domain's labels under ``names`` for as long as the block runs."""
    shown = dict(std.labels)
    std.labels.update({label: (docname, anchor, names[label]) for label, (docname, anchor, _) in shown.items() if label in names})
    try:
        yield
    finally:
        std.labels.clear()
        std.labels.update(shown)


def write_inventory(app, exception) -> None:
    """``build-finished``: write objects.inv again, with each label under its readable name."""
    dump = getattr(app.builder, "dump_inventory", None)
    if exception is not None or dump is None:
        return
    with _listed_as(app.env.get_domain("std"), getattr(app.env, "inventory_names", {})):
        dump()


def _purge(app, env, docname) -> None:
    getattr(env, "section_math_titles", {}).pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    """``env-merge-info``: take over what a parallel reader recorded for ``docnames``."""
    found = getattr(other, "section_math_titles", {})
    env.section_math_titles = getattr(env, "section_math_titles", {}) | {docname: found[docname] for docname in docnames if docname in found}


def setup(app):
    app.setup_extension("sphinx_proof")
    # The titles of theorems, figures and exercises are the ones the Cite page records.
    app.setup_extension("citations")
    app.connect("doctree-read", record_section_titles)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-updated", export_labels)
    # After the toctree collector (priority 500), which numbers everything in the same event.
    app.connect("env-get-updated", inventory_names, priority=600)
    app.connect("html-page-context", search_numbers)
    app.connect("build-finished", write_inventory)
    return {"version": "2", "env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
