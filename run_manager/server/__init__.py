"""``runtop serve``: a run manager's attach API (HTTP and SSE), with OTLP ingest beside it.

The library (``run_manager``) never imports this package; the server imports the library.
"""
