"""runtop: see, stop and replay AI agent runs from the terminal.

``python -m runtop`` is the ``runtop`` command line (:mod:`tui.cli`). The
library is :mod:`run_manager` (``Manager``, ``tool_call``, ``model_call``,
``approval``); the reading side, for tools of your own, is :mod:`inspector`.
runtop is installed as ``runtop-agents`` (``runtop`` on the package index is
another project); the command and this package are ``runtop``.
"""
