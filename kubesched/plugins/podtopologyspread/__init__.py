"""PodTopologySpread and the per-topology counts it keeps."""
