"""The console's one-time sign-in codes (`vtp.local.console.signin`): each trades for the token
once, before it expires, on the service whose token minted it; over HTTP the sign-in needs no
token but is refused what any other request is refused (a foreign Origin, a form body)."""

import re
import subprocess
import sys

import pytest
import requests

from tests.fixtures import LocalService
from vtp.local.base import errors
from vtp.local.console import console_url
from vtp.local.console.signin import CODE_TTL_SECONDS, SignIn, mint

NOW = 1_800_000_000.0


def test_a_code_signs_in_once() -> None:
    signin, code = SignIn("tok"), mint("tok", now=NOW)
    assert signin.redeem(code, now=NOW + 1) == "tok"
    with pytest.raises(errors.ApiError, match="used already") as refused:
        signin.redeem(code, now=NOW + 2)
    assert refused.value.http_status == 401
    assert signin.redeem(mint("tok", now=NOW), now=NOW + 3) == "tok"  # a new code still works


@pytest.mark.parametrize(
    "code",
    [
        mint("tok", now=NOW - CODE_TTL_SECONDS),  # expired
        mint("an earlier start's token", now=NOW),
        mint("tok", now=NOW).replace(".", "", 1),
        "",
        "...",
        "zz.yy.xx",
    ],
    ids=["expired", "foreign", "malformed", "empty", "dots", "not hex"],
)
def test_an_expired_foreign_or_malformed_code_is_refused(code: str) -> None:
    with pytest.raises(errors.ApiError) as refused:
        SignIn("tok").redeem(code, now=NOW)
    assert refused.value.http_status == 401


def test_the_code_is_checked_in_its_whole() -> None:
    expiry, nonce, mac = mint("tok", now=NOW).split(".")
    later = f"{int(expiry, 16) + 10**6:x}"  # a longer life under the same MAC
    with pytest.raises(errors.ApiError):
        SignIn("tok").redeem(f"{later}.{nonce}.{mac}", now=NOW)


@pytest.mark.parametrize(
    "body", [b"", b"[]", b'{"code": 7}', b'{"cod": "x"}', b"\xff", b"{", b"[" * 100_000]
)
def test_a_malformed_body_is_a_400_naming_code(body: bytes) -> None:
    status, text = SignIn("tok").answer(body)
    assert status == 400 and b'"message": "code: ' in text


def test_over_http_the_code_is_the_only_credential(local_service: LocalService) -> None:
    url = f"{local_service.url}/console/signin"
    code = console_url(local_service.url, local_service.token).partition("#code=")[2]
    taken = requests.post(url, json={"code": code}, timeout=10)
    assert taken.status_code == 200 and taken.json() == {"token": local_service.token}
    assert taken.headers["Cache-Control"] == "no-store"
    again = requests.post(url, json={"code": code}, timeout=10)
    assert again.status_code == 401 and local_service.token not in again.text
    fresh = {"code": console_url(local_service.url, local_service.token).partition("#code=")[2]}
    foreign = requests.post(url, json=fresh, headers={"Origin": "http://evil.test"}, timeout=10)
    assert foreign.status_code == 403
    form = requests.post(url, data=fresh, timeout=10)
    assert form.status_code == 415
    assert requests.get(url, timeout=10).status_code == 401  # only POST is open
    assert requests.post(url, json=fresh, timeout=10).status_code == 200  # not spent by those


def test_vtp_local_console_prints_a_new_address_each_time(local_service: LocalService) -> None:
    def printed(*flags: str) -> str:
        argv = [sys.executable, "-m", "vtp", "local", "console", "--endpoint", local_service.url]
        done = subprocess.run([*argv, *flags], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    first, second = printed(), printed("--page", "/runs/r-1")
    assert re.fullmatch(rf"{local_service.url}/console/#code=[\w.-]+", first)
    assert second.endswith("&page=/runs/r-1") and first not in second
    for address in (first, second):
        code = address.partition("#code=")[2].partition("&")[0]
        answer = requests.post(
            f"{local_service.url}/console/signin", json={"code": code}, timeout=10
        )
        assert answer.status_code == 200


@pytest.mark.parametrize(
    ("flags", "named"),
    [(["--page", "runs"], "--page"), (["--endpoint", "http://127.0.0.1:9"], "vtp local serve")],
)
def test_vtp_local_console_refuses_bad_input_in_one_line(flags: list[str], named: str) -> None:
    argv = [sys.executable, "-m", "vtp", "local", "console", *flags]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and named in done.stderr
