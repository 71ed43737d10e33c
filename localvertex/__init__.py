"""The local Vertex service: CustomJobs through Vertex's REST API, run as local processes.

`vtp local serve` starts it (`http.py` routes, `service.py` the Python API). Each job's replicas
run as host processes with the environment Vertex gives them (`cluster.py`), supervised with
Vertex's failure rules (`rules.py`, `supervisor.py`); state lives in SQLite (`store.py`).
"""
