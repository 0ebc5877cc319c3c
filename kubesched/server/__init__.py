"""The ``kubesched run`` process: the application, health and metrics, kube-scheduler's flags, secure serving."""
