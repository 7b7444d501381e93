"""``/source/<judgment>``: a result's source as the explorer links it, the judgment's PDF (the
browser opens it at ``#page=N``) or, for a judgment ingested from text, its text. Only
judgments of the workspace are served, by id, so no path from a request reaches the disk."""

from __future__ import annotations

from tornado.web import RequestHandler

from countercase.explore.session import Judgments


class SourceHandler(RequestHandler):
    def initialize(self, judgments: Judgments) -> None:
        self.judgments = judgments

    def get(self, doc_id: str) -> None:
        pdf = self.judgments.pdf(doc_id)
        if pdf is not None:
            self.set_header("Content-Type", "application/pdf")
            self.finish(pdf.read_bytes())
            return
        text = self.judgments.text(doc_id)
        if text is None:
            self.set_status(404)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(f"no judgment {doc_id!r} in this corpus")
            return
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(text)

    def write_error(self, status_code: int, **kwargs) -> None:  # never a stack trace
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"{status_code}: the source could not be served")


def source_route(judgments: Judgments) -> tuple:
    return (r"/source/([^/]+)", SourceHandler, {"judgments": judgments})
