"""The UI-free model of runs the TUI draws, whatever source they come from (issue 4)."""
