r"""What a page's downloaded notebook shows in place of the site's glue.

A page computes its numbers and figures in cells and *glues* them into the
prose with myst-nb, which hides them from the cells' outputs. The notebook a
reader downloads has no prose to glue into, and myst-nb is a build tool, not a
dependency of this package; so the site rewrites the notebook to import
:func:`glue` from here instead. It shows each glued value where it was made:
a figure or a table as itself, a number or a string as one line,
``name = value``. The outputs the build stored are turned into the same
ordinary outputs by :func:`ordinary_output`, so the downloaded notebook shows
what running it shows.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["References", "glue", "glued_text", "labelled_bundle", "ordinary_output", "plain_notebook"]


def labelled_bundle(name: str, bundle: dict[str, Any]) -> dict[str, Any]:
    """The MIME bundle a notebook shows for a glued value.

    A bundle with nothing but ``text/plain`` (a number, a string) gets its
    name in front, ``name = value``, so that a reader can tell which number
    of the page it is; a richer bundle (a figure, Markdown, math) is shown as
    it is.

    Parameters
    ----------
    name : str
        The glue key, as the page's prose uses it.
    bundle : dict
        MIME type to data, as IPython formats the value.

    Returns
    -------
    dict
        A new bundle; ``bundle`` is not changed.

    Raises
    ------
    ValueError
        If ``bundle`` is empty.

    Examples
    --------
    >>> labelled_bundle("d_k", {"text/plain": "512"})
    {'text/plain': 'd_k = 512'}
    >>> sorted(labelled_bundle("fig-x", {"image/png": "iVBOR...", "text/plain": "<Figure>"}))
    ['image/png', 'text/plain']
    """
    if not bundle:
        raise ValueError(f"bundle for {name!r}: expected at least one MIME type, got none")
    if set(bundle) == {"text/plain"}:
        return {"text/plain": f"{name} = {bundle['text/plain']}"}
    return dict(bundle)


def ordinary_output(output: dict[str, Any]) -> dict[str, Any]:
    """A stored output of myst-nb's ``glue``, as the notebook shows it.

    myst-nb stores a glued value as a ``display_data`` output whose metadata
    names it (``scrapbook``) and whose MIME types carry a prefix that hides it
    from notebook viewers. This gives the output :func:`glue` makes for the
    same value when the notebook runs: the prefix gone, the value labelled by
    :func:`labelled_bundle`. Any other output is returned unchanged.

    Parameters
    ----------
    output : dict
        One output of a code cell, in nbformat 4.

    Returns
    -------
    dict
        The output to keep in the downloaded notebook.

    Examples
    --------
    >>> stored = {
    ...     "output_type": "display_data",
    ...     "metadata": {"scrapbook": {"name": "d_k", "mime_prefix": "application/papermill.record/"}},
    ...     "data": {"application/papermill.record/text/plain": "512"},
    ... }
    >>> ordinary_output(stored)
    {'output_type': 'display_data', 'metadata': {}, 'data': {'text/plain': 'd_k = 512'}}
    >>> ordinary_output({"output_type": "stream", "name": "stdout", "text": "hi"})["text"]
    'hi'
    """
    record = output.get("metadata", {}).get("scrapbook")
    if record is None:
        return output
    prefix = record.get("mime_prefix", "")
    bundle = {key[len(prefix):] if key.startswith(prefix) else key: value for key, value in output["data"].items()}
    metadata = {key: value for key, value in output["metadata"].items() if key != "scrapbook"}
    return {"output_type": "display_data", "metadata": metadata, "data": labelled_bundle(record["name"], bundle)}


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Show a value that the page glues into its prose, in the notebook.

    The stand-in for ``myst_nb.glue`` in downloaded notebooks, with the same
    signature. A notebook has no prose to glue into, so the value is always
    shown, labelled by :func:`labelled_bundle`; ``display`` is accepted and
    ignored. It needs IPython, which every notebook kernel has.

    Parameters
    ----------
    name : str
        The glue key.
    variable : object
        Anything IPython can display: a number, a string, a Matplotlib
        Figure, ``IPython.display.Markdown``.
    display : bool, optional
        Ignored (myst-nb's flag for hiding the value).

    Examples
    --------
    >>> glue("d_k", 512, display=False)
    d_k = 512
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display as show

    bundle, metadata = format_display_data(variable)
    show(labelled_bundle(name, bundle), metadata=metadata or None, raw=True)


# -- MyST made plain Jupyter Markdown ---------------------------------------------------------------

_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\s*(?:\{(?P<name>[\w:.-]+)\})?[ \t]*(?P<args>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
# A role, {name}`content`; or a code span, left as it is (it may show a role's syntax).
_INLINE = re.compile(r"\{(?P<role>[\w:.-]+)\}`(?P<content>[^`]+)`|``[^`]+``|`[^`]+`")
_TARGET = re.compile(r"^\((?P<label>[\w.:-]+)\)=\s*$")
_LABELLED_MATH = re.compile(r"^\$\$[ \t]*\((?P<label>[\w.:-]+)\)[ \t]*$")
# Directives whose output is the site's own furniture, not the page's content: what the notebook says instead.
_SITE_ONLY = {"toctree": [], "exercise-index": ["*The list of every exercise, with links, is on the site's Exercises page.*", ""]}


@dataclass(frozen=True)
class References:
    """What a page's MyST refers to, as plain text, for :func:`plain_notebook`.

    Attributes
    ----------
    labels : mapping of str to str
        Each label as the site cites it: ``"Theorem 4.1"``, ``"Figure 5.1"``,
        ``"Equation (2.3)"``, ``"Exercise 4.2"``, or a section's title.
    documents : mapping of str to str
        Each page's name to its title.
    citations : mapping of str to tuple of str
        Each bibliography key to its authors, as cited in the text
        (``"Vaswani et al."``), and its year.
    values : mapping of str to dict
        Each glue key of the page to its MIME bundle, as the page glued it.
    """

    labels: Mapping[str, str]
    documents: Mapping[str, str]
    citations: Mapping[str, tuple[str, str]]
    values: Mapping[str, Mapping[str, str]]

    def label(self, label: str) -> str:
        """How the site cites ``label``; a :class:`KeyError` names it when it is unknown."""
        if label not in self.labels:
            raise KeyError(f"the label {label!r} is not a target of the site")
        return self.labels[label]

    def glued(self, key: str, mime: str = "text/plain") -> str:
        """The page's glued value ``key`` in the MIME type ``mime``."""
        if key not in self.values or mime not in self.values[key]:
            raise KeyError(f"no glued value {key!r} with {mime}: the page's cells did not glue it")
        value = self.values[key][mime]
        return "".join(value) if isinstance(value, list) else value


def glued_text(text: str, format_spec: str) -> str:
    """A glued number or string as ``{glue:text}`` writes it: the value read back from its text, then formatted.

    Examples
    --------
    >>> glued_text("0.123456", ".3f"), glued_text("4096", ",d"), glued_text("'none'", ""), glued_text("512", "")
    ('0.123', '4,096', 'none', '512')
    """
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if not format_spec:
        return str(value)
    kind = format_spec[-1]
    if kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    elif kind == "s":
        value = str(value)
    return format(value, format_spec)


def _math(latex: str) -> str:
    return latex.strip().removeprefix("$$").removesuffix("$$").strip()


def _number(cited: str) -> str:
    """"Equation (2.3)" -> "2.3"."""
    return cited.rsplit(" ", 1)[-1].strip("()")


def _cite(keys: str, references: References, parenthetical: bool) -> str:
    cited = []
    for key in (key.strip() for key in keys.split(",")):
        if key not in references.citations:
            raise KeyError(f"the citation {key!r} is not in the bibliography")
        authors, year = references.citations[key]
        cited.append(f"{authors}, {year}" if parenthetical else f"{authors} [{year}]")
    # As the site writes them: [Vaswani et al., 2017] and Vaswani et al. [2017].
    return f"[{'; '.join(cited)}]" if parenthetical else ", ".join(cited)


def _role(name: str, content: str, references: References) -> str:
    """One role, as plain Markdown."""
    explicit = re.fullmatch(r"(?P<text>.+?)\s*<(?P<target>[^<>]+)>", content, re.S)
    target = explicit["target"] if explicit else content
    if name == "glue:text":
        key, _, format_spec = content.partition(":")
        return glued_text(references.glued(key), format_spec)
    if name == "glue:math":
        return f"${_math(references.glued(content, 'text/latex'))}$"
    if name == "math":
        return f"${content}$"
    if name in ("ref", "prf:ref", "numref"):
        return explicit["text"] if explicit else references.label(target)
    if name == "eq":
        return f"({_number(references.label(target))})"
    if name == "doc":
        if explicit:
            return explicit["text"]
        if target not in references.documents:
            raise KeyError(f"the page {target!r} is not in the site")
        return references.documents[target]
    if name in ("cite:t", "cite:p"):
        return _cite(content, references, parenthetical=name == "cite:p")
    if name in ("func", "class", "meth", "mod", "py:func", "py:class", "py:mod", "py:meth"):
        return f"`{target.lstrip('~.')}`"
    raise ValueError(f"the role {{{name}}} has no plain Markdown form: add one to attention_scaling.site.notebook")


def _inline(text: str, references: References) -> str:
    return _INLINE.sub(lambda m: _role(m["role"], m["content"], references) if m["role"] else m[0], text)


def _quoted(lines: list[str]) -> list[str]:
    return [f"> {line}" if line else ">" for line in lines]


class _Converter:
    """Turns the Markdown cells of one notebook into plain Markdown, following solutions across cells."""

    def __init__(self, references: References, solutions: bool):
        self.references, self.solutions, self.in_solution = references, solutions, False

    def lines(self, lines: list[str]) -> list[str]:
        out, i = [], 0
        while i < len(lines):
            line = lines[i]
            fence = _FENCE.match(line)
            if fence:
                end = self._closing(lines, i, fence["fence"])
                out += self.directive(fence["name"], fence["args"].strip(), lines[i + 1:end], fence["fence"], line)
                i = end + 1
                continue
            i += 1
            if _TARGET.match(line) or line.startswith("%"):
                continue
            if self.in_solution and not self.solutions:
                continue
            labelled = _LABELLED_MATH.match(line)
            if labelled:  # a numbered display: "$$ (eq-label)" closes it
                out += [rf"\tag{{{_number(self.references.label(labelled['label']))}}}", "$$"]
                continue
            out.append(_inline(line, self.references))
        return out

    @staticmethod
    def _closing(lines: list[str], start: int, fence: str) -> int:
        for j in range(start + 1, len(lines)):
            if lines[j].strip().startswith(fence[0] * len(fence)) and set(lines[j].strip()) == {fence[0]}:
                return j
        raise ValueError(f"the fence {lines[start]!r} is never closed")

    def directive(self, name: str | None, args: str, body: list[str], fence: str, opening: str) -> list[str]:
        if name is None:  # a code block: its text stays as it is
            return [] if self.in_solution and not self.solutions else [opening, *body, fence]
        options = {}
        while body and _OPTION.match(body[0]):
            option = _OPTION.match(body.pop(0))
            options[option["key"]] = option["value"].strip()
        if name == "solution-start":
            self.in_solution = True
            return [f"**Solution to {self.references.label(args)}.**", ""] if self.solutions else []
        if name == "solution-end":
            self.in_solution = False
            return []
        if self.in_solution and not self.solutions:
            return []
        content = self.lines(body)
        if name in ("prf:theorem", "prf:lemma", "prf:definition"):
            heading = self.references.label(options["label"]) if "label" in options else name.split(":")[1].title()
            title = f" ({_inline(args, self.references)})" if args else ""
            return _quoted([f"**{heading}**{title}.", "", *content]) + [""]
        if name == "prf:proof":
            return ["*Proof.*", "", *content, "", "∎", ""]
        if name == "exercise":
            difficulty = re.search(r"difficulty-(\w+)", options.get("class", ""))
            level = f", {difficulty[1]}" if difficulty else ""
            title = f" ({_inline(args, self.references)})" if args else ""
            return _quoted([f"**{self.references.label(options['label'])}**{title}{level}.", "", *content]) + [""]
        if name == "admonition":
            return _quoted([f"**{_inline(args, self.references)}**", "", *content]) + [""]
        if name == "glue:math":
            tag = [rf"\tag{{{_number(self.references.label(options['label']))}}}"] if "label" in options else []
            return ["$$", _math(self.references.glued(args, "text/latex")), *tag, "$$"]
        if name == "glue:figure":
            cited = self.references.label(options["name"]) if "name" in options else "Figure"
            return [f"*{cited}, shown by a cell above: " + " ".join(line for line in content if line).strip() + "*", ""]
        if name == "glue":
            return ["*Shown by the cell above.*", ""]
        if name == "glue:md":  # Markdown that the page's cell wrote, with roles of its own
            return [*self.lines(self.references.glued(args, "text/markdown").split("\n")), ""]
        if name in _SITE_ONLY:
            return list(_SITE_ONLY[name])
        raise ValueError(f"the directive {{{name}}} has no plain Markdown form: add one to attention_scaling.site.notebook")


def plain_notebook(cells: list[dict], references: References, *, solutions: bool = True) -> list[dict]:
    r"""A notebook's cells with their MyST made plain Jupyter Markdown, and, for students, without the solutions.

    Jupyter and Colab show MyST roles and directives as their source. Each
    Markdown cell is rewritten: a glued value as its text, a reference as the
    number or title the site shows, a citation as author and year, a theorem,
    exercise or admonition as a quoted block with its number, a figure's
    caption as a line, a label or comment not at all. With
    ``solutions=False`` every solution is left out, with the code cells
    inside it.

    Parameters
    ----------
    cells : list of dict
        The notebook's cells (nbformat 4); not changed.
    references : References
        What the page's MyST refers to.
    solutions : bool, default True
        Keep the exercises' solutions (the instructor's notebook) or leave them out (the student's).

    Returns
    -------
    list of dict
        New cells; a Markdown cell left empty is dropped.

    Raises
    ------
    ValueError
        For a role or directive with no plain form, or a solution never closed.
    KeyError
        For a label, citation, page or glued value that ``references`` lacks.

    Examples
    --------
    >>> refs = References({"thm-x": "Theorem 2.1", "eq-x": "Equation (2.3)", "ex-a": "Exercise 2.1"}, {},
    ...                   {"vaswani2017attention": ("Vaswani et al.", "2017")}, {"d_k": {"text/plain": "512"}})
    >>> cells = [{"cell_type": "markdown", "metadata": {}, "source": "(sec)=\nAt $d_k =$ {glue:text}`d_k`, by "
    ...           "{prf:ref}`thm-x` and {eq}`eq-x` {cite:p}`vaswani2017attention`; `{ref}` is a role."}]
    >>> print(plain_notebook(cells, refs)[0]["source"])
    At $d_k =$ 512, by Theorem 2.1 and (2.3) [Vaswani et al., 2017]; `{ref}` is a role.
    >>> cells = [{"cell_type": "markdown", "metadata": {}, "source": "```{solution-start} ex-a\n```\nIt is 8."},
    ...          {"cell_type": "code", "metadata": {}, "source": "print(8)", "outputs": []},
    ...          {"cell_type": "markdown", "metadata": {}, "source": "```{solution-end}\n```\nNext."}]
    >>> [cell["source"] for cell in plain_notebook(cells, refs)]
    ['**Solution to Exercise 2.1.**\n\nIt is 8.', 'print(8)', 'Next.']
    >>> [cell["source"] for cell in plain_notebook(cells, refs, solutions=False)]
    ['Next.']
    """
    converter = _Converter(references, solutions)
    plain = []
    for number, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            if not (converter.in_solution and not solutions):
                plain.append(cell)
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        try:
            text = "\n".join(converter.lines(source.split("\n"))).strip()
        except (KeyError, ValueError) as error:
            raise type(error)(f"Markdown cell {number}: {error.args[0]}") from error
        text = re.sub(r"\n>(?:\n>)+\n", "\n>\n", re.sub(r"\n{3,}", "\n\n", text))  # one blank line, quoted or not
        if text:
            plain.append({**cell, "source": text})
    if converter.in_solution:
        raise ValueError("a solution-start has no solution-end")
    return plain
