"""Runs the plugin contract: a profile's Framework, the batch Filter, the entry-point registry and ``--plugin`` loading."""
