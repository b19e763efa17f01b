"""Observability at the edge: tracing set-up, the RPC interceptor, Prometheus metrics, logs."""
