"""Vertex ML Metadata: the package's roles (`store.py`, `service.py`, `routes.py`)."""
