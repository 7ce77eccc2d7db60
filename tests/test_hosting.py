"""The site as a host builds it: the base URL from the environment, and what follows from it.

docs/_ext/hosting.py takes the published address from ``SITE_URL``, Read the
Docs' ``READTHEDOCS_CANONICAL_URL`` or GitHub's ``GITHUB_REPOSITORY``. The
browser tests (tests/test_browser.py) check this checkout's build, which
usually has no address; the build test below builds a copy with one, and
checks every page's absolute ``og:url`` and ``og:image``, the preview image,
``sitemap.xml`` and the 404 page's links under the address's path.

The same copy is built as GitHub Actions would build it for a custom
domain (``SITE_URL`` and ``GITHUB_REPOSITORY`` both set): the address from
``SITE_URL``, and the repository from GitHub's variables, for the launch
buttons that open a page's notebook on Binder and Colab. One build serves
both, and this checkout's build (which names no repository) shows none.
"""

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hosting_checks
import sitebuild

import hosting  # noqa: E402

# A project site on a host that serves it below the domain's root, as GitHub
# Pages and Read the Docs do: the 404 page must link under /why-sqrt-dk/.
SITE_URL = "https://course.example.org/why-sqrt-dk/"


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({"READTHEDOCS_CANONICAL_URL": "https://whysqrtdk.readthedocs.io/en/latest/"},
         "https://whysqrtdk.readthedocs.io/en/latest/"),
        ({"GITHUB_REPOSITORY": "Course-Org/why-sqrt-dk", "GITHUB_REPOSITORY_OWNER": "Course-Org"},
         "https://course-org.github.io/why-sqrt-dk/"),
        ({"GITHUB_REPOSITORY": "Ada/ada.github.io"}, "https://ada.github.io/"),
        # SITE_URL (a custom domain) wins over what the CI says, and gains its final slash.
        ({"SITE_URL": "https://attention.example.org", "GITHUB_REPOSITORY": "a/b"}, "https://attention.example.org/"),
        ({}, ""),
    ],
)
def test_site_url_comes_from_the_environment(environ, expected):
    assert hosting.site_url(environ) == expected


def test_html_baseurl_given_to_sphinx_wins():
    assert hosting.site_url({"SITE_URL": "https://a.org/"}, "https://b.org/docs") == "https://b.org/docs/"


@pytest.mark.parametrize("url", ["course.example.org/why", "/why-sqrt-dk/", "ftp://example.org/"])
def test_a_site_url_that_is_not_absolute_is_refused(url):
    with pytest.raises(ValueError, match="must be absolute"):
        hosting.site_url({"SITE_URL": url})


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


ON_GITHUB = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "Owner/why-sqrt-dk"}


@pytest.fixture(scope="module")
def hosted(tmp_path_factory):
    """A seeded copy built with an address (``SITE_URL``) and on GitHub (``ON_GITHUB``): its ``_build/html``."""
    site = sitebuild.copy_repository(tmp_path_factory.mktemp("hosted") / "site", seed_cache=True)
    build = sitebuild.make(site, env={"SITE_URL": SITE_URL, "READTHEDOCS_CANONICAL_URL": None, **ON_GITHUB})
    assert build.returncode == 0, build.tail
    return site / "_build" / "html"


def test_a_build_with_a_base_url_has_absolute_metadata_a_preview_a_sitemap_and_a_rooted_404(hosted):
    html = hosted
    site = html.parents[1]
    assert hosting_checks.base_url(html) == SITE_URL
    pages = hosting_checks.source_pages(site)
    problems = [
        problem
        for name in pages
        for problem in hosting_checks.metadata_problems(hosting_checks.page_head(html / name), name, SITE_URL, html)
    ]
    problems += hosting_checks.sitemap_problems(html, SITE_URL, pages)
    assert not problems, "\n".join(problems)
    assert _png_size(html / hosting.PREVIEW_IMAGE)[0] >= 600, "og:image is narrower than a large card needs"
    not_found = (html / "404.html").read_text(encoding="utf-8")
    assert 'href="/why-sqrt-dk/_static/' in not_found, "the 404 page's styles are not rooted at the site's path"
    assert 'href="_static/' not in not_found, "the 404 page has relative links"


def _small_site(tmp_path: Path, page: str) -> Path:
    """A one-page Sphinx project that uses the hosting extension, in ``tmp_path``."""
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(sitebuild.REPO / 'docs' / '_ext')!r})\n"
        "extensions = ['myst_parser', 'hosting']\nproject = 'Small'\nogp_social_cards = {'enable': False}\n"
    )
    (tmp_path / "index.md").write_text(page)
    return tmp_path


def _sphinx(source: Path, env: dict) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("SITE_URL", "READTHEDOCS_CANONICAL_URL", "GITHUB_REPOSITORY")}
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(source), str(source / "_out")],
                          env={**environment, **env}, capture_output=True, text=True, timeout=300)


def test_a_page_without_a_description_fails_the_strict_build(tmp_path):
    result = _sphinx(_small_site(tmp_path, "# Title\n\nText.\n"), {})
    assert result.returncode != 0
    assert "index has no description" in result.stderr


def test_without_a_base_url_no_url_is_made_up(tmp_path):
    result = _sphinx(_small_site(tmp_path, '---\ndescription: "One sentence."\n---\n# Title\n\nText.\n'), {})
    assert result.returncode == 0, result.stderr
    html = tmp_path / "_out"
    assert hosting_checks.base_url(html) == ""
    assert hosting_checks.sitemap_problems(html, "", ["index.html"]) == []
    head = hosting_checks.page_head(html / "index.html")
    assert head.one("description") == head.one("og:description") == "One sentence."
    assert head.one("og:url") is None and head.one("og:image") is None and head.one("twitter:card") == "summary"
    assert 'href="/_static/' in (html / "404.html").read_text(encoding="utf-8")


# -- launch buttons -----------------------------------------------------------------------------------

# Run in a process of its own: the browser tests' session already drives Playwright's
# synchronous API, which refuses a second instance in the same process.
LAUNCH_LINKS = textwrap.dedent("""
    import json, re, sys
    from playwright.sync_api import sync_playwright

    off_site = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.route(re.compile(r"^https?://"), lambda route: (off_site.append(route.request.url), route.abort()))
        page.goto(sys.argv[1], wait_until="load")
        links = page.eval_on_selector_all(
            ".dropdown-launch-buttons a", "links => links.map(a => [a.textContent.trim(), a.href])")
        browser.close()
    print(json.dumps({"links": dict(links), "off_site": off_site}))
""")


def launch_links(page_url: str) -> tuple[dict[str, str], list[str]]:
    """The launch buttons' links on a page opened in Chromium, and every off-site request it made."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    ran = subprocess.run([sys.executable, "-c", LAUNCH_LINKS, page_url], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    found = json.loads(ran.stdout)
    return found["links"], found["off_site"]


def test_launch_buttons_open_the_built_notebook_on_binder_and_colab(hosted):
    links, off_site = launch_links((hosted / "saturation.html").as_uri())
    assert off_site == []  # nothing is fetched until a reader clicks
    assert links == {
        "Binder": "https://mybinder.org/v2/gh/Owner/why-sqrt-dk/notebooks?urlpath=lab/tree/saturation.ipynb",
        "Colab": "https://colab.research.google.com/github/Owner/why-sqrt-dk/blob/notebooks/saturation.ipynb",
    }
    # The notebooks branch holds what the page offers for download.
    assert (hosted / "_sources" / "saturation.ipynb").is_file()


def test_a_build_that_cannot_name_its_repository_has_no_launch_buttons(repo_html):
    if any(os.environ.get(name) for name in ("GITHUB_REPOSITORY", "READTHEDOCS_GIT_CLONE_URL")):
        pytest.skip("this build was made where CI names the repository")
    links, off_site = launch_links((repo_html / "saturation.html").as_uri())
    assert links == {} and off_site == []
