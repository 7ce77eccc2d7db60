r"""The dependency graph of the site's results, like a Lean blueprint.

Every entry of :data:`attention_scaling.proofs.REGISTRY` (theorems, lemmas
and derivations) is a node. An arrow runs from a result to each result that
uses it (``Registered.uses``), to each claim of the claims register that is
matched to it, and to the evidence rows that measure it. Each result is
coloured by its status, read from the outcome of running it: *checked* (every
step checked by SymPy), *cited*, *argued* or *measured* (the first of those
kinds among its steps, as :attr:`attention_scaling.proofs.Proof.status`
decides), or *failed*. Colour is never the only signal: each status also has
its own shape and a text tag in the node's label, and :meth:`DependencyGraph.index`
lists every result by chapter, with its statement, page, status, step counts
and edges: the site's index of results.

The functions here are pure: they read a registry-like mapping and the
outcomes of :func:`attention_scaling.proofs.prove_all`, and return text. The
page draws the graph as an SVG of its own (:meth:`DependencyGraph.svg`):
results in columns by how long the chain of uses below them is, each node a
link to its statement, with no program outside Python. :meth:`DependencyGraph.dot`
gives the same graph in Graphviz's DOT language, for readers who draw it
with Graphviz. Neither depends on anything else (no time, no set order), so
two builds give the same graph, byte for byte.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attention_scaling.proofs.engine import KINDS, Proof, step_counts

__all__ = [
    "STATUSES",
    "DependencyGraph",
    "GraphSummary",
    "InlineHTML",
    "MystMarkdown",
    "Result",
    "dependency_graph",
    "result_status",
]

#: The statuses a result can have, from the strongest to a failure.
STATUSES = (*KINDS, "failed")

# Per status: what the legend calls it, the node's shape, its fill
# and outline colours, and the text tag in its label. The hues are Okabe and
# Ito's colour-blind-safe palette (bluish green, blue, yellow, reddish purple,
# vermillion) as light fills under dark text, outlined in the full hue; the
# shapes and tags tell the statuses apart without colour.
_STYLE = {
    "checked": ("every step checked by SymPy", "box", "rounded,filled", "#c7ebdc", "#00795a"),
    "cited": ("has cited steps", "note", "filled", "#cde4f4", "#0072b2"),
    "argued": ("has argued steps", "component", "filled", "#f5ec9a", "#857a00"),
    "measured": ("has measured steps", "tab", "filled", "#f1d7e7", "#a3507f"),
    "failed": ("a check raised ProofError", "box", "filled,bold,diagonals", "#f5b49b", "#c04a00"),
}
_CLAIM_STYLE = 'shape=box, style="dashed,filled", fillcolor="#ffffff", color="#555555", fontsize=9'
_EVIDENCE_STYLE = 'shape=cylinder, style=filled, fillcolor="#e8e8e8", color="#555555", fontsize=9'
# Characters per line of a node's text: the graph has as many columns as the longest
# chain of uses, plus one, and must stay legible at the width of a page.
_WRAP = 20


def result_status(outcome: Any) -> str:
    """The status of a result from what running it gave: one of :data:`STATUSES`.

    Parameters
    ----------
    outcome : Proof, Derivation, Step or Exception
        An outcome as :func:`~attention_scaling.proofs.prove_all` reports it;
        an exception (a :class:`~attention_scaling.proofs.ProofError`) means
        the result failed.

    Returns
    -------
    str
        ``"failed"`` for an exception; otherwise ``"checked"`` if every step
        is checked, else the first of ``"cited"``, ``"argued"``,
        ``"measured"`` among its steps (the rule of ``Proof.status``).

    Examples
    --------
    >>> import sympy as sp
    >>> from attention_scaling.proofs import ProofError, check
    >>> from attention_scaling.proofs.engine import Derivation, argue
    >>> result_status(check("demo", 1, 1))
    'checked'
    >>> result_status(Derivation((check("demo", 1, 1), argue("demo", sp.Symbol("a"), 1, "by definition"))))
    'argued'
    >>> result_status(ProofError("demo: does not hold"))
    'failed'
    """
    if isinstance(outcome, Exception):
        return "failed"
    counts = step_counts(outcome)
    return next((kind for kind in KINDS[1:] if counts[kind]), "checked")


class MystMarkdown(str):
    """MyST Markdown that a notebook displays as Markdown, for ``{glue:md}`` with ``:format: myst``.

    A string, so that :func:`~attention_scaling.site.glue_fields` glues a
    record's field of this type as it is, Markdown and all.
    """

    __slots__ = ()

    def _repr_markdown_(self) -> str:
        return str(self)


class InlineHTML(str):
    """HTML that a notebook displays as it is (``text/html``), for ``{glue}``: the graph's SVG, inline in the page.

    A string, so that :func:`~attention_scaling.site.glue_fields` glues a
    record's field of this type as it is, HTML and all.

    Examples
    --------
    >>> InlineHTML("<svg></svg>")._repr_html_()
    '<svg></svg>'
    """

    __slots__ = ()

    def _repr_html_(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Result:
    """One node of the graph: a registered result, its status and its edges.

    Attributes
    ----------
    label : str
        The registry label (a theorem's ``thm-…``/``lem-…``, or the label of
        the page section that shows a derivation).
    name : str
        Its name in the registry.
    kind : {"theorem", "lemma", "derivation"}
        A theorem whose label starts with ``lem-`` is a lemma.
    status : str
        One of :data:`STATUSES`.
    counts : dict of str to int or None
        Its steps of each kind (``KINDS`` order); None when it failed.
    uses : tuple of str
        The results it uses.
    used_by : tuple of str
        The results that use it.
    claims : tuple of str
        Keys of the claims matched to it.
    evidence : int
        How many evidence rows measure it.
    url : str or None
        Its page and anchor, relative to the site root (``page.html#label``).
    statement : str or None
        The LaTeX of its statement, as its page displays it (a proof's
        :attr:`~attention_scaling.proofs.Proof.statement`); None for a
        derivation, which its section states, and for a failed result.
    page : str or None
        The page that states it.
    place : tuple of int
        Where the site states it: the page's place among the chapters (pages
        that are not chapters after them), then the label's place on it.
    """

    label: str
    name: str
    kind: str
    status: str
    counts: dict[str, int] | None
    uses: tuple[str, ...]
    used_by: tuple[str, ...]
    claims: tuple[str, ...]
    evidence: int
    url: str | None
    statement: str | None = None
    page: str | None = None
    place: tuple[int, int] = (0, 0)

    @property
    def tag(self) -> str:
        """The status in words, as the node's label shows it (so colour is not the only signal)."""
        if self.counts is None:
            return "[FAILED] a check raised ProofError"
        total = sum(self.counts.values())
        if self.status == "checked":
            return f"[checked] {total} step{'s' if total != 1 else ''}"
        return f"[{self.status}] {self.steps}"

    @property
    def steps(self) -> str:
        """How many steps of each kind it has, kinds with none left out ("5 checked, 1 cited"); a dash if it failed."""
        if self.counts is None:
            return "—"
        return ", ".join(f"{n} {kind}" for kind, n in self.counts.items() if n) or "no steps"


@dataclass(frozen=True)
class DependencyGraph:
    """The dependency graph of the registered results.

    Attributes
    ----------
    results : tuple of Result
        The nodes, in the order of the registry (the order of the site).
    claim_urls : dict of str to str or None
        Each claim node's key and the page anchor it links to.
    """

    results: tuple[Result, ...]
    claim_urls: dict[str, str | None]

    def statuses(self) -> dict[str, int]:
        """How many results have each status, in the order of :data:`STATUSES`."""
        return {status: sum(result.status == status for result in self.results) for status in STATUSES}

    def edges(self) -> list[tuple[str, str]]:
        """Every edge ``(from, to)`` of the graph as DOT node names, sorted: uses, then claims, then evidence."""
        uses = sorted((used, result.label) for result in self.results for used in result.uses)
        claims = sorted((result.label, f"claim:{key}") for result in self.results for key in result.claims)
        evidence = sorted((result.label, f"evidence:{result.label}") for result in self.results if result.evidence)
        return uses + claims + evidence

    def dot(self) -> str:
        r"""The graph in Graphviz's DOT language, with a legend; identical for identical inputs.

        Examples
        --------
        >>> from attention_scaling.site.graph import DependencyGraph, Result
        >>> node = Result("thm-a", "A", "theorem", "checked", {"checked": 2, "cited": 0, "argued": 0, "measured": 0},
        ...               (), (), (), 0, "a.html#thm-a")
        >>> source = DependencyGraph((node,), {}).dot()
        >>> source.splitlines()[0]
        'digraph dependencies {'
        >>> '"thm-a" [label="Theorem: A\\nthm-a\\n[checked] 2 steps"' in source
        True
        """
        lines = [
            "digraph dependencies {",
            # White behind the graph keeps its dark text readable in the site's dark theme.
            '  graph [rankdir=LR, bgcolor="white", fontname="Helvetica", fontsize=11, nodesep=0.12, ranksep=0.3,'
            ' pad=0.2, labeljust=l];',
            '  node [fontname="Helvetica", fontsize=10, margin="0.12,0.05", penwidth=1.6, target="_top"];',
            '  edge [color="#444444", arrowsize=0.7];',
        ]
        # With rankdir=LR, dot stacks the nodes of a rank from the bottom up in the
        # order they are declared: declared last to first, they read top down in
        # the order of the site.
        for result in reversed(self.results):
            _, shape, style, fill, colour = _STYLE[result.status]
            label = [*_wrap(f"{result.kind.capitalize()}: {result.name}"), *_wrap(result.label), *_wrap(result.tag)]
            attributes = [
                f"label={_quote(label)}",
                f"shape={shape}",
                f"style={_quote([style])}",
                f"fillcolor={_quote([fill])}",
                f"color={_quote([colour])}",
                f"tooltip={_quote([f'{result.name} ({result.status})'])}",
            ]
            if result.url:
                attributes.append(f"URL={_quote([result.url])}")
            lines.append(f"  {_quote([result.label])} [{', '.join(attributes)}];")
        for key, url in sorted(self.claim_urls.items()):
            link = f", URL={_quote([url])}" if url else ""
            lines.append(f"  {_quote([f'claim:{key}'])} [label={_quote(_wrap(f'claim: {key}'))}, {_CLAIM_STYLE}{link}];")
        for result in reversed(self.results):
            if result.evidence:
                rows = f"{result.evidence} row" + ("s" if result.evidence != 1 else "")
                lines.append(
                    f"  {_quote([f'evidence:{result.label}'])} [label={_quote([f'evidence: {rows}'])}, {_EVIDENCE_STYLE},"
                    f' URL="evidence.html#evidence-table"];'
                )
        lines += [f"  {_quote([tail])} -> {_quote([head])};" for tail, head in self.edges()]
        # Declared last, the legend stands above the graph (see the order of the results above).
        lines += [*_legend(), "}"]
        return "\n".join(lines) + "\n"

    def svg(self, title: str = "") -> str:
        """The graph drawn as SVG, with a legend: results in columns, arrows from a result to what uses it.

        A result's column is the length of the longest chain of uses below
        it; claims and evidence stand one column right of the result they
        follow. Within a column, nodes are ordered so that they sit near what
        they connect to (two sweeps of barycentres, ties in registry order).
        Each node is a link to its statement, and its text is text.

        Parameters
        ----------
        title : str, optional
            The accessible name of the drawing; a description of the graph by default.

        Examples
        --------
        >>> from attention_scaling.site.graph import DependencyGraph, Result
        >>> counts = {"checked": 2, "cited": 0, "argued": 0, "measured": 0}
        >>> a = Result("lem-a", "A", "lemma", "checked", counts, (), ("thm-b",), (), 0, "a.html#lem-a")
        >>> b = Result("thm-b", "B", "theorem", "checked", counts, ("lem-a",), (), (), 0, "b.html#thm-b")
        >>> drawing = DependencyGraph((a, b), {}).svg()
        >>> drawing.startswith("<svg ") and drawing.count('<a href="b.html#thm-b">') == 1
        True
        >>> drawing.count('class="edge"')
        1
        """
        title = title or "The dependency graph of the results; the index below lists every node and edge."
        boxes = self._boxes()
        edges = self.edges()
        column = _columns(list(boxes), edges)
        order = _ordered(list(boxes), edges, column)
        legend, legend_height = _legend_svg(_MARGIN, _MARGIN)
        top = _MARGIN + legend_height + _ROW_GAP * 2
        places, width, height = _places(boxes, order, top)
        width = max(width, _MARGIN + _LEGEND_WIDTH) + _MARGIN
        height += _MARGIN
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="dependency-graph" width="{width:g}" height="{height:g}"'
            f' viewBox="0 0 {width:g} {height:g}" aria-label="{html.escape(title)}"'
            f' font-family="sans-serif" font-size="{_FONT_PX}">',
            '<defs><marker id="graph-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7"'
            ' orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#444444"/></marker></defs>',
            # White behind the graph keeps its dark text readable in the site's dark theme.
            f'<rect width="{width:g}" height="{height:g}" rx="6" fill="#ffffff"/>',
            *legend,
        ]
        for tail, head in edges:
            (x1, y1, w1, h1), (x2, y2, _, h2) = places[tail], places[head]
            start, end = (x1 + w1, y1 + h1 / 2), (x2 - 1, y2 + h2 / 2)
            bend = (end[0] - start[0]) / 2
            parts.append(f'<path class="edge" d="M{start[0]:g},{start[1]:g} C{start[0] + bend:g},{start[1]:g}'
                         f' {end[0] - bend:g},{end[1]:g} {end[0]:g},{end[1]:g}" fill="none" stroke="#444444"'
                         ' stroke-width="1.1" marker-end="url(#graph-arrow)"/>')
        for name, box in boxes.items():
            parts.append(_node_svg(box, *places[name]))
        parts.append("</svg>")
        return "\n".join(parts) + "\n"

    def _boxes(self) -> dict[str, _Box]:
        """Every node to draw, by its name in :meth:`edges`: results, then claims, then evidence."""
        boxes = {}
        for result in self.results:
            *_, fill, colour = _STYLE[result.status]
            lines = (*_wrap(f"{result.kind.capitalize()}: {result.name}"), *_wrap(result.label), *_wrap(result.tag))
            boxes[result.label] = _Box(lines, _shape(result.status), fill, colour, result.url, f"{result.name} ({result.status})")
        for key, url in sorted(self.claim_urls.items()):
            boxes[f"claim:{key}"] = _Box(tuple(_wrap(f"claim: {key}")), "claim", "#ffffff", "#555555", url, key)
        for result in self.results:
            if result.evidence:
                rows = f"{result.evidence} row" + ("s" if result.evidence != 1 else "")
                boxes[f"evidence:{result.label}"] = _Box((f"evidence: {rows}",), "cylinder", "#e8e8e8", "#555555",
                                                         "evidence.html#evidence-table", f"evidence rows of {result.label}")
        return boxes

    def index(self) -> str:
        r"""The index of results, chapter by chapter, as MyST Markdown: one list item per result.

        Each item gives the result's number and name (its link, ``{prf:ref}``
        for a theorem or lemma, reads "Theorem 2.1"; ``{ref}`` for a
        derivation reads as its section's title), its label, its page, its
        status and steps, what it uses and what uses it, then its statement
        displayed as its page displays it. The items follow the site: chapter
        by chapter, and on a page in the order it states them
        (:attr:`Result.place`). The index is also the text alternative to the
        graph: it names every node and edge.

        Examples
        --------
        >>> from attention_scaling.site.graph import DependencyGraph, Result
        >>> node = Result("thm-a", "A", "theorem", "checked", {"checked": 2, "cited": 0, "argued": 0, "measured": 0},
        ...               (), (), ("src-claim",), 1, None, statement="x = 1", page="basics")
        >>> print(DependencyGraph((node,), {}).index())
        - {prf:ref}`thm-a`: **A** (thm-a), on {doc}`basics`. Every step checked (2). Uses no other result. Settles claim src-claim. Measured by 1 evidence row.
        <BLANKLINE>
          $$
          x = 1
          $$
        """
        place = {result.label: result.place for result in self.results}

        def references(labels: tuple[str, ...]) -> str:
            return ", ".join(_reference(label) for label in sorted(labels, key=place.__getitem__))

        items = []
        for result in sorted(self.results, key=lambda result: result.place):
            # A derivation's link reads as its section's title, which is its name.
            name = f": **{result.name}**" if result.kind != "derivation" else ""
            page = f", on {{doc}}`{result.page}`" if result.page else ""
            if result.counts is None:
                status = "Failed."
            elif result.status == "checked":
                status = f"Every step checked ({sum(result.counts.values())})."
            else:
                status = f"{result.status.capitalize()}: {result.steps}."
            sentences = [f"- {_reference(result.label)}{name} ({result.label}){page}.", status,
                         f"Uses {references(result.uses) or 'no other result'}."]
            if result.used_by:
                sentences.append(f"Used by {references(result.used_by)}.")
            if result.claims:
                sentences.append(f"Settles claim{'s' if len(result.claims) != 1 else ''} {', '.join(result.claims)}.")
            if result.evidence:
                sentences.append(f"Measured by {result.evidence} evidence row{'s' if result.evidence != 1 else ''}.")
            item = " ".join(sentences)
            if result.statement:
                item += "\n\n" + textwrap.indent(f"$$\n{result.statement}\n$$", "  ")
            items.append(item)
        return "\n\n".join(items)

    def summary(self) -> GraphSummary:
        """What the graph page shows of the graph: the drawing, the index of results, and counts.

        Examples
        --------
        >>> from attention_scaling.site.graph import DependencyGraph, Result
        >>> counts = {"checked": 2, "cited": 0, "argued": 0, "measured": 0}
        >>> a = Result("lem-a", "A", "lemma", "checked", counts, (), ("thm-b",), (), 0, "a.html#lem-a")
        >>> b = Result("thm-b", "B", "theorem", "checked", counts, ("lem-a",), (), ("src-x",), 2, "b.html#thm-b")
        >>> summary = DependencyGraph((a, b), {"src-x": None}).summary()
        >>> summary.results, summary.uses, summary.claims, summary.evidence, summary.checked, summary.failed
        (2, 1, 1, 2, 2, 0)
        """
        return GraphSummary(
            figure=InlineHTML(f'<div class="dependency-graph-figure">{self.svg()}</div>'),
            index=MystMarkdown(self.index()),
            results=len(self.results),
            uses=sum(len(result.uses) for result in self.results),
            claims=sum(len(result.claims) for result in self.results),
            evidence=sum(result.evidence for result in self.results),
            **self.statuses(),
        )


@dataclass(frozen=True)
class GraphSummary:
    """What the graph page shows of the dependency graph; its fields are the page's glue keys (``graph_<field>``).

    Attributes
    ----------
    figure : InlineHTML
        The graph drawn as SVG (:meth:`DependencyGraph.svg`), in a ``div`` of class ``dependency-graph-figure``.
    index : MystMarkdown
        The index of results (:meth:`DependencyGraph.index`).
    results : int
        The results: the nodes that are not claims or evidence.
    uses : int
        The edges between results.
    claims, evidence : int
        The claims matched to a result, and the evidence rows that measure one.
    checked, cited, argued, measured, failed : int
        The results of each status (:data:`STATUSES`).
    """

    figure: InlineHTML
    index: MystMarkdown
    results: int
    uses: int
    claims: int
    evidence: int
    checked: int
    cited: int
    argued: int
    measured: int
    failed: int


# -- Drawing: an SVG of our own ------------------------------------------------------------------
# Sizes in CSS pixels. A character of the sans-serif text is taken as _CHAR_PX wide (an average
# with room to spare: a box is sized before any font has measured its text).
_FONT_PX = 10
_CHAR_PX = 6.2
_LINE_PX = 12.5
_PAD = (8, 6)
_COLUMN_GAP = 44
_ROW_GAP = 10
_MARGIN = 12
_LEGEND_WIDTH = 640


@dataclass(frozen=True)
class _Box:
    """A node as drawn: its lines of text, its shape, colours, link and tooltip."""

    lines: tuple[str, ...]
    shape: str  # rounded, note, component, tab, failed, claim or cylinder
    fill: str
    stroke: str
    url: str | None
    tooltip: str

    @property
    def size(self) -> tuple[float, float]:
        return (max(map(len, self.lines)) * _CHAR_PX + 2 * _PAD[0], len(self.lines) * _LINE_PX + 2 * _PAD[1])


def _columns(names: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Each node's column: 0 for a node nothing points to, else one more than the highest column pointing to it.

    Raises
    ------
    ValueError
        If the uses form a cycle (no column can be given).
    """
    before = {name: [tail for tail, head in edges if head == name] for name in names}
    column: dict[str, int] = {}

    def place(name: str, chain: tuple[str, ...]) -> int:
        if name in chain:
            raise ValueError(f"the results' uses form a cycle: {' -> '.join((*chain, name))}")
        if name not in column:
            column[name] = 1 + max((place(tail, (*chain, name)) for tail in before[name]), default=-1)
        return column[name]

    for name in names:
        place(name, ())
    return column


def _ordered(names: list[str], edges: list[tuple[str, str]], column: dict[str, int]) -> list[list[str]]:
    """The nodes of each column, top to bottom: near the nodes they connect to, ties in the order given."""
    columns = [[name for name in names if column[name] == c] for c in range(max(column.values(), default=-1) + 1)]
    for neighbours, sweep in (("before", range(1, len(columns))), ("after", range(len(columns) - 2, -1, -1))):
        position = {name: index for nodes in columns for index, name in enumerate(nodes)}
        for c in sweep:
            def centre(name, c=c):
                linked = [tail for tail, head in edges if head == name and column[tail] < c] if neighbours == "before" \
                    else [head for tail, head in edges if tail == name and column[head] > c]
                return sum(position[other] for other in linked) / len(linked) if linked else position[name]
            columns[c] = sorted(columns[c], key=lambda name: (centre(name), names.index(name)))
            position.update({name: index for index, name in enumerate(columns[c])})
    return columns


def _places(boxes: dict[str, _Box], columns: list[list[str]], top: float) -> tuple[dict, float, float]:
    """Each node's box ``(x, y, width, height)``, columns side by side from the top; the extent."""
    places, heights, x = {}, [], _MARGIN
    for nodes in columns:
        sizes = [boxes[name].size for name in nodes]
        heights.append(sum(h for _, h in sizes) + _ROW_GAP * (len(sizes) - 1))
    tallest = max(heights, default=0)
    for nodes, height in zip(columns, heights):
        width = max(boxes[name].size[0] for name in nodes)
        y = top
        for name in nodes:
            w, h = boxes[name].size
            places[name] = (round(x + (width - w) / 2, 1), round(y, 1), round(w, 1), round(h, 1))
            y += h + _ROW_GAP
        x += width + _COLUMN_GAP
    return places, x - _COLUMN_GAP, top + tallest


def _shape(status: str) -> str:
    """The outline a status is drawn with (:func:`_outline`), from its Graphviz shape and style in :data:`_STYLE`."""
    _, shape, style, _, _ = _STYLE[status]
    return "rounded" if "rounded" in style else "failed" if "diagonals" in style else shape


def _outline(shape: str, x: float, y: float, w: float, h: float) -> str:
    """The SVG path of a node's outline, one shape per status (so colour is not the only signal)."""
    right, bottom = x + w, y + h
    if shape == "rounded":
        return (f"M{x + 6:g},{y:g} H{right - 6:g} Q{right:g},{y:g} {right:g},{y + 6:g} V{bottom - 6:g}"
                f" Q{right:g},{bottom:g} {right - 6:g},{bottom:g} H{x + 6:g} Q{x:g},{bottom:g} {x:g},{bottom - 6:g}"
                f" V{y + 6:g} Q{x:g},{y:g} {x + 6:g},{y:g} Z")
    box = f"M{x:g},{y:g} H{right:g} V{bottom:g} H{x:g} Z"
    if shape == "note":  # a folded top-right corner
        return f"M{x:g},{y:g} H{right - 8:g} L{right:g},{y + 8:g} V{bottom:g} H{x:g} Z M{right - 8:g},{y:g} V{y + 8:g} H{right:g}"
    if shape == "component":  # two tabs on the left side
        return box + "".join(f" M{x - 4:g},{ty:g} h8 v5 h-8 Z" for ty in (y + 5, bottom - 10))
    if shape == "tab":  # a tab on top
        return box + f" M{x + 4:g},{y:g} v-5 h18 v5"
    if shape == "failed":  # the corners struck through
        return box + f" M{x:g},{y + 6:g} L{x + 6:g},{y:g} M{right - 6:g},{y:g} L{right:g},{y + 6:g}" \
                     f" M{x:g},{bottom - 6:g} L{x + 6:g},{bottom:g} M{right - 6:g},{bottom:g} L{right:g},{bottom - 6:g}"
    if shape == "cylinder":  # a drum
        return (f"M{x:g},{y + 4:g} A{w / 2:g},4 0 0 1 {right:g},{y + 4:g} V{bottom - 4:g} A{w / 2:g},4 0 0 1 {x:g},{bottom - 4:g} Z"
                f" M{x:g},{y + 4:g} A{w / 2:g},4 0 0 0 {right:g},{y + 4:g}")
    return box  # claim: a plain box, dashed


def _node_svg(box: _Box, x: float, y: float, w: float, h: float) -> str:
    """One node: its outline, its centred lines of text, and its tooltip, in a link when it has a page."""
    dash = ' stroke-dasharray="4 3"' if box.shape == "claim" else ""
    width = "2" if box.shape == "failed" else "1.4"
    text = "".join(f'<tspan x="{x + w / 2:g}" y="{y + _PAD[1] + _FONT_PX + i * _LINE_PX:g}">{html.escape(line)}</tspan>'
                   for i, line in enumerate(box.lines))
    node = (f'<title>{html.escape(box.tooltip)}</title>'
            f'<path d="{_outline(box.shape, x, y, w, h)}" fill="{box.fill}" stroke="{box.stroke}" stroke-width="{width}"{dash}/>'
            f'<text text-anchor="middle" fill="#111111">{text}</text>')
    return f'<a href="{html.escape(box.url)}">{node}</a>' if box.url else f"<g>{node}</g>"


def _legend_svg(x0: float, y0: float) -> tuple[list[str], float]:
    """The legend's nodes, laid out in rows within :data:`_LEGEND_WIDTH`, and its height."""
    samples = [_Box((f"{'[FAILED]' if status == 'failed' else f'[{status}]'} {words}",), _shape(status), fill, colour, None, words)
               for status, (words, _, _, fill, colour) in _STYLE.items()]
    samples += [_Box(("claim: a claim of the claims register",), "claim", "#ffffff", "#555555", None, "a claim"),
                _Box(("evidence: rows that measure a result",), "cylinder", "#e8e8e8", "#555555", None, "evidence rows")]
    parts = [f'<text x="{x0:g}" y="{y0 + _FONT_PX:g}" font-weight="bold" fill="#111111">Legend (an arrow from A to B:'
             " B uses A)</text>"]
    x, y, row = x0, y0 + _LINE_PX + 6, 0.0
    for box in samples:
        w, h = box.size
        if x > x0 and x + w > x0 + _LEGEND_WIDTH:
            x, y = x0, y + row + _ROW_GAP
        parts.append(_node_svg(box, x, y, w, h))
        x, row = x + w + _ROW_GAP, max(row, h)
    return parts, y + row - y0


def _legend() -> list[str]:
    """The legend: one sample node per status, a claim, an evidence node and an edge, in a box of their own."""
    lines = [
        "  subgraph cluster_legend {",
        '    label="Legend"; style="rounded"; color="#888888"; fontsize=11;',
        '    node [target=""];',
    ]
    names = []
    for status, (words, shape, style, fill, colour) in _STYLE.items():
        names.append(f"legend:{status}")
        tag = "[FAILED]" if status == "failed" else f"[{status}]"
        lines.append(
            f"    {_quote([names[-1]])} [label={_quote([f'{tag} {words}'])}, shape={shape}, style={_quote([style])},"
            f" fillcolor={_quote([fill])}, color={_quote([colour])}];"
        )
    names += ["legend:claim", "legend:evidence", "legend:A"]
    lines += [
        f'    "legend:claim" [label="claim: a claim of the claims register", {_CLAIM_STYLE}];',
        f'    "legend:evidence" [label="evidence: rows that measure a result", {_EVIDENCE_STYLE}];',
        '    "legend:A" [label="A", shape=box, style=rounded];',
        '    "legend:B" [label="B uses A", shape=box, style=rounded];',
        '    "legend:A" -> "legend:B";',
        # One rank: in a left-to-right graph, the samples stand in one column.
        "    { rank=same; " + " ".join(_quote([name]) + ";" for name in reversed(names)) + " }",
        "  }",
    ]
    return lines


def _wrap(text: str) -> list[str]:
    """``text`` in lines of at most ``_WRAP`` characters, broken at spaces or after hyphens."""
    return textwrap.wrap(text, _WRAP, break_long_words=False)


def _quote(lines: list[str]) -> str:
    """A DOT string of one or more lines, each centred, with quotes and backslashes escaped."""
    escaped = [line.replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    return '"' + "\\n".join(escaped) + '"'


def _reference(label: str) -> str:
    """A MyST link to a result: ``{prf:ref}`` for a theorem or lemma, ``{ref}`` for a section."""
    role = "prf:ref" if label.startswith(("thm-", "lem-")) else "ref"
    return f"{{{role}}}`{label}`"


def dependency_graph(
    registry: Mapping[str, Any],
    outcomes: Iterable[tuple] | Mapping[str, Any],
    claims: Iterable[Any] = (),
    evidence: Iterable[Any] = (),
    pages: Mapping[str, str] | None = None,
    contents: Sequence[str] = (),
) -> DependencyGraph:
    """Build the dependency graph from a registry, the outcomes of running it, claims and evidence rows.

    Parameters
    ----------
    registry : mapping of str to Registered
        Usually :data:`attention_scaling.proofs.REGISTRY`: each entry has a
        ``name``, a ``kind`` (``"theorem"`` or ``"derivation"``) and ``uses``.
    outcomes : iterable of (label, outcome, seconds), or mapping of label to outcome
        What :func:`~attention_scaling.proofs.prove_all` returns: a proof,
        derivation or step, or the ``ProofError`` it raised.
    claims : iterable of Claim, optional
        Claims of the claims register; those whose ``where`` is a registered
        label become nodes, with an edge from that result, linked to the
        Claims checked section that lists them (``register_section``).
    evidence : iterable of EvidenceRow, optional
        Evidence rows; those whose ``theorem`` is registered are counted on
        one evidence node per result.
    pages : mapping of str to str, optional
        The page (document name) of each label, as :func:`~attention_scaling.site.sources.label_pages` finds
        them; a node whose label is on a page links to it. Its order is the
        order of the labels on a page.
    contents : sequence of str, optional
        The chapters in the order of the contents, as :func:`~attention_scaling.site.sources.chapters` reads
        them: the index lists the results chapter by chapter.

    Returns
    -------
    DependencyGraph

    Raises
    ------
    ValueError
        If a result has no outcome, an outcome is for an unregistered label,
        or a result uses a label that is not registered.

    Examples
    --------
    >>> from attention_scaling.proofs import ProofError, Registered, check
    >>> lemma = Registered("lem-a", "A lemma", "theorem", lambda: check("lem-a", 1, 1))
    >>> theorem = Registered("thm-b", "A theorem", "theorem", lambda: check("thm-b", 1, 2), uses=("lem-a",))
    >>> outcomes = {"lem-a": lemma.run(), "thm-b": ProofError("thm-b: 1 is not 2")}
    >>> graph = dependency_graph({"lem-a": lemma, "thm-b": theorem}, outcomes)
    >>> [(result.label, result.kind, result.status, result.used_by) for result in graph.results]
    [('lem-a', 'lemma', 'checked', ('thm-b',)), ('thm-b', 'theorem', 'failed', ())]
    >>> graph.edges()
    [('lem-a', 'thm-b')]
    """
    if isinstance(outcomes, Mapping):
        found = dict(outcomes)
    else:
        found = {label: outcome for label, outcome, *_ in outcomes}
    missing = [label for label in registry if label not in found]
    if missing:
        raise ValueError(f"outcomes must hold every registered result; no outcome for {missing}")
    extra = [label for label in found if label not in registry]
    if extra:
        raise ValueError(f"outcomes must be for registered results; got unregistered {extra}")
    unknown = {label: [u for u in entry.uses if u not in registry] for label, entry in registry.items()}
    unknown = {label: used for label, used in unknown.items() if used}
    if unknown:
        raise ValueError(f"a result may only use registered results; got {unknown}")

    claims = list(claims)
    claim_keys = {label: sorted(c.key for c in claims if c.where == label) for label in registry}
    sections = {c.key: c.register_section for c in claims}
    evidence_counts = {label: 0 for label in registry}
    for row in evidence:
        if row.theorem in evidence_counts:
            evidence_counts[row.theorem] += 1
    pages = pages or {}
    position = {label: place for place, label in enumerate(pages)}
    chapter = {page: place for place, page in enumerate(contents)}

    results = []
    for label, entry in registry.items():
        outcome = found[label]
        status = result_status(outcome)
        kind = "lemma" if entry.kind == "theorem" and label.startswith("lem-") else entry.kind
        results.append(Result(
            label=label,
            name=entry.name,
            kind=kind,
            status=status,
            counts=None if status == "failed" else step_counts(outcome),
            uses=tuple(entry.uses),
            used_by=tuple(other for other, e in registry.items() if label in e.uses),
            claims=tuple(claim_keys[label]),
            evidence=evidence_counts[label],
            url=f"{pages[label]}.html#{label}" if label in pages else None,
            statement=outcome.statement if isinstance(outcome, Proof) else None,
            page=pages.get(label),
            place=(chapter.get(pages.get(label), len(chapter)), position.get(label, len(position))),
        ))
    claim_urls = {}
    for result in results:
        for key in result.claims:
            section = sections[key]
            claim_urls[key] = f"{pages[section]}.html#{section}" if section in pages else None
    return DependencyGraph(tuple(results), claim_urls)

