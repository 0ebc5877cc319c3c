"""The serving certificate: files given by the user, or a self-signed one made in memory at start.

Like kube-scheduler (which makes its own for ``localhost`` and ``127.0.0.1`` when no
``--tls-cert-file`` is given and no ``--cert-dir`` is set), the generated certificate is never
written anywhere that outlives the load: clients are expected to skip verification (probes,
Prometheus with ``insecureSkipVerify``) or to be given a real certificate.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubesched.errors import ConfigurationError

#: How long a generated certificate is valid (upstream: one year).
SELF_SIGNED_VALIDITY = datetime.timedelta(days=365)


class ServingError(ConfigurationError):
    """The endpoints cannot be served as asked (unreadable or mismatched certificate, bad options)."""


def self_signed_certificate(
    host: str = "localhost", ips: tuple[str, ...] = ("127.0.0.1",), dns: tuple[str, ...] = ()
) -> tuple[bytes, bytes]:
    """A fresh self-signed serving certificate and its key, both PEM: CN ``<host>@<unix time>``
    (as upstream names it), valid for ``host``, ``dns`` and ``ips`` for :data:`SELF_SIGNED_VALIDITY`."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(time.time())}")])
    now = datetime.datetime.now(datetime.UTC)
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in (host, *dns)]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        # Backdated a little: a client whose clock is slightly behind must not see it as not yet valid.
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + SELF_SIGNED_VALIDITY)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def _context() -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    # Upstream's default minimum.
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def server_ssl_context(cert_file: str | None = None, key_file: str | None = None) -> ssl.SSLContext:
    """The TLS context of the secure port: ``cert_file``/``key_file`` (both or neither), else a
    self-signed certificate generated now. Raises :class:`ServingError` naming the flag at fault."""
    if bool(cert_file) != bool(key_file):
        missing = "--tls-private-key-file" if cert_file else "--tls-cert-file"
        raise ServingError(f"{missing}: required when the other of --tls-cert-file/--tls-private-key-file is given")
    ctx = _context()
    if cert_file and key_file:
        for flag, path in (("--tls-cert-file", cert_file), ("--tls-private-key-file", key_file)):
            if not os.path.isfile(path):
                raise ServingError(f"{flag}: {path}: no such file")
        try:
            ctx.load_cert_chain(cert_file, key_file)
        except (ssl.SSLError, OSError) as exc:
            raise ServingError(
                f"--tls-cert-file/--tls-private-key-file: cannot load {cert_file} with {key_file}: {exc}"
            ) from exc
        return ctx
    return ssl_context_from_pem(*self_signed_certificate())


def ssl_context_from_pem(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    """A server TLS context from a certificate and key held in memory."""
    ctx = _context()
    # The ssl module loads only from files: a private directory, removed as soon as it is read.
    with tempfile.TemporaryDirectory(prefix="kubesched-serving-") as tmp:
        cert_path, key_path = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(cert_path, key_path)
    return ctx
