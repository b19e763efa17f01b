"""Token counts that add up across whitespace: detected for BERT's tokenizer, refused for
byte-level BPE, and the claim checked against the real tokenizer on real text."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from core.embed.sentence_transformer_embedder import SentenceTransformerEmbedder
from core.embed.token_additivity import whitespace_additive

DEMO_CORPUS = Path(__file__).resolve().parents[2] / "server" / "demo_corpus"


def _texts() -> list[str]:
    """Odd snippets, then the demo corpus's paragraphs (Markdown, code, links)."""
    texts = [
        "# Ports\n\nThe server listens on port 50051 (see `server.port`).",
        "Ünïcödé façade — naïve café; 東京 and emoji 🙂 stay apart.",
        "[DOC:install | CHUNK:install#0003]\nInstalling > Upgrading\n",
        "trailing spaces   \n\t",
    ]
    for page in sorted(DEMO_CORPUS.glob("*.md")):
        texts += [part for part in page.read_text(encoding="utf-8").split("\n\n") if part]
    assert len(texts) > 20
    return texts


def test_the_bundled_model_counts_additively_and_really_does(
    embedder: SentenceTransformerEmbedder,
) -> None:
    assert embedder.additive_token_counts
    texts = _texts()
    for first, second in zip(texts, texts[1:], strict=False):
        for join in ("\n\n", "\n", " "):
            joined = embedder.count_tokens(first + join + second)
            assert joined == embedder.count_tokens(first) + embedder.count_tokens(second)


def test_byte_level_bpe_is_not_additive() -> None:
    vocab = {"a": 0, "b": 1, "Ġ": 2, "Ġa": 3}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[("Ġ", "a")]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend)  # type: ignore[no-untyped-call]
    assert not whitespace_additive(tokenizer)


def test_a_tokenizer_without_a_fast_backend_is_not_additive() -> None:
    assert not whitespace_additive(object())
