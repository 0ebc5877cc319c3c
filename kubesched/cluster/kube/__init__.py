"""The cluster behind a kubeconfig: the Kubernetes API through kubernetes_asyncio.

One job per module: :mod:`~kubesched.cluster.kube.transport` (configuration, credentials,
requests, rate limit), :mod:`~kubesched.cluster.kube.informer` (list and watch),
:mod:`~kubesched.cluster.kube.events` (the event recorder), :mod:`~kubesched.cluster.kube.leases`
(the Lease reads and writes leader election makes), :mod:`~kubesched.cluster.kube.paths` (where
each kind lives in the API), :mod:`~kubesched.cluster.kube.delegated_auth` (token and access
reviews), and :mod:`~kubesched.cluster.kube.cluster`, whose ``KubeCluster`` composes them.
"""
