"""Every image in a page states its size, so the browser reserves its box before it arrives, and loads lazily.

Why this is an extension: Sphinx writes ``<img src=... alt=...>`` with no
``width`` and ``height`` unless the source gives them, so each figure is laid
out at zero height and pushes the text below it down when it loads: layout
shift, on every page with a figure. Here, as each page is written, every
``<img>`` of an image the build copied into ``_images/`` gets the ``width``
and ``height`` of that file (read from its header). The theme's CSS still
scales images to the column (``max-width: 100%; height: auto``); the two
attributes only give the browser the aspect ratio to reserve.

The same images get ``loading="lazy"``: a reader who stops at the first
screen does not download the figures further down, and, their boxes being
reserved, a figure that arrives while the reader scrolls moves nothing.
(tools/print_book.py and the browser tests load every image before they
print or look.)

An image whose size cannot be read is a warning (an error in the strict
build), naming the page: a figure that shifts the page should not pass silently.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from sphinx.util import logging
from sphinx.util.images import get_image_size

logger = logging.getLogger(__name__)

_IMG = re.compile(r"<img\b[^>]*>")
_SRC = re.compile(r'\bsrc="([^"]+)"')


def with_size(tag: str, size: tuple[int, int]) -> str:
    """``tag`` with ``width`` and ``height`` attributes (unless it has either) and lazy loading.

    Examples
    --------
    >>> with_size('<img alt="a" src="_images/a.png" />', (640, 480))
    '<img width="640" height="480" loading="lazy" alt="a" src="_images/a.png" />'
    >>> with_size('<img width="10" src="x.png">', (640, 480))
    '<img width="10" src="x.png">'
    """
    if re.search(r"\s(width|height|loading)=", tag):
        return tag
    width, height = size
    return f'<img width="{width}" height="{height}" loading="lazy"' + tag[len("<img"):]


def add_sizes(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if app.builder.format != "html" or not body or "<img" not in body:
        return
    # builder.images: source path (relative to the source directory) -> name in _images/.
    sources = {name: source for source, name in app.builder.images.items()}

    def sized(match: re.Match) -> str:
        tag = match.group(0)
        src = _SRC.search(tag)
        name = posixpath.basename(src.group(1)) if src else None
        if name not in sources:
            return tag  # not an image the build copied (a data: URI, a logo)
        size = get_image_size(str(Path(app.srcdir) / sources[name]))
        if not size:
            logger.warning("cannot read the size of the image %s", sources[name], location=pagename)
            return tag
        return with_size(tag, size)

    context["body"] = _IMG.sub(sized, body)


def setup(app):
    app.connect("html-page-context", add_sizes)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
