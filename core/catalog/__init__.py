"""Collections on disk: one directory each, a SQLite source of truth plus derived indexes."""
