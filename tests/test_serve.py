"""The server that the browser tests and the benchmark load the built site from (``sitebuild.serve``).

A browser may close its connection while a file is still being sent (a page
or context closed, a response it no longer needs): the server lets it go
without printing a traceback into the test report, and still prints any
other error.
"""

import socket
import struct
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest

from sitebuild import QuietHandler, serve

# Far more than the sockets' buffers hold, so that the server is still writing when the client leaves.
LARGE = 16 * 1024 * 1024


def _request_then_leave(root: str) -> None:
    """Ask for ``large.bin``, read the start of the response, then reset the connection."""
    url = urlsplit(root)
    with socket.create_connection((url.hostname, url.port)) as client:
        client.sendall(b"GET /large.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert client.recv(1024).startswith(b"HTTP/1.0 200")
        # Closing with unread data sends a reset: the server's next write fails at once.
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _served(directory, handler=QuietHandler):
    """``serve(directory, handler)``, its request threads joined when it is closed (so that what they print is in)."""
    httpd, root = serve(directory, handler)
    httpd.daemon_threads = False
    return httpd, root


def test_a_client_that_leaves_mid_response_prints_nothing(tmp_path, capsys):
    (tmp_path / "large.bin").write_bytes(bytes(LARGE))
    httpd, root = _served(tmp_path)
    try:
        _request_then_leave(root)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert capsys.readouterr().err == ""


class _Failing(QuietHandler):
    def do_GET(self):
        raise ValueError("a fault of the server's own")


def test_any_other_error_is_still_printed(tmp_path, capsys):
    httpd, root = _served(tmp_path, _Failing)
    try:
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(root + "page.html")
    finally:
        httpd.shutdown()
        httpd.server_close()
    err = capsys.readouterr().err
    assert "Exception occurred during processing of request" in err and "ValueError: a fault of the server's own" in err
