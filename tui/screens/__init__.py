"""The runtop screens."""
