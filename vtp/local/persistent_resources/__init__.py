"""Persistent resources: Vertex's reserved training clusters, and the jobs that run on them."""
