"""runtop's terminal interface: the command line (:mod:`tui.cli`, :mod:`tui.commands`)
and the Textual app (:mod:`tui.app`, its screens and widgets)."""
