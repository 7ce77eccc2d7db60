"""Third-party styles and fonts, cut down to what the built site uses.

Why this is an extension: every page loads them, and most of them is unused.

- pydata-sphinx-theme ships all of Font Awesome. Its stylesheet names every
  one of about 2,000 icons (``.fa-NAME{--fa:"\\f00d"}``, 66 kB of a 377 kB
  file), and a page showing one icon downloads the whole solid font (115 kB).
  The site shows about twenty icons.
- myst-nb's stylesheet colours the ANSI escapes of cell outputs, 256 colours
  in foreground and background (34 kB of 43 kB). No output here has colour.

After each HTML build, from the theme's own files (never from an earlier
output, so an icon a new page uses is never missing):

- the stylesheet keeps the ``.fa-NAME`` rules of the names that appear in a
  built page or in one of the site's scripts, and every other rule;
- each Font Awesome font keeps the glyphs that some CSS string in
  ``_static`` can still ask for: those kept rules, the theme's own icon
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
# A rule that gives icons their character, e.g. .fa-magnifying-glass,.fa-search{--fa:"\f002"}
_ICON_RULE = re.compile(r'(?<=\})((?:\.fa-[a-z0-9-]+,)*\.fa-[a-z0-9-]+)(\{--fa:"(?:[^"\\]|\\.)*"\})')
# No word boundary: it makes the scan of the pages 40 times slower, and a stray
# match ("sofa-bed") only keeps one rule too many.
_ICON_NAME = re.compile(r"fa-([a-z0-9-]+)")
# A string that is a whole declaration value: content:"..." or --variable:"...".
_STRING_VALUE = re.compile(r'(?:\bcontent|--[\w-]+)\s*:\s*"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}) ?|\\(.)")
# One colour of myst-nb's ANSI output, e.g. div.highlight .-Color[class*=-BGC12] { ... }
_ANSI_RULE = re.compile(r"div\.highlight \.-Color\[class\*=(-[A-Za-z0-9]+)\]\s*\{[^}]*\}\s*")
_ANSI_CLASSES = re.compile(r'class="([^"]*-Color[^"]*)"')
_SOURCE_MAP = re.compile(r"\n?/\*# sourceMappingURL=[^*]*\*/\s*$")


def icon_names(texts) -> set[str]:
    """The ``fa-NAME`` class names that occur in ``texts`` (pages and scripts).

    Examples
    --------
    >>> sorted(icon_names(['<i class="fa-solid fa-bars"></i>', 'e.classList.add("fa-xmark")']))
    ['bars', 'solid', 'xmark']
    """
    return {name for text in texts for name in _ICON_NAME.findall(text)}


def trim_icon_rules(css: str, used: set[str]) -> str:
    """``css`` without the icon names not in ``used`` (a rule left with none goes), nor its source map link.

    Examples
    --------
    >>> css = ('.fa{display:inline-block}.fa-bars{--fa:"\\\\f0c9"}.fa-cat{--fa:"\\\\f6be"}'
    ...        '.fa-magnifying-glass,.fa-search{--fa:"\\\\f002"}.fa-solid{font-weight:900}')
    >>> print(trim_icon_rules(css + "\\n/*# sourceMappingURL=theme.css.map*/", {"bars", "magnifying-glass"}))
    .fa{display:inline-block}.fa-bars{--fa:"\\f0c9"}.fa-magnifying-glass{--fa:"\\f002"}.fa-solid{font-weight:900}
    """

    def kept(rule: re.Match) -> str:
        selectors = [selector for selector in rule[1].split(",") if selector.removeprefix(".fa-") in used]
        return ",".join(selectors) + rule[2] if selectors else ""

    trimmed = _ICON_RULE.sub(kept, css)
    # The map describes the theme's file, not this one.
    return _SOURCE_MAP.sub("", trimmed)


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


def subset_font(source: Path, target: Path, characters: set[str]) -> None:
    """Write to ``target`` the font ``source`` with only the glyphs of ``characters``, in its own format.

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
    options.flavor = {".woff2": "woff2", ".woff": "woff"}.get(source.suffix)
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(map(ord, characters)))
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def theme_static() -> Path:
    """The static directory of the installed pydata-sphinx-theme."""
    import pydata_sphinx_theme

    return Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"


def mystnb_stylesheet() -> Path:
    """myst-nb's stylesheet, as installed."""
    import myst_nb.static

    return Path(myst_nb.static.__file__).parent / "mystnb.css"


def trim_site(outdir: Path, cache: Path) -> None:
    """Cut the styles and icon fonts of the built site ``outdir`` down to what its pages use."""
    static = outdir / "_static"
    pages = [path.read_text(encoding="utf-8", errors="replace") for path in outdir.rglob("*.html")]
    for built in static.glob("mystnb.*.css"):
        built.write_text(trim_ansi_rules(mystnb_stylesheet().read_text(encoding="utf-8"), pages), encoding="utf-8")
    scripts = [path for path in static.rglob("*.js") if "fontawesome" not in path.parts]
    used = icon_names([*pages, *(path.read_text(encoding="utf-8", errors="replace") for path in scripts)])
    stylesheet = trim_icon_rules((theme_static() / THEME_STYLESHEET).read_text(encoding="utf-8"), used)
    (static / THEME_STYLESHEET).write_text(stylesheet, encoding="utf-8")
    characters = set()
    for css in static.rglob("*.css"):
        characters |= characters_asked_for(css.read_text(encoding="utf-8", errors="replace"))
    cache.mkdir(parents=True, exist_ok=True)
    for source in sorted((theme_static() / FONT_DIR).glob("*.woff2")):
        key = hashlib.sha256(source.read_bytes() + "".join(sorted(characters)).encode()).hexdigest()[:16]
        subset = cache / f"{key}-{source.name}"
        if not subset.exists():
            subset_font(source, subset, characters)
        shutil.copyfile(subset, static / FONT_DIR / source.name)


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
