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
Whether a block scrolls depends on the screen, so every one gets it. The
wrapper's tab stop is added where its tag is made (``starttag``), whichever
visitor writes it: myst-parser registers one of its own for containers.

Sphinx writes a toctree's caption ("Chapters") as ``<p role="heading">``
without the level that ARIA requires of a heading (axe-core:
"aria-required-attr", critical); it gets ``aria-level="2"``, the level of a
section below the page's title, in the page and in Furo's sidebar (which
renders the toctree with this translator).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.writers.html5 import HTML5Translator

__all__ = ["AccessibleHTMLTranslator", "setup"]


class AccessibleHTMLTranslator(HTML5Translator):
    """HTML translator with the fixes of the module's docstring."""

    def starttag(self, node, tagname, suffix="\n", empty=False, **attributes):
        if isinstance(node, nodes.container) and "table-wrapper" in node["classes"]:
            attributes.setdefault("tabindex", "0")
        if attributes.get("ROLE") == "heading":  # a toctree's caption, the only heading Sphinx writes as a role
            attributes.setdefault("aria-level", "2")
        return super().starttag(node, tagname, suffix, empty, **attributes)

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


def setup(app):
    for builder in ("html", "dirhtml", "singlehtml"):
        app.set_translator(builder, AccessibleHTMLTranslator)
    return {"version": "5", "parallel_read_safe": True, "parallel_write_safe": True}
