"""What an Answer stream has received so far: the started event, the text, the summary."""

from __future__ import annotations

from groundwire.answer_events import AnswerEvent, AnswerFinished, AnswerStarted, TokenDelta
from groundwire.v1 import retrieval_service_pb2 as rs


class AnswerState:
    """Accumulates the events of one Answer stream (shared by the sync and async streams)."""

    def __init__(self) -> None:
        self.started: AnswerStarted | None = None
        self.summary: rs.AnswerSummary | None = None
        self.cancelled = False
        self._pieces: list[str] = []

    def record(self, event: AnswerEvent) -> None:
        """Take one event into account."""
        if isinstance(event, AnswerStarted):
            self.started = event
        elif isinstance(event, TokenDelta):
            self._pieces.append(event.text)
        elif isinstance(event, AnswerFinished):
            self.summary = event.summary

    @property
    def text(self) -> str:
        """The answer text received so far (the deltas joined)."""
        return "".join(self._pieces)

    @property
    def citations(self) -> list[rs.Citation]:
        """The validated citations of the summary; empty until the summary has arrived."""
        return list(self.summary.citations) if self.summary is not None else []
