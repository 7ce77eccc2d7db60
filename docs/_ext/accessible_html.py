"""HTML whose bibliography entries are ARIA list items, and whose code and captions are accessible.

Docutils wraps a run of citations in ``role="list"`` and gives each entry
``role="doc-biblioentry"``, a role that DPUB-ARIA 1.1 deprecated. A list must
contain list items, so assistive technology (and axe-core, as a critical
"aria-required-children" violation) sees an empty, broken list on the
bibliography page. ``role="listitem"`` is what the entry is.

A code block (a cell, its output, an example) or a table wider than the
column scrolls sideways (a table in Furo's ``table-wrapper``), and a keyboard
can scroll only what it can focus: each ``<pre>`` and each table's wrapper
gets ``tabindex="0"`` (axe-core: "scrollable-region-focusable", serious).
Whether a block scrolls depends on the screen, so every one gets it.
myst-parser writes containers with a visitor of its own, registered with
``app.add_node``; the table's wrapper gets its tab stop in a visitor
registered the same way, after myst-parser's, which it calls.

Sphinx writes a toctree's caption ("Chapters") as ``<p role="heading">``
without the level that ARIA requires of a heading (axe-core:
"aria-required-attr", critical); it gets ``aria-level="2"``, the level of a
section below the page's title, in the page and in Furo's sidebar (which
renders the toctree with this translator).
"""

from __future__ import annotations

from docutils import nodes
from myst_parser.parsers.docutils_ import depart_container_html, visit_container_html
from sphinx import addnodes
from sphinx.writers.html5 import HTML5Translator

__all__ = ["AccessibleHTMLTranslator", "setup", "visit_container"]


class AccessibleHTMLTranslator(HTML5Translator):
    """HTML translator with the fixes of the module's docstring."""

    def visit_citation(self, node):
        super().visit_citation(node)
        self.body[-1] = self.body[-1].replace('role="doc-biblioentry"', 'role="listitem"')

    def visit_literal_block(self, node):
        start = len(self.body)
        try:
            super().visit_literal_block(node)  # writes the highlighted block and skips the node
        finally:
            for index in range(start, len(self.body)):
                if "<pre>" in self.body[index]:
                    self.body[index] = self.body[index].replace("<pre>", '<pre tabindex="0">', 1)
                    break

    def visit_title(self, node):
        start = len(self.body)
        super().visit_title(node)
        if isinstance(node.parent, addnodes.compact_paragraph) and node.parent.get("toctree"):
            for index in range(start, len(self.body)):
                self.body[index] = self.body[index].replace('role="heading"', 'role="heading" aria-level="2"', 1)


def visit_container(translator, node):
    """myst-parser's visitor of a container, and a tab stop on a table's wrapper (see the module's docstring)."""
    visit_container_html(translator, node)
    if "table-wrapper" in node["classes"]:
        translator.body[-1] = translator.body[-1].replace("<div ", '<div tabindex="0" ', 1)


def setup(app):
    for builder in ("html", "dirhtml", "singlehtml"):
        app.set_translator(builder, AccessibleHTMLTranslator)
    app.setup_extension("myst_nb")  # registers myst-parser's visitor first, so that this one replaces it
    app.add_node(nodes.container, override=True, html=(visit_container, depart_container_html))
    return {"version": "4", "parallel_read_safe": True, "parallel_write_safe": True}
