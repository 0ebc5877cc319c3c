"""TokenReview and SubjectAccessReview against the cluster: the calls ``kubesched run`` delegates
the authentication and authorization of its HTTPS endpoints to, as kube-scheduler does (the
scheduler's identity needs upstream's ``system:auth-delegator`` rights: create on both reviews).

The reviews go through their own client, with the same credentials as the scheduler's but its
own rate limit (QPS 200, burst 400, as upstream's delegating clients): a scrape of /metrics must
not wait behind a burst of bindings, nor spend their tokens.

Failures leave this module as :class:`~kubesched.cluster.base.ClusterError`.
"""

from __future__ import annotations

from typing import Any

from kubesched.cluster.base import ClusterError
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.objects import Obj

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#: Upstream's delegating clients: QPS 200, burst 400, 10 s per review.
REVIEW_QPS = 200.0
REVIEW_BURST = 400
REVIEW_TIMEOUT = 10.0


class KubeReviews:
    """``token_review`` and ``subject_access_review`` over the API server ``cluster`` talks to."""

    def __init__(self, cluster: KubeCluster) -> None:
        self._client = cluster.transport.sibling(
            "delegated-auth", request_timeout=REVIEW_TIMEOUT, qps=REVIEW_QPS, burst=REVIEW_BURST
        )

    async def token_review(self, token: str) -> Obj:
        """The ``status`` of a TokenReview of ``token`` (``authenticated``, ``user``, ``error``)."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        return _status(await self._client.request("POST", TOKEN_REVIEWS, body=body), "TokenReview")

    async def subject_access_review(self, spec: Obj) -> Obj:
        """The ``status`` of a SubjectAccessReview of ``spec`` (``allowed``, ``denied``, ``reason``)."""
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        return _status(await self._client.request("POST", SUBJECT_ACCESS_REVIEWS, body=body), "SubjectAccessReview")

    async def close(self) -> None:
        await self._client.close()


def _status(review: Obj, kind: str) -> Obj:
    status = review.get("status")
    if not isinstance(status, dict):
        raise ClusterError(f"the API server answered a {kind} without a status", 500)
    return status


def reviews_for(cluster: Any) -> KubeReviews | None:
    """The reviews of a cluster reached over the Kubernetes API; None for any other (in-memory) cluster."""
    return KubeReviews(cluster) if isinstance(cluster, KubeCluster) else None


__all__ = ["KubeReviews", "reviews_for"]
