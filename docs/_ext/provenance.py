"""What the site was built from: for the footer of every page (so a citation can
name it), for the install cell of every downloaded notebook, and for the links
that open a page's notebook on Binder and Colab (which need the repository's address)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

__all__ = ["NOTEBOOKS_BRANCH", "built_from", "commit", "from_release_tag", "launch_links", "repository_url"]

#: The branch on which .github/workflows/pages.yml publishes the downloadable notebooks.
NOTEBOOKS_BRANCH = "notebooks"


def commit(root: Path, *, short: bool = True) -> str:
    """The hash of the commit checked out at ``root`` (short by default), or "" outside a git checkout."""
    if not (Path(root) / ".git").exists():
        return ""
    command = ["git", "rev-parse", *(["--short"] if short else []), "HEAD"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else ""


def built_from(root: Path, release: str) -> str:
    """``"version 0.1.0, commit abc1234"``, or ``"version 0.1.0"`` outside a git checkout."""
    hash_ = commit(root)
    return f"version {release}" + (f", commit {hash_}" if hash_ else "")


def repository_url(environ: dict[str, str] | None = None) -> str:
    """The https address of the repository being built, as CI names it, or "" when nothing names it.

    GitHub Actions sets ``GITHUB_SERVER_URL`` and ``GITHUB_REPOSITORY``; Read
    the Docs sets ``READTHEDOCS_GIT_CLONE_URL`` (https or ssh, with or without
    ``.git``). A local build has neither: nothing is guessed.
    """
    environ = os.environ if environ is None else environ
    if environ.get("GITHUB_REPOSITORY"):
        server = environ.get("GITHUB_SERVER_URL") or "https://github.com"
        return f"{server.rstrip('/')}/{environ['GITHUB_REPOSITORY']}"
    clone = environ.get("READTHEDOCS_GIT_CLONE_URL", "")
    ssh = re.fullmatch(r"git@([^:]+):(.+)", clone)
    if ssh:
        clone = f"https://{ssh[1]}/{ssh[2]}"
    return clone.removesuffix(".git") if clone.startswith("https://") else ""


def from_release_tag(environ: dict[str, str] | None = None) -> bool:
    """Whether CI is building a tag (a release), on GitHub Actions or Read the Docs."""
    environ = os.environ if environ is None else environ
    return environ.get("GITHUB_REF_TYPE") == "tag" or environ.get("READTHEDOCS_VERSION_TYPE") == "tag"


def launch_links(repository: str, notebook: str) -> dict[str, str]:
    """Links that open ``notebook`` on Binder and on Colab, or none when the repository is not on GitHub.

    Colab and Binder open a notebook from a branch of a GitHub repository, and
    the pages are MyST Markdown, which neither runs; so the links open the
    downloadable notebook that the Pages workflow publishes at the root of
    the ``notebooks`` branch.

    Examples
    --------
    >>> launch_links("https://github.com/Owner/why-sqrt-dk", "saturation.ipynb")["Colab"]
    'https://colab.research.google.com/github/Owner/why-sqrt-dk/blob/notebooks/saturation.ipynb'
    >>> launch_links("https://github.com/Owner/why-sqrt-dk", "saturation.ipynb")["Binder"]
    'https://mybinder.org/v2/gh/Owner/why-sqrt-dk/notebooks?urlpath=lab/tree/saturation.ipynb'
    >>> launch_links("", "saturation.ipynb"), launch_links("https://gitlab.com/o/r", "saturation.ipynb")
    ({}, {})
    """
    prefix = "https://github.com/"
    if not repository.startswith(prefix):
        return {}  # both services open GitHub repositories only
    slug = repository.removeprefix(prefix).strip("/")
    return {
        "Binder": f"https://mybinder.org/v2/gh/{slug}/{NOTEBOOKS_BRANCH}?urlpath=lab/tree/{notebook}",
        "Colab": f"https://colab.research.google.com/github/{slug}/blob/{NOTEBOOKS_BRANCH}/{notebook}",
    }
