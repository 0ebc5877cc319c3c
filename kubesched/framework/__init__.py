"""The plugin contract (upstream's ``k8s.io/kube-scheduler/framework``). Imports nothing else of
kubesched but the ground floor (``kubesched.errors``, ``kubesched.objects``); what runs it lives
in ``kubesched.runtime``.

Plugin authors import from ``kubesched`` (the face); this package holds the contract's modules,
each imported by its own name: it re-exports nothing, so the face is the one place that does."""
