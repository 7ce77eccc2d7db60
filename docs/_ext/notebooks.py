"""Offer each executable page as a notebook a student can download and run anywhere.

myst-nb writes the notebook it parsed to ``_build/jupyter_execute/PAGE.ipynb``,
with the glued values (every figure and number the prose shows) taken out of
the outputs, and with no outputs at all when they came from the cache. At
``doctree-read`` that file is rewritten as the notebook a reader downloads:

- the outputs are the executed ones from the cache, glued values included,
  each shown as an ordinary output
  (:func:`attention_scaling.site.notebook.ordinary_output`);
- ``from myst_nb import glue`` (a build tool) becomes the package's stand-in,
  :func:`attention_scaling.site.notebook.glue`, which shows the same outputs
  when the notebook runs; any other use of myst_nb fails the build;
- a first cell installs the package, unless it is importable already, from
  the wheel that ``make html`` publishes with the site (:func:`install_cell`);
- cells are numbered ``cell-0``, ``cell-1``, ... (nbformat's random ids would
  make two builds differ).

At ``html-page-context``, when every number of the site is known, the
notebook's Markdown is made plain Jupyter Markdown
(:func:`attention_scaling.site.notebook.plain_notebook`: glued values as text,
references as the numbers the site shows, theorems and exercises as quoted
blocks) and written into ``_sources``, with, for a page with solutions, the
student's notebook beside it, ``PAGE-student.ipynb``, which leaves them out.
A role or directive with no plain form is a warning, so an error in the
strict build (a reference to nothing is one already, from Sphinx). The
page's files are listed for the sidebar (``docs/_templates/page-files.html``):
its MyST source (``.md``), its
notebooks (``.ipynb``), and, when the repository is known and on GitHub,
links that open the notebook on Binder and Colab (:func:`page_files`).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from sphinx.util import logging

import provenance
from labels import numbered_labels

logger = logging.getLogger(__name__)

__all__ = [
    "GLUED",
    "GLUE_IMPORT",
    "install_cell",
    "numbered_cells",
    "offer_files",
    "page_files",
    "plain_downloads",
    "references",
    "self_contained",
    "setup",
    "wheel_name",
    "write_download",
]

#: Where a rewritten notebook keeps its page's glued values until its Markdown is made plain.
GLUED = "glued-values"
#: What a page writes to glue, and what the downloaded notebook imports instead.
GLUE_IMPORT = ("from myst_nb import glue", "from attention_scaling.site.notebook import glue")


def wheel_name(release: str) -> str:
    """The file name of the package's wheel at ``release``, as ``make html`` publishes it in the site's ``dist/``.

    Examples
    --------
    >>> wheel_name("0.1.0")
    'attention_scaling-0.1.0-py3-none-any.whl'
    """
    return f"attention_scaling-{release}-py3-none-any.whl"


def install_cell(release: str, site: str) -> dict:
    """The first code cell of a downloaded notebook: install the package, when it is missing, from the site's wheel.

    ``site`` is the address the site is published at (``hosting.site_url``), where
    ``make html`` put the wheel it was built with (``dist/``): a notebook opened on
    Colab or Binder installs exactly that, with no release on the package index.
    A site built on a laptop has no address; its notebooks say what to run instead.
    """
    wheel = f"dist/{wheel_name(release)}"
    if site:
        source = (
            f"# Installs attention-scaling from the wheel this site was built with, unless it is already importable.\n"
            "import importlib, importlib.util, subprocess, sys\n"
            'if importlib.util.find_spec("attention_scaling") is None:\n'
            f'    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "{site}{wheel}"], check=True)\n'
            "    importlib.invalidate_caches()"
        )
    else:
        source = (
            "# A notebook from a site built on a computer, not published: the package comes from that build.\n"
            "import importlib.util\n"
            'if importlib.util.find_spec("attention_scaling") is None:\n'
            '    raise ModuleNotFoundError("attention_scaling is not installed: in the repository this notebook was built "\n'
            f'                              "from, run  python -m pip install _build/html/{wheel}")'
        )
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def numbered_cells(notebook: dict) -> dict:
    """The notebook with cell ids ``cell-0``, ``cell-1``, ...

    nbformat gives cells random ids; numbered ones keep two builds identical.
    """
    for number, cell in enumerate(notebook["cells"]):
        cell["id"] = f"cell-{number}"
    return notebook


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def self_contained(notebook: dict, first_cell: dict, page: str) -> dict:
    """The notebook as a reader downloads it: ordinary outputs, the package's glue, an install cell first.

    Raises
    ------
    ValueError
        If a code cell still uses myst_nb after the glue import is replaced:
        the downloaded notebook would not run without the site's build tools.
    """
    from attention_scaling.site.notebook import ordinary_output

    mystnb, package = GLUE_IMPORT
    glued = {}
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record is not None:
                prefix = record.get("mime_prefix", "")
                glued[record["name"]] = {key.removeprefix(prefix): value for key, value in output["data"].items()}
        source = re.sub(rf"^{re.escape(mystnb)}$", package, _source(cell), flags=re.MULTILINE)
        if re.search(r"\bmyst_nb\b", source):
            raise ValueError(
                f"{page}: code cell {number} uses myst_nb other than by {mystnb!r}; "
                "the downloaded notebook could not run without the site's build tools"
            )
        cell["source"] = source
        cell["outputs"] = [ordinary_output(output) for output in cell.get("outputs", [])]
    notebook["cells"].insert(0, first_cell)
    notebook["metadata"][GLUED] = glued
    return numbered_cells(notebook)


def write_download(app, doctree) -> None:
    """``doctree-read``: rewrite _build/jupyter_execute/PAGE.ipynb as the notebook a reader downloads."""
    import nbformat
    from jupyter_cache import get_cache

    config = app.env.mystnb_config
    target = Path(config.output_folder, *f"{app.env.docname}.ipynb".split("/"))
    if not target.is_file():
        return  # not a notebook page
    notebook = nbformat.read(target, as_version=4)
    if config.execution_mode == "cache":
        try:
            _, notebook = get_cache(config.execution_cache_path).merge_match_into_notebook(notebook)
        except KeyError:
            pass  # not executed (excluded, or execution off for this page): the outputs it has
    download = self_contained(json.loads(nbformat.writes(notebook)), install_cell(app.config.release, app.config.html_baseurl),
                              app.env.doc2path(app.env.docname))
    target.write_text(json.dumps(download, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@functools.cache
def _citations(bibfile: Path) -> dict[str, tuple[str, str]]:
    """Each entry of the bibliography: its authors as the site cites them ("Vaswani et al.") and its year."""
    import codecs

    import latexcodec  # noqa: F401 (registers the "ulatex" codec)
    from pybtex.database import parse_file

    def plain(name: str) -> str:
        return codecs.decode(name, "ulatex").replace("{", "").replace("}", "")

    citations = {}
    for key, entry in parse_file(str(bibfile)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [plain(" ".join(person.last_names)) for person in people]
        authors = last[0] if len(last) == 1 else " and ".join(last) if len(last) == 2 else f"{last[0]} et al."
        citations[key] = (authors or plain(entry.fields.get("organization", key)), entry.fields.get("year", ""))
    return citations


def references(app, glued: dict):
    """What a page's Markdown refers to, from the environment once every page is read and numbered."""
    from attention_scaling.site.notebook import References

    env = app.env
    labels = {label: title for label, (_, _, title) in env.get_domain("std").labels.items()}
    labels.update({label: cited for label, (_, _, cited) in numbered_labels(env).items()})
    documents = {name: title.astext() for name, title in env.titles.items()}
    bibfiles = [Path(app.confdir, name) for name in app.config.bibtex_bibfiles]
    citations = {key: value for bibfile in bibfiles for key, value in _citations(bibfile).items()}
    return References(labels, documents, citations, glued)


def plain_downloads(app, pagename: str, notebook: dict) -> dict[str, dict]:
    """The notebooks a reader downloads for a page: ``{"": instructor's, "-student": student's}`` (the second only
    when the page has solutions), their Markdown made plain; a problem is a warning naming the page."""
    from attention_scaling.site.notebook import plain_notebook

    glued = notebook["metadata"].pop(GLUED, {})
    refs = references(app, glued)
    editions = {}
    try:
        for suffix, solutions in (("", True), ("-student", False)):
            editions[suffix] = {**notebook, "cells": numbered_cells({"cells": plain_notebook(notebook["cells"], refs,
                                                                                            solutions=solutions)})["cells"]}
    except ValueError as error:  # a construct with no plain form: only this extension can say so
        logger.warning(f"the downloaded notebook: {error.args[0]}", location=pagename, type="notebooks")
        return {"": notebook}
    except KeyError as error:
        # A reference to nothing: Sphinx, myst-nb or sphinxcontrib-bibtex has already failed the strict
        # build on it, naming the line; a second warning would only repeat it.
        logger.info(f"the downloaded notebook keeps its MyST: {error.args[0]}", location=pagename)
        return {"": notebook}
    if editions["-student"]["cells"] == editions[""]["cells"]:
        del editions["-student"]
    return editions


def page_files(source: str, notebook: str | None, launch: dict[str, str], student: str | None = None) -> list[dict]:
    """What the sidebar offers for one page: ``{"label", "href", "download"}`` each, in order.

    Parameters
    ----------
    source : str
        The URL of the page's MyST source, or "" when it has none.
    notebook : str or None
        The URL of its downloadable notebook, or None when it is not executable.
    student : str or None
        The URL of its student's notebook, without the solutions, or None when the page has none.
    launch : dict
        Service name to URL (:func:`provenance.launch_links`); used only with a notebook.

    Examples
    --------
    >>> [f["label"] for f in page_files("_sources/a.md", "_sources/a.ipynb", {"Binder": "https://b", "Colab": "https://c"})]
    ['Source (.md)', 'Notebook (.ipynb)', 'Run on Binder', 'Run on Colab']
    >>> page_files("_sources/a.md", None, {"Binder": "https://b"})
    [{'label': 'Source (.md)', 'href': '_sources/a.md', 'download': True}]
    """
    files = [{"label": "Source (.md)", "href": source, "download": True}] if source else []
    if notebook:
        files.append({"label": "Notebook (.ipynb)", "href": notebook, "download": True})
        if student:
            files.append({"label": "Student's notebook (.ipynb)", "href": student, "download": True})
        files += [{"label": f"Run on {name}", "href": url, "download": False} for name, url in launch.items()]
    return files


def offer_files(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context``: copy the page's notebook into ``_sources`` and list the page's files for the sidebar."""
    download = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    notebook = student = None
    if download.is_file():
        editions = plain_downloads(app, pagename, json.loads(download.read_text(encoding="utf-8")))
        for suffix, edition in editions.items():
            target = Path(app.outdir) / "_sources" / f"{pagename}{suffix}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(edition, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        notebook = context["pathto"](f"_sources/{pagename}.ipynb", 1)
        if "-student" in editions:
            student = context["pathto"](f"_sources/{pagename}-student.ipynb", 1)
    has_source = context.get("has_source") and context.get("sourcename")
    source = context["pathto"](f"_sources/{context['sourcename']}", 1) if has_source else ""
    launch = provenance.launch_links(provenance.repository_url(), f"{pagename}.ipynb")
    context["page_files"] = page_files(source, notebook, launch, student)


def setup(app):
    app.setup_extension("myst_nb")
    app.connect("doctree-read", write_download)
    app.connect("html-page-context", offer_files)
    return {"version": "3", "parallel_read_safe": True, "parallel_write_safe": True}
