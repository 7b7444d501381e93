"""A warm search service: the served system opened once, answering each query over HTTP at the
served path's latency instead of paying the start-up of ``countercase search`` every time.

``GET /search?q=TEXT[&kind=judgment][&k=10]`` answers the hits as ``countercase search --json``
prints them; ``GET /health`` says which system answers. A bad request (no text, an unknown kind,
a ``k`` that is no positive number, a query the system refuses) is a 400 with one line of JSON
naming what was wrong, and the service goes on; nothing of a stack trace reaches the client.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

from countercase.errors import CountercaseError

log = logging.getLogger(__name__)

# query, kind, k -> the hits as rows
Search = Callable[[str, str, int], list[dict]]


def server(search: Search, system: str, kinds: tuple[str, ...], default_k: int,
           host: str = "127.0.0.1", port: int = 8765) -> HTTPServer:
    """An HTTP server (not yet serving: call ``serve_forever``) answering with ``search``;
    ``port`` 0 takes a free one (``server_address`` says which)."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict | list) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlparse(self.path)
            if url.path == "/health":
                self._send(200, {"system": system, "kinds": list(kinds)})
                return
            if url.path != "/search":
                self._send(404, {"error": f"no such path {url.path}: use /search or /health"})
                return
            asked = {key: values[-1] for key, values in parse_qs(url.query).items()}
            query, kind = asked.get("q", ""), asked.get("kind", kinds[0])
            if not query.strip():
                self._send(400, {"error": "empty query: give q=<the facts of a case>"})
                return
            if kind not in kinds:
                self._send(400, {"error": f"kind {kind!r}: use {' or '.join(kinds)}"})
                return
            try:
                k = int(asked.get("k", default_k))
                if k < 1:
                    raise ValueError
            except ValueError:
                self._send(400, {"error": f"k {asked.get('k')!r}: give a number of hits, 1 or "
                                          "more"})
                return
            started = time.perf_counter()
            try:
                rows = search(query, kind, k)
            except (CountercaseError, ValueError) as error:
                self._send(400, {"error": str(error)})
                return
            except Exception:  # a bug: its trace in the service's log, one line to the client
                log.exception("search failed on a %s query", kind)
                self._send(500, {"error": "a bug in COUNTERCASE answered this query; the "
                                          "service's log has its trace"})
                return
            log.info("%s query (%d characters): %d hits in %.0f ms", kind, len(query), len(rows),
                     1000 * (time.perf_counter() - started))
            self._send(200, rows)

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server's name)
            log.debug(format, *args)

    return HTTPServer((host, port), Handler)
