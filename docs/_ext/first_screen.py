"""The first screen is drawn whole: the browser waits to render until the page's first subsection is parsed.

Why this is an extension: Chromium draws a long page while it is still
parsing it, and where it pauses is a matter of timing. On one load in five
or so (``make bench``, mobile) the first drawing held only some of the
header's buttons, or half of a display formula; the next drawing completed
them, and what had been drawn moved: layout shift, on a page that has no late
content at all. ``<link rel="expect" href="#ID" blocking="render">`` in the
head asks the browser not to render until the element with that id has been
parsed, and Chromium renders as soon as its start tag is: so the tag names
the page's second subsection, whose start means that the header, the title,
the lead and the first subsection, which fill the first screen, are complete.
The rest of the page still streams in below them. A page with fewer than two
subsections gets no such tag (it is short, and is drawn once it is parsed
anyway), and a browser that does not know ``rel="expect"`` ignores it.
"""

from __future__ import annotations

from docutils import nodes


def second_subsection_id(doctree: nodes.document) -> str | None:
    """The HTML id of the second section inside another section, or None if there is none.

    Examples
    --------
    >>> from docutils.core import publish_doctree
    >>> def page(text):  # as Sphinx reads it: the title stays a section
    ...     return publish_doctree(text, settings_overrides={"doctitle_xform": False})
    >>> text = "Title\\n=====\\n\\nLead.\\n\\nFirst part\\n----------\\n\\nText.\\n"
    >>> second_subsection_id(page(text + "\\nSecond part\\n-----------\\n\\nMore.\\n"))
    'second-part'
    >>> second_subsection_id(page(text)) is None
    True
    """
    # The first id is the one that Sphinx's HTML writer gives the <section>.
    subsections = [section["ids"][0] for section in doctree.findall(nodes.section)
                   if isinstance(section.parent, nodes.section) and section["ids"]]
    return subsections[1] if len(subsections) > 1 else None


def expect_tag(element_id: str) -> str:
    """The head tag that blocks rendering until ``element_id`` is parsed.

    Examples
    --------
    >>> expect_tag("first-part")
    '<link rel="expect" href="#first-part" blocking="render" />\\n'
    """
    return f'<link rel="expect" href="#{element_id}" blocking="render" />\n'


def add_expect(app, pagename, templatename, context, doctree) -> None:
    if app.builder.format != "html" or doctree is None:
        return
    element_id = second_subsection_id(doctree)
    if element_id:
        context["metatags"] = context.get("metatags", "") + expect_tag(element_id)


def setup(app):
    app.connect("html-page-context", add_expect)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
