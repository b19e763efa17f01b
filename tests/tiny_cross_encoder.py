"""A tiny cross-encoder built and trained locally, for tests of the rerank plumbing.

No cross-encoder with weights ships in any installed package, so this builds one: a 2-layer
BERT (hidden size 32) with the bundled MiniLM tokenizer, trained for a few dozen steps to score
the relevant passage of a handful of (query, relevant, unrelated) triples above the unrelated
one. It says nothing about ranking quality; that needs a real model such as
ms-marco-MiniLM-L-6-v2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from core.embed.sentence_transformer_embedder import default_model_path

TRIPLES = [
    (
        "how do I sort a list",
        "Use sorted() or list.sort() to sort a list in place.",
        "The weather in spring is mild and rainy.",
    ),
    (
        "what is a tuple",
        "A tuple is an immutable sequence of values.",
        "Bake the bread for forty minutes.",
    ),
    (
        "how to open a file",
        "Call open() with a path to read or write a file.",
        "The river flows slowly to the sea.",
    ),
    (
        "what does a dictionary map",
        "A dictionary maps keys to values.",
        "Cats sleep for most of the day.",
    ),
]


def _train(model: BertForSequenceClassification, tokenizer: Any) -> None:
    """40 full-batch steps of binary cross-entropy on the triples, on one thread (deterministic)."""
    queries = [q for q, _, _ in TRIPLES] * 2
    passages = [r for _, r, _ in TRIPLES] + [i for _, _, i in TRIPLES]
    labels = torch.tensor([1.0] * len(TRIPLES) + [0.0] * len(TRIPLES))
    batch = tokenizer(queries, passages, padding=True, return_tensors="pt")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small trains fastest on one thread
    try:
        model.train()
        for _ in range(40):
            optimizer.zero_grad()
            logits = model(**batch).logits.squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
        model.eval()


def build_tiny_cross_encoder(directory: Path) -> Path:
    """Save a tiny trained BertForSequenceClassification (num_labels=1) + tokenizer there."""
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    _train(model, tokenizer)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
