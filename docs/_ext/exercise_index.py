"""Exercises: a difficulty on each, and an index of all of them built from the pages.

Every exercise says how hard it is with one class on its directive, one of
:data:`DIFFICULTIES`::

    ```{exercise} Standard deviation at $d_k = 512$
    :label: ex-std-512
    :class: difficulty-basic
    ```

While Sphinx reads a page (``doctree-read``), this shows that difficulty as
the exercise's first line and records it; an exercise with none, or with more
than one, is a warning, which fails the strict build.

``{exercise-index}``
    lists every exercise of the site, grouped by chapter in the order of the
    table of contents: a link to the exercise (its number, as ``{numref}``
    writes it), its title and its difficulty. Like the Cite page's
    ``{citable-items}``, the directive leaves a placeholder that a
    post-transform fills once every page has been read, and its page is
    written again whenever what it shows of the others changed
    (:mod:`citations` does that for every page that cites). Each entry also carries the exercise's label as its
    HTML id, so an old link to ``exercises.html#LABEL`` lands on the entry
    that links to the exercise.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

from citations import CitableItems

__all__ = ["DIFFICULTIES", "chapter_order", "difficulty_of", "setup"]

logger = logging.getLogger(__name__)

# The class on the directive, and the word the reader sees.
DIFFICULTIES = {"difficulty-basic": "basic", "difficulty-intermediate": "intermediate", "difficulty-advanced": "advanced"}


class exercise_index(nodes.General, nodes.Element):
    """Placeholder for the index, filled once every page has been read."""


def difficulty_of(classes: list[str]) -> str:
    """The difficulty that ``classes`` name.

    Raises
    ------
    ValueError
        If they name none of :data:`DIFFICULTIES`, or more than one.
    """
    named = [DIFFICULTIES[name] for name in classes if name in DIFFICULTIES]
    if len(named) != 1:
        raise ValueError(f"needs exactly one class of {', '.join(DIFFICULTIES)}; got {named or 'none'}")
    return named[0]


def record(app, doctree) -> None:
    """``doctree-read``: show each exercise's difficulty on its first line, and record it with its title."""
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_subtitle

    env = app.env
    if not hasattr(env, "exercises_found"):
        env.exercises_found = {}
    found = []
    for node in doctree.findall(exercise_enumerable_node):
        label = node.get("label", "")
        try:
            difficulty = difficulty_of(node["classes"])
        except ValueError as error:
            # sphinx-exercise gives the node no line; its first parsed child has one.
            line = next((child.line for child in node.findall() if child.line), None)
            logger.warning(f"the exercise '{label}' {error}", location=(env.docname, line), type="exercise")
            continue
        subtitle = next(iter(node.findall(exercise_subtitle)), None)
        title = [child.deepcopy() for child in subtitle.children] if subtitle is not None else []
        found.append((label, title, difficulty))
        content = next(child for child in node.children if isinstance(child, nodes.section))
        line = nodes.paragraph("", "", nodes.strong("", "Difficulty:"), nodes.Text(f" {difficulty}"),
                               classes=["exercise-difficulty"])
        content.insert(0, line)
    env.exercises_found[env.docname] = found


def chapter_order(toctree_includes: dict[str, list[str]], root: str) -> list[str]:
    """Every page under ``root``, depth first, in the order of the table of contents.

    Examples
    --------
    >>> chapter_order({"index": ["a", "b"], "a": ["a1"]}, "index")
    ['a', 'a1', 'b']
    """
    order = []
    for docname in toctree_includes.get(root, []):
        if docname not in order:
            order += [docname, *(name for name in chapter_order(toctree_includes, docname) if name not in order)]
    return order


class ExerciseIndex(CitableItems):
    """``{exercise-index}``: every exercise of the site, grouped by chapter.

    As a page that cites, its page is written again whenever what it lists changed.
    """

    placeholder = exercise_index


def _link(reftarget: str, docname: str, domain: str, reftype: str) -> addnodes.pending_xref:
    text = nodes.inline(reftarget, reftarget, classes=["xref", domain, f"{domain}-{reftype}"])
    return addnodes.pending_xref("", text, refdoc=docname, refdomain=domain, reftype=reftype, reftarget=reftarget,
                                 refexplicit=False, refwarn=True)


def _entry(label: str, title: list[nodes.Node], difficulty: str, docname: str) -> nodes.list_item:
    line = nodes.paragraph("", "", _link(label, docname, "std", "numref"), nodes.Text(": "),
                           *(child.deepcopy() for child in title), nodes.Text(" ("), nodes.emphasis("", difficulty),
                           nodes.Text(")"))
    return nodes.list_item("", line, ids=[label])


class FillExerciseIndex(SphinxPostTransform):
    """Replace the placeholder with the index, before references are resolved (priority 10)."""

    default_priority = 8

    def run(self, **kwargs):
        placeholders = list(self.document.findall(exercise_index))
        if not placeholders:
            return
        found = getattr(self.env, "exercises_found", {})
        pages = chapter_order(self.env.toctree_includes, self.config.root_doc)
        chapters = nodes.bullet_list(classes=["exercise-index"])
        for page in [*pages, *sorted(set(found) - set(pages))]:
            if found.get(page):
                entries = (_entry(*exercise, self.env.docname) for exercise in found[page])
                chapters += nodes.list_item("", nodes.paragraph("", "", _link(page, self.env.docname, "std", "doc")),
                                            nodes.bullet_list("", *entries))
        for placeholder in placeholders:
            placeholder.replace_self(chapters.deepcopy())


def _purge(app, env, docname) -> None:
    getattr(env, "exercises_found", {}).pop(docname, None)


def _merge(app, env, docnames, other) -> None:
    """``env-merge-info``: take over what a parallel reader recorded for ``docnames``."""
    found = getattr(other, "exercises_found", {})
    env.exercises_found = getattr(env, "exercises_found", {}) | {name: found[name] for name in docnames if name in found}


def setup(app):
    app.setup_extension("sphinx_exercise")
    app.setup_extension("citations")  # writes the pages that cite again when what they show changed
    app.add_node(exercise_index)
    app.add_directive("exercise-index", ExerciseIndex)
    app.add_post_transform(FillExerciseIndex)
    app.connect("doctree-read", record)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"version": "1", "env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
