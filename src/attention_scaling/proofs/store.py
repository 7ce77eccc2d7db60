"""Registered results kept on disk between processes, keyed by the source of the package that made them.

A registered proof is a pure function of the package's code and of SymPy:
the same source and the same SymPy give the same steps. The pages of one
build, its doctests, ``make check`` and ``python -m attention_scaling prove``
each ran the same proofs again in processes of their own; with a store they
run once per source. The store is on only where the environment variable
``ATTENTION_SCALING_PROOF_STORE`` names a directory (the Makefile sets it to
``_build/proof-store``). Each result is kept under a digest of every Python
file of the package as imported, SymPy's version and Python's, so an edit
anywhere in the package (or an upgrade) starts afresh; nothing is ever
computed by hand, and a failure (``ProofError``) is never kept.

Only functions of the package itself are kept, and only by a process whose
code is that source: a test that patches the code runs with the store
switched off (``tests/proof_memory.py``), and the test session only reads it.

Examples
--------
>>> import tempfile
>>> from attention_scaling.proofs import scaled_variance
>>> with tempfile.TemporaryDirectory() as tmp:
...     store = Store(Path(tmp))
...     key = store.key(scaled_variance, (), {})
...     before = store.load(key)
...     kept = store.save(key, scaled_variance())
...     (before, kept, store.load(key) == scaled_variance(), len(list(Path(tmp).rglob("*.pickle"))))
(None, True, True, 1)
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import sympy

__all__ = ["ENVIRONMENT", "Store", "run_stored", "source_digest", "store_from_environment"]

#: The environment variable that names the store's directory; unset or empty, there is no store.
ENVIRONMENT = "ATTENTION_SCALING_PROOF_STORE"
_PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def source_digest(package: Path = _PACKAGE) -> str:
    """A digest of every Python file of ``package`` (paths and bytes), SymPy's version and Python's.

    Examples
    --------
    >>> len(source_digest()), source_digest() == source_digest()
    (20, True)
    """
    digest = hashlib.sha256(f"sympy {sympy.__version__}; python {sys.version_info[:2]}".encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(b"\0" + path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:20]


class Store:
    """Results of the package's registered functions, as pickles in ``directory / source_digest()``.

    ``writable=False`` reads what others kept and keeps nothing.
    """

    def __init__(self, directory: Path, writable: bool = True):
        self.directory = Path(directory) / source_digest()
        self.writable = writable

    @staticmethod
    def key(function: Callable, args: tuple, kwargs: dict) -> str | None:
        """The file name of one call, or None for a function that is not the package's own."""
        if not function.__module__.startswith("attention_scaling."):
            return None
        call = f"{function.__module__}.{function.__qualname__}{args!r}{sorted(kwargs.items())!r}"
        return hashlib.sha256(call.encode()).hexdigest()[:24] + ".pickle"

    def load(self, key: str):
        """The result kept under ``key``, or None if there is none (or it cannot be read)."""
        try:
            return pickle.loads((self.directory / key).read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError):
            return None

    def save(self, key: str, result) -> bool:
        """Keep ``result`` under ``key`` if it reads back equal to itself; return whether it was kept.

        SymPy pickles an expression as its class and arguments, and reading
        it back evaluates them: a square held unevaluated as
        :math:`(d s)^2` comes back as :math:`d^2 s^2`, and a page would
        display another statement than the proof made. Such a result is not
        kept (it runs in each process, as without a store). A kept result is
        written whole to a temporary file, then renamed, so a reader never sees half of it.

        Examples
        --------
        >>> import tempfile, sympy as sp
        >>> d, s = sp.symbols("d s", positive=True)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = Store(Path(tmp))
        ...     store.save("evaluated.pickle", (d * s) ** 2), store.save("held.pickle", sp.Pow(d * s, 2, evaluate=False))
        (True, False)
        """
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        if not self.writable or pickle.loads(data) != result:
            return False
        self.directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self.directory, suffix=".part", delete=False) as file:
            file.write(data)
        os.replace(file.name, self.directory / key)
        return True


#: False in a process that must only read the store (the test session: tests/conftest.py).
WRITABLE = True


def store_from_environment() -> Store | None:
    """The store that ``ATTENTION_SCALING_PROOF_STORE`` names, or None when it is unset or empty.

    Examples
    --------
    >>> import os
    >>> os.environ.get(ENVIRONMENT) is None or isinstance(store_from_environment(), Store)
    True
    """
    directory = os.environ.get(ENVIRONMENT, "")
    return Store(Path(directory), WRITABLE) if directory else None


def run_stored(function: Callable, args: tuple, kwargs: dict):
    """``function(*args, **kwargs)``, from the store when it holds the call, and kept there when it did not.

    Without a store (or for a function that is not the package's own) the call simply runs.
    """
    store = store_from_environment()
    key = store.key(function, args, kwargs) if store else None
    if key is None:
        return function(*args, **kwargs)
    result = store.load(key)
    if result is None:
        result = function(*args, **kwargs)
        store.save(key, result)
    return result
