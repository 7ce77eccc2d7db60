"""The project's URLs, which depend on where it is built; everything else is in pyproject.toml.

A release is built by .github/workflows/release.yml on GitHub Actions, which
names the repository (GITHUB_SERVER_URL, GITHUB_REPOSITORY); the site it
publishes with GitHub Pages is at https://OWNER.github.io/NAME/. Nothing in the
repository itself records where it is hosted, so a build elsewhere lists no
URLs rather than wrong ones.
"""

import os

from setuptools import setup


def project_urls(environ=os.environ):
    repository = environ.get("GITHUB_REPOSITORY", "")
    if "/" not in repository:
        return {}
    owner, name = repository.split("/", 1)
    source = f"{environ.get('GITHUB_SERVER_URL', 'https://github.com').rstrip('/')}/{repository}"
    return {
        "Documentation": f"https://{owner.lower()}.github.io/{name}/",
        "Source": source,
        "Issues": f"{source}/issues",
        "Changelog": f"{source}/releases",
    }


setup(project_urls=project_urls())
