"""A seeded, bounded fuzz run over every route: no 5xx, no hang, and the service lives on."""

import requests

from tests.vtp.local.fuzz import send_all

SEED, COUNT = 20261122, 400


def test_malformed_requests_get_4xx_never_5xx_or_a_hang(local_service) -> None:
    tally = send_all(local_service.url, local_service.token, SEED, COUNT, timeout=10)
    assert tally.failures == []
    assert tally.sent == COUNT and sum(tally.by_status.values()) == COUNT
    assert any(400 <= status < 500 for status in tally.by_status)  # the fuzzer does reach checks
    assert requests.get(f"{local_service.url}/healthz", timeout=5).status_code == 200
