"""CrossEncoderReranker against a tiny cross-encoder trained here, in a temporary directory.

No cross-encoder with weights ships in any installed package, so the fixture builds one (see
tests/tiny_cross_encoder.py). This tests the plumbing (loading from a directory, batching,
order of scores, apply_rerank), not ranking quality; quality needs a real model such as
ms-marco-MiniLM-L-6-v2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from core.embed.sentence_transformer_embedder import default_model_path
from core.models import Chunk, Hit, SourceType, StageScores
from core.retrieve.rerank import apply_rerank, run_reranker
from core.retrieve.rerank.cross_encoder import CrossEncoderReranker
from tests.tiny_cross_encoder import TRIPLES, build_tiny_cross_encoder


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of the tiny trained cross-encoder (see tests/tiny_cross_encoder.py)."""
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="module")
def reranker(tiny_cross_encoder: Path) -> CrossEncoderReranker:
    return CrossEncoderReranker(str(tiny_cross_encoder), device="cpu", batch_size=3)


def _reference_logits(directory: Path, query: str, passages: list[str]) -> list[float]:
    """The model's logits computed with transformers directly."""
    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = BertForSequenceClassification.from_pretrained(directory).eval()
    batch = tokenizer([query] * len(passages), passages, padding=True, return_tensors="pt")
    with torch.inference_mode():
        return [float(x) for x in model(**batch).logits.squeeze(-1)]


def test_scores_are_the_models_logits_in_input_order(
    reranker: CrossEncoderReranker, tiny_cross_encoder: Path
) -> None:
    query = TRIPLES[0][0]
    passages = [TRIPLES[0][2], TRIPLES[2][1], TRIPLES[0][1], TRIPLES[3][2]]  # 4 > batch size 3
    scores = reranker.score(query, passages)
    assert scores == pytest.approx(_reference_logits(tiny_cross_encoder, query, passages), abs=1e-4)
    assert reranker.name == f"cross-encoder:{tiny_cross_encoder}"
    assert reranker.device == "cpu"
    assert reranker.score(query, []) == []


@pytest.mark.parametrize(
    ("query", "relevant", "irrelevant"), TRIPLES, ids=[q for q, _, _ in TRIPLES]
)
def test_trained_model_prefers_the_relevant_passage(
    reranker: CrossEncoderReranker, query: str, relevant: str, irrelevant: str
) -> None:
    irrelevant_score, relevant_score = reranker.score(query, [irrelevant, relevant])
    assert relevant_score > irrelevant_score


def _hit(rank: int, text: str) -> Hit:
    chunk = Chunk(
        row_id=rank,
        chunk_id=f"doc#{rank}",
        document_id="doc",
        ordinal=rank,
        text=text,
        section_path=(),
        has_code=False,
        token_estimate=len(text.split()),
        source_type=SourceType.TEXT,
        source_path="doc.txt",
    )
    return Hit(chunk=chunk, rank=rank, score=1.0 / rank, scores=StageScores(fused=1.0 / rank))


def test_rerank_moves_the_relevant_passage_to_the_top(reranker: CrossEncoderReranker) -> None:
    query, relevant, irrelevant = TRIPLES[2]
    hits = [_hit(1, irrelevant), _hit(2, relevant), _hit(3, TRIPLES[0][1])]
    outcome = run_reranker(reranker, query, [h.chunk.text for h in hits[:2]])
    assert outcome.warning == ""
    ranked = apply_rerank(hits, outcome.scores, depth=2)
    assert [h.chunk.row_id for h in ranked] == [2, 1, 3]
    assert [h.rank for h in ranked] == [1, 2, 3]
    assert ranked[0].scores.rerank == outcome.scores[1]
    assert ranked[2].scores.rerank is None


def test_a_missing_directory_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ValueError) as caught:
        CrossEncoderReranker(str(missing))
    assert str(caught.value) == f"cross-encoder model directory {str(missing)!r} does not exist"


def test_a_multi_label_model_is_refused(tmp_path: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=1,
        intermediate_size=16,
        max_position_embeddings=64,
        num_labels=3,
    )
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with pytest.raises(ValueError) as caught:
        CrossEncoderReranker(str(tmp_path))
    assert str(caught.value) == (
        f"cross-encoder {str(tmp_path)!r} has 3 output labels; a reranker needs one relevance "
        "score (num_labels = 1)"
    )
