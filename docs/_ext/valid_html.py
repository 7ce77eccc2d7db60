"""Valid HTML from what upstream extensions put in the document tree: unique ids, no list in a paragraph.

Why this is an extension: the Nu HTML Checker (tests/test_valid_html.py)
found three kinds of error in pages that no source of ours wrote. Each is
mended here in the document tree, by a post-transform that runs after the
upstream code and before the HTML is written, not by editing HTML text:

- **One id, many elements.** sphinx-proof gives every proof the id ``proof``
  and every theorem's body the id ``proof-content``; sphinx-exercise gives
  every exercise's and solution's body ``exercise-content`` and
  ``solution-content`` (fixed ``ids=[...]`` in their directives). An id names
  one element; links to these never worked past the first, and nothing links
  to them: they are dropped. sphinx-proof's stylesheet draws proofs by their
  id (``div#proof``), so a proof gets the class ``proof-body`` instead, which
  docs/_static/site.css draws the same way.
- **An equation's id twice.** Furo wraps each displayed equation and each
  table in a ``math-wrapper`` or ``table-wrapper`` container and copies the
  wrapped node's attributes, ids included, onto it (its
  ``WrapTableAndMathInAContainerTransform``, priority 500). The equation or
  table keeps its ids, which references point to; the wrapper loses them.
- **A list inside a paragraph.** Sphinx puts the body of a docstring field
  (Returns, with several named values) into a paragraph, and napoleon writes
  those values as a bullet list, which HTML does not allow in ``<p>``. A
  paragraph that holds only lists is replaced by the lists.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["FIXED_IDS", "ValidHTML", "setup"]

#: The ids that sphinx-proof and sphinx-exercise give every instance, and the class each becomes ("" for none).
FIXED_IDS = {"proof": "proof-body", "proof-content": "", "exercise-content": "", "solution-content": ""}


class ValidHTML(SphinxPostTransform):
    """Drop the fixed and copied ids, and unwrap paragraphs that hold only lists (see the module's docstring)."""

    formats = ("html",)
    # After Furo's wrapping transform (priority 500).
    default_priority = 800

    def run(self, **kwargs) -> None:
        for node in self.document.findall(nodes.Element):
            for fixed in [name for name in node["ids"] if name in FIXED_IDS]:
                node["ids"].remove(fixed)
                if FIXED_IDS[fixed]:
                    node["classes"].append(FIXED_IDS[fixed])
        for wrapper in self.document.findall(nodes.container):
            if {"math-wrapper", "table-wrapper"} & set(wrapper["classes"]):
                inner = {name for child in wrapper.findall(include_self=False) if isinstance(child, nodes.Element)
                         for name in child["ids"]}
                wrapper["ids"] = [name for name in wrapper["ids"] if name not in inner]
        for paragraph in list(self.document.findall(nodes.paragraph)):
            if paragraph.children and all(isinstance(child, nodes.Sequential) for child in paragraph.children):
                paragraph.replace_self(paragraph.children)


def setup(app):
    app.add_post_transform(ValidHTML)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
