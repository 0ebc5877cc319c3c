"""The scheduler's state between cycles: the scheduling queue and the cache of nodes and assumed pods."""
