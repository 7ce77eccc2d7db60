"""Offer each executable page's executed notebook for download.

myst-nb writes the notebook it parsed to ``_build/jupyter_execute/PAGE.ipynb``:
with outputs when it executed the page itself, but without them when the
outputs came from the cache (it merges them into a copy). At ``doctree-read``
the cached outputs are merged into that file too, so it is the same whichever
way the page was executed. At ``html-page-context`` it is copied into
``_sources`` with numbered cell ids, and the theme lists it as ".ipynb" in the
download menu, next to the ".md" source.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["complete_executed_notebook", "numbered_cells", "offer_notebook", "setup"]


def complete_executed_notebook(app, doctree) -> None:
    """``doctree-read``: give _build/jupyter_execute/PAGE.ipynb its outputs when the page was cached."""
    import nbformat
    from jupyter_cache import get_cache
    from myst_nb.ext.glue import extract_glue_data_cell

    config = app.env.mystnb_config
    target = Path(config.output_folder, *f"{app.env.docname}.ipynb".split("/"))
    if config.execution_mode != "cache" or not target.is_file():
        return
    notebook = nbformat.read(target, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not code or any(cell.execution_count is not None for cell in code):
        return
    try:
        _, merged = get_cache(config.execution_cache_path).merge_match_into_notebook(notebook)
    except KeyError:
        return  # not executed (excluded, or execution off for this page)
    for cell in merged.cells:  # as on the executed path: glued values are taken out
        if cell.cell_type == "code":
            extract_glue_data_cell(cell)
    target.write_text(nbformat.writes(merged), encoding="utf-8")


def numbered_cells(notebook: dict) -> dict:
    """The notebook with cell ids ``cell-0``, ``cell-1``, ...

    nbformat gives cells random ids; numbered ones keep two builds identical.
    """
    for number, cell in enumerate(notebook["cells"]):
        cell["id"] = f"cell-{number}"
    return notebook


def offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context``: put the executed notebook of an executable page in the download menu."""
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if executed.is_file():
        notebook = numbered_cells(json.loads(executed.read_text(encoding="utf-8")))
        target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    app.setup_extension("myst_nb")
    app.connect("doctree-read", complete_executed_notebook)
    # Before the theme builds its header buttons (default priority 500).
    app.connect("html-page-context", offer_notebook, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
