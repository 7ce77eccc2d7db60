"""The dependency graph of the results (attention_scaling.site.graph, docs/graph.md).

The graph is built from a small fake registry planted here, so the tests do
not depend on which ``uses`` the real theorems declare, and are fast. The
real registry and pages are read only for what the graph page links to.
"""

import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sympy as sp

from attention_scaling import proofs
from attention_scaling.proofs import engine
from attention_scaling.proofs.engine import Derivation, Proof, ProofError, Registered, argue, check, cite, measure
from attention_scaling.site import glue_fields, graph as site_graph
from attention_scaling.site.claims import CLAIMS
from attention_scaling.site.evidence import EvidenceRow
from attention_scaling.site.graph import STATUSES, _STYLE, dependency_graph, result_status
from attention_scaling.site.sources import label_pages

REPO = Path(__file__).resolve().parents[1]
x = sp.Symbol("x", real=True)


def _proof(label, *extra):
    steps = (check(label, (x + 1) ** 2, x**2 + 2 * x + 1), *extra)
    return Proof(label, label, (), steps)


def fake_registry():
    """Five results, one of each status, with uses between them."""
    entries = [
        Registered("lem-base", "A base lemma", "theorem", lambda: _proof("lem-base")),
        Registered("thm-cited", "A cited theorem", "theorem",
                   lambda: _proof("thm-cited", cite("thm-cited", x, x, "Some Book (2000)", "Thm 1")), ("lem-base",)),
        Registered("page-argued", "An argued derivation", "derivation",
                   lambda: Derivation((argue("page-argued", x, x, "by symmetry"),)), ("lem-base",)),
        Registered("thm-measured", "A measured theorem", "theorem",
                   lambda: _proof("thm-measured", measure("thm-measured", x, 1, "row-a")), ("thm-cited", "page-argued")),
        # The planted fault: a false identity, so running it raises ProofError.
        Registered("thm-broken", "A broken theorem", "theorem",
                   lambda: Proof("b", "thm-broken", (), (check("thm-broken", x, x + 1),)), ("lem-base",)),
    ]
    return {entry.label: entry for entry in entries}


class FakeClaim:
    def __init__(self, key, where):
        self.key, self.where = key, where
        self.register_section = f"claims-{key.split('-')[0]}"


CLAIMS_FAKE = [FakeClaim("src-one", "thm-cited"), FakeClaim("src-two", "lem-base"), FakeClaim("other-x", "not-registered")]
EVIDENCE_FAKE = [EvidenceRow(label, "q", 0.0, 0.0, -1.0, 1.0, "") for label in ("lem-base", "lem-base", "thm-measured", "elsewhere")]
PAGES_FAKE = {"lem-base": "basics", "thm-cited": "basics", "claims-src": "claims"}


@pytest.fixture
def registry(monkeypatch):
    """The fake registry, planted where prove_all reads it."""
    fake = fake_registry()
    monkeypatch.setattr(engine, "REGISTRY", fake)
    monkeypatch.setattr(proofs, "REGISTRY", fake)
    return fake


@pytest.fixture
def graph(registry):
    return dependency_graph(registry, engine.prove_all(), CLAIMS_FAKE, EVIDENCE_FAKE, PAGES_FAKE)


def node_attributes(dot, name):
    """The attribute list of node ``name`` in the DOT source, as a dict."""
    line = next(line for line in dot.splitlines() if line.strip().startswith(f'"{name}" ['))
    return dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|[\w.#]+)', line[line.index("[") :]))


# -- Status ------------------------------------------------------------------------------


def test_each_outcome_gets_its_status(graph):
    statuses = {result.label: result.status for result in graph.results}
    assert statuses == {
        "lem-base": "checked",
        "thm-cited": "cited",
        "page-argued": "argued",
        "thm-measured": "measured",
        "thm-broken": "failed",
    }
    assert graph.statuses() == dict.fromkeys(STATUSES, 1)


def test_the_status_rule_is_the_engines(registry):
    # A result with cited and argued steps takes the engine's Proof.status.
    proof = _proof("thm-both", argue("thm-both", x, x, "by symmetry"), cite("thm-both", x, x, "A Book", "p. 1"))
    assert result_status(proof) == proof.status == "cited"
    assert result_status(check("demo", 1, 1)) == "checked"


def test_a_planted_proof_error_is_coloured_failed(graph):
    broken = next(result for result in graph.results if result.label == "thm-broken")
    assert broken.status == "failed" and broken.counts is None
    attributes = node_attributes(graph.dot(), "thm-broken")
    assert attributes["fillcolor"] == f'"{_STYLE["failed"][3]}"'
    assert "[FAILED]" in attributes["label"]


def test_a_passing_version_of_the_planted_fault_is_not_failed(registry):
    # The same registry with the false identity corrected: the fault was what made it fail.
    registry["thm-broken"] = Registered("thm-broken", "Fixed", "theorem", lambda: _proof("thm-broken"), ("lem-base",))
    fixed = dependency_graph(registry, engine.prove_all())
    assert {result.label: result.status for result in fixed.results}["thm-broken"] == "checked"


# -- DOT -------------------------------------------------------------------------------------


def test_every_result_is_a_node_coloured_and_tagged_by_status(graph):
    dot = graph.dot()
    for result in graph.results:
        attributes = node_attributes(dot, result.label)
        _, shape, style, fill, colour = _STYLE[result.status]
        assert attributes["fillcolor"] == f'"{fill}"' and attributes["color"] == f'"{colour}"'
        assert attributes["shape"] == shape and attributes["style"] == f'"{style}"'
        assert result.label in attributes["label"]
        tag = "[FAILED]" if result.status == "failed" else f"[{result.status}]"
        assert tag in attributes["label"], (result.label, attributes["label"])


def test_statuses_differ_in_colour_and_in_shape_or_style():
    fills = [fill for _, _, _, fill, _ in _STYLE.values()]
    assert len(set(fills)) == len(STATUSES) == len(_STYLE)
    looks = {(shape, style) for _, shape, style, _, _ in _STYLE.values()}
    assert len(looks) == len(STATUSES), "two statuses would differ by colour alone"


def test_the_legend_shows_every_status_claims_evidence_and_an_edge(graph):
    dot = graph.dot()
    legend = dot[dot.index("subgraph cluster_legend") :]
    for status, (words, _, _, fill, _) in _STYLE.items():
        attributes = node_attributes(legend, f"legend:{status}")
        assert attributes["fillcolor"] == f'"{fill}"' and words in attributes["label"]
    assert '"legend:claim"' in legend and '"legend:evidence"' in legend
    assert '"legend:A" -> "legend:B"' in legend


def test_edges_run_from_a_result_to_what_uses_it(graph):
    edges = set(graph.edges())
    assert {("lem-base", "thm-cited"), ("lem-base", "page-argued"), ("thm-cited", "thm-measured"),
            ("page-argued", "thm-measured"), ("lem-base", "thm-broken")} <= edges
    assert ("thm-cited", "claim:src-one") in edges and ("lem-base", "claim:src-two") in edges
    assert ("lem-base", "evidence:lem-base") in edges and ("thm-measured", "evidence:thm-measured") in edges
    # A claim or row for a label that is not registered is no node.
    assert not any("other-x" in head or "elsewhere" in head for _, head in edges)
    for tail, head in edges:
        assert f'"{tail}" -> "{head}";' in graph.dot()


def test_used_by_claims_and_evidence_are_recorded(graph):
    base = graph.results[0]
    assert base.used_by == ("thm-cited", "page-argued", "thm-broken")
    assert base.claims == ("src-two",) and base.evidence == 2


def test_nodes_link_to_their_page_with_relative_urls(graph):
    dot = graph.dot()
    assert node_attributes(dot, "lem-base")["URL"] == '"basics.html#lem-base"'
    assert node_attributes(dot, "claim:src-one")["URL"] == '"claims.html#claims-src"'
    assert "URL" not in node_attributes(dot, "page-argued")  # on no page of PAGES_FAKE
    # Links leave the SVG's <object> for the page itself.
    assert 'target="_top"' in dot
    assert not re.search(r'URL="(https?:|/)', dot), "links must be relative"


def test_the_dot_source_is_deterministic(registry):
    outcomes = engine.prove_all()
    first = dependency_graph(registry, outcomes, CLAIMS_FAKE, EVIDENCE_FAKE, PAGES_FAKE).dot()
    shuffled_claims, shuffled_rows = CLAIMS_FAKE[:], EVIDENCE_FAKE[:]
    random.Random(1).shuffle(shuffled_claims)
    random.Random(2).shuffle(shuffled_rows)
    again = dependency_graph(registry, list(reversed(outcomes)), shuffled_claims, shuffled_rows, PAGES_FAKE).dot()
    assert again == first


def test_names_with_quotes_and_backslashes_are_escaped(registry):
    registry["lem-base"] = Registered("lem-base", 'A "quoted" \\ name', "theorem", lambda: _proof("lem-base"))
    dot = dependency_graph(registry, engine.prove_all()).dot()
    assert r'A \"quoted\" \\ name' in dot


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda reg, out: out.pop("thm-cited"), "no outcome for"),
        (lambda reg, out: out.update({"thm-unknown": None}), "unregistered"),
        (lambda reg, out: reg.update({"thm-x": Registered("thm-x", "X", "theorem", None, ("nowhere",))}) or out.update({"thm-x": None}),
         "only use registered"),
    ],
    ids=["missing-outcome", "unregistered-outcome", "unregistered-use"],
)
def test_inconsistent_inputs_are_refused(registry, change, message):
    outcomes = {label: outcome for label, outcome, _ in engine.prove_all()}
    change(registry, outcomes)
    with pytest.raises(ValueError, match=message):
        dependency_graph(registry, outcomes)


# -- The drawn graph ----------------------------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def drawn_nodes(svg):
    """Each node of a drawn graph, by its tooltip: its link (or None), its outline's fill, its box."""
    nodes = {}
    for node in ET.fromstring(svg).iter():
        if node.tag in (f"{SVG}a", f"{SVG}g") and node.find(f"{SVG}title") is not None:
            outline = node.find(f"{SVG}path")
            numbers = [float(n) for n in re.findall(r"-?[\d.]+", outline.get("d"))]
            nodes[node.find(f"{SVG}title").text] = (node.get("href"), outline.get("fill"), numbers[:2])
    return nodes


def test_the_drawing_has_every_node_in_its_colour_linked_and_the_same_bytes_twice(graph):
    svg = graph.svg()
    assert svg == graph.svg(), "two drawings differ"
    nodes = drawn_nodes(svg)
    for result in graph.results:
        href, fill, _ = nodes[f"{result.name} ({result.status})"]
        assert fill == _STYLE[result.status][3], result.label
        assert href == result.url, result.label
    # The legend: a sample of each status, in its colour.
    for status, style in _STYLE.items():
        assert nodes[style[0]][1] == style[3], status
    assert svg.count('class="edge"') == len(graph.edges())


def test_each_result_stands_right_of_every_result_it_uses(graph):
    nodes = drawn_nodes(graph.svg())
    left = {result.label: nodes[f"{result.name} ({result.status})"][2][0] for result in graph.results}
    for tail, head in graph.edges():
        if tail in left and head in left:
            assert left[tail] < left[head], (tail, head)


def test_a_cycle_of_uses_is_refused():
    with pytest.raises(ValueError, match="cycle: a -> b -> a"):
        site_graph._columns(["a", "b"], [("a", "b"), ("b", "a")])


# -- The index of results, the text alternative --------------------------------------------------


def _items(index):
    """The index's items by label: each item's first line, and its statement (or None)."""
    items = {}
    for item in index.split("\n\n- "):
        line, _, statement = item.removeprefix("- ").partition("\n\n")
        label = re.search(r"\(([\w-]+)\)", line)[1]
        items[label] = (line, statement.strip().removeprefix("$$").removesuffix("$$").strip() or None)
    return items


def test_the_index_gives_every_result_with_statement_page_status_steps_and_edges(graph):
    items = _items(graph.index())
    assert list(items) == ["lem-base", "thm-cited", "page-argued", "thm-measured", "thm-broken"]
    line, statement = items["lem-base"]
    # What uses it is listed in the index's order: thm-cited is on a page, the others after it in registry order.
    assert line == ("{prf:ref}`lem-base`: **A base lemma** (lem-base), on {doc}`basics`. Every step checked (1). Uses no other "
                    "result. Used by {prf:ref}`thm-cited`, {ref}`page-argued`, {prf:ref}`thm-broken`. Settles claim src-two. "
                    "Measured by 2 evidence rows.")
    assert statement == sp.latex(sp.Eq((x + 1) ** 2, x**2 + 2 * x + 1, evaluate=False))
    # A derivation's link reads as its section's title; its section states it.
    assert items["page-argued"] == ("{ref}`page-argued` (page-argued). Argued: 1 argued. Uses {prf:ref}`lem-base`. "
                                    "Used by {prf:ref}`thm-measured`.", None)
    assert "Measured: 1 checked, 1 measured. Uses {prf:ref}`thm-cited`, {ref}`page-argued`." in items["thm-measured"][0]
    assert items["thm-broken"] == ("{prf:ref}`thm-broken`: **A broken theorem** (thm-broken). Failed. Uses {prf:ref}`lem-base`.",
                                   None)


def test_the_index_lists_the_results_chapter_by_chapter_in_page_order(registry):
    # Registered in another order: the chapters' order, then each page's, decide the items'.
    pages = {"thm-measured": "later", "thm-cited": "first", "lem-base": "first", "page-argued": "appendix"}
    graph = dependency_graph(registry, engine.prove_all(), pages=pages, contents=["first", "later"])
    items = _items(graph.index())
    assert list(items) == ["thm-cited", "lem-base", "thm-measured", "page-argued", "thm-broken"]
    # Within an item too: what uses lem-base is listed in the index's order, not the registry's.
    first = {"thm-broken": "first", "thm-cited": "later", "lem-base": "later", "page-argued": "later"}
    graph = dependency_graph(registry, engine.prove_all(), pages=first, contents=["first", "later"])
    line = _items(graph.index())["lem-base"][0]
    assert "Used by {prf:ref}`thm-broken`, {prf:ref}`thm-cited`, {ref}`page-argued`." in line, line


def test_the_summary_counts_the_statuses_and_carries_the_figure_and_index(graph):
    values = glue_fields(graph.summary(), "graph")
    assert values["graph_results"] == 5 and values["graph_failed"] == 1 and values["graph_checked"] == 1
    assert values["graph_uses"] == 5 and values["graph_claims"] == 2 and values["graph_evidence"] == 3
    figure = values["graph_figure"]._repr_html_()
    assert figure == f'<div class="dependency-graph-figure">{graph.svg()}</div>'
    assert values["graph_index"]._repr_markdown_() == graph.index()


# -- The real site: every node has a page to link to ------------------------------------------


def test_every_registered_result_and_claims_section_is_on_a_page():
    pages = label_pages(REPO / "docs")
    missing = [label for label in proofs.REGISTRY if label not in pages]
    assert not missing, f"registered results with no label on any page: {missing}"
    sections = {claim.register_section for claim in CLAIMS if claim.where in proofs.REGISTRY}
    assert sections <= {label for label, page in pages.items() if page == "claims"}, sections
    assert pages["evidence-table"] == "evidence"


def test_a_label_on_two_pages_is_refused(tmp_path):
    (tmp_path / "a.md").write_text("(same)=\n# A\n")
    (tmp_path / "b.md").write_text("```{prf:theorem} B\n:label: same\n```\n")
    with pytest.raises(ValueError, match="'same' is defined on two pages: a and b"):
        label_pages(tmp_path)


# -- The built page --------------------------------------------------------------------------


def test_the_built_graph_colours_every_result_and_links_to_anchors_that_exist(repo_html):
    page = (repo_html / "graph.html").read_text(encoding="utf-8")
    drawing = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="dependency-graph".*?</svg>', page, re.S)
    assert drawing, "graph.html has no dependency graph drawn inline"
    nodes = drawn_nodes(drawing[0])
    status_fills = {style[3] for style in _STYLE.values()}
    drawn = {title.split(" (")[0]: (href, fill) for title, (href, fill, _) in nodes.items()}
    for label, entry in proofs.REGISTRY.items():
        href, fill = drawn[entry.name]
        assert fill in status_fills, f"{label} is not drawn in a status colour: {fill}"
        target, anchor = href.split("#")
        assert anchor == label and f'id="{anchor}"' in (repo_html / target).read_text(encoding="utf-8"), href
    # The text alternative, and the index of results: one item per result, with its statement.
    index = re.search(r'<section id="graph-table">.*?</section>', page, re.S)[0]
    assert index.count("<li>") == len(proofs.REGISTRY), "the index lists every result once"
    assert index.count('<math display="block">') >= sum(entry.kind == "theorem" for entry in proofs.REGISTRY.values())
    # Chapter by chapter: the numbers of the theorems and lemmas never go back to an earlier chapter.
    chapters = [int(chapter) for chapter in re.findall(r'<li><p><a [^>]*>(?:Theorem|Lemma) (\d+)\.\d+</a>', index)]
    assert len(chapters) > 20 and chapters == sorted(chapters), chapters
