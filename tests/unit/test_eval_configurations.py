"""`groundwire eval` scores what a user's default request searches, not a wider search."""

from __future__ import annotations

from dataclasses import replace

from core.eval.runner import CHUNK_HITS
from core.retrieve.request import RetrievalRequest
from server.commands.eval_command import configurations
from server.settings import Settings


def test_every_configuration_searches_the_candidates_of_a_default_request() -> None:
    default_request = RetrievalRequest(query="q", collection="c")
    for label, template in configurations(Settings()).items():
        # ranked_documents asks for CHUNK_HITS hits to rank documents; the search stays as deep
        # as the default request's
        assert replace(template, top_k=CHUNK_HITS).depth == default_request.depth, label


def test_the_default_row_is_the_default_request_apart_from_its_query() -> None:
    template = configurations(Settings())["default"]
    default_request = RetrievalRequest(query="", collection="")
    assert replace(template, candidate_depth=None) == default_request
