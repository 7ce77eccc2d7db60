"""The template process of docs/_ext/ipc_kernels.py: imports once, then forks one kernel per request.

Run as ``python kernel_template.py FD MODULE...`` with FD a connected Unix
socket. It imports each MODULE, says ``ready`` (or why an import failed), then
answers one JSON line per request:

- ``{"fork": ARGV, "env": {...}, "cwd": DIR}``: fork a child that runs
  ``python ARGV...`` (ARGV is ``["-m", MODULE, ARG...]``) as a new session,
  in DIR, with exactly that environment; the answer is ``{"pid": PID}``,
  sent once the child leads its own session, so that signalling the
  session at once reaches it.
- ``{"poll": PID}``: ``{"returncode": CODE}``, or null while the child runs
  (the exit status, or minus the signal that ended it, as Popen gives it).

It exits when the socket closes. Beyond MODULE... it imports only the
standard library, so a kernel has imported nothing that a new process would
not have, but for MODULE....
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import socket
import sys
import traceback


def _run(argv: list[str], env: dict[str, str], cwd: str, started: int) -> int:
    """In the child: become ``python -m MODULE ARG...`` as a new process would be; return its exit status."""
    os.setsid()
    os.write(started, b"1")
    os.close(started)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # jupyter_client gives a kernel no stdin either
    os.close(devnull)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    # `python -m` puts the working directory first on the path.
    sys.path[0] = os.getcwd()
    # A new process seeds NumPy's global generator from the operating system;
    # a forked one would repeat the template's draws (CPython reseeds `random` itself).
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
    option, module, *arguments = argv
    if option != "-m":
        raise ValueError(f"only python -m MODULE can be forked; got {argv}")
    sys.argv = [module, *arguments]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def _child(channel: socket.socket, request: dict, started: int) -> None:
    channel.close()
    code = 1
    try:
        code = _run(request["fork"], request["env"], request["cwd"], started)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _status(pid: int, finished: dict[int, int]) -> int | None:
    if pid not in finished:
        try:
            reaped, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not a child of this template
            return -1
        if reaped == 0:
            return None
        finished[pid] = os.waitstatus_to_exitcode(status)
    return finished[pid]


def serve(channel: socket.socket) -> None:
    """Answer requests on ``channel`` until it closes."""
    finished: dict[int, int] = {}
    stream = channel.makefile("rwb", buffering=0)
    for line in stream:
        request = json.loads(line)
        if "poll" in request:
            answer = {"returncode": _status(int(request["poll"]), finished)}
        else:
            readable, writable = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(readable)
                _child(channel, request, writable)
            os.close(writable)
            os.read(readable, 1)  # the child leads its session (or has died: b"")
            os.close(readable)
            answer = {"pid": pid}
        stream.write(json.dumps(answer).encode() + b"\n")


def main(argv: list[str]) -> int:
    channel = socket.socket(fileno=int(argv[0]))
    try:
        for module in argv[1:]:
            importlib.import_module(module)
    except BaseException as error:  # noqa: BLE001 - reported to the build, which starts kernels as before
        channel.sendall(json.dumps({"error": f"importing {module}: {error.__class__.__name__}: {error}"}).encode() + b"\n")
        return 1
    channel.sendall(b'{"ready": true}\n')
    serve(channel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
