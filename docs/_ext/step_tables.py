"""Mark the tables of a proof's steps, so that a narrow screen can stack each step's reason under it.

A proof or derivation shows its steps as a Markdown table
(:class:`attention_scaling.proofs.Derivation`), which myst-nb turns into a
docutils table like any other. Its header, ``STEP_TABLE_HEADER``, is what
tells it apart: such a table gets the class ``step-table``, which
``docs/_static/site.css`` styles.

The header is written here, not imported from ``attention_scaling.proofs``:
importing that package loads SymPy and every theorem into each build (about
a second, on every prose edit). tests/test_engine.py checks that the two agree.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

__all__ = ["STEP_TABLE_HEADER", "StepTables", "setup"]

#: The header of the table of steps that Derivation._repr_markdown_ writes.
STEP_TABLE_HEADER = ("kind", "step", "reason")


class StepTables(SphinxPostTransform):
    """Add the class ``step-table`` to every table whose header is a step table's."""

    default_priority = 400

    def run(self, **kwargs) -> None:
        for table in self.document.findall(nodes.table):
            header = next(table.findall(nodes.thead), None)
            row = next(header.findall(nodes.row), None) if header is not None else None
            if row is not None and tuple(entry.astext().strip() for entry in row.children) == STEP_TABLE_HEADER:
                table["classes"].append("step-table")


def setup(app):
    app.add_post_transform(StepTables)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
