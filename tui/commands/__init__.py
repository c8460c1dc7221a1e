"""One module per ``runtop`` command, each with a ``run(args, out, err) -> int``.

:mod:`tui.cli` parses the command line and imports only the command asked
for: ``ls``, ``show`` and ``cancel`` never load Textual, and only ``serve``
and ``demo`` load the run manager. Every module here reports a failure a user
can cause as a :class:`~tui.commands.targets.CommandError`.
"""
