"""groundwire core: the retrieval domain. Never imports grpc."""
