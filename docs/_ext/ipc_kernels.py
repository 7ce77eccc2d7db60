"""Kernels talk to the build over IPC sockets in a private directory, not TCP.

A Jupyter kernel listens on loopback TCP by default, without encryption:
any local user can connect to it while it runs, and ipykernel logs a warning
for each one. jupyter_client can use Unix-domain sockets instead
(``transport = "ipc"``); they are files, so a directory that only the user
can enter keeps every other user out.

:class:`IPCKernelManager` is jupyter_client's kernel manager with two trait
defaults changed: ``transport`` is ``"ipc"``, and ``connection_file`` is a
fresh name in the build's private directory (mode 0700). jupyter_client then
names the sockets after the connection file, so concurrent kernels never
share one, and removes both when the kernel shuts down.

nbclient starts every kernel of the build (the parallel workers' and
myst-nb's own, through jupyter-cache) with its ``kernel_manager_class``. myst-nb
offers no way to pass one, so for the length of the build that trait's
default is this manager; it is restored, and the directory removed, when the
build finishes. If nbclient or jupyter_client no longer has what this needs,
it logs why and the kernels use TCP as before.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from sphinx.util import logging
from traitlets import default

__all__ = ["IPCKernelManager", "install", "uninstall", "setup"]

logger = logging.getLogger(__name__)

_TRAIT_DEFAULT = "_kernel_manager_class_default"  # how traitlets finds a trait's dynamic default
_state: dict = {}  # "directory" and "original" while installed
_numbers = itertools.count(1)  # next() on a count is atomic: safe from the worker threads

class IPCKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel listens on IPC sockets in the build's private directory."""

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    @default("connection_file")
    def _default_connection_file(self) -> str:
        directory = _state.get("directory")
        if directory is None:
            raise RuntimeError("IPCKernelManager needs ipc_kernels.install() first (the private socket directory)")
        # jupyter_client names the sockets after this file: kernel-N-ipc-1, ...
        return str(Path(directory) / f"kernel-{next(_numbers)}.json")


def _unavailable() -> str | None:
    """Why IPC kernels cannot be set up here, or None."""
    if os.name != "posix":
        return "IPC sockets are set up for POSIX systems only"
    try:
        from nbclient import NotebookClient
    except ImportError as error:
        return f"nbclient is not importable ({error})"
    if "kernel_manager_class" not in NotebookClient.class_traits() or _TRAIT_DEFAULT not in vars(NotebookClient):
        return "nbclient.NotebookClient no longer chooses its kernel manager through a kernel_manager_class default"
    if not {"transport", "connection_file"} <= set(IPCKernelManager.class_traits()):
        return "jupyter_client's KernelManager has no transport or connection_file trait"
    return None


def install() -> str | None:
    """Make every NotebookClient start IPCKernelManager kernels; return why not, or None."""
    reason = _unavailable()
    if reason is not None or "original" in _state:
        return reason
    from nbclient import NotebookClient

    # mkdtemp makes the directory readable, writable and enterable by its owner only.
    _state["directory"] = tempfile.mkdtemp(prefix="kernels-")
    _state["original"] = vars(NotebookClient)[_TRAIT_DEFAULT]
    setattr(NotebookClient, _TRAIT_DEFAULT, lambda client: IPCKernelManager)
    atexit.unregister(uninstall)
    atexit.register(uninstall)  # also after Ctrl-C, when no build-finished comes
    return None


def uninstall(*_) -> None:
    """Restore nbclient's default kernel manager and remove the socket directory."""
    if "original" in _state:
        from nbclient import NotebookClient

        setattr(NotebookClient, _TRAIT_DEFAULT, _state.pop("original"))
    if "directory" in _state:
        shutil.rmtree(_state.pop("directory"), ignore_errors=True)


def _install(app) -> None:
    reason = install()
    if reason is not None:
        logger.info(f"kernels use loopback TCP, not IPC: {reason}")


def setup(app):
    app.connect("builder-inited", _install)
    app.connect("build-finished", uninstall)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
