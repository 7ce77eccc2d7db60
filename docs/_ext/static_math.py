r"""Math typeset at build time as MathML: pages carry finished formulas and load no math script.

Why this is an extension: with ``sphinx.ext.mathjax`` every page downloads
MathJax (1.2 MB) and typesets after load, which shifts the layout as each
formula grows from source to its typeset size. Here MathJax 3's TeX parser
(the copy the sphinx-mathjax-offline wheel ships) runs once, in the build,
inside an embedded V8 (the mini-racer wheel), and the page receives the
MathML it produces. The browser lays MathML out natively (MathML Core, in
Chromium since version 109), in a math font the site serves itself.

Why MathML and not MathJax's CommonHTML: CommonHTML draws a formula with
an element and a CSS rule per character: the saturation page had 14,558
elements, 5,717 in MathML, and its mobile blocking time (median of 8 loads,
make bench's mobile profile) fell from 938 ms to 230 ms in a prototype that
swapped one for the other.

- **What is rendered.** Inline math and display math, as ``sphinx.ext.mathjax``
  wraps them: display math with several equations (blank lines between them)
  is aligned, an equation with ``\\`` is split, and amsmath environments
  (``no-wrap``) are passed as they are. Equation numbers and their permalinks
  are Sphinx's own, beside the formula, as before.
- **MathML Core.** What MathJax writes that Chromium does not draw is
  rewritten (:func:`core_mathml`): a ``mathvariant`` other than ``normal``
  becomes the Unicode mathematical letters it stands for (bold σ is 𝝈), and a
  table's column alignment and spacing become the style of its cells.
- **Errors fail the build.** TeX that MathJax cannot parse (an undefined
  macro, an unbalanced brace) is a warning naming the page and line, so an
  error in the strict build: the ``noundefined`` and ``noerrors`` packages are
  left out, so an unknown macro is an error instead of red text on the page.
- **Source kept.** Each formula keeps its TeX as a standard MathML annotation
  (:func:`with_tex_annotation`), which the browser does not draw.
- **Font.** STIX Two Math (SIL Open Font License; the copy in the ziamath
  wheel), cut down after each build to the characters the site's formulas
  draw, in ``_static/static-math.woff2``. Pages preload it, and it
  is declared with ``font-display: optional``, so that nothing moves if it
  arrives late.

Rendering happens while pages are written, in the process that writes them,
with one V8 context per process (created on first use).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import html as html_escaping
import importlib.metadata
import json
import re
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from docutils import nodes
from sphinx.locale import _
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

RENDERER = "static_mathml"
STYLESHEET = "static-math.css"
FONT = "static-math.woff2"
MATHML = "http://www.w3.org/1998/Math/MathML"
# The MathJax components the build runs, in the order the loader asks for them.
_COMPONENTS = ("core.js", "adaptors/liteDOM.js", "input/tex-full.js")
# What MathJax's tex-chtml.js in a browser knows: its packages and those it
# autoloads on first use. Not tex-full's list: its textmacros would parse a
# \text{} as LaTeX text (where "_" is an error), its noerrors would print bad
# TeX as source and its noundefined unknown macros in red, instead of failing.
# Not bussproofs either: it measures boxes, which needs an output jax.
TEX_PACKAGES = [
    "base", "ams", "newcommand", "configmacros",
    "action", "amscd", "bbox", "boldsymbol", "braket", "cancel", "cases", "centernot",
    "color", "colortbl", "empheq", "enclose", "extpfeil", "gensymb", "html", "mathtools", "mhchem",
    "upgreek", "unicode", "verb",
]
_ERROR = re.compile(r'data-mjx-error="([^"]*)"')

# Where each mathvariant's letters start in Unicode's Mathematical Alphanumeric
# Symbols block (capital A, small a, digit 0, capital Alpha, small alpha), and
# the letters that Unicode had already encoded elsewhere (the block's holes).
_ALPHANUMERIC_STARTS = {
    "bold": (0x1D400, 0x1D41A, 0x1D7CE, 0x1D6A8, 0x1D6C2),
    "italic": (0x1D434, 0x1D44E, None, 0x1D6E2, 0x1D6FC),
    "bold-italic": (0x1D468, 0x1D482, None, 0x1D71C, 0x1D736),
    "script": (0x1D49C, 0x1D4B6, None, None, None),
    "bold-script": (0x1D4D0, 0x1D4EA, None, None, None),
    "fraktur": (0x1D504, 0x1D51E, None, None, None),
    "double-struck": (0x1D538, 0x1D552, 0x1D7D8, None, None),
    "bold-fraktur": (0x1D56C, 0x1D586, None, None, None),
    "sans-serif": (0x1D5A0, 0x1D5BA, 0x1D7E2, None, None),
    "bold-sans-serif": (0x1D5D4, 0x1D5EE, 0x1D7EC, 0x1D756, 0x1D770),
    "sans-serif-italic": (0x1D608, 0x1D622, None, None, None),
    "sans-serif-bold-italic": (0x1D63C, 0x1D656, None, 0x1D790, 0x1D7AA),
    "monospace": (0x1D670, 0x1D68A, 0x1D7F6, None, None),
}
_ALPHANUMERIC_HOLES = {
    "italic": {"h": "\u210e"},
    "script": dict(zip("BEFHILMRego", "\u212c\u2130\u2131\u210b\u2110\u2112\u2133\u211b\u212f\u210a\u2134")),
    "fraktur": dict(zip("CHIRZ", "\u212d\u210c\u2111\u211c\u2128")),
    "double-struck": dict(zip("CHNPQRZ", "\u2102\u210d\u2115\u2119\u211a\u211d\u2124")),
}


def math_letters(text: str, variant: str) -> str:
    """``text`` in the Unicode mathematical letters of ``variant`` (a MathML ``mathvariant``).

    Latin letters, digits and Greek letters have such letters where Unicode
    encodes them; any other character is returned as it is.

    Examples
    --------
    >>> math_letters("E", "double-struck"), math_letters("R", "double-struck"), math_letters("N", "script")
    ('𝔼', 'ℝ', '𝒩')
    >>> math_letters("σ", "bold-italic"), math_letters("1", "bold"), math_letters("x+1", "italic")
    ('𝝈', '𝟏', '𝑥+1')
    >>> math_letters("k", "no-such-variant")
    Traceback (most recent call last):
    ...
    ValueError: unknown mathvariant 'no-such-variant'
    """
    if variant not in _ALPHANUMERIC_STARTS:
        raise ValueError(f"unknown mathvariant {variant!r}")
    capital, small, digit, capital_greek, small_greek = _ALPHANUMERIC_STARTS[variant]
    holes = _ALPHANUMERIC_HOLES.get(variant, {})
    letters = []
    for character in text:
        code = ord(character)
        ranges = ((capital, "A", 26), (small, "a", 26), (digit, "0", 10), (capital_greek, "\u0391", 25), (small_greek, "\u03b1", 25))
        start = next((start + code - ord(first) for start, first, size in ranges
                      if start is not None and 0 <= code - ord(first) < size and code != 0x3A2), None)
        letters.append(holes.get(character) or (chr(start) if start is not None else character))
    return "".join(letters)


def _lengths(value: str, count: int) -> list[str]:
    # A MathML list attribute: one value per item, the last repeated.
    values = value.split() or ["0"]
    return [values[min(index, len(values) - 1)] for index in range(count)]


def _half(length: str) -> str:
    number, unit = re.fullmatch(r"(-?[\d.]*)(\w*)", length).groups()
    return f"{float(number or 0) / 2:g}{unit if float(number or 0) else ''}"


def core_mathml(mathml: str) -> str:
    """``mathml`` as MathJax wrote it, rewritten in what MathML Core draws, on one line.

    A ``mathvariant`` other than ``normal`` becomes Unicode mathematical
    letters; a table's ``columnalign``, ``columnspacing`` and ``rowspacing``
    become the alignment and padding of its cells (``columnalign`` stays
    too); MathJax's own ``data-mjx-`` attributes and the whitespace between
    elements go. Spacing follows TeX where MathML Core's differs: a thin
    space around an operator name (``2 \\ln n``; ``\\operatorname``, which
    MathJax does not mark, keeps MathML Core's spacing) unless a parenthesis follows,
    none around a sign that follows an operator (``= -\\sum``) or a symbol
    TeX sets as ordinary (``1/n``), and none outside
    an inline formula's first and last operator, where the prose has its own
    (``$d_k =$ 512``).

    Examples
    --------
    >>> core_mathml('<math xmlns="http://www.w3.org/1998/Math/MathML">\\n  <mi mathvariant="double-struck">E</mi>\\n'
    ...             '  <mrow data-mjx-texclass="ORD"><mi mathvariant="normal">Δ</mi></mrow>\\n</math>')
    '<math><mi>𝔼</mi><mrow><mi mathvariant="normal">Δ</mi></mrow></math>'
    >>> core_mathml('<math xmlns="http://www.w3.org/1998/Math/MathML">\\n  <mtext>\\u00a0at\\u00a0</mtext>\\n</math>')
    '<math><mtext>\\xa0at\\xa0</mtext></math>'
    >>> print(core_mathml('<math xmlns="http://www.w3.org/1998/Math/MathML"><mtable columnalign="right left" '
    ...                   'columnspacing="0em" rowspacing="3pt"><mtr><mtd><mi>a</mi></mtd><mtd><mo>=</mo>'
    ...                   '<mi>b</mi></mtd></mtr></mtable></math>'))
    <math><mtable columnalign="right left"><mtr><mtd style="text-align: -webkit-right; padding: 1.5pt 0 1.5pt 0"><mi>a</mi></mtd><mtd style="text-align: -webkit-left; padding: 1.5pt 0 1.5pt 0"><mo>=</mo><mi>b</mi></mtd></mtr></mtable></math>
    >>> print(core_mathml('<math><mi>ln</mi><mo>\u2061</mo><mi>n</mi><mo>,</mo><mi>ln</mi><mo>\u2061</mo>'
    ...                   '<mo stretchy="false">(</mo><mi>x</mi><mo stretchy="false">)</mo></math>'))
    <math><mi>ln</mi><mo rspace="0.1667em">\u2061</mo><mi>n</mi><mo>,</mo><mi>ln</mi><mo>\u2061</mo><mo stretchy="false">(</mo><mi>x</mi><mo stretchy="false" rspace="0">)</mo></math>
    >>> core_mathml('<math><mn>2</mn><mi>ln</mi><mo>\u2061</mo><mi>n</mi><mo>=</mo><mi>ln</mi><mo>\u2061</mo><mi>Z</mi></math>')
    '<math><mn>2</mn><mspace width="0.1667em"></mspace><mi>ln</mi><mo rspace="0.1667em">\u2061</mo><mi>n</mi><mo>=</mo><mi>ln</mi><mo rspace="0.1667em">\u2061</mo><mi>Z</mi></math>'
    >>> core_mathml('<math><mi>H</mi><mo>=</mo><mo>−</mo><mi>a</mi><mo>−</mo><mo>(</mo><mi>b</mi><mo>)</mo><mo>−</mo><mi>c</mi></math>')
    '<math><mi>H</mi><mo>=</mo><mo lspace="0" rspace="0">−</mo><mi>a</mi><mo>−</mo><mo>(</mo><mi>b</mi><mo>)</mo><mo>−</mo><mi>c</mi></math>'
    >>> core_mathml('<math><mi>ln</mi><mo>\u2061</mo><mrow><mo>(</mo></mrow><mi>x</mi><mrow><mo>)</mo></mrow>'
    ...             '<mi>ln</mi><mo>\u2061</mo><mi>n</mi><mo>+</mo><mo>⋯</mo><mo>+</mo><mi>z</mi></math>')
    '<math><mi>ln</mi><mo>\u2061</mo><mrow><mo>(</mo></mrow><mi>x</mi><mrow><mo>)</mo></mrow><mspace width="0.1667em"></mspace><mi>ln</mi><mo rspace="0.1667em">\u2061</mo><mi>n</mi><mo>+</mo><mo>⋯</mo><mo>+</mo><mi>z</mi></math>'
    >>> core_mathml('<math><mn>1</mn><mrow data-mjx-texclass="ORD"><mo>/</mo></mrow><mi>n</mi></math>')
    '<math><mn>1</mn><mrow><mo lspace="0" rspace="0">/</mo></mrow><mi>n</mi></math>'
    >>> core_mathml('<math><mrow><msub><mi>d</mi><mi>k</mi></msub><mo>=</mo></mrow></math>')
    '<math><mrow><msub><mi>d</mi><mi>k</mi></msub><mo rspace="0">=</mo></mrow></math>'
    >>> core_mathml('<math display="block"><msub><mi>d</mi><mi>k</mi></msub><mo>=</mo></math>')
    '<math display="block"><msub><mi>d</mi><mi>k</mi></msub><mo>=</mo></math>'
    """
    root = ElementTree.fromstring(mathml)
    for element in root.iter():
        element.tag = element.tag.removeprefix(f"{{{MATHML}}}")
        # {/} and \mathord{-}: an operator that TeX sets as an ordinary symbol, with
        # no space around it (MathML Core gave "1 / n" the spacing of a relation).
        if element.attrib.get("data-mjx-texclass") == "ORD" and len(element) == 1 \
                and element[0].tag.rpartition("}")[2] == "mo":
            element[0].attrib.update(lspace="0", rspace="0")
        for name in [name for name in element.attrib if name.startswith("data-mjx-")]:
            del element.attrib[name]
        # MathJax indents its output: whitespace between elements goes. A token's
        # own text stays as it is (\text{ at } keeps its spaces, as no-break spaces).
        if element.text is not None and not element.text.strip(" \n"):
            element.text = None
        element.tail = None
        variant = element.attrib.get("mathvariant")
        if variant and not (variant == "normal" and element.tag == "mi"):
            del element.attrib["mathvariant"]
            if variant != "normal" and element.text:
                element.text = math_letters(element.text, variant)
    for table in root.iter("mtable"):
        _style_cells(table)
    _space_function_application(root)
    _space_unary_signs(root)
    if root.attrib.get("display") != "block":
        _trim_outer_operator_space(root)
    return ElementTree.tostring(root, encoding="unicode", short_empty_elements=False)


# Characters that open a group: TeX puts no space between an operator name and
# them, \ln(x), and a thin one before anything else, \ln n (|x| too: TeX's | is ordinary).
_OPENING = set("([{⟨⌊⌈")
# Signs that are binary between two terms and unary after an operator; what
# closes a group (after which a sign is binary again: (a) - b); and operators
# TeX sets as ordinary symbols (x_1 + \cdots + x_n: the second + is binary).
_SIGNS = set("+−±∓")
_CLOSING = set(")]}⟩⌋⌉|‖")
_ORDINARY = set("⋯…⋮⋱!′″‴")
THIN_SPACE = "0.1667em"


def _core(element: ElementTree.Element) -> ElementTree.Element:
    # \bigl( is <mrow><mo>(</mo></mrow>: the operator the row holds is what TeX spaces by.
    return element[0] if element.tag == "mrow" and len(element) == 1 and element[0].tag == "mo" else element


def _operator(element: ElementTree.Element) -> str | None:
    """The operator ``element`` is, or stands for (a row holding one), else None."""
    core = _core(element)
    return (core.text or "").strip() if core.tag == "mo" else None


def _space_function_application(root: ElementTree.Element) -> None:
    # MathJax writes \ln n as <mi>ln</mi><mo>U+2061</mo><mi>n</mi>. The invisible
    # operator has no width in MathML Core (Chromium 156 drew "lnn" and "2lnn");
    # TeX sets a thin space after the name unless a parenthesis follows, and one
    # before it after anything but an operator that brings its own (a closing
    # fence or an ordinary symbol brings none). \operatorname{...} has no such
    # marker in MathJax's MathML, and keeps MathML Core's spacing.
    for row in list(root.iter()):
        children = list(row)
        for index, operator in enumerate(children):
            if operator.tag != "mo" or operator.text != "\u2061" or index == 0:
                continue
            after = _operator(children[index + 1]) if index + 1 < len(children) else ""
            if after not in _OPENING:
                operator.set("rspace", THIN_SPACE)
            before = _operator(children[index - 2]) if index >= 2 else ""
            if index >= 2 and (before is None or before in _CLOSING or before in _ORDINARY):
                space = ElementTree.Element("mspace", width=THIN_SPACE)
                row.insert(list(row).index(children[index - 1]), space)


def _space_unary_signs(root: ElementTree.Element) -> None:
    # "H = -\sum ...": MathML Core spaces a sign inside a row as a binary
    # operator; TeX makes a sign that follows a relation, an opening fence, a
    # comma or another operator unary, with no space around it.
    for row in root.iter():
        children = list(row)
        for before, sign in zip(children, children[1:]):
            previous = _operator(before)
            if sign.tag == "mo" and (sign.text or "").strip() in _SIGNS and previous is not None \
                    and previous not in _CLOSING and previous not in _ORDINARY:
                sign.set("lspace", "0")
                sign.set("rspace", "0")


def _trim_outer_operator_space(root: ElementTree.Element) -> None:
    # Inline "$d_k =$ 512": the prose's own space follows the formula, so the
    # relation's thick space after it doubled the gap before the glued number.
    row = root
    while len(row) == 1 and row[0].tag == "mrow":
        row = row[0]
    if len(row) and row[-1].tag == "mo":
        row[-1].set("rspace", "0")
    if len(row) and row[0].tag == "mo":
        row[0].set("lspace", "0")


def _style_cells(table: ElementTree.Element) -> None:
    # MathML Core centres every cell with 0.4em either side; TeX's aligned
    # environments want right-left pairs of columns with no space between.
    # Chromium aligns a cell's formula by the -webkit- values of text-align
    # only (156: "right" leaves it at the left). The table keeps its
    # columnalign for browsers that read MathML's attribute (Firefox).
    align = table.attrib.get("columnalign", "center")
    columns = table.attrib.pop("columnspacing", "0.8em")
    rows = table.attrib.pop("rowspacing", "1ex")
    for row_index, row in enumerate(table.findall("mtr")):
        cells = row.findall("mtd")
        alignments = _lengths(align, len(cells))
        gaps = [_half(gap) for gap in _lengths(columns, max(len(cells) - 1, 1))]
        vertical = _half(_lengths(rows, row_index + 1)[row_index])
        for index, cell in enumerate(cells):
            left = gaps[index - 1] if index > 0 else "0"
            right = gaps[index] if index < len(cells) - 1 else "0"
            cell.set("style", f"text-align: -webkit-{alignments[index]}; padding: {vertical} {right} {vertical} {left}")


def mathjax_directory() -> Path:
    """The MathJax 3 distribution inside the installed sphinx-mathjax-offline wheel."""
    distribution = importlib.metadata.distribution("sphinx-mathjax-offline")
    return Path(distribution.locate_file("sphinx-mathjax-offline/static/mathjax"))


def math_font() -> Path:
    """STIX Two Math, as the installed ziamath wheel ships it (an OpenType font with a MATH table)."""
    return Path(importlib.metadata.distribution("ziamath").locate_file("ziamath/fonts/STIXTwoMath-Regular.ttf"))


def subset_font(source: Path, target: Path, characters: set[str]) -> None:
    """Write to ``target`` the font ``source`` as WOFF2, with only the glyphs of ``characters``.

    Every OpenType feature is kept, and with it the MATH table: the stretched
    and script-size variants of the glyphs kept.
    """
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(map(ord, characters)))
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def cached_subset(source: Path, characters: set[str], cache: Path) -> Path:
    """The font ``source`` cut to ``characters`` (:func:`subset_font`), kept in the directory ``cache``.

    Cutting STIX Two Math takes about 1.5 s; the file is named by a hash of
    the font and the characters, so a rebuild that changes neither only finds it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first = cached_subset(math_font(), {"x"}, Path(tmp))
    ...     made = first.stat().st_mtime_ns
    ...     again = cached_subset(math_font(), {"x"}, Path(tmp))
    ...     other = cached_subset(math_font(), {"x", "y"}, Path(tmp))
    ...     (again == first, again.stat().st_mtime_ns == made, other == first)
    (True, True, False)
    """
    key = hashlib.sha256(source.read_bytes() + "".join(sorted(characters)).encode())
    subset = cache / f"{key.hexdigest()[:16]}-{source.stem}.woff2"
    if not subset.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subset_font(source, subset, characters)
    return subset


class TeXError(ValueError):
    """MathJax could not parse a formula; the message is MathJax's."""


class Typesetter:
    r"""MathJax 3's TeX input running in an embedded V8, turning TeX into MathML Core.

    Parameters
    ----------
    mathjax : pathlib.Path, optional
        The MathJax distribution (``es5`` layout); by default the wheel's.

    Examples
    --------
    >>> typesetter = Typesetter()
    >>> typesetter.typeset(r"\sqrt{d_k}", display=False)
    '<math><semantics><mrow><msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt></mrow><annotation encoding="application/x-tex">\\sqrt{d_k}</annotation></semantics></math>'
    >>> typesetter.typeset(r"\notamacro x", display=False)
    Traceback (most recent call last):
    ...
    static_math.TeXError: Undefined control sequence \notamacro
    >>> typesetter.close()
    """

    def __init__(self, mathjax: Path | None = None):
        # MiniRacer adopts the asyncio loop running in the calling thread, if any
        # (a Jupyter kernel; pytest once Playwright's sync API has run), and then
        # refuses to block on it. So V8 lives in one thread of its own, with no
        # loop, from start to close; that thread also serialises the calls.
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mathjax")
        self._context = self._run(self._start, mathjax or mathjax_directory())
        # MathML already made, by (TeX, display). The site's 3,479 formulas are 1,484 different ones
        # (d_k alone is 193): typesetting each once took 5.1 s against 8.6 s for all of them.
        self._made: dict[tuple[str, bool], str] = {}

    def _run(self, function, *args):
        return self._thread.submit(function, *args).result()

    @staticmethod
    def _start(mathjax: Path):
        from py_mini_racer import MiniRacer

        context = MiniRacer()
        sources = {f"mathjax/{name}": (mathjax / name).read_text(encoding="utf-8") for name in _COMPONENTS}
        # The loader "requires" a component by evaluating the source handed to it
        # here: V8 alone has no file system, and no component is fetched.
        context.eval(
            "var COMPONENT_SOURCES = " + json.dumps(sources) + ";\n"
            "var MathJax = {"
            "  loader: {load: ['adaptors/liteDOM', 'input/tex-full'],"
            "           paths: {mathjax: 'mathjax'},"
            "           require: function (file) { (0, eval)(COMPONENT_SOURCES[file]); }},"
            "  startup: {typeset: false},"
            "  tex: {packages: " + json.dumps(TEX_PACKAGES) + "}"
            "};"
        )
        context.eval((mathjax / "startup.js").read_text(encoding="utf-8"))
        context.eval("MathJax.startup.promise").get(timeout=60)
        return context

    def typeset(self, tex: str, *, display: bool) -> str:
        """MathML Core for ``tex``, with ``tex`` as its annotation; :class:`TeXError` if MathJax rejects it.

        A formula met again is not typeset again: the MathML made the first
        time is returned. A formula MathJax rejects is not remembered, so
        that each place it occurs is reported.
        """
        key = (tex, display)
        if key not in self._made:
            mathml = self._run(
                self._context.eval, "MathJax.tex2mml(%s, {display: %s})" % (json.dumps(tex), "true" if display else "false")
            )
            error = _ERROR.search(mathml)
            if error:
                raise TeXError(html_escaping.unescape(error.group(1)))
            self._made[key] = with_tex_annotation(core_mathml(mathml), tex)
        return self._made[key]

    def close(self) -> None:
        """Stop V8 (a process still holding a typesetter that reported a TeX error may not exit otherwise)."""
        self._run(self._context.close)
        self._thread.shutdown()


def with_tex_annotation(html: str, tex: str) -> str:
    r"""``html`` with ``tex`` as the TeX annotation of its MathML.

    The page keeps the source each formula was typeset from, in standard
    MathML (``<semantics>`` and ``<annotation encoding="application/x-tex">``):
    the browser draws only the first child of ``<semantics>``, a reader's
    tools can copy the source, and tests/test_statements.py finds in the
    built page the very statement that SymPy checked.

    Examples
    --------
    >>> with_tex_annotation('<math display="block"><mi>x</mi><mo>&lt;</mo><mn>1</mn></math>', "x < 1")
    '<math display="block"><semantics><mrow><mi>x</mi><mo>&lt;</mo><mn>1</mn></mrow><annotation encoding="application/x-tex">x &lt; 1</annotation></semantics></math>'
    """
    start = html.index(">", html.index("<math")) + 1
    end = html.rindex("</math>")
    annotation = f'<annotation encoding="application/x-tex">{html_escaping.escape(tex, quote=False)}</annotation>'
    return f"{html[:start]}<semantics><mrow>{html[start:end]}</mrow>{annotation}</semantics>{html[end:]}"


_typesetter: Typesetter | None = None


def typesetter() -> Typesetter:
    """This process's typesetter, started on first use."""
    global _typesetter
    if _typesetter is None:
        _typesetter = Typesetter()
    return _typesetter


def _typeset(translator, node, tex: str, *, display: bool) -> str:
    try:
        return typesetter().typeset(tex, display=display)
    except TeXError as error:
        logger.warning("MathJax cannot typeset %r: %s", tex, error, location=node, type="math", subtype="tex")
        return f'<code class="math-error">{translator.encode(tex)}</code>'


def visit_math(translator, node: nodes.math) -> None:
    translator.body.append(translator.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    translator.body.append(_typeset(translator, node, node.astext(), display=False))
    translator.body.append("</span>")
    raise nodes.SkipNode


# Punctuation that belongs to the formula before it and must not start a line.
_TRAILING_PUNCTUATION = re.compile(r"[,.;:!?)\]’”]+")


class PunctuationAfterMath(SphinxPostTransform):
    """Keep the punctuation right after an inline formula on the formula's line.

    A browser may break a line between a ``<math>`` and the comma after it,
    which then starts the next line. The formula and its punctuation go into
    one ``<span class="math-punctuation">``, which the stylesheet keeps unbroken.
    """

    default_priority = 400
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for math in list(self.document.findall(nodes.math)):
            # Math that ends an emphasis or a link (*$y$*,): the punctuation follows that element.
            outer = math
            while isinstance(outer.parent, nodes.Inline) and outer.parent.children[-1] is outer:
                outer = outer.parent
            following = outer.next_node(descend=False, siblings=True)
            if not isinstance(following, nodes.Text):
                continue
            punctuation = _TRAILING_PUNCTUATION.match(str(following))
            if punctuation is None:
                continue
            kept = nodes.inline(classes=["math-punctuation"])
            outer.replace_self(kept)
            kept += [outer, nodes.Text(punctuation.group())]
            # By identity: docutils finds a Text child by equality, and an
            # earlier ", " would be taken for this one.
            parent = following.parent
            index = next(index for index, child in enumerate(parent.children) if child is following)
            rest = str(following)[punctuation.end():]
            if rest:
                parent[index] = nodes.Text(rest)
            else:
                del parent[index]


def display_tex(text: str, *, no_wrap: bool) -> str:
    r"""The TeX MathJax receives for a display block, as ``sphinx.ext.mathjax`` wraps it.

    Examples
    --------
    >>> display_tex("a = b", no_wrap=False)
    'a = b'
    >>> display_tex(r"a &= b \\ c &= d", no_wrap=False)
    '\\begin{split}a &= b \\\\ c &= d\\end{split}'
    >>> display_tex("a = b\n\nc = d", no_wrap=False)
    '\\begin{align}\\begin{aligned}a = b\\\\c = d\\end{aligned}\\end{align}'
    >>> display_tex(r"\begin{align}x\end{align}", no_wrap=True)
    '\\begin{align}x\\end{align}'
    """
    if no_wrap:
        return text
    parts = [part for part in text.split("\n\n") if part.strip()]
    parts = [rf"\begin{{split}}{part}\end{{split}}" if r"\\" in part else part for part in parts]
    if len(parts) == 1:
        return parts[0]
    return r"\begin{align}\begin{aligned}" + r"\\".join(parts) + r"\end{aligned}\end{align}"


def visit_displaymath(translator, node: nodes.math_block) -> None:
    translator.body.append(translator.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        translator.body.append(f'<span class="eqno">({get_node_equation_number(translator, node)})')
        translator.add_permalink_ref(node, _("Link to this equation"))
        translator.body.append("</span>")
    no_wrap = node.get("no-wrap", node.get("nowrap", False))
    html = _typeset(translator, node, display_tex(node.astext(), no_wrap=no_wrap), display=True)
    # A display too wide for the column scrolls sideways, and a keyboard can
    # scroll only what it can focus. The wrapper takes the focus: HTML does not
    # allow tabindex on <math> (the Nu HTML Checker reports it).
    translator.body.append(f'<div class="math-scroll" tabindex="0">{html}</div>')
    translator.body.append("</div>\n")
    raise nodes.SkipNode


# The text of a page's formulas: what is inside <math>, less the TeX annotations and the tags.
_MATH = re.compile(r"<math\b.*?</math>", re.S)
_ANNOTATION = re.compile(r"<annotation\b.*?</annotation>", re.S)
_TAG = re.compile(r"<[^>]*>")


def math_characters(page: str) -> set[str]:
    """The characters that the formulas of the HTML ``page`` can draw.

    A browser draws a one-letter ``<mi>`` in the letter's mathematical italic
    (``x`` as 𝑥), so each letter's italic counts as drawn too, and a root
    (``<msqrt>``, ``<mroot>``) with the radical sign √, which is not in its text.

    Examples
    --------
    >>> sorted(math_characters('<p>text</p><math><semantics><mrow><mi>𝔼</mi><mo>&lt;</mo><mi>x</mi></mrow>'
    ...                        '<annotation encoding="application/x-tex">E &lt; x</annotation></semantics></math>'))
    ['<', 'x', '𝑥', '𝔼']
    >>> sorted(math_characters('<math><msqrt><mn>2</mn></msqrt></math>'))
    ['2', '√']
    """
    formulas = [_ANNOTATION.sub("", formula) for formula in _MATH.findall(page)]
    drawn = html_escaping.unescape("".join(_TAG.sub("", formula) for formula in formulas))
    roots = {"\u221a"} if any("<msqrt" in formula or "<mroot" in formula for formula in formulas) else set()
    return set(drawn) | set(math_letters(drawn, "italic")) | roots


# The theme's sans-serif text has a larger x-height than STIX Two, so formulas
# are set a little larger to match. The font is preloaded (see preload_script),
# so a formula is normally first drawn in its own font. font-display: optional,
# not block: with block, a font that came after the first paint (a busy machine,
# a slow network) had the formulas laid out again and the text moved (CLS 0.14
# on the correlation page); with optional, a font that is not there in time is
# not used on that page at all, and nothing moves. (Embedded in the stylesheet
# as a data: URL, the font still arrived after the first paint in Chromium 156.)
STYLES = f"""\
@font-face {{ font-family: "STIX Two Math subset"; font-display: optional; src: url({FONT}) format("woff2"); }}
math {{ font-family: "STIX Two Math subset", math; font-size: 1.15em; }}
div.math {{ display: flex; align-items: center; }}
span.math-punctuation {{ white-space: nowrap; }}
div.math > .math-scroll {{ flex-grow: 1; min-width: 0; overflow: auto hidden; padding-bottom: 0.2rem; }}
/* The equation number sits beside the formula, not over a wide one that scrolls. */
div.math > span.eqno {{ order: 1; position: static; transform: none; flex-shrink: 0; margin-left: 0.5em; }}
"""


def add_preload(app, pagename, templatename, context, doctree) -> None:
    """Preload the math font from the head of each page that has a formula."""
    if app.builder.math_renderer_name == RENDERER and "<math" in (context.get("body") or ""):
        font = context["pathto"](f"_static/{FONT}", 1)
        context["metatags"] = context.get("metatags", "") + preload_script([font])


def preload_script(urls: list[str]) -> str:
    """A script in the head that preloads ``urls`` as fonts when the page is served.

    A script, not ``<link rel="preload">`` tags: a font preload is a CORS
    request, which Chromium refuses (with a console error) for a page opened
    from the file system, and the site must work from disk. Served, the
    preloads start while the head is parsed, as tags would.

    Examples
    --------
    >>> print(preload_script(["_static/static-math.woff2"]))
    <BLANKLINE>
    <script>if (location.protocol !== "file:") for (const href of ["_static/static-math.woff2"]) document.head.append(Object.assign(document.createElement("link"), {rel: "preload", as: "font", type: "font/woff2", crossOrigin: "anonymous", href}));</script>
    """
    return (
        '\n<script>if (location.protocol !== "file:") for (const href of ' + json.dumps(urls) + ") "
        'document.head.append(Object.assign(document.createElement("link"), '
        '{rel: "preload", as: "font", type: "font/woff2", crossOrigin: "anonymous", href}));</script>'
    )


def write_math_assets(outdir: Path, cache: Path) -> None:
    """Write the math stylesheet and font into ``_static`` of the built site ``outdir``.

    The font is cut down to the characters the site's formulas draw, and kept
    in ``cache``, keyed by its source and those characters, so that a rebuild
    that changes neither only copies it.
    """
    characters = set()
    for page in outdir.rglob("*.html"):
        characters |= math_characters(page.read_text(encoding="utf-8", errors="replace"))
    shutil.copyfile(cached_subset(math_font(), characters, cache), outdir / "_static" / FONT)
    (outdir / "_static" / STYLESHEET).write_text(STYLES, encoding="utf-8")


def finish(app, exception) -> None:
    """Stop the typesetter and write the math stylesheet and font."""
    global _typesetter
    # Closed explicitly, not left to garbage collection: a script that kept a
    # typesetter after MathJax reported an error did not exit until it was closed.
    if _typesetter is not None:
        _typesetter.close()
        _typesetter = None
    if exception is None and app.builder.format == "html" and app.builder.math_renderer_name == RENDERER:
        write_math_assets(Path(app.outdir), Path(app.doctreedir) / "math-font")


def setup(app):
    app.add_html_math_renderer(RENDERER, (visit_math, None), (visit_displaymath, None))
    app.add_css_file(STYLESHEET)
    app.add_post_transform(PunctuationAfterMath)
    app.connect("html-page-context", add_preload)
    app.connect("build-finished", finish)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
