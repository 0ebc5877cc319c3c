"""InterPodAffinity: required and preferred pod (anti-)affinity."""
