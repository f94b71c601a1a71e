"""`ViewError`: what a playground view refuses, in one line, whatever the transport."""

from __future__ import annotations


class ViewError(Exception):
    """A request a view refuses: `message` is the one line the learner sees; `status` the HTTP
    status a web transport answers with (400: the request is wrong; 404: no such action; 409: it
    comes too early, e.g. a step before any graph)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
