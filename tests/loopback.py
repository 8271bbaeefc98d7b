"""A real HTTP server on the loopback interface, started by the tests, with scripted failures.

Each served path has a list of *behaviours*, one per request (the last one repeats):

``ok``        200 with the whole body and its Content-Length
``404``       404 Not Found
``500``       500 Internal Server Error
``truncate``  200 announcing the whole Content-Length, sending half of the body, then closing
``stall``     200 announcing the whole Content-Length, sending the first bytes, then going silent
              until the server stops (at most :data:`STALL_LIMIT_SECONDS`): the client must time out
``stall-midway``  the same after half of the body (a client killed then has written that half)

The server listens on 127.0.0.1 only, on a free port; it records how many requests each path got.
"""

from __future__ import annotations

import contextlib
import http.server
import io
import os
import tarfile
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

#: A stalled answer never lasts longer than this, whatever the client does.
STALL_LIMIT_SECONDS = 20.0

BEHAVIOURS = ("ok", "404", "500", "truncate", "stall", "stall-midway")


@dataclass
class Route:
    body: bytes
    behaviours: list[str] = field(default_factory=lambda: ["ok"])

    def __post_init__(self) -> None:
        unknown = [behaviour for behaviour in self.behaviours if behaviour not in BEHAVIOURS]
        if unknown or not self.behaviours:
            raise ValueError(f"behaviours must be a non-empty list of {BEHAVIOURS}, got {self.behaviours}")


class LoopbackServer:
    """``with LoopbackServer() as server: server.add("/a.tgz", data, ["500", "ok"]); server.url("/a.tgz")``."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: dict[str, int] = defaultdict(int)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *arguments: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                with server._lock:
                    count = server.requests[self.path]
                    server.requests[self.path] += 1
                route = server.routes.get(self.path)
                if route is None:
                    self._status_only(404, "Not Found")
                    return
                behaviour = route.behaviours[min(count, len(route.behaviours) - 1)]
                if behaviour in ("404", "500"):
                    self._status_only(int(behaviour), "Not Found" if behaviour == "404" else "Internal Server Error")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                if behaviour == "ok":
                    self.wfile.write(route.body)
                elif behaviour == "truncate":
                    self.wfile.write(route.body[: len(route.body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                else:  # stall, stall-midway
                    self.wfile.write(route.body[:16] if behaviour == "stall" else route.body[: len(route.body) // 2])
                    self.wfile.flush()
                    server._stopping.wait(STALL_LIMIT_SECONDS)
                    self.close_connection = True

            def _status_only(self, code: int, message: str) -> None:
                body = f"{code} {message}\n".encode()
                self.send_response(code, message)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="loopback-http", daemon=True)

    def add(self, path: str, body: bytes, behaviours: list[str] | None = None) -> str:
        """Serve ``body`` at ``path`` with the given behaviours; returns the full URL."""
        self.routes[path] = Route(body, behaviours or ["ok"])
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def __enter__(self) -> "LoopbackServer":
        self._thread.start()
        return self

    def __exit__(self, *exception: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def serving() -> Iterator[LoopbackServer]:
    """A running :class:`LoopbackServer`, with proxies bypassed for loopback (the workflow's subprocesses too)."""
    saved = {name: os.environ.get(name) for name in ("no_proxy", "NO_PROXY")}
    os.environ["no_proxy"] = os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    try:
        with LoopbackServer() as server:
            yield server
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def tar_archive(members: dict[str, bytes], compression: str = "gz", directories: tuple[str, ...] = ()) -> bytes:
    """A tar archive (``compression`` gz, bz2 or xz) of ``members``, with ``directories`` as entries of their own."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as archive:
        for name in directories:
            directory = tarfile.TarInfo(name)
            directory.type = tarfile.DIRTYPE
            directory.mode = 0o755
            archive.addfile(directory)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_400_000_000
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
