"""runtop's terminal interface: the command line and, later, the Textual app."""
