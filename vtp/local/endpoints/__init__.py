"""Endpoints: `store` (SQLite), `serving` (a deployed model's server as a host process),
`service` (`Endpoints`: endpoints, deploy/undeploy operations, predict; deployed models' servers
start with the service) and `routes`.
"""
