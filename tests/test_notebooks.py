"""The notebooks a reader downloads, and the package as a distribution.

Every executable page offers its executed notebook (``_sources/PAGE.ipynb``).
A student opens it outside this repository, so it must show every figure and
number the page shows as ordinary outputs, import nothing but the package and
what the package declares, and install the package itself when it is missing.

The last test builds the wheel, installs it into a fresh virtual environment
outside the repository and runs the proofs and two downloaded notebooks there,
with no network (the kernel runs in a network namespace of its own).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from myst_nb.core.read import is_myst_markdown_notebook

import sitebuild
from attention_scaling.site.notebook import glued_text
from page_sources import page_source

REPO = Path(__file__).resolve().parents[1]
# The two notebooks the issue names, and the ones a course hands out first.
RUN_OFFLINE = ("saturation", "dot-product-variance")


def downloads(html: Path, student: bool = False) -> dict[str, dict]:
    """The downloadable notebooks by page: the instructor's, or the student's (of the pages with solutions)."""
    found = sorted((html / "_sources").glob("*.ipynb"))
    if student:
        return {path.stem.removesuffix("-student"): json.loads(path.read_text(encoding="utf-8"))
                for path in found if path.stem.endswith("-student")}
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in found if not path.stem.endswith("-student")}


def markdown(notebook: dict) -> str:
    return "\n\n".join(cell["source"] for cell in notebook["cells"] if cell["cell_type"] == "markdown")


def outputs(notebook: dict) -> list[dict]:
    return [output for cell in notebook["cells"] if cell["cell_type"] == "code" for output in cell["outputs"]]


def glued(page: str) -> dict[str, dict]:
    """What the page glued, by name, as myst-nb recorded it for the prose: MIME type to data."""
    record = REPO / "_build" / "jupyter_execute" / f"{page}.glue.json"
    values = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    return {name: output["data"] for name, output in values.items()}


def shown_figures(html: Path, page: str) -> int:
    """How many PNG figures the HTML page shows."""
    return len(re.findall(r'<img [^>]*src="_images/[^"]+\.png"', (html / f"{page}.html").read_text(encoding="utf-8")))


def test_every_executable_page_offers_its_notebook(repo_html):
    # A notebook as myst-nb decides from the front matter (the Contributing page shows one in an example).
    pages = {path.stem for path in (REPO / "docs").glob("*.md") if is_myst_markdown_notebook(path.read_text())}
    assert pages and set(downloads(repo_html)) == pages


def test_every_page_offers_its_source_and_notebook_in_the_sidebar(repo_html):
    # docs/_templates/page-files.html lists what docs/_ext/notebooks.py found: each link is to a file the site serves,
    # and an executable page offers its notebook as well as its source.
    for source in sorted((REPO / "docs").glob("*.md")):
        page = (repo_html / f"{source.stem}.html").read_text(encoding="utf-8")
        links = dict((text, href) for href, text in re.findall(r'<a class="download-link" href="([^"]+)" download>([^<]+)</a>', page))
        expected = {"Source (.md)": f"_sources/{source.name}"}
        if is_myst_markdown_notebook(source.read_text(encoding="utf-8")):
            expected["Notebook (.ipynb)"] = f"_sources/{source.stem}.ipynb"
            if "{solution-start}" in page_source(source):
                expected["Student's notebook (.ipynb)"] = f"_sources/{source.stem}-student.ipynb"
        assert links == expected, (source.name, links)
        assert all((repo_html / href).is_file() for href in links.values()), (source.name, links)
    assert (repo_html / "_sources" / "saturation.md").read_bytes() == (REPO / "docs" / "saturation.md").read_bytes()


def test_a_downloaded_notebook_shows_every_number_and_figure_its_page_shows(repo_html):
    for page, notebook in downloads(repo_html).items():
        shown = outputs(notebook)
        bundles = [output.get("data", {}) for output in shown]
        missing = [name for name, bundle in glued(page).items()
                   if (bundle if set(bundle) != {"text/plain"} else {"text/plain": f"{name} = {bundle['text/plain']}"})
                   not in bundles]
        assert not missing, f"{page}: glued values not shown as outputs: {missing[:5]}"
        images = [output for output in shown if "image/png" in output.get("data", {})]
        assert len(images) >= shown_figures(repo_html, page), f"{page}: fewer image outputs than figures"
        assert all(not any(key.startswith("application/papermill") for key in output.get("data", {}))
                   for output in shown), f"{page}: an output is still hidden from notebook viewers"


def test_a_downloaded_notebooks_markdown_is_plain_jupyter_markdown_with_the_pages_values(repo_html):
    # Jupyter and Colab show MyST as source: no role, directive, label or comment may be left, and every
    # {glue:text} of the page is written in as the text the page shows.
    for student in (False, True):
        for page, notebook in downloads(repo_html, student).items():
            text = markdown(notebook)
            left = re.findall(r"\{[\w:.-]+\}`|^[`:]{3,}\{|^\([\w.:-]+\)=$|^%", text, re.M)
            # The Contributing page shows MyST as examples, in code blocks: those stay.
            left = [found for found in left if page != "contributing"]
            assert not left, f"{page}{'-student' if student else ''}: MyST left in the Markdown: {left[:5]}"
            values = glued(page)
            for key, spec in re.findall(r"\{glue:text\}`([^`:]+):?([^`]*)`", page_source(REPO / "docs" / f"{page}.md")):
                shown = glued_text(values[key]["text/plain"], spec)
                assert student or shown in text, f"{page}: {key} is not written in as {shown!r}"


def test_the_students_notebook_leaves_out_every_solution_and_only_them(repo_html):
    students = downloads(repo_html, student=True)
    pages = {page.stem for page in (REPO / "docs").glob("*.md") if "{solution-start}" in page_source(page)}
    assert set(students) == pages
    for page, student in students.items():
        instructor = downloads(repo_html)[page]
        solutions = markdown(instructor).count("**Solution to Exercise ")
        assert solutions == page_source(REPO / "docs" / f"{page}.md").count("{solution-start}"), page
        assert "Solution to" not in markdown(student), page
        exercises = markdown(instructor).count("> **Exercise ")
        assert exercises and markdown(student).count("> **Exercise ") == exercises, page


def test_a_downloaded_notebook_names_the_wheel_the_site_publishes_and_needs_no_build_tool(repo_html):
    # This checkout's site is built without an address (a laptop's build): its notebooks say which of the
    # site's files to install; a hosted build's install it from the address (tests/test_clean_builds.py).
    wheels = sorted(path.name for path in (repo_html / "dist").glob("*.whl"))
    assert wheels == [f"attention_scaling-{metadata.version('attention-scaling')}-py3-none-any.whl"]
    for student in (False, True):
        for page, notebook in downloads(repo_html, student).items():
            first = notebook["cells"][0]
            assert first["cell_type"] == "code" and f"install _build/html/dist/{wheels[0]}" in first["source"], page
            assert "myst_nb" not in json.dumps(notebook), page


# -- the package as a distribution ------------------------------------------------------------------


def build_distribution(out: Path) -> dict:
    """Build the sdist and the wheel of this checkout into ``out`` (no network: no isolation); return them by suffix.

    They are built from a copy of the checkout: setuptools writes its
    egg-info and a release tree into the directory it builds, so two builds
    of one checkout at once (make check beside make test) broke each other
    ("No such file or directory: 'attention_scaling-0.1.0/src/...'").
    """
    source = sitebuild.copy_repository(out / "checkout")
    # As on GitHub Actions, where the release workflow builds: setup.py takes the URLs from there.
    environment = os.environ | {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "Owner/why-sqrt-dk"}
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out / "dist"), str(source)],
                           capture_output=True, text=True, env=environment)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    found = out / "dist"
    return {path.suffix: path for path in found.iterdir()} | {"sdist": next(found.glob("*.tar.gz"))}


def _checkout_files() -> dict[str, int]:
    """Every file of the checkout but its build products, environment and history, with its modification time."""
    skipped = {"_build", ".venv", ".git", "__pycache__", ".pytest_cache", ".hypothesis"}
    found = {}
    for directory, subdirectories, names in os.walk(REPO):
        subdirectories[:] = [name for name in subdirectories if name not in skipped]  # not walked at all
        for path in (Path(directory, name) for name in names):
            if path.is_file():
                found[str(path.relative_to(REPO))] = path.stat().st_mtime_ns
    return found


@pytest.fixture(scope="module")
def distribution(tmp_path_factory):
    """The sdist and the wheel of this checkout (:func:`build_distribution`), and the checkout's files it changed."""
    before = _checkout_files()
    built = build_distribution(tmp_path_factory.mktemp("dist"))
    after = _checkout_files()
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    return built | {"checkout_changed": changed}


def test_building_the_distribution_writes_nothing_into_the_checkout(distribution):
    assert not distribution["checkout_changed"], \
        f"building the distribution wrote into the checkout: {distribution['checkout_changed'][:5]}"


def test_the_wheel_carries_complete_metadata(distribution):
    with zipfile.ZipFile(distribution[".whl"]) as wheel:
        name = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
        text = wheel.read(name).decode()
        listed = wheel.namelist()
    headers = Parser().parsestr(text)
    assert headers["Name"] == "attention-scaling" and headers["License-Expression"] == "MIT"
    assert any(entry.endswith("licenses/LICENSE") for entry in listed)
    urls = dict(url.split(", ", 1) for url in headers.get_all("Project-URL"))
    assert urls["Documentation"] == "https://owner.github.io/why-sqrt-dk/"
    assert urls["Source"] == "https://github.com/Owner/why-sqrt-dk"
    assert urls["Issues"] == "https://github.com/Owner/why-sqrt-dk/issues"
    assert any(value.startswith("Programming Language :: Python :: 3.11") for value in headers.get_all("Classifier"))
    assert {re.split(r"[<>=! ;]", value)[0] for value in headers.get_all("Requires-Dist") if "extra ==" not in value} \
        == {"numpy", "sympy", "gmpy2", "matplotlib"}
    assert "attention_scaling/site/notebook.py" in listed
    with tarfile.open(distribution["sdist"]) as sdist:
        names = {Path(name).relative_to(Path(name).parts[0]).as_posix() for name in sdist.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "setup.py", "src/attention_scaling/__init__.py"} <= names


def closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` need, their requirements followed without extras."""
    from packaging.requirements import Requirement

    seen, todo = set(), list(names)
    while todo:
        dist = metadata.distribution(todo.pop())
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def expose(dists: set[str], folder: Path) -> None:
    """Link the top-level files of the installed ``dists`` into ``folder``, and nothing else of this environment."""
    folder.mkdir()
    for name in dists:
        dist = metadata.distribution(name)
        for top in {Path(str(file)).parts[0] for file in dist.files or [] if not str(file).startswith("..")}:
            source = Path(dist.locate_file(top))
            if source.exists() and not (folder / top).exists() and top != "__pycache__":
                (folder / top).symlink_to(source)


@pytest.fixture(scope="module")
def fresh_venv(distribution, tmp_path_factory):
    """A virtual environment outside the repository with the wheel installed by pip, offline.

    The wheel's own dependencies, and the kernel and notebook runner, come from
    this environment: linked into a folder on the new one's path, the
    requirements followed from the installed metadata, so that nothing else of
    the build environment (Sphinx, myst-nb, scipy, this checkout) is importable.
    """
    root = tmp_path_factory.mktemp("student")
    venv = root / "venv"
    # Without a pip of its own (ensurepip takes seconds): this environment's pip installs into it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # Without PYTHONPATH: where it names this checkout's src (the build tests' copies and make bench set it), pip
    # would find the package already installed and leave the new environment without it.
    outside = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--no-deps",
                              "--quiet", "--disable-pip-version-check", str(distribution[".whl"])],
                             capture_output=True, text=True, env=outside)
    assert install.returncode == 0, install.stderr
    needed = closure(["numpy", "sympy", "gmpy2", "matplotlib", "nbclient", "ipykernel", "nbformat"])
    assert not needed & {"sphinx", "myst-nb", "scipy", "attention-scaling"}, needed
    expose(needed, root / "dependencies")
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "dependencies.pth").write_text(f"{root / 'dependencies'}\n")
    return python, root


def offline(command: list[str]) -> list[str]:
    """``command`` in a network namespace of its own: loopback only, so the kernel can talk to its client."""
    return ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "offline", *command]


@pytest.fixture(scope="module")
def can_go_offline():
    probe = subprocess.run(offline(["true"]), capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here (unshare --net): {probe.stderr.strip()}")


RUN = textwrap.dedent("""
    import json, sys
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(sys.argv[1], as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
    images = sum("image/png" in output.get("data", {}) for cell in notebook.cells for output in cell.get("outputs", []))
    errors = [output for cell in notebook.cells for output in cell.get("outputs", []) if output.output_type == "error"]
    print(json.dumps({"images": images, "errors": len(errors)}))
""")


def test_the_wheel_proves_and_runs_downloaded_notebooks_offline(repo_html, fresh_venv, can_go_offline):
    python, root = fresh_venv
    environment = {"PATH": os.environ["PATH"], "HOME": str(root), "MPLBACKEND": "Agg"}
    where = subprocess.run([str(python), "-c", "import attention_scaling; print(attention_scaling.__file__)"],
                           capture_output=True, text=True, cwd=root, env=environment)
    assert where.stdout.startswith(str(root)), where  # the installed wheel, not this checkout
    proved = subprocess.run(offline([str(python), "-m", "attention_scaling", "prove"]),
                            capture_output=True, text=True, cwd=root, env=environment)
    assert proved.returncode == 0 and re.search(r"(\d+) of \1 registered results hold", proved.stdout), proved.stdout
    (root / "run.py").write_text(RUN)
    # Each in the instructor's and the student's edition: no cell may need what a solution left out defined.
    for page, student in [(page, student) for page in RUN_OFFLINE for student in (False, True)]:
        name = f"{page}-student" if student else page
        notebook = root / f"{name}.ipynb"
        shutil.copyfile(repo_html / "_sources" / f"{name}.ipynb", notebook)
        ran = subprocess.run(offline([str(python), "run.py", str(notebook), str(root)]),
                             capture_output=True, text=True, cwd=root, env=environment)
        assert ran.returncode == 0, ran.stderr[-4000:]
        result = json.loads(ran.stdout.strip().splitlines()[-1])
        stored = sum("image/png" in output.get("data", {}) for output in outputs(downloads(repo_html, student)[page]))
        assert result == {"images": stored, "errors": 0}, (name, result)
        assert result["images"] >= shown_figures(repo_html, page)
        if page == "saturation":  # a page with figures, so that the count above means something
            assert result["images"] >= 4


def test_a_notebook_that_needs_a_build_tool_fails_in_the_fresh_environment(fresh_venv, can_go_offline):
    # The planted fault: the glue import a page writes, left as it is.
    python, root = fresh_venv
    ran = subprocess.run(offline([str(python), "-c", "from myst_nb import glue"]), capture_output=True, text=True, cwd=root)
    assert ran.returncode != 0 and "No module named 'myst_nb'" in ran.stderr
