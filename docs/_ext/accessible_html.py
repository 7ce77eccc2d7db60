"""HTML whose bibliography entries are ARIA list items.

Docutils wraps a run of citations in ``role="list"`` and gives each entry
``role="doc-biblioentry"``, a role that DPUB-ARIA 1.1 deprecated. A list must
contain list items, so assistive technology (and axe-core, as a critical
"aria-required-children" violation) sees an empty, broken list on the
bibliography page. ``role="listitem"`` is what the entry is.
"""

from __future__ import annotations

from sphinx.writers.html5 import HTML5Translator

__all__ = ["AccessibleHTMLTranslator", "setup"]


class AccessibleHTMLTranslator(HTML5Translator):
    """HTML translator whose bibliography entries have ``role="listitem"``."""

    def visit_citation(self, node):
        super().visit_citation(node)
        self.body[-1] = self.body[-1].replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app):
    # The theme mixes its own translator into whichever one is registered here.
    for builder in ("html", "dirhtml", "singlehtml"):
        app.set_translator(builder, AccessibleHTMLTranslator)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
