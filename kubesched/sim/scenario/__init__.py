"""Scenarios: reading manifests, steps in time, and the GPU trace."""
