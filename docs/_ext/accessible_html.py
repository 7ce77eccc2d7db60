"""HTML whose bibliography entries are ARIA list items, and whose Graphviz graphs have a name.

Docutils wraps a run of citations in ``role="list"`` and gives each entry
``role="doc-biblioentry"``, a role that DPUB-ARIA 1.1 deprecated. A list must
contain list items, so assistive technology (and axe-core, as a critical
"aria-required-children" violation) sees an empty, broken list on the
bibliography page. ``role="listitem"`` is what the entry is.

``sphinx.ext.graphviz`` embeds an SVG graph as an ``<object>`` whose only text
is a fallback paragraph holding the ``:alt:`` text, which is not read while
the graph shows (axe-core: "object-alt", serious). The object is an image
named by that text: ``role="img"`` and ``aria-label``. It is also focusable,
so that a keyboard can scroll a graph wider than the column (theme-fixes.css;
axe-core: "scrollable-region-focusable", serious).
"""

from __future__ import annotations

import html
import re

from sphinx.writers.html5 import HTML5Translator

__all__ = ["AccessibleHTMLTranslator", "setup"]

_GRAPHVIZ_OBJECT = re.compile(r'<object data="[^"]*" type="image/svg\+xml" class="[^"]*\bgraphviz\b[^"]*">')
_FALLBACK = re.compile(r'<p class="warning">(.*)</p>', re.S)


class AccessibleHTMLTranslator(HTML5Translator):
    """HTML translator whose bibliography entries have ``role="listitem"`` and whose graphs have a name."""

    def visit_citation(self, node):
        super().visit_citation(node)
        self.body[-1] = self.body[-1].replace('role="doc-biblioentry"', 'role="listitem"')

    def depart_document(self, node):
        # sphinx.ext.graphviz appends the <object> tag and its fallback paragraph as two pieces.
        for index, (tag, fallback) in enumerate(zip(self.body, self.body[1:])):
            graph, alt = _GRAPHVIZ_OBJECT.match(tag), _FALLBACK.fullmatch(fallback)
            if graph and alt:
                name = html.escape(html.unescape(alt[1]), quote=True)
                self.body[index] = f'{tag[: graph.end() - 1]} role="img" aria-label="{name}" tabindex="0">{tag[graph.end() :]}'
        super().depart_document(node)


def setup(app):
    # The theme mixes its own translator into whichever one is registered here.
    for builder in ("html", "dirhtml", "singlehtml"):
        app.set_translator(builder, AccessibleHTMLTranslator)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
