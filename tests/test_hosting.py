"""The site as a host builds it: the base URL from the environment, and what follows from it.

docs/_ext/hosting.py takes the published address from ``SITE_URL``, Read the
Docs' ``READTHEDOCS_CANONICAL_URL`` or GitHub's ``GITHUB_REPOSITORY``. The
tests here check that choice, and build one-page projects to check a page
without a description and a build without an address. The whole site built
with an address and a repository (``hosting_checks.HOSTED``) is checked in
tests/test_clean_builds.py, whose clean builds are made that way: every
page's absolute ``og:url`` and ``og:image``, the preview image,
``sitemap.xml``, the 404 page's links under the address's path, and the
links that open a page's notebook on Binder and Colab. This
checkout's build, which names no repository, shows no launch link.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hosting_checks
import sitebuild

import hosting  # noqa: E402


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


# -- launch links -----------------------------------------------------------------------------------

def test_a_build_that_cannot_name_its_repository_has_no_launch_links(repo_html):
    if any(os.environ.get(name) for name in ("GITHUB_REPOSITORY", "READTHEDOCS_GIT_CLONE_URL")):
        pytest.skip("this build was made where CI names the repository")
    links, off_site = hosting_checks.launch_links((repo_html / "saturation.html").as_uri())
    assert links == {} and off_site == []


# -- what a page was built from ----------------------------------------------------------------------

def test_every_page_says_in_its_footer_what_it_was_built_from(repo_html):
    import provenance

    import attention_scaling

    # The footer is printed with the page (docs/_static/print.css hides the sidebars, not it).
    stamp = f"Built from {provenance.built_from(sitebuild.REPO, attention_scaling.__version__)}"
    assert "commit" in stamp or not (sitebuild.REPO / ".git").exists(), stamp
    for page in sorted(repo_html.glob("*.html")):
        footer = page.read_text(encoding="utf-8").split("<footer>")[-1]
        assert stamp in footer, f"{page.name}: no {stamp!r} in its footer"
