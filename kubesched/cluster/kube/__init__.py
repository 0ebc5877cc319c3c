"""The cluster behind a kubeconfig: the Kubernetes API through kubernetes_asyncio."""
