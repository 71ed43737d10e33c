"""The local service's own certificate authority, so that TLS clients (the SDK's gRPC transport)
can talk to it without turning verification off.

    <state-dir>/tls/ca.pem       the CA certificate (made once, kept across restarts)
    <state-dir>/tls/ca-key.pem   its private key (mode 0600)
    <state-dir>/tls/roots.pem    the CA followed by everything the service's children would
                                 trust without it (below): what clients trust through
                                 GRPC_DEFAULT_SSL_ROOTS_FILE_PATH and REQUESTS_CA_BUNDLE

Every start issues a fresh server certificate for localhost, 127.0.0.1 and ::1, signed by the CA.
Keys are ECDSA P-256: a certificate takes milliseconds to make.

Trust is added, never replaced. Tasks, replicas and serving processes get roots.pem as their
REQUESTS_CA_BUNDLE and GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, which hide whatever those clients trusted
before, so roots.pem holds, after the CA and without duplicates:

- the files that the service's environment names in TRUST_ENV (a proxy's CA, a company root):
  SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, PIP_CERT, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH;
- the system's default bundle (`ssl.get_default_verify_paths()`: its cafile, else OpenSSL's
  default cafile, else the certificates in its capath), which OpenSSL-based clients and pip's
  truststore use when nothing is named;
- certifi's public roots, which requests uses when nothing is named (gRPC's built-in roots are the
  same Mozilla list).

pip needs no PIP_CERT of its own: its vendored requests lets REQUESTS_CA_BUNDLE from the
environment override `--cert`/PIP_CERT, so a task's pip reads roots.pem, which holds PIP_CERT's
certificates; a `pip install` works wherever it works without the service.
"""

import base64
import binascii
import datetime
import ipaddress
import os
import re
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from vtp import private_files

CA_VALID_DAYS = 3650
SERVER_VALID_DAYS = 30
LOOPBACK_DNS = ("localhost",)
LOOPBACK_IPS = ("127.0.0.1", "::1")
TRUST_ENV = (
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PIP_CERT",
    "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH",
)
"""Variables naming a CA bundle that some client would trust instead of its default."""
_PEM_CERTIFICATE = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----"
)


@dataclass(frozen=True)
class ServerIdentity:
    """What a TLS server needs: its key and certificate chain (PEM), and the file that clients
    should trust."""

    key_pem: bytes
    cert_pem: bytes
    roots_file: Path


def server_identity(state_dir: Path, environ: Mapping[str, str] = os.environ) -> ServerIdentity:
    """A fresh server certificate signed by the state dir's CA (made on first use), and roots.pem
    made anew: the CA plus what children started with `environ` would otherwise trust."""
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
    _write(
        roots, trust_bundle(ca_cert.public_bytes(serialization.Encoding.PEM), environ, roots), 0o644
    )
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


def trust_bundle(
    ca_pem: bytes, environ: Mapping[str, str] = os.environ, target: Path | None = None
) -> bytes:
    """`ca_pem` followed by every certificate of `trusted_files(environ)` (the bundle `target`
    being made is not read back), each once, in PEM."""
    seen: set[bytes] = set()
    blocks: list[bytes] = []
    sources = [ca_pem] + [_read(p) for p in trusted_files(environ) if not _same(p, target)]
    for data in sources:
        for der in _certificates(data):
            if der not in seen:
                seen.add(der)
                blocks.append(_pem(der))
    return b"".join(blocks)


def trusted_files(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """The CA bundles that a child started with `environ` trusts without the service: the files
    named in TRUST_ENV, the system default bundle, certifi's (each once, those that exist)."""
    candidates = [Path(environ[name]) for name in TRUST_ENV if environ.get(name)]
    candidates += _system_bundle(environ)
    try:
        import certifi

        candidates.append(Path(certifi.where()))
    except ImportError:
        pass
    files: list[Path] = []
    for path in candidates:
        if path.is_file() and not any(_same(path, f) for f in files):
            files.append(path)
    return files


def _system_bundle(environ: Mapping[str, str]) -> list[Path]:
    """OpenSSL's default trust: its cafile (SSL_CERT_FILE when `environ` sets it), else the
    compiled-in cafile, else the certificates in its capath (SSL_CERT_DIR, else compiled-in)."""
    paths = ssl.get_default_verify_paths()
    for cafile in (environ.get(paths.openssl_cafile_env), paths.openssl_cafile):
        if cafile and Path(cafile).is_file():
            return [Path(cafile)]
    for capath in (environ.get(paths.openssl_capath_env), paths.openssl_capath):
        if capath and Path(capath).is_dir():
            return sorted(p for p in Path(capath).iterdir() if p.suffix in (".pem", ".crt"))
    return []


def _certificates(data: bytes) -> Iterator[bytes]:
    """The DER bytes of each PEM certificate in `data` (what is not one is skipped)."""
    for match in _PEM_CERTIFICATE.finditer(data):
        try:
            yield base64.b64decode(b"".join(match.group(1).split()), validate=True)
        except (binascii.Error, ValueError):
            continue


def _pem(der: bytes) -> bytes:
    body = base64.b64encode(der)
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return b"-----BEGIN CERTIFICATE-----\n" + b"\n".join(lines) + b"\n-----END CERTIFICATE-----\n"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _same(path: Path, other: Path | None) -> bool:
    try:
        return other is not None and path.resolve() == other.resolve()
    except OSError:
        return False


def _write(path: Path, data: bytes, mode: int) -> None:
    private_files.write_private(path, data, mode)  # a new file, in a folder of the user's alone
