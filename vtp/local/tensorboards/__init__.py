"""Vertex TensorBoard: the package's roles (`store.py`, `service.py`, `routes.py`)."""
