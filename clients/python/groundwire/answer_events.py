"""The typed events of an Answer stream: started, then token deltas, then the summary."""

from __future__ import annotations

from dataclasses import dataclass

from groundwire.v1 import retrieval_service_pb2 as rs


@dataclass(frozen=True, slots=True)
class AnswerStarted:
    """First event: the retrieved context the answer is grounded in."""

    retrieval: rs.RetrieveResponse
    template: str
    """The prompt template the server chose."""


@dataclass(frozen=True, slots=True)
class TokenDelta:
    """A piece of the answer text, in order."""

    text: str


@dataclass(frozen=True, slots=True)
class AnswerFinished:
    """Last event: finish reason, usage, validated citations, timings."""

    summary: rs.AnswerSummary

    @property
    def citations(self) -> list[rs.Citation]:
        """The citations that survived validation, in order of first use."""
        return list(self.summary.citations)


AnswerEvent = AnswerStarted | TokenDelta | AnswerFinished


def event_from_response(response: rs.AnswerResponse) -> AnswerEvent:
    """The typed event of one AnswerResponse."""
    kind = response.WhichOneof("event")
    if kind == "started":
        return AnswerStarted(response.started.retrieval, response.started.template)
    if kind == "delta":
        return TokenDelta(response.delta.text)
    if kind == "summary":
        return AnswerFinished(response.summary)
    raise ValueError(f"AnswerResponse without a known event ({kind!r}); upgrade groundwire-client")
