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

**Warm kernels.** A new kernel process imports ipykernel, and the page's first
cell imports NumPy, SymPy, matplotlib and the package: about 1.8 s of CPU per
page before the page's own code starts (a notebook of those imports alone, run
through jupyter-cache), some 36 s of a cold build's 20 pages. So when
``nb_kernel_preload`` in conf.py names modules, the first kernel of the build
starts a template process (``kernel_template.py``) that imports them once, and
every kernel is then forked from it: the child takes the kernel's
environment, working directory and arguments and runs ``python -m
ipykernel_launcher`` as a new process would. The template runs no page code,
so no page sees another's state; what a page can tell apart is only that
those modules were imported before it started (their import-time work was
done once, in the template) and that kernels share the template's hash seed.
Unseeded generators still differ from kernel to kernel: CPython reseeds
``random`` in a forked child, and the child reseeds NumPy's global generator
if the template imported it. The
template starts with the first kernel's environment, which every kernel of a
build shares, so a module that reads the environment when imported sees what
a kernel would; ipykernel reads the parent's pid when imported, which is why
it is not preloaded. In an A/B cold build of this site, one run each on the
same machine, the template took the build from 86 s to 72 s. A kernel
command that is not ``python -m ipykernel_launcher`` with the template's
interpreter, or a template that fails to start or dies (it logs why), gets a new
process as before. The template ends with the build.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from sphinx.util import logging
from traitlets import default

__all__ = ["ForkedKernel", "IPCKernelManager", "KernelTemplate", "install", "uninstall", "setup"]

logger = logging.getLogger(__name__)

_TRAIT_DEFAULT = "_kernel_manager_class_default"  # how traitlets finds a trait's dynamic default
_state: dict = {}  # "directory" and "original" while installed; "preload", and "template" once started
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

    async def _async_pre_start_kernel(self, **kw):
        # A fresh kernel (not a restart) gets the provisioner that forks it from the template when it can.
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))  # as jupyter_client does
            self.provisioner = ForkingProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)


# -- Warm kernels ----------------------------------------------------------------------------

TEMPLATE_SCRIPT = Path(__file__).with_name("kernel_template.py")
_LAUNCHER = ["-m", "ipykernel_launcher"]
_template_lock = threading.Lock()


class KernelTemplate:
    """A process that has imported ``modules`` and forks kernels on request (kernel_template.py).

    Raises RuntimeError, naming the module, if an import fails, and if the
    template has not finished importing within ``startup_timeout`` seconds.

    Examples
    --------
    >>> import os, sys, tempfile
    >>> template = KernelTemplate(sys.executable, ["colorsys"], dict(os.environ))
    >>> process = template.fork(["-m", "colorsys"], dict(os.environ), tempfile.gettempdir())
    >>> process.wait(timeout=30), process.pid != template.process.pid
    (0, True)
    >>> template.close()
    """

    def __init__(self, python: str, modules: Sequence[str], env: dict[str, str], startup_timeout: float = 120):
        ours, theirs = socket.socketpair()
        with theirs:
            self.process = subprocess.Popen(
                [python, str(TEMPLATE_SCRIPT), str(theirs.fileno()), *modules],
                pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
            )
        self.python = python
        self._socket = ours
        self._stream = ours.makefile("rwb", buffering=0)
        self._lock = threading.Lock()
        ours.settimeout(startup_timeout)  # an import that hangs must not hang the build
        try:
            answer = self._read()
        except TimeoutError:
            self.process.kill()  # it reads no socket while it imports, so it would not see one close
            answer = {"error": f"it had not imported {', '.join(modules)} after {startup_timeout:g} s"}
        ours.settimeout(None)
        if "error" in answer:
            self.close()
            raise RuntimeError(answer["error"])

    def _read(self) -> dict:
        line = self._stream.readline()
        if not line:
            raise RuntimeError(f"the kernel template (pid {self.process.pid}) has exited")
        return json.loads(line)

    def _ask(self, request: dict) -> dict:
        with self._lock:  # two execution workers share the template
            self._stream.write(json.dumps(request).encode() + b"\n")
            return self._read()

    def fork(self, argv: list[str], env: dict[str, str], cwd: str) -> "ForkedKernel":
        """Start ``python ARGV...`` (``-m MODULE ARG...``) forked from the template, in ``cwd`` with ``env`` only."""
        return ForkedKernel(self, self._ask({"fork": list(argv), "env": dict(env), "cwd": str(cwd)})["pid"])

    def returncode(self, pid: int) -> int | None:
        """The exit status of the forked process ``pid`` (minus the signal that ended it), or None while it runs."""
        return self._ask({"poll": pid})["returncode"]

    def close(self) -> None:
        """End the template (its socket closes); kernels still running are not touched."""
        self._stream.close()
        self._socket.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ForkedKernel:
    """A process forked by a :class:`KernelTemplate`, with the part of Popen's interface that jupyter_client uses."""

    stdin = stdout = stderr = None

    def __init__(self, template: KernelTemplate, pid: int):
        self._template = template
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.returncode = self._template.returncode(self.pid)
            except (RuntimeError, OSError):  # the template is gone, and with it the exit status
                try:
                    os.kill(self.pid, 0)
                except ProcessLookupError:
                    self.returncode = -1
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:  # never signal a pid that may have been reused
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _template(cmd: list[str], env: dict[str, str]) -> KernelTemplate | None:
    """The build's template, started with the first kernel's interpreter and environment; None if there is none."""
    with _template_lock:
        if "template" not in _state and _state.get("preload"):
            template_env = dict(env)
            # What ipykernel sets before any import of matplotlib, which reads it when imported.
            template_env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
            try:
                _state["template"] = KernelTemplate(cmd[0], _state["preload"], template_env)
            except (RuntimeError, OSError) as error:
                _state["template"] = None
                logger.info(f"kernels start as new processes, not forked from a warm template: {error}")
        template = _state.get("template")
    return template if template is not None and template.python == cmd[0] else None


class ForkingProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, which forks ``python -m ipykernel_launcher`` from the template when there is one."""

    async def launch_kernel(self, cmd: list[str], **kwargs):
        scrubbed = self._scrub_kwargs(kwargs)
        env, cwd = scrubbed.pop("env", None), scrubbed.pop("cwd", None)
        plain = cmd[1:3] == _LAUNCHER and env is not None and not any(value is not None for value in scrubbed.values())
        template = _template(cmd, env) if plain else None
        if template is not None:
            env = {**env, "JPY_PARENT_PID": str(template.process.pid)}  # the kernel ends if its parent does
            self.cwd = str(cwd or os.getcwd())
            try:
                self.process = template.fork(cmd[1:], env, self.cwd)
            except (RuntimeError, OSError) as error:  # the template died: this kernel and the rest start anew
                _forget(template, error)
            else:
                self.pid = self.pgid = self.process.pid  # the child leads its own session, as launch_kernel's would
                return self.connection_info
        return await super().launch_kernel(cmd, **kwargs)


def _forget(template: KernelTemplate, error: Exception) -> None:
    """Start no more kernels from ``template``, which has failed with ``error``."""
    with _template_lock:
        if _state.get("template") is template:
            _state["template"] = None
            logger.info(f"kernels start as new processes from now on: the warm template failed ({error})")


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


def install(preload: Sequence[str] = ()) -> str | None:
    """Make every NotebookClient start IPCKernelManager kernels, forked from a template that imported ``preload``; return why not, or None."""
    reason = _unavailable()
    if reason is not None or "original" in _state:
        return reason
    _state["preload"] = list(preload)
    from nbclient import NotebookClient

    # mkdtemp makes the directory readable, writable and enterable by its owner only.
    _state["directory"] = tempfile.mkdtemp(prefix="kernels-")
    _state["original"] = vars(NotebookClient)[_TRAIT_DEFAULT]
    setattr(NotebookClient, _TRAIT_DEFAULT, lambda client: IPCKernelManager)
    atexit.unregister(uninstall)
    atexit.register(uninstall)  # also after Ctrl-C, when no build-finished comes
    return None


def uninstall(*_) -> None:
    """End the template, restore nbclient's default kernel manager and remove the socket directory."""
    with _template_lock:
        template = _state.pop("template", None)
        _state.pop("preload", None)
    if template is not None:
        template.close()
    if "original" in _state:
        from nbclient import NotebookClient

        setattr(NotebookClient, _TRAIT_DEFAULT, _state.pop("original"))
    if "directory" in _state:
        shutil.rmtree(_state.pop("directory"), ignore_errors=True)


def _install(app) -> None:
    reason = install(app.config.nb_kernel_preload)
    if reason is not None:
        logger.info(f"kernels use loopback TCP, not IPC: {reason}")


def setup(app):
    # Modules the kernels' template imports once (an empty list: every kernel is a new process).
    app.add_config_value("nb_kernel_preload", [], "", (list, tuple))
    app.connect("builder-inited", _install)
    app.connect("build-finished", uninstall)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
