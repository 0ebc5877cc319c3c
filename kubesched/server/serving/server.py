"""The listeners of ``kubesched run``: the secure port (HTTPS, delegated authn/authz) and,
only when asked for, the insecure port (plain HTTP, no authentication) for local runs.

Both serve the same aiohttp application; the authentication middleware checks what arrives
over TLS and lets plain HTTP through, so the insecure port must stay a deliberate choice.
"""

from __future__ import annotations

import logging
import os
import ssl
from dataclasses import dataclass, field

from aiohttp import web

from kubesched.server.serving.auth import DelegatingAuth, DelegationOptions, Reviewer
from kubesched.server.serving.certs import ServingError, server_ssl_context

log = logging.getLogger("kubesched")


@dataclass
class ServingOptions:
    bind_address: str = "0.0.0.0"
    #: HTTPS with delegated authentication and authorization; None: not served; 0: any free port.
    secure_port: int | None = 10259
    #: Plain HTTP, no authentication; None (the default): not served; 0: any free port.
    port: int | None = None
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    delegation: DelegationOptions = field(default_factory=DelegationOptions)

    def validate(self) -> None:
        """Raise :class:`ServingError` naming the flag at fault."""
        for flag, value in (("--secure-port", self.secure_port), ("--port", self.port)):
            if value is not None and not 0 <= value <= 65535:
                raise ServingError(f"{flag}: {value} is not a port number (0-65535)")
        if self.port and self.port == self.secure_port:
            raise ServingError(f"--port: {self.port} is also the --secure-port")
        if bool(self.tls_cert_file) != bool(self.tls_private_key_file):
            server_ssl_context(self.tls_cert_file, self.tls_private_key_file)  # raises, naming the missing flag
        d = self.delegation
        for flag, ttl in (
            ("--authentication-token-webhook-cache-ttl", d.token_cache_ttl),
            ("--authorization-webhook-cache-authorized-ttl", d.allow_cache_ttl),
            ("--authorization-webhook-cache-unauthorized-ttl", d.deny_cache_ttl),
        ):
            if ttl < 0:
                raise ServingError(f"{flag}: must not be negative, got {ttl}")


class Serving:
    """Serve ``app`` as ``options`` say; :attr:`secure_port` and :attr:`port` are the bound ports
    after :meth:`start` (None where nothing listens)."""

    def __init__(self, app: web.Application, options: ServingOptions, reviewer: Reviewer | None) -> None:
        self.options = options
        self.reviewer = reviewer
        self.auth = DelegatingAuth(reviewer, options.delegation)
        self.app = app
        self.secure_port: int | None = None
        self.port: int | None = None
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        o = self.options
        o.validate()
        if o.secure_port is None and o.port is None:
            log.warning("neither --secure-port nor --port: /healthz, /readyz, /livez and /metrics are not served")
            return
        ssl_context = server_ssl_context(o.tls_cert_file, o.tls_private_key_file) if o.secure_port is not None else None
        if o.secure_port is not None and not o.tls_cert_file:
            log.info("generated a self-signed certificate in memory")
        self.app.middlewares.append(self.auth.middleware())
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        if o.secure_port is not None:
            self.secure_port = await self._listen(o.secure_port, ssl_context)
            log.info(
                "serving securely on %s:%d (HTTPS; /healthz, /readyz, /livez open, /metrics for authorized tokens)",
                _shown(o.bind_address),
                self.secure_port,
            )
        if o.port is not None:
            self.port = await self._listen(o.port, None)
            log.warning(
                "serving insecurely on %s:%d (plain HTTP, no authentication: /metrics open to anyone who can reach it)",
                _shown(o.bind_address),
                self.port,
            )

    async def _listen(self, port: int, ssl_context: ssl.SSLContext | None) -> int:
        assert self._runner is not None
        site = web.TCPSite(self._runner, self.options.bind_address, port, ssl_context=ssl_context)
        # The runner lists the addresses of its sites in the order they started: this one's last.
        before = len(self._runner.addresses)
        try:
            await site.start()
        except OSError as exc:
            raise ServingError(cannot_listen(self.options.bind_address, port, exc)) from exc
        # Port 0 asks the OS for a free one; report the one we got.
        addresses = self._runner.addresses[before:]
        return int(addresses[0][1]) if addresses else port

    async def stop(self) -> None:
        """Stop listening and close the reviewer's client."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.reviewer is not None:
            await self.reviewer.close()
            self.reviewer = None


def cannot_listen(address: str, port: int, exc: OSError) -> str:
    """``cannot listen on 127.0.0.1:8080: address already in use``: the reason as the OS names
    its error (asyncio's and uvloop's messages repeat the address, and differ)."""
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return f"cannot listen on {_shown(address)}:{port}: {reason[:1].lower()}{reason[1:]}"


def _shown(address: str) -> str:
    """An address as ``host:port`` shows it (Go's net.JoinHostPort): an IPv6 one bracketed."""
    return f"[{address}]" if ":" in address else address
