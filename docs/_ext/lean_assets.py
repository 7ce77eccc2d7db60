"""Third-party styles and fonts, cut down to what the built site uses.

Why this is an extension: every page loads them, and most of them is unused.

- pydata-sphinx-theme's stylesheet (377 kB) carries all of Bootstrap's
  components and utilities and a rule for each of Font Awesome's 2,000
  icons; the site's pages use about a fifth of it. A page showing one icon
  also downloads the whole solid font (115 kB).
- myst-nb's stylesheet colours the ANSI escapes of cell outputs, 256 colours
  in foreground and background (34 kB of 43 kB). No output here has colour.

After each HTML build, from the theme's own files (never from an earlier
output, so a class or icon a new page uses is never missing):

- the theme's stylesheet keeps the selectors whose classes an element can
  carry (:class:`ClassesInUse`: a page's class attributes, and what the
  scripts the pages load, or those scripts load, can add), and every rule
  that names no class;
- each Font Awesome font keeps the glyphs that some CSS string in
  ``_static`` can still ask for: the icon rules kept, the theme's own icon
  variables (``--pst-icon-github`` and the like) and every ``content:``.
- myst-nb's stylesheet keeps the colour rules that can match an element of
  a built page (their ``[class*=-C12]`` selectors match by substring).

A subset font is kept in the doctree directory, keyed by its source and the
characters kept, so that a rebuild that changes neither only copies it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

THEME_STYLESHEET = Path("styles") / "pydata-sphinx-theme.css"
FONT_DIR = Path("vendor") / "fontawesome" / "webfonts"
# What a class name can come from: a class attribute, an inline script, a word of a script, and a
# template literal that builds one, e.g. `bs-${this.constructor.NAME}-auto` (Bootstrap's tooltips).
# No word boundary before "class": it makes the scan of the pages 10 times slower, and a stray match
# (data-class="x") only keeps a rule too many.
_CLASS_ATTRIBUTE = re.compile(r'class="([^"]*)"')
_SCRIPT_SOURCE = re.compile(r'<script[^>]*?\ssrc="([^"?#]*)')
# A script that a script loads in turn, named by its path from the loading script's folder
# (docs/_static/bootstrap-on-demand.js: "scripts/bootstrap.js"), or from the page's, by an inline
# script ("_static/scripts/pydata-sphinx-theme.js?digest=...": docs/_templates/static/webpack-macros.html).
_SCRIPT_PATH = re.compile(r'"([\w./-]+\.js)(?:[?#][^"]*)?"')
_INLINE_SCRIPT = re.compile(r"<script\b[^>]*>(.*?)</script>", re.S)
_WORD = re.compile(r"[\w-]+")
_TEMPLATE = re.compile(r"`([^`]*)`")
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
# Where the stylesheet's blocks begin and end: the braces and semicolons outside comments and strings.
_CSS_TOKEN = re.compile(r"""/\*.*?\*/|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[{};]""", re.S)
# At-rules that hold rules; any other (@font-face, @keyframes) is kept whole.
_GROUPING_AT_RULES = ("@media", "@supports", "@container", "@layer")
# The parts of a selector that name no class an element must carry: [attr="x.y"], strings, :not(...)
# and other arguments (conditions, not requirements).
_NOT_REQUIRED = re.compile(r"""\[[^\]]*\]|"[^"]*"|'[^']*'|\([^()]*\)""")
_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
# A string that is a whole declaration value: content:"..." or --variable:"...".
_STRING_VALUE = re.compile(r'(?:\bcontent|--[\w-]+)\s*:\s*"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}) ?|\\(.)")
# One colour of myst-nb's ANSI output, e.g. div.highlight .-Color[class*=-BGC12] { ... }
_ANSI_RULE = re.compile(r"div\.highlight \.-Color\[class\*=(-[A-Za-z0-9]+)\]\s*\{[^}]*\}\s*")
_ANSI_CLASSES = re.compile(r'class="([^"]*-Color[^"]*)"')
_SOURCE_MAP = re.compile(r"\n?/\*# sourceMappingURL=[^*]*\*/\s*$")


class ClassesInUse:
    """The class names that an element of the built site can carry.

    A name counts when it is in a ``class`` attribute of a page, when it is a
    word of a script (``classList.add("show")``) or of an inline one, or when
    it fits a template literal of a script (`` `bs-${name}-auto` ``).

    Parameters
    ----------
    pages, scripts : iterable of str
        The HTML of the built pages and the text of the site's scripts.

    Examples
    --------
    >>> in_use = ClassesInUse(['<p class="lead a-b">x</p><script>y.add("shown")</script>'],
    ...                       ['e.classList.add(`bs-${this.constructor.NAME}-auto`); f(`${t}`)'])
    >>> [name in in_use for name in ["lead", "a-b", "shown", "bs-tooltip-auto", "bs-tooltip-top", "x"]]
    [True, True, True, True, False, False]
    """

    def __init__(self, pages, scripts):
        self.names = set()
        scripts = list(scripts)
        for page in pages:
            for value in _CLASS_ATTRIBUTE.findall(page):
                self.names.update(value.split())
            scripts.extend(_INLINE_SCRIPT.findall(page))
        patterns = set()
        for script in scripts:
            self.names.update(_WORD.findall(script))
            for template in _TEMPLATE.findall(script):
                parts = _PLACEHOLDER.split(template)
                # A template of placeholders alone (`${t}`) would match every name.
                if len(parts) > 1 and any(part.strip("-_").isalnum() for part in parts):
                    patterns.add(r"[\w-]*".join(map(re.escape, parts)))
        self._built = re.compile("|".join(sorted(patterns))) if patterns else None

    def __contains__(self, name: str) -> bool:
        return name in self.names or bool(self._built and self._built.fullmatch(name))


def _blocks(css: str):
    """The top-level pieces of ``css``: ``(prelude, body)`` for a block, ``(text, None)`` for the rest."""
    depth, start, prelude_end = 0, 0, 0
    for token in _CSS_TOKEN.finditer(css):
        mark = token[0]
        if mark == "{":
            depth += 1
            if depth == 1:
                prelude_end = token.start()
        elif mark == "}":
            depth -= 1
            if depth == 0:
                yield css[start:prelude_end], css[prelude_end + 1:token.start()]
                start = token.end()
        elif depth == 0 and (mark == ";" or mark.startswith("/*")):
            yield css[start:token.end()], None
            start = token.end()
    if css[start:]:
        yield css[start:], None


def _selectors(prelude: str) -> list[str]:
    """``prelude`` split at its top-level commas (not those inside ``:is(.a,.b)``)."""
    selectors, depth, start = [], 0, 0
    for index, character in enumerate(prelude):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if character == "," and depth == 0:
            selectors.append(prelude[start:index])
            start = index + 1
    return [*selectors, prelude[start:]]


def _can_match(selector: str, in_use) -> bool:
    if "\\" in selector:
        # An escaped character (.w-1\/2): not worth parsing, kept.
        return True
    required = selector
    while True:
        bare = _NOT_REQUIRED.sub("", required)
        if bare == required:
            break
        required = bare
    return all(name in in_use for name in _CLASS.findall(required))


def selectors(css: str) -> set[str]:
    """Every selector of the style rules in ``css``, inside ``@media`` and the like too.

    Examples
    --------
    >>> sorted(selectors("/* x */.a, .b:is(.c,.d){x:y}@media print{.e{x:y}}@font-face{font-family:F}"))
    ['.a', '.b:is(.c,.d)', '.e']
    """
    found = set()
    for prelude, body in _blocks(css):
        if body is not None and prelude.lstrip().startswith(_GROUPING_AT_RULES):
            found |= selectors(body)
        elif body is not None and not prelude.lstrip().startswith("@"):
            found |= {selector.strip() for selector in _selectors(prelude)}
    return found


def trim_unused_rules(css: str, in_use) -> str:
    """``css`` without the selectors that name a class no element carries (a rule left with none goes).

    A class inside brackets, a string or parentheses (``:not(.x)``) is a
    condition, not a requirement, and keeps its selector. The source map link
    goes too: the map describes the original file.

    Parameters
    ----------
    css : str
    in_use : container of str
        The class names in use, e.g. a :class:`ClassesInUse`.

    Examples
    --------
    >>> css = ('/*! licence */.a,.gone{color:red}.gone .a{margin:0}a[href$=".pdf"]:not(.gone){content:"}"}'
    ...        '@media (min-width:9px){.gone{x:y}}@media print{.a:is(.b,.c){x:z}}@font-face{font-family:F}')
    >>> print(trim_unused_rules(css + "\\n/*# sourceMappingURL=theme.css.map*/", {"a"}))
    /*! licence */.a{color:red}a[href$=".pdf"]:not(.gone){content:"}"}@media print{.a:is(.b,.c){x:z}}@font-face{font-family:F}
    """
    kept = []
    for prelude, body in _blocks(css):
        if body is None:
            kept.append(prelude)
        elif prelude.lstrip().startswith(_GROUPING_AT_RULES):
            inner = trim_unused_rules(body, in_use)
            if inner.strip():
                kept.append(f"{prelude}{{{inner}}}")
        elif prelude.lstrip().startswith("@"):
            kept.append(f"{prelude}{{{body}}}")
        else:
            selectors = [selector for selector in _selectors(prelude) if _can_match(selector, in_use)]
            if selectors:
                kept.append(",".join(selectors) + f"{{{body}}}")
    return _SOURCE_MAP.sub("", "".join(kept))


def trim_ansi_rules(css: str, pages) -> str:
    """``css`` without the ANSI colour rules that no element of ``pages`` (their HTML) can match.

    Examples
    --------
    >>> css = "div.highlight .-Color-Bold { font-weight: bold; }\\n"
    >>> css += "div.highlight .-Color[class*=-C1] { color: #800000 }\\n"
    >>> css += "div.highlight .-Color[class*=-C12] { color: #0000FF }\\n"
    >>> css += "div.highlight .-Color[class*=-C2] { color: #008000 }\\n"
    >>> print(trim_ansi_rules(css, ['<span class="-Color -Color-C12">x</span>']))
    div.highlight .-Color-Bold { font-weight: bold; }
    div.highlight .-Color[class*=-C1] { color: #800000 }
    div.highlight .-Color[class*=-C12] { color: #0000FF }
    <BLANKLINE>
    """
    classes = {found for page in pages if "-Color" in page for found in _ANSI_CLASSES.findall(page)}
    return _ANSI_RULE.sub(lambda rule: rule[0] if any(rule[1] in found for found in classes) else "", css)


def css_string(escaped: str) -> str:
    r"""The text of a CSS string body, its escapes resolved.

    Examples
    --------
    >>> css_string(r"\f0c9") == "\uf0c9" and css_string(r"\30 ") == "0" and css_string(r"\"") == '"'
    True
    """
    return _ESCAPE.sub(lambda match: chr(int(match[1], 16)) if match[1] else match[2], escaped)


def characters_asked_for(css: str) -> set[str]:
    r"""Every character of the strings ``css`` gives as a ``content`` or a custom property's value.

    Examples
    --------
    >>> sorted(characters_asked_for('a.github:before{content:var(--pst-icon-github)}'
    ...                             ':root{--pst-icon-github:"\\f09b"}.fa-0{--fa:"\\30 "}'))
    ['0', '\uf09b']
    """
    return {character for value in _STRING_VALUE.findall(css) for character in css_string(value)}


def subset_font(source: Path, target: Path, characters: set[str], flavor: str | None = None) -> None:
    """Write to ``target`` the font ``source`` with only the glyphs of ``characters``.

    The subset keeps every OpenType feature and a math font's MATH table (the
    stretched and script-size variants of the glyphs kept), and is written in
    the format of ``source`` unless ``flavor`` (``"woff2"``, ``"woff"``) says otherwise.

    Examples
    --------
    >>> import tempfile
    >>> webfonts = theme_static() / FONT_DIR
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     subset_font(webfonts / "fa-solid-900.woff2", Path(tmp) / "solid.woff2", {"\\uf0c9"})
    ...     from fontTools.ttLib import TTFont
    ...     font = TTFont(Path(tmp) / "solid.woff2")
    ...     (sorted(font.getBestCmap()), font.flavor, (Path(tmp) / "solid.woff2").stat().st_size < 5000)
    ([61641], 'woff2', True)
    """
    from fontTools import subset

    options = subset.Options()
    options.flavor = flavor or {".woff2": "woff2", ".woff": "woff"}.get(source.suffix)
    options.layout_features = ["*"]
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(map(ord, characters)))
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def cached_subset(source: Path, characters: set[str], cache: Path, flavor: str | None = None) -> Path:
    """The font ``source`` cut to ``characters`` (as :func:`subset_font`), kept in the directory ``cache``.

    The file is named by a hash of the source font, the characters and the
    flavor, so that a rebuild that changes none of them only finds it.

    Examples
    --------
    >>> import tempfile
    >>> solid = theme_static() / FONT_DIR / "fa-solid-900.woff2"
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first = cached_subset(solid, {"\\uf0c9"}, Path(tmp))
    ...     made = first.stat().st_mtime_ns
    ...     again = cached_subset(solid, {"\\uf0c9"}, Path(tmp))
    ...     other = cached_subset(solid, {"\\uf0c9", "\\uf00d"}, Path(tmp))
    ...     (again == first, again.stat().st_mtime_ns == made, other == first, first.name.endswith(solid.name))
    (True, True, False, True)
    """
    key = hashlib.sha256(source.read_bytes() + "".join(sorted(characters)).encode() + str(flavor).encode())
    subset = cache / f"{key.hexdigest()[:16]}-{source.name}"
    if not subset.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subset_font(source, subset, characters, flavor)
    return subset


def theme_static() -> Path:
    """The static directory of the installed pydata-sphinx-theme."""
    import pydata_sphinx_theme

    return Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"


def mystnb_stylesheet() -> Path:
    """myst-nb's stylesheet, as installed."""
    import myst_nb.static

    return Path(myst_nb.static.__file__).parent / "mystnb.css"


def loaded_scripts(outdir: Path, pages) -> dict[Path, str]:
    """The scripts of ``outdir`` that some page loads, and those that they load in turn, with their text.

    ``_static`` also holds scripts that no page loads (fontawesome.js, MathJax).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     static = Path(tmp) / "_static"
    ...     (static / "scripts").mkdir(parents=True)
    ...     _ = (static / "loader.js").write_text('load("scripts/late.js")')
    ...     _ = (static / "scripts" / "late.js").write_text("late")
    ...     _ = (static / "unused.js").write_text("unused")
    ...     _ = (static / "scripts" / "after.js").write_text("after")
    ...     found = loaded_scripts(Path(tmp), ['<script defer src="_static/loader.js?v=1"></script>',
    ...                                        '<script>load("_static/scripts/after.js?digest=2")</script>'])
    ...     sorted(path.name for path in found)
    ['after.js', 'late.js', 'loader.js']
    """
    # Every page is at the top of the site: a path in it is from there.
    waiting = {outdir / source.lstrip("/") for page in pages for source in _SCRIPT_SOURCE.findall(page)}
    waiting.update(outdir / path.lstrip("/") for page in pages for inline in _INLINE_SCRIPT.findall(page)
                   for path in _SCRIPT_PATH.findall(inline))
    loaded: dict[Path, str] = {}
    while waiting:
        path = waiting.pop()
        if path in loaded or not path.is_file():
            continue
        loaded[path] = text = path.read_text(encoding="utf-8", errors="replace")
        waiting.update(path.parent / name for name in _SCRIPT_PATH.findall(text))
    return loaded


def trim_site(outdir: Path, cache: Path) -> None:
    """Cut the styles and icon fonts of the built site ``outdir`` down to what its pages use."""
    static = outdir / "_static"
    pages = [path.read_text(encoding="utf-8", errors="replace") for path in outdir.rglob("*.html")]
    for built in static.glob("mystnb.*.css"):
        built.write_text(trim_ansi_rules(mystnb_stylesheet().read_text(encoding="utf-8"), pages), encoding="utf-8")
    in_use = ClassesInUse(pages, loaded_scripts(outdir, pages).values())
    stylesheet = trim_unused_rules((theme_static() / THEME_STYLESHEET).read_text(encoding="utf-8"), in_use)
    (static / THEME_STYLESHEET).write_text(stylesheet, encoding="utf-8")
    characters = set()
    for css in static.rglob("*.css"):
        characters |= characters_asked_for(css.read_text(encoding="utf-8", errors="replace"))
    for source in sorted((theme_static() / FONT_DIR).glob("*.woff2")):
        shutil.copyfile(cached_subset(source, characters, cache), static / FONT_DIR / source.name)


def _forget_trimmed_mystnb_stylesheet(app) -> None:
    # myst-nb copies its stylesheet at the end of each build and, finding a
    # different file there (the one trimmed last time), would warn instead.
    if app.builder.format == "html":
        for built in (Path(app.outdir) / "_static").glob("mystnb.*.css"):
            built.unlink()


def _on_build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html" and (Path(app.outdir) / "_static" / FONT_DIR).is_dir():
        trim_site(Path(app.outdir), Path(app.doctreedir) / "icon-fonts")


def setup(app):
    app.connect("builder-inited", _forget_trimmed_mystnb_stylesheet)
    # After myst-nb's own build-finished handler (priority 500) has copied its stylesheet.
    app.connect("build-finished", _on_build_finished, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
