"""How ``kubesched run`` serves /healthz, /readyz, /livez and /metrics, as kube-scheduler serves them.

HTTPS on ``--secure-port`` (10259) with a certificate from ``--tls-cert-file``/``--tls-private-key-file``
or one generated in memory at start (:mod:`.certs`); bearer tokens checked by a TokenReview and
requests authorized by a SubjectAccessReview against the cluster, answers cached briefly, the
health paths always allowed (:mod:`.auth`); optionally plain HTTP without any of that on ``--port``
for local runs (:mod:`.server`).
"""

from kubesched.server.serving.auth import ANONYMOUS, DelegatingAuth, DelegationOptions, Reviewer, User
from kubesched.server.serving.certs import ServingError, self_signed_certificate, server_ssl_context
from kubesched.server.serving.server import Serving, ServingOptions

__all__ = [
    "ANONYMOUS",
    "DelegatingAuth",
    "DelegationOptions",
    "Reviewer",
    "Serving",
    "ServingError",
    "ServingOptions",
    "User",
    "self_signed_certificate",
    "server_ssl_context",
]
