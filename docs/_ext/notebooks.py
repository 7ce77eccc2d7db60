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
- a first cell installs the package at the version the page was built from,
  unless it is importable already;
- cells are numbered ``cell-0``, ``cell-1``, ... (nbformat's random ids would
  make two builds differ).

At ``html-page-context`` the file is copied into ``_sources``, and the page's
files are listed for the sidebar (``docs/_templates/page-files.html``): its
MyST source (``.md``), its notebook (``.ipynb``), and, when the repository is
known and on GitHub, links that open the notebook on Binder and Colab
(:func:`page_files`).
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path

import provenance

__all__ = [
    "GLUE_IMPORT",
    "install_cell",
    "install_requirement",
    "numbered_cells",
    "offer_files",
    "page_files",
    "self_contained",
    "setup",
    "write_download",
]

#: What a page writes to glue, and what the downloaded notebook imports instead.
GLUE_IMPORT = ("from myst_nb import glue", "from attention_scaling.site.notebook import glue")


def install_requirement(release: str, commit: str, repository: str, release_tag: bool) -> tuple[str, str]:
    """What pip installs in a downloaded notebook, and how its comment says where it comes from.

    The release from the package index when the site was built from a release
    tag, or when the repository is unknown (a local build); otherwise the
    repository at the built commit, which is the only place that commit can
    be had before it is released.

    Examples
    --------
    >>> install_requirement("0.1.0", "", "", False)
    ('attention-scaling==0.1.0', 'release 0.1.0 from the package index')
    >>> install_requirement("0.1.0", "0123abcd", "https://github.com/o/r", False)[0]
    'attention-scaling @ git+https://github.com/o/r@0123abcd'
    """
    if release_tag or not (repository and commit):
        return f"attention-scaling=={release}", f"release {release} from the package index"
    return f"attention-scaling @ git+{repository}@{commit}", f"commit {commit[:7]} of {repository}"


def install_cell(requirement: str, origin: str) -> dict:
    """The first code cell of a downloaded notebook: install the package unless it is importable."""
    source = (
        f"# Installs attention-scaling ({origin}, as this page was built) unless it is already importable.\n"
        "import importlib, importlib.util, subprocess, sys\n"
        'if importlib.util.find_spec("attention_scaling") is None:\n'
        f'    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "{requirement}"], check=True)\n'
        "    importlib.invalidate_caches()"
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
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = re.sub(rf"^{re.escape(mystnb)}$", package, _source(cell), flags=re.MULTILINE)
        if re.search(r"\bmyst_nb\b", source):
            raise ValueError(
                f"{page}: code cell {number} uses myst_nb other than by {mystnb!r}; "
                "the downloaded notebook could not run without the site's build tools"
            )
        cell["source"] = source
        cell["outputs"] = [ordinary_output(output) for output in cell.get("outputs", [])]
    notebook["cells"].insert(0, first_cell)
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
    requirement, origin = _requirement(app.confdir, app.config.release)
    download = self_contained(json.loads(nbformat.writes(notebook)), install_cell(requirement, origin),
                              app.env.doc2path(app.env.docname))
    target.write_text(json.dumps(download, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def page_files(source: str, notebook: str | None, launch: dict[str, str]) -> list[dict]:
    """What the sidebar offers for one page: ``{"label", "href", "download"}`` each, in order.

    Parameters
    ----------
    source : str
        The URL of the page's MyST source, or "" when it has none.
    notebook : str or None
        The URL of its downloadable notebook, or None when it is not executable.
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
        files += [{"label": f"Run on {name}", "href": url, "download": False} for name, url in launch.items()]
    return files


def offer_files(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context``: copy the page's notebook into ``_sources`` and list the page's files for the sidebar."""
    download = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    notebook = None
    if download.is_file():
        target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(download, target)
        notebook = context["pathto"](f"_sources/{pagename}.ipynb", 1)
    has_source = context.get("has_source") and context.get("sourcename")
    source = context["pathto"](f"_sources/{context['sourcename']}", 1) if has_source else ""
    launch = provenance.launch_links(provenance.repository_url(), f"{pagename}.ipynb")
    context["page_files"] = page_files(source, notebook, launch)


@functools.cache
def _requirement(confdir: str, release: str) -> tuple[str, str]:
    """What the install cells install: from the release, and what git and CI say was built."""
    commit = provenance.commit(Path(confdir), short=False)
    return install_requirement(release, commit, provenance.repository_url(), provenance.from_release_tag())


def setup(app):
    app.setup_extension("myst_nb")
    app.connect("doctree-read", write_download)
    app.connect("html-page-context", offer_files)
    return {"version": "3", "parallel_read_safe": True, "parallel_write_safe": True}
