"""The service's roots.pem adds its CA to what children trust; it never replaces that trust."""

import datetime
import hashlib
import ssl
from pathlib import Path

import certifi
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from vtp.local.base import tls


def self_made_ca(name: str) -> bytes:
    """A CA certificate (PEM) that no public or system bundle holds."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def certificates(pem: bytes) -> list[bytes]:
    """The DER bytes of each certificate in `pem`."""
    end = "-----END CERTIFICATE-----"
    blocks = pem.decode("ascii", "replace").split(end)[:-1]
    return [
        ssl.PEM_cert_to_DER_cert(b[b.index("-----BEGIN CERTIFICATE-----") :] + end) for b in blocks
    ]


def fingerprints(pem: bytes) -> list[bytes]:
    return [hashlib.sha256(der).digest() for der in certificates(pem)]


def roots_of(state_dir: Path, environ: dict[str, str]) -> bytes:
    return tls.server_identity(state_dir, environ).roots_file.read_bytes()


def test_the_bundle_keeps_the_parents_named_files_the_system_bundle_and_certifi(tmp_path):
    proxy_ca, pip_ca = self_made_ca("a proxy's CA"), self_made_ca("pip's own CA")
    (tmp_path / "proxy.pem").write_bytes(proxy_ca)
    (tmp_path / "pip.pem").write_bytes(pip_ca)
    environ = {"SSL_CERT_FILE": str(tmp_path / "proxy.pem"), "PIP_CERT": str(tmp_path / "pip.pem")}

    roots = fingerprints(roots_of(tmp_path / "state", environ))

    service_ca = (tmp_path / "state" / "tls" / "ca.pem").read_bytes()
    assert roots[0] == fingerprints(service_ca)[0]  # the service's CA comes first
    assert set(fingerprints(proxy_ca) + fingerprints(pip_ca)) <= set(roots)
    assert set(fingerprints(Path(certifi.where()).read_bytes())) <= set(roots)
    assert len(roots) == len(set(roots))  # each once


def test_with_nothing_named_the_system_default_bundle_is_kept(tmp_path):
    paths = ssl.get_default_verify_paths()
    system = next(
        (Path(f) for f in (paths.cafile, paths.openssl_cafile) if f and Path(f).is_file()), None
    )
    roots = set(fingerprints(roots_of(tmp_path, {})))
    if system is not None:  # a machine without a system bundle file has nothing to keep
        assert set(fingerprints(system.read_bytes())) <= roots


def test_a_restart_makes_the_same_bundle_and_never_reads_its_own_back(tmp_path):
    stale = self_made_ca("gone from the machine")
    (tmp_path / "tls").mkdir()
    (tmp_path / "tls" / "roots.pem").write_bytes(stale)
    environ = {"REQUESTS_CA_BUNDLE": str(tmp_path / "tls" / "roots.pem")}  # e.g. a nested service

    first = roots_of(tmp_path, environ)
    assert fingerprints(stale)[0] not in fingerprints(first)
    assert roots_of(tmp_path, environ) == first


def test_junk_and_missing_files_are_skipped(tmp_path):
    (tmp_path / "junk.pem").write_bytes(
        b"not a certificate\n-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"
    )
    environ = {
        "CURL_CA_BUNDLE": str(tmp_path / "junk.pem"),
        "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(tmp_path / "absent.pem"),
    }
    roots = roots_of(tmp_path, environ)
    assert certificates(roots)  # the CA and the defaults, all loadable
    ssl.create_default_context(cadata=roots.decode())
