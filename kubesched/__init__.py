"""kubesched: the Kubernetes scheduling framework on asyncio."""

__version__ = "0.1.0"
