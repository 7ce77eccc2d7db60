"""Long pages laid out as the reader reaches them, not all at once as they open.

A derivation page holds some 15,000 elements, most of them typeset math. On a
phone-speed CPU (make bench's mobile profile: Chromium, CPU slowed 4 times),
laying all of them out took about 1.4 s in one task, most of the page's
blocking time. Two changes spread that work over the reading:

- ``docs/_static/lazy-layout.css`` gives each section of the article but the
  first ``content-visibility: auto``: Chromium lays out and paints it when it
  comes near the viewport. Find in page, links to an anchor and the keyboard
  still reach its content; printing lays out everything.
- pydata-sphinx-theme's script measures every code block and output as the
  page opens, to make the ones that scroll focusable; reading their sizes lays
  out every section at once, lazy or not. The site's copy of that script, cut
  from the installed theme after each build, calls ``lazyTabStop``
  (``docs/_static/tab-stops.js``) instead, which makes the same test on each
  element as it comes near the viewport.

The theme's line is matched exactly: a theme whose script differs stops the
build with a message saying what to update, instead of measuring eagerly again
without anyone noticing.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.errors import ExtensionError

__all__ = ["EAGER_TAB_STOPS", "LAZY_TAB_STOPS", "THEME_SCRIPT", "lazy_theme_script", "setup"]

#: The theme's script, relative to its static directory and to the site's _static.
THEME_SCRIPT = Path("scripts") / "pydata-sphinx-theme.js"
#: The theme's test for one element ``e`` (pydata-sphinx-theme 0.20's addTabStopsToScrollables, minified).
EAGER_TAB_STOPS = "e.tabIndex=e.scrollWidth>e.clientWidth||e.scrollHeight>e.clientHeight?0:-1"
#: What replaces it: the same test, when ``e`` comes near the viewport (docs/_static/tab-stops.js).
LAZY_TAB_STOPS = "window.lazyTabStop(e)"


def lazy_theme_script(script: str) -> str:
    """The theme's script with its eager measure of every scrollable element replaced by the lazy one.

    Examples
    --------
    >>> lazy_theme_script('function I(){const e=()=>{q.forEach(e=>{' + EAGER_TAB_STOPS + '})}}')
    'function I(){const e=()=>{q.forEach(e=>{window.lazyTabStop(e)})}}'
    >>> lazy_theme_script("function I(){}")
    Traceback (most recent call last):
    ...
    sphinx.errors.ExtensionError: lazy_layout: the theme's script measures its scrollable elements in a way this extension does not know (it looks for the text 'e.tabIndex=e.scrollWidth>e.clientWidth||e.scrollHeight>e.clientHeight?0:-1' once, and found it 0 times); update EAGER_TAB_STOPS in docs/_ext/lazy_layout.py for the installed pydata-sphinx-theme
    """
    found = script.count(EAGER_TAB_STOPS)
    if found != 1:
        raise ExtensionError(
            "lazy_layout: the theme's script measures its scrollable elements in a way this extension does not know "
            f"(it looks for the text {EAGER_TAB_STOPS!r} once, and found it {found} times); update EAGER_TAB_STOPS "
            "in docs/_ext/lazy_layout.py for the installed pydata-sphinx-theme"
        )
    return script.replace(EAGER_TAB_STOPS, LAZY_TAB_STOPS)


def _theme_static() -> Path:
    import pydata_sphinx_theme

    return Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"


def _on_build_finished(app, exception) -> None:
    built = Path(app.outdir) / "_static" / THEME_SCRIPT
    if exception is None and app.builder.format == "html" and built.is_file():
        # From the installed file each time: Sphinx copies the theme's static files on every build.
        built.write_text(lazy_theme_script((_theme_static() / THEME_SCRIPT).read_text(encoding="utf-8")), encoding="utf-8")


def setup(app):
    app.add_css_file("lazy-layout.css")
    app.add_js_file("tab-stops.js")
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
