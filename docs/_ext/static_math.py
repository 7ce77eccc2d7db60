r"""Math typeset at build time: pages carry finished MathJax output and load no math script.

Why this is an extension: with ``sphinx.ext.mathjax`` every page downloads
MathJax (1.2 MB) and typesets after load, which shifts the layout as each
formula grows from source to its typeset size. Here the same MathJax 3 (the
copy the sphinx-mathjax-offline wheel ships) runs once, in the build, inside
an embedded V8 (the mini-racer wheel), and writes its CommonHTML output into
the page. The reader's browser only applies CSS and fetches the few MathJax
fonts the page uses; the typeset boxes have their final size from the first
paint, since CommonHTML sizes every character in its stylesheet.

- **What is rendered.** Inline math and display math, as ``sphinx.ext.mathjax``
  wraps them: display math with several equations (blank lines between them)
  is aligned, an equation with ``\\`` is split, and amsmath environments
  (``no-wrap``) are passed as they are. Equation numbers and their permalinks
  are Sphinx's own, beside the formula, as before.
- **Errors fail the build.** TeX that MathJax cannot parse (an undefined
  macro, an unbalanced brace) is a warning naming the page and line, so an
  error in the strict build: the ``noundefined`` and ``noerrors`` packages are
  left out, so an unknown macro is an error instead of red text on the page.
- **Accessibility.** Each formula carries MathJax's assistive MathML, hidden
  on screen and read by screen readers, as MathJax in the browser would add.
- **Styles.** Each page gets the stylesheet for what it uses, in a
  ``<style>`` element in its head: the rules every formula needs plus those of
  the characters on that page (MathJax's adaptive CSS, reset between pages).
  The ``@font-face`` rules point at ``_static/mathjax-fonts/``, where the
  build copies MathJax's WOFF fonts; a browser downloads only those a page
  uses.

Rendering happens while pages are written, in the process that writes them,
with one V8 context per process (created on first use).
"""

from __future__ import annotations

import concurrent.futures
import html as html_escaping
import importlib.metadata
import json
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

RENDERER = "static_mathjax"
# Where the pages find MathJax's fonts, under the output's _static/.
FONT_DIR = "mathjax-fonts"
# The MathJax components the build runs, in the order the loader asks for them.
_COMPONENTS = (
    "core.js",
    "adaptors/liteDOM.js",
    "input/tex-full.js",
    "output/chtml.js",
    "output/chtml/fonts/tex.js",
    "a11y/assistive-mml.js",
)
# What MathJax's tex-chtml.js in a browser knows: its packages and those it
# autoloads on first use. Not tex-full's list: its textmacros would parse a
# \text{} as LaTeX text (where "_" is an error), its noerrors would print bad
# TeX as source and its noundefined unknown macros in red, instead of failing.
TEX_PACKAGES = [
    "base", "ams", "newcommand", "configmacros",
    "action", "amscd", "bbox", "boldsymbol", "braket", "bussproofs", "cancel", "cases", "centernot",
    "color", "colortbl", "empheq", "enclose", "extpfeil", "gensymb", "html", "mathtools", "mhchem",
    "upgreek", "unicode", "verb",
]
# MathJax in a browser scales each formula to the x-height of the text around it;
# without a browser there is no text to measure, so one factor for all: the
# theme's sans-serif system fonts need 1.16 (Segoe UI) to 1.27 (DejaVu Sans, as
# MathJax measured it in Chromium on this site).
SCALE = 1.2
# Stands for the per-page path to the fonts in the generated stylesheet.
_FONT_URL_MARK = "@@MATHJAX_FONTS@@"
_ERROR = re.compile(r'data-mjx-error="([^"]*)"')


def mathjax_directory() -> Path:
    """The MathJax 3 distribution inside the installed sphinx-mathjax-offline wheel."""
    distribution = importlib.metadata.distribution("sphinx-mathjax-offline")
    return Path(distribution.locate_file("sphinx-mathjax-offline/static/mathjax"))


class TeXError(ValueError):
    """MathJax could not typeset a formula; the message is MathJax's."""


class Typesetter:
    r"""MathJax 3 running in an embedded V8, turning TeX into CommonHTML.

    Parameters
    ----------
    mathjax : pathlib.Path, optional
        The MathJax distribution (``es5`` layout); by default the wheel's.

    Examples
    --------
    >>> typesetter = Typesetter()
    >>> html = typesetter.typeset(r"\sqrt{d_k}", display=False)
    >>> html.startswith("<mjx-container") and "mjx-msqrt" in html and "<math" in html
    True
    >>> "mjx-c221A" in typesetter.stylesheet()  # the CSS now covers the radical sign
    True
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
            "  loader: {load: ['adaptors/liteDOM', 'input/tex-full', 'output/chtml', 'a11y/assistive-mml'],"
            "           paths: {mathjax: 'mathjax'},"
            "           require: function (file) { (0, eval)(COMPONENT_SOURCES[file]); }},"
            "  startup: {typeset: false},"
            "  tex: {packages: " + json.dumps(TEX_PACKAGES) + "},"
            "  chtml: {fontURL: '" + _FONT_URL_MARK + "', scale: " + str(SCALE) + ", matchFontHeight: false}"
            "};"
        )
        context.eval((mathjax / "startup.js").read_text(encoding="utf-8"))
        context.eval("MathJax.startup.promise").get(timeout=60)
        return context

    def typeset(self, tex: str, *, display: bool) -> str:
        """CommonHTML (with assistive MathML) for ``tex``; :class:`TeXError` if MathJax rejects it."""
        html = self._run(
            self._context.eval,
            "MathJax.startup.adaptor.outerHTML(MathJax.tex2chtml(%s, {display: %s}))"
            % (json.dumps(tex), "true" if display else "false"),
        )
        error = _ERROR.search(html)
        if error:
            raise TeXError(error.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        return with_tex_annotation(html, tex)

    def stylesheet(self, font_url: str = FONT_DIR) -> str:
        """The CSS for everything typeset since the last :meth:`reset`, fonts read from ``font_url``."""
        css = self._run(self._context.eval, "MathJax.startup.adaptor.textContent(MathJax.chtmlStylesheet())")
        return css.replace(_FONT_URL_MARK, font_url)

    def reset(self) -> None:
        """Forget which characters were used, so that the next stylesheet covers only what follows."""
        self._run(self._context.eval, "MathJax.startup.output.clearCache()")

    def close(self) -> None:
        """Stop V8 (a process still holding a typesetter that reported a TeX error may not exit otherwise)."""
        self._run(self._context.close)
        self._thread.shutdown()


def with_tex_annotation(html: str, tex: str) -> str:
    r"""``html`` with ``tex`` as the TeX annotation of its assistive MathML.

    The page keeps the source each formula was typeset from, in standard
    MathML (``<semantics>`` and ``<annotation encoding="application/x-tex">``):
    a reader's tools can copy it, and tests/test_statements.py finds in the
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
    # scroll only what it can focus (MathJax in a browser makes every formula focusable).
    translator.body.append(html.replace("<mjx-container ", '<mjx-container tabindex="0" ', 1))
    translator.body.append("</div>\n")
    raise nodes.SkipNode


def add_stylesheet(app, pagename, templatename, context, doctree) -> None:
    """Put the CSS of the math this page used into its head, then start afresh for the next page."""
    if app.builder.math_renderer_name != RENDERER or _typesetter is None:
        return
    fonts = context["pathto"](f"_static/{FONT_DIR}", 1)
    body = context.get("body") or ""
    if "<mjx-container" in body:
        css = _typesetter.stylesheet(fonts)
        context["metatags"] = context.get("metatags", "") + preload_script(fonts_used(css, body)) + f'\n<style id="mathjax-chtml">{css}</style>'
    _typesetter.reset()


def preload_script(urls: list[str]) -> str:
    """A script in the head that preloads ``urls`` as fonts when the page is served.

    A script, not ``<link rel="preload">`` tags: a font preload is a CORS
    request, which Chromium refuses (with a console error) for a page opened
    from the file system, and the site must work from disk. Served, the
    preloads start while the head is parsed, as tags would.

    Examples
    --------
    >>> print(preload_script(["_static/mathjax-fonts/MathJax_Zero.woff"]))
    <BLANKLINE>
    <script>if (location.protocol !== "file:") for (const href of ["_static/mathjax-fonts/MathJax_Zero.woff"]) document.head.append(Object.assign(document.createElement("link"), {rel: "preload", as: "font", type: "font/woff", crossOrigin: "anonymous", href}));</script>
    """
    return (
        '\n<script>if (location.protocol !== "file:") for (const href of ' + json.dumps(urls) + ") "
        'document.head.append(Object.assign(document.createElement("link"), '
        '{rel: "preload", as: "font", type: "font/woff", crossOrigin: "anonymous", href}));</script>'
    )


_FONT_FACE = re.compile(r'@font-face[^{]*\{\s*font-family: (MJX[\w-]+);\s*src: url\("([^"]+)"\)')
_VARIANT_CLASS = re.compile(r'class="mjx-c[0-9A-F]* (TEX-[A-Z0-9]+)"')


def fonts_used(css: str, body: str) -> list[str]:
    r"""The URLs of the MathJax fonts that ``body``'s formulas are drawn in, from its stylesheet ``css``.

    They are preloaded: a formula first drawn in a fallback font, while its
    own is still on the way, has other line heights, and the text around it
    moves when the font arrives. Every formula uses the zero-width font and
    the main one; a character in another variant names it in its class
    (``TEX-I`` for math italic); stretched delimiters use the size fonts.

    Examples
    --------
    >>> css = ('@font-face /* 0 */ {\n  font-family: MJXZERO;\n  src: url("f/Zero.woff") format("woff");\n}\n'
    ...        '@font-face /* 1 */ {\n  font-family: MJXTEX;\n  src: url("f/Main.woff") format("woff");\n}\n'
    ...        '@font-face /* 2 */ {\n  font-family: MJXTEX-I;\n  src: url("f/Italic.woff") format("woff");\n}\n'
    ...        '@font-face /* 3 */ {\n  font-family: MJXTEX-B;\n  src: url("f/Bold.woff") format("woff");\n}\n')
    >>> fonts_used(css, '<mjx-c class="mjx-c1D45E TEX-I"></mjx-c>')
    ['f/Zero.woff', 'f/Main.woff', 'f/Italic.woff']
    """
    urls = dict(_FONT_FACE.findall(css))
    families = ["MJXZERO", "MJXTEX"] + [f"MJX{variant}" for variant in sorted(set(_VARIANT_CLASS.findall(body)))]
    if "<mjx-stretchy-" in body:
        families += ["MJXTEX-S1", "MJXTEX-S4", "MJXTEX-A"]
    return list(dict.fromkeys(urls[family] for family in families if family in urls))


def finish(app, exception) -> None:
    """Stop the typesetter and copy MathJax's fonts into the output."""
    global _typesetter
    # Closed explicitly, not left to garbage collection: a script that kept a
    # typesetter after MathJax reported an error did not exit until it was closed.
    if _typesetter is not None:
        _typesetter.close()
        _typesetter = None
    if exception is None and app.builder.format == "html" and app.builder.math_renderer_name == RENDERER:
        target = Path(app.outdir) / "_static" / FONT_DIR
        shutil.copytree(mathjax_directory() / "output" / "chtml" / "fonts" / "woff-v2", target, dirs_exist_ok=True)


def setup(app):
    app.add_html_math_renderer(RENDERER, (visit_math, None), (visit_displaymath, None))
    app.connect("html-page-context", add_stylesheet)
    app.connect("build-finished", finish)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
