"""The volume plugins: VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits, and their helpers."""
