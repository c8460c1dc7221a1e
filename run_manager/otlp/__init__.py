"""OpenTelemetry traces in, ledgers out: ``runtop serve``'s OTLP ingest (``OTLP.md``).

Needs the ``otlp`` extra. The library never imports this package.
"""
