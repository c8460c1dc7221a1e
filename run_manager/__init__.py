"""Give every agent run an id, a handle, a cancel switch and a ledger (issue 3)."""
