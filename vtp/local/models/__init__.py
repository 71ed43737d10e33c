"""The Model Registry: `models` upload, get, list, versions, aliases, delete.

`upload` (pure request parsing and checks), `store` (SQLite), `service` (`ModelRegistry`) and
`routes`.
"""
