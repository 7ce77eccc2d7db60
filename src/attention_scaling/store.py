"""Results kept on disk between processes, keyed by the source of the package that made them.

Two kinds of result are pure functions of the package's code and of its
libraries: a registered proof (the same source and the same SymPy give the
same steps) and a page's seeded data (every ``*_data`` function, the data of
every figure in :data:`~attention_scaling.site.figures.FIGURES` and
:func:`~attention_scaling.site.evidence.evidence`: the same source, seeds and
NumPy give the same arrays). The pages of one build, its doctests,
``make check`` and ``python -m attention_scaling prove`` each computed them
again in processes of their own; with a store each is computed once per
source. The store is on only where the environment variable
``ATTENTION_SCALING_STORE`` names a directory (the Makefile sets it to
``_build/store``). Each result is kept under a digest of every Python file of
the package as imported and the versions of Python, NumPy, SymPy and mpmath,
so an edit anywhere in the package (or an upgrade) starts afresh; nothing is
ever computed by hand, and a failure is never kept.

Only functions of the package itself are kept, only calls whose arguments
are plain values (a NumPy array's text is abridged, so it cannot name a
call), and only by a process whose code is that source: a test that patches
the code runs with the store switched off (``tests/proof_memory.py``), and
the test session only reads it.

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

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: concurrent processes may compute the same call, as without a store
    fcntl = None

__all__ = ["ENVIRONMENT", "Store", "run_stored", "source_digest", "store_from_environment", "stored"]

#: The environment variable that names the store's directory; unset or empty, there is no store.
ENVIRONMENT = "ATTENTION_SCALING_STORE"
_PACKAGE = Path(__file__).resolve().parent
# The libraries whose results are kept: an upgrade of any of them starts afresh.
_LIBRARIES = ("numpy", "sympy", "mpmath")


@functools.cache
def source_digest(package: Path = _PACKAGE) -> str:
    """A digest of every Python file of ``package`` (paths and bytes) and the versions of Python, NumPy, SymPy and mpmath.

    Examples
    --------
    >>> len(source_digest()), source_digest() == source_digest()
    (20, True)
    """
    versions = "; ".join(f"{library} {version(library)}" for library in _LIBRARIES)
    digest = hashlib.sha256(f"{versions}; python {sys.version_info[:2]}".encode())
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
        """The file name of one call, or None for a function that is not the package's own or an argument that is not plain."""
        if not function.__module__.startswith("attention_scaling.") or not all(map(_plain, (*args, *kwargs.values()))):
            return None
        call = f"{function.__module__}.{function.__qualname__}{args!r}{sorted(kwargs.items())!r}"
        return hashlib.sha256(call.encode()).hexdigest()[:24] + ".pickle"

    def load(self, key: str):
        """The result kept under ``key``, or None if there is none (or it cannot be read)."""
        try:
            return pickle.loads((self.directory / key).read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError):
            return None

    @contextlib.contextmanager
    def computing(self, key: str):
        """Hold the lock of ``key`` for as long as this process computes it; a writable store only.

        Processes running at once ask for the same results: the evidence and
        graph pages of a build both need the evidence rows, and the doctests,
        when they ran beside the pages, needed the tuned learning rates too.
        Without the lock each computed a result that another was still
        computing, and a cold build spent about 75 s of its CPU time on such
        copies. A process that finds the lock taken waits, then reads what
        the other kept. The lock is the operating system's (``flock``), so it
        goes with a process that dies; results depend on one another without
        cycles, so no two processes wait for each other.

        Examples
        --------
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = Store(Path(tmp))
        ...     with store.computing("demo.pickle"):
        ...         kept = store.save("demo.pickle", 1)
        ...     (kept, store.load("demo.pickle"))
        (True, 1)
        """
        if not self.writable or fcntl is None:
            yield
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / f"{key}.lock", "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
            except OSError:  # a file system without locks: compute, as if there were no lock
                pass
            yield

    def save(self, key: str, result) -> bool:
        """Keep ``result`` under ``key`` if it reads back equal to itself; return whether it was kept.

        A result that cannot be pickled is not kept. SymPy pickles an
        expression as its class and arguments, and reading it back evaluates
        them: a square held unevaluated as :math:`(d s)^2` comes back as
        :math:`d^2 s^2`, and a page would display another statement than the
        proof made. Such a result is not kept either (it runs in each process,
        as without a store). A kept result is written whole to a temporary
        file, then renamed, so a reader never sees half of it.

        Examples
        --------
        >>> import tempfile, sympy as sp
        >>> d, s = sp.symbols("d s", positive=True)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     store = Store(Path(tmp))
        ...     store.save("evaluated.pickle", (d * s) ** 2), store.save("held.pickle", sp.Pow(d * s, 2, evaluate=False))
        (True, False)

        NumPy's arrays compare element by element, not to one truth value; a
        result that holds them is kept if it pickles back to the same bytes:

        >>> import numpy as np
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     Store(Path(tmp)).save("arrays.pickle", {"x": np.linspace(0, 1, 5)})
        True
        """
        if not self.writable:
            return False
        try:
            data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):  # a local function, an open file
            return False
        if not _reads_back_equal(data, result):
            return False
        self.directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self.directory, suffix=".part", delete=False) as file:
            file.write(data)
        os.replace(file.name, self.directory / key)
        return True


def _plain(value) -> bool:
    """Whether ``value``'s text names it exactly: None, numbers, text, and tuples and lists of them.

    Not a set (the order of its text changes with each process's string
    hashing), nor a SymPy symbol (its text leaves out its assumptions).

    Examples
    --------
    >>> import numpy as np, sympy as sp
    >>> _plain((16, 64.0, "sqrt", None)), _plain(np.arange(3)), _plain(sp.Symbol("d", positive=True))
    (True, False, False)
    """
    if isinstance(value, (tuple, list)):
        return all(map(_plain, value))
    return value is None or isinstance(value, (bool, int, float, str))


def _reads_back_equal(data: bytes, result) -> bool:
    """Whether the pickle ``data`` of ``result`` reads back equal to it.

    Equality where it is a truth value (SymPy's results); where it is not
    (NumPy's arrays compare element by element), the result read back must
    pickle to the same bytes.
    """
    back = pickle.loads(data)
    try:
        return bool(back == result)
    except ValueError:  # "the truth value of an array ... is ambiguous"
        return pickle.dumps(back, protocol=pickle.HIGHEST_PROTOCOL) == data


#: False in a process that must only read the store (the test session: tests/conftest.py).
WRITABLE = True
#: False where a page's data must be computed afresh though registered proofs
#: may be read (a test that patches the data's code but no proof: tests/proof_memory.py).
DATA = True


def store_from_environment() -> Store | None:
    """The store that ``ATTENTION_SCALING_STORE`` names, or None when it is unset or empty.

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
        with store.computing(key):
            result = store.load(key)  # kept by another process while this one waited
            if result is None:
                result = function(*args, **kwargs)
                store.save(key, result)
    return result


def stored(function: Callable) -> Callable:
    """``function``, read from the store when it holds the call and kept there when it did not.

    For a page's seeded data, a pure function of the package's source: the
    page, its doctest and the tests that use it compute it once per source,
    wherever ``ATTENTION_SCALING_STORE`` names a directory (the Makefile's
    targets set it to ``_build/store``). Without a store, or for a call whose
    arguments are not plain values (numbers, text, tuples of them), the
    function simply runs. The result is kept under a digest of the package's
    Python files and the versions of Python, NumPy, SymPy and mpmath, so any
    edit of the package computes afresh.

    Examples
    --------
    >>> from attention_scaling.simulate import variance_vs_dk_data
    >>> variance_vs_dk_data.__wrapped__.__module__  # the function as written
    'attention_scaling.simulate'
    """

    @functools.wraps(function)
    def run(*args, **kwargs):
        return run_stored(function, args, kwargs) if DATA else function(*args, **kwargs)

    return run
