"""Request bodies in Kubernetes' protobuf encoding, and the message table to read them."""
