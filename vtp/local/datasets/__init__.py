"""Managed datasets: datasets, their data items, import and export (service, routes)."""
