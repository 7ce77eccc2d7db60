r"""The dependency graph of the site's results, like a Lean blueprint.

Every entry of :data:`attention_scaling.proofs.REGISTRY` (theorems, lemmas
and derivations) is a node. An arrow runs from a result to each result that
uses it (``Registered.uses``), to each claim of the claims register that is
matched to it, and to the evidence rows that measure it. Each result is
coloured by its status, read from the outcome of running it: *checked* (every
step checked by SymPy), *cited*, *argued* or *measured* (the first of those
kinds among its steps, as :attr:`attention_scaling.proofs.Proof.status`
decides), or *failed*. Colour is never the only signal: each status also has
its own shape and a text tag in the node's label, and :meth:`DependencyGraph.table`
lists every node with its status, step counts and edges.

The functions here are pure: they read a registry-like mapping and the
outcomes of :func:`attention_scaling.proofs.prove_all`, and return text. The
DOT source depends on nothing else (no time, no set order), so two builds
give the same graph, byte for byte.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attention_scaling.proofs.engine import KINDS, step_counts
from attention_scaling.site.tables import markdown_table

__all__ = [
    "STATUSES",
    "DependencyGraph",
    "MystMarkdown",
    "Result",
    "dependency_graph",
    "label_pages",
    "result_status",
]

#: The statuses a result can have, from the strongest to a failure.
STATUSES = (*KINDS, "failed")

# Per status: what the legend and the table call it, the node's shape, its fill
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

_ROLE_LABEL = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$", re.MULTILINE)
_OPTION_LABEL = re.compile(r"^:label:\s*(?P<label>[A-Za-z0-9_.:-]+)\s*$", re.MULTILINE)


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


@dataclass(frozen=True)
class MystMarkdown:
    """MyST Markdown that a notebook displays as Markdown, for ``{glue:md}`` with ``:format: myst``."""

    text: str

    def _repr_markdown_(self) -> str:
        return self.text


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

    def directive(self, alt: str = "") -> str:
        """The graph as a MyST ``graphviz`` directive (rendered by ``sphinx.ext.graphviz``).

        A cell that displays it as Markdown puts the graph on the page; the
        build runs ``dot`` on the DOT source.
        """
        alt = alt or "The dependency graph of the results; the table below lists every node and edge."
        return f"```{{graphviz}}\n:alt: {alt}\n\n{self.dot()}```"

    def table(self) -> str:
        """Every result with its kind, status, step counts and edges, as a MyST Markdown table.

        The text alternative to the graph: the links are the site's own
        references, ``{prf:ref}`` for a theorem or lemma and ``{ref}`` for a
        derivation's section.

        Examples
        --------
        >>> from attention_scaling.site.graph import DependencyGraph, Result
        >>> node = Result("thm-a", "A", "theorem", "checked", {"checked": 2, "cited": 0, "argued": 0, "measured": 0},
        ...               (), (), ("src-claim",), 1, None)
        >>> print(DependencyGraph((node,), {}).table().splitlines()[-1])
        | {prf:ref}`thm-a`<br>thm-a | theorem | checked | 2 checked | — | claim src-claim; 1 evidence row |
        """
        rows = []
        for result in self.results:
            used_by = [", ".join(_reference(label) for label in result.used_by)] if result.used_by else []
            if result.claims:
                # Plain text, not code: a key breaks at its hyphens, so the column stays narrow.
                used_by.append(f"claim{'s' if len(result.claims) != 1 else ''} " + ", ".join(result.claims))
            if result.evidence:
                used_by.append(f"{result.evidence} evidence row" + ("s" if result.evidence != 1 else ""))
            rows.append([
                f"{_reference(result.label)}<br>{result.label}",
                result.kind,
                result.status,
                result.steps,
                ", ".join(_reference(label) for label in result.uses) or "—",
                "; ".join(used_by) or "—",
            ])
        header = ["result", "kind", "status", "steps", "uses", "used by"]
        return markdown_table(header, rows)

    def glue_values(self) -> dict[str, int | MystMarkdown]:
        """The page's glue keys: the graph (``graph_figure``), the table (``graph_table``), and counts.

        The counts are of the results, of the edges between them
        (``graph_uses``), of the claims and evidence rows, and of the
        results of each status (``graph_checked``, ..., ``graph_failed``).
        """
        values: dict[str, int | MystMarkdown] = {
            "graph_figure": MystMarkdown(self.directive()),
            "graph_table": MystMarkdown(self.table()),
            "graph_results": len(self.results),
            "graph_uses": sum(len(result.uses) for result in self.results),
            "graph_claims": sum(len(result.claims) for result in self.results),
            "graph_evidence": sum(result.evidence for result in self.results),
        }
        values.update({f"graph_{status}": count for status, count in self.statuses().items()})
        return values


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
        The page (document name) of each label, as :func:`label_pages` finds
        them; a node whose label is on a page links to it.

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
        ))
    claim_urls = {}
    for result in results:
        for key in result.claims:
            section = sections[key]
            claim_urls[key] = f"{pages[section]}.html#{section}" if section in pages else None
    return DependencyGraph(tuple(results), claim_urls)


def label_pages(docs: str | Path) -> dict[str, str]:
    """The page of every label the site's sources define: ``(label)=`` targets and ``:label:`` options.

    Parameters
    ----------
    docs : str or Path
        The directory of the pages (``docs/``); each ``*.md`` in it is a page
        named by its stem.

    Returns
    -------
    dict of str to str
        Label → page, in sorted order.

    Raises
    ------
    ValueError
        If a label is defined on two pages (Sphinx would not know which to link).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as docs:
    ...     _ = (Path(docs) / "scaling.md").write_text("(scaling)=\\n# Scaling\\n:label: thm-scaled-variance\\n")
    ...     label_pages(docs)
    {'scaling': 'scaling', 'thm-scaled-variance': 'scaling'}
    """
    found: dict[str, str] = {}
    for path in sorted(Path(docs).glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in (*_ROLE_LABEL.finditer(text), *_OPTION_LABEL.finditer(text)):
            label = match["label"]
            if found.get(label, path.stem) != path.stem:
                raise ValueError(f"label {label!r} is defined on two pages: {found[label]} and {path.stem}")
            found[label] = path.stem
    return dict(sorted(found.items()))
