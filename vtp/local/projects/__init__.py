"""Resource Manager's project lookup, as the local service answers it (`routes.py`)."""
