"""The Cite page: BibTeX for the site and for every theorem, figure and exercise.

Nothing is listed by hand. While Sphinx reads each page (``doctree-read``),
this records every theorem and lemma (sphinx-proof), figure and exercise
(sphinx-exercise) on it: kind, label, title (mathematics as ``$...$``) and
page. Two directives place the entries:

``{site-bibtex}``
    the entry for the site, with the version being built and the site's
    address, and a link to the file that holds every entry (``whysqrtdk.bib``,
    written at the root of the built site when the build finishes);
``{citable-items}``
    one paragraph (a link to the item) and one entry per item. The numbers
    exist only once every page is read, so the directive leaves a placeholder
    that a post-transform fills at write time, before references are resolved:
    the links are the same cross-references the roles ``{prf:ref}`` and
    ``{numref}`` make, and a broken one fails the build like any other.

The checks and the BibTeX are :mod:`attention_scaling.site.citation`'s: an item
without a stable label of its kind, a title or a number is reported as a
warning at the Cite page, which fails the strict build. A page that lists
other pages' items (this one, and the exercise index) is written again
whenever what it shows of them changed (:func:`shown_elsewhere`), and only
then, so its entries are never stale and a prose edit does not rewrite it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from attention_scaling.site import citation as citation_module
from attention_scaling.site.citation import BIB_FILE, CitationError, bibliography, bibtex, caption_title, citables, site_bibtex

__all__ = ["citable_items", "collect", "found_in", "marked_text", "setup", "shown_elsewhere", "write_bibliography"]

logger = logging.getLogger(__name__)

# How a link to each kind is written: the cross-reference its role makes.
_XREF = {"theorem": ("prf", "ref"), "lemma": ("prf", "ref"), "figure": ("std", "numref"), "exercise": ("std", "numref")}


class citable_items(nodes.General, nodes.Element):
    """Placeholder for the entries, filled once every page has been read."""


class site_entry(nodes.General, nodes.Element):
    """Placeholder for the site's entry, filled at write time with the configuration then (the site's address)."""


def marked_text(node: nodes.Node) -> str:
    """The text of ``node``, with its mathematics in ``$...$``."""
    if isinstance(node, nodes.math):
        return f"${node.astext()}$"
    if isinstance(node, nodes.Text):
        return node.astext()
    return "".join(marked_text(child) for child in node.children)


def found_in(doctree: nodes.document, docname: str) -> list[tuple[str, str, str, str]]:
    """(kind, label, title, page) of every theorem, lemma, figure and exercise in a page, in order."""
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_subtitle

    found = []
    for node in doctree.findall(nodes.Element):
        if node.get("realtype") in ("theorem", "lemma") and "countertype" in node:  # sphinx-proof
            title = next(iter(node.findall(nodes.title)), None)
            # sphinx-proof keeps the title as " (Title)"; the number goes before it when written.
            text = marked_text(title).strip() if title is not None else ""
            if text.startswith("(") and text.endswith(")"):
                text = text[1:-1]
            found.append((node["realtype"], node.get("label", ""), text, docname))
        elif isinstance(node, nodes.figure):
            caption = next(iter(node.findall(nodes.caption)), None)
            label = node["names"][0] if node["names"] else ""
            found.append(("figure", label, caption_title(marked_text(caption)) if caption is not None else "", docname))
        elif isinstance(node, exercise_enumerable_node):
            subtitle = next(iter(node.findall(exercise_subtitle)), None)
            found.append(("exercise", node.get("label", ""), marked_text(subtitle) if subtitle is not None else "", docname))
    return found


def collect(app, doctree) -> None:
    """``doctree-read``: record the citable items of the page just read."""
    env = app.env
    if not hasattr(env, "citables_found"):
        env.citables_found = {}
    env.citables_found[env.docname] = found_in(doctree, env.docname)


class SiteBibtex(SphinxDirective):
    """``{site-bibtex}``: the BibTeX entry of the site, with the version being built."""

    def run(self):
        download = nodes.reference("", BIB_FILE, refuri="../" * self.env.docname.count("/") + BIB_FILE)
        paragraph = nodes.paragraph("", "", nodes.Text("Every entry on this page, in one file: "), download, nodes.Text("."))
        return [site_entry(), paragraph]


class CitableItems(SphinxDirective):
    """``{citable-items}``: a link and a BibTeX entry for every citable item."""

    # What the directive leaves for a post-transform to fill (a subclass may leave another).
    placeholder = citable_items

    def run(self):
        if not hasattr(self.env, "citing_pages"):
            self.env.citing_pages = set()
        self.env.citing_pages.add(self.env.docname)
        placeholder = self.placeholder()
        self.set_source_info(placeholder)
        return [placeholder]


def _entry(item, docname: str, text: str) -> list[nodes.Node]:
    domain, reftype = _XREF[item.kind]
    link = addnodes.pending_xref(
        "",
        nodes.literal(item.label, item.label, classes=["xref", domain, f"{domain}-{reftype}"]),
        refdoc=docname,
        refdomain=domain,
        reftype=reftype,
        reftarget=item.label,
        refexplicit=False,
        refwarn=True,
    )
    paragraph = nodes.paragraph("", "", nodes.strong("", "", link), nodes.Text(" (label "), nodes.literal(item.label, item.label), nodes.Text(")"))
    return [paragraph, nodes.literal_block(text, text, language="bibtex")]


class FillCitableItems(SphinxPostTransform):
    """Replace each placeholder with the entries, before references are resolved (priority 10)."""

    default_priority = 8

    def run(self, **kwargs):
        base_url = self.config.html_baseurl or None
        for placeholder in list(self.document.findall(site_entry)):
            text = site_bibtex(version=self.config.release, url=base_url)
            placeholder.replace_self(nodes.literal_block(text, text, language="bibtex"))
        placeholders = list(self.document.findall(citable_items))
        if not placeholders:
            return
        try:
            items = _items(self.env)
            texts = [bibtex(item, self.config.release, base_url=base_url) for item in items]
        except CitationError as error:
            logger.warning(f"cannot list the citable items: {error}", location=placeholders[0], type="citation")
            items, texts = [], []
        for placeholder in placeholders:
            placeholder.replace_self([node for item, text in zip(items, texts) for node in _entry(item, self.env.docname, text)])


def _items(env) -> list:
    """The citable items of every page read, checked and numbered (:func:`~attention_scaling.site.citation.citables`)."""
    per_page = getattr(env, "citables_found", {})
    found = [item for docname in sorted(per_page) for item in per_page[docname]]
    # Sphinx numbers each kind of item per page (sphinx-proof's under their counter's name).
    numbers = {}
    for _, label, _, page in found:
        for numbered in env.toc_fignumbers.get(page, {}).values():
            if label in numbered:
                numbers[label] = numbered[label]
    return citables(found, numbers)


def write_bibliography(app, exception) -> None:
    """``build-finished``: write every entry the Cite page shows into one file at the site's root.

    When the items cannot be cited (the Cite page has already failed the build
    with the reason), the file of an earlier build is removed, not left stale.
    """
    if exception is not None or app.builder.format != "html" or not getattr(app.env, "citing_pages", None):
        return
    target = Path(app.outdir, BIB_FILE)
    try:
        text = bibliography(_items(app.env), app.config.release, base_url=app.config.html_baseurl or None)
    except CitationError:
        target.unlink(missing_ok=True)
        return
    target.write_text(text, encoding="utf-8")


def _purge(app, env, docname) -> None:
    getattr(env, "citables_found", {}).pop(docname, None)
    getattr(env, "citing_pages", set()).discard(docname)


def _merge(app, env, docnames, other) -> None:
    """``env-merge-info``: take over what a parallel reader recorded for ``docnames``."""
    found = getattr(other, "citables_found", {})
    env.citables_found = getattr(env, "citables_found", {}) | {docname: found[docname] for docname in docnames if docname in found}
    env.citing_pages = getattr(env, "citing_pages", set()) | (getattr(other, "citing_pages", set()) & set(docnames))


def shown_elsewhere(env) -> tuple:
    """What the pages that list other pages' items show of them.

    Every page's citable items and exercises, in order, with their titles;
    the numbers Sphinx gives sections, figures, theorems and exercises; the
    pages' titles; the table of contents, whose order the exercise index
    follows; and the code that writes the BibTeX, whose edit changes every entry.
    """
    return (
        hashlib.sha256(Path(citation_module.__file__).read_bytes()).hexdigest(),
        sorted(getattr(env, "citables_found", {}).items()),
        sorted((docname, [(label, [node.pformat() for node in title], difficulty) for label, title, difficulty in found])
               for docname, found in getattr(env, "exercises_found", {}).items()),
        sorted(env.toc_fignumbers.items()),
        sorted(env.toc_secnumbers.items()),
        sorted((docname, title.astext()) for docname, title in env.titles.items()),
        sorted(env.toctree_includes.items()),
    )


def _rewrite_citing_pages(app, env):
    """``env-get-updated``: write the pages that cite again when what they show of the others changed.

    They are filled at write time (:class:`FillCitableItems`), so they need
    not be read again. Runs after the toctree collector has numbered the items.
    """
    shown = shown_elsewhere(env)
    if shown == getattr(env, "citing_pages_showed", None):
        return []
    env.citing_pages_showed = shown
    return sorted(getattr(env, "citing_pages", set()))


def setup(app):
    app.setup_extension("sphinx_proof")
    app.setup_extension("sphinx_exercise")
    app.add_node(citable_items)
    app.add_node(site_entry)
    app.add_directive("site-bibtex", SiteBibtex)
    app.add_directive("citable-items", CitableItems)
    app.add_post_transform(FillCitableItems)
    app.connect("doctree-read", collect)
    app.connect("build-finished", write_bibliography)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    # After the toctree collector (priority 500), which numbers the items in the same event.
    app.connect("env-get-updated", _rewrite_citing_pages, priority=600)
    return {"version": "1", "env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
