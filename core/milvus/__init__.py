"""Milvus storage backend: a collection's store, dense and BM25 indexes live in Milvus."""
