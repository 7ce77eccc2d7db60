"""What the site was built from, for the footer of every page (so a citation can name it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["built_from", "commit"]


def commit(root: Path) -> str:
    """The short hash of the commit checked out at ``root``, or "" outside a git checkout."""
    if not (Path(root) / ".git").exists():
        return ""
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else ""


def built_from(root: Path, release: str) -> str:
    """``"version 0.1.0, commit abc1234"``, or ``"version 0.1.0"`` outside a git checkout."""
    hash_ = commit(root)
    return f"version {release}" + (f", commit {hash_}" if hash_ else "")
