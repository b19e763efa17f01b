"""Observability hooks for core: stage timings that are also trace spans and metric samples.

Depends only on the OpenTelemetry API (a no-op unless the server installs an SDK) and on a
`TelemetrySink` the edge attaches per request; never on grpc or a metrics library.
"""
