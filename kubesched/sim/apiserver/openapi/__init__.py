"""The OpenAPI documents the embedded API server serves, and the type table they come from."""
