"""The theme's tab stops on scrollable blocks, set in short slices instead of one long task.

Why this is an extension: pydata-sphinx-theme's script gives each code
block, cell output and table container that scrolls a tab stop, once the
page has loaded, in one pass that reads the scroll size of every block. On
a phone that pass lays out every block that docs/_static/offscreen.css
left unrendered, in one task: on the saturation page, about 80 ms of the
bench's "total blocking time, mobile" (the observer's median of 7 loads,
181 ms with the pass and 101 ms without, measured in one interleaved run).

After each HTML build the theme's script is written again, from the
theme's own file, without the line that runs the pass at load (and sets up
its repeats after a resize or a change to the article); docs/_static/tab-stops.js,
which every page loads, does the same work in slices. If that line is not
in the theme's script exactly once, as after an update of the theme, the
build stops and says so: what replaces it must then be looked at again.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.errors import ExtensionError

from lean_assets import theme_static

THEME_SCRIPT = Path("scripts") / "pydata-sphinx-theme.js"
# The minified registration, `,"complete"===document.readyState?I():window.addEventListener("load",I)`;
# the function's name is the minifier's.
_PASS_AT_LOAD = re.compile(r',"complete"===document\.readyState\?(\w+)\(\):window\.addEventListener\("load",\1\)')
# What that function must do: set a block's tabIndex from its scroll size.
_SETS_TAB_STOPS = re.compile(r"\.tabIndex=\w+\.scrollWidth>")


def without_pass_at_load(script: str) -> str:
    """The theme's script ``script`` without the registration of its tab-stop pass at load.

    Raises
    ------
    ValueError
        If the registration is not in ``script`` exactly once, or what it
        registers is not the pass that sets tab stops from scroll sizes.

    Examples
    --------
    >>> theme = ('function I(){e.tabIndex=e.scrollWidth>e.clientWidth?0:-1}'
    ...          'f(),"complete"===document.readyState?I():window.addEventListener("load",I)})()')
    >>> without_pass_at_load(theme)
    'function I(){e.tabIndex=e.scrollWidth>e.clientWidth?0:-1}f()})()'
    >>> without_pass_at_load("f()})()")
    Traceback (most recent call last):
    ...
    ValueError: the theme's script registers 0 functions to run at load, not one (docs/_ext/tab_stops.py)
    """
    found = list(_PASS_AT_LOAD.finditer(script))
    if len(found) != 1:
        raise ValueError(
            f"the theme's script registers {len(found)} functions to run at load, not one (docs/_ext/tab_stops.py)"
        )
    (match,) = found
    name = match.group(1)
    body = re.search(rf"function {re.escape(name)}\(\)\{{(.*?)\}}", script, re.S)
    if body is None or not _SETS_TAB_STOPS.search(body.group(1)):
        raise ValueError(f"what the theme's script runs at load, {name}(), is not its tab-stop pass (docs/_ext/tab_stops.py)")
    return script[: match.start()] + script[match.end():]


def _on_build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    built = Path(app.outdir) / "_static" / THEME_SCRIPT
    if not built.is_file():
        return
    try:
        script = without_pass_at_load((theme_static() / THEME_SCRIPT).read_text(encoding="utf-8"))
    except ValueError as error:
        raise ExtensionError(f"{THEME_SCRIPT}: {error}") from None
    built.write_text(script, encoding="utf-8")


def setup(app):
    app.add_js_file("tab-stops.js", loading_method="defer")
    app.connect("build-finished", _on_build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
