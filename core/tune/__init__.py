"""Corpus adaptation: fine-tune a copy of the embedding model on a collection's own structure."""
