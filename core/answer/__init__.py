"""Answer generation: prompt templates, generators, citation validation."""
