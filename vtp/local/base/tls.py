"""The local service's own certificate authority, so that TLS clients (the SDK's gRPC transport)
can talk to it without turning verification off.

    <state-dir>/tls/ca.pem       the CA certificate (made once, kept across restarts)
    <state-dir>/tls/ca-key.pem   its private key (mode 0600)
    <state-dir>/tls/roots.pem    the CA followed by the public roots (certifi): what clients
                                 trust through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, so the same
                                 process still reaches real Google endpoints

Every start issues a fresh server certificate for localhost, 127.0.0.1 and ::1, signed by the CA.
Keys are ECDSA P-256: a certificate takes milliseconds to make.
"""

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_VALID_DAYS = 3650
SERVER_VALID_DAYS = 30
LOOPBACK_DNS = ("localhost",)
LOOPBACK_IPS = ("127.0.0.1", "::1")


@dataclass(frozen=True)
class ServerIdentity:
    """What a TLS server needs: its key and certificate chain (PEM), and the file that clients
    should trust."""

    key_pem: bytes
    cert_pem: bytes
    roots_file: Path


def server_identity(state_dir: Path) -> ServerIdentity:
    """A fresh server certificate signed by the state dir's CA (made on first use)."""
    folder = state_dir / "tls"
    ca_cert, ca_key = _certificate_authority(folder)
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in LOOPBACK_DNS]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in LOOPBACK_IPS]
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        _builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), key, now)
        .issuer_name(ca_cert.subject)
        .not_valid_after(now + datetime.timedelta(days=SERVER_VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    roots = folder / "roots.pem"
    _write(roots, ca_cert.public_bytes(serialization.Encoding.PEM) + _public_roots(), 0o644)
    return ServerIdentity(
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        roots_file=roots,
    )


def _certificate_authority(
    folder: Path,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    cert_file, key_file = folder / "ca.pem", folder / "ca-key.pem"
    if cert_file.exists() and key_file.exists():
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        if isinstance(key, ec.EllipticCurvePrivateKey) and _still_valid(cert):
            return cert, key
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vtp local Vertex service CA")])
    cert = (
        _builder(name, key, now)
        .issuer_name(name)
        .not_valid_after(now + datetime.timedelta(days=CA_VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(key_file, key_pem, 0o600)
    _write(cert_file, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert, key


def _builder(
    subject: x509.Name, key: ec.EllipticCurvePrivateKey, now: datetime.datetime
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
    )


def _still_valid(cert: x509.Certificate) -> bool:
    remaining = cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    return remaining > datetime.timedelta(days=SERVER_VALID_DAYS)


def _public_roots() -> bytes:
    try:
        import certifi

        return b"\n" + Path(certifi.where()).read_bytes()
    except (ImportError, OSError):
        return b""


def _write(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
    os.replace(temporary, path)
