"""Vertex AI Vizier locally: studies and the trials their clients evaluate (store, service,
routes)."""
