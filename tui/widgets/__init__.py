"""The runtop widgets."""
