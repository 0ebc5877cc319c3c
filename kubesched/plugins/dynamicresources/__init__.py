"""DynamicResources: devices from ResourceSlices for a pod's ResourceClaims (structured parameters)."""
