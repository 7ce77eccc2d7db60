"""The lock: every pinned package installs on the oldest Python the project supports.

`make lock` resolves with whatever Python runs it, so a pin can require a
newer patch release than a supported machine has: soupsieve 4.1.2 needs
Python 3.11.5, and Debian 12's Python 3.11.2 could not install the site.
"""

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]


def oldest_supported_python() -> str:
    """The lowest version pyproject.toml's requires-python admits, as X.Y.0."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    (major, minor), = re.findall(r">=\s*(\d+)\.(\d+)", requires)
    return f"{major}.{minor}.0"


def test_every_installed_pin_admits_the_oldest_supported_python():
    oldest = oldest_supported_python()
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M))
    refused = []
    for name in pins:
        try:
            requires = importlib.metadata.metadata(name).get("Requires-Python")
        except importlib.metadata.PackageNotFoundError:
            continue  # an extra this environment did not install (torch)
        if requires and oldest not in SpecifierSet(requires):
            refused.append(f"{name} {importlib.metadata.version(name)} (Requires-Python {requires})")
    assert not refused, (
        f"pinned in constraints.txt but not installable on Python {oldest}: {', '.join(refused)}; "
        "pin an older release there, or run make lock with that Python (Contributing, 'How the build works', Dependencies)"
    )
