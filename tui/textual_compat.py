"""The few things runtop needs of Textual beyond its public API, in one place.

Each is a private name of Textual's, written for the version pinned in
``constraints.txt`` (:data:`WRITTEN_FOR`): a new Textual may rename or drop
any of them without a word. So nothing else in ``tui/`` or its tests touches
one (``tests/tui/test_textual_compat.py`` reads every module for them), and
importing this module checks that each is still there, failing at once,
by name, rather than at the first crash or notice.

What is here, and why no public way does it:

- :class:`CompatApp`: an App whose crash is said in one line (Textual prints
  a Rich traceback with its locals, ledger text among them) and whose first
  frame after start-up is written whole (Textual writes only what changed
  since the frames it held back while starting, which it never wrote).
- :func:`notices_shown` and :func:`withdraw_notice`: the notices on show,
  and taking one away before its time (Textual offers only "clear all").
- :func:`refresh_scrollbars`: a scroll view whose virtual size it set itself
  (as Textual's TextArea does) shows the scroll bar that size asks for.
- :func:`grow_scroll_range`: a live view's scroll range grows without laying
  the screen out (Textual's ``virtual_size`` does at every change).
- :func:`resize_to_content`: a widget whose content changed is measured anew at
  the next layout (Textual may keep the size measured for its old content).
- :func:`screen_lines`, :func:`screen_text` and :func:`forwarded_key`: what
  a screen shows, as text, and a key as the app hands it to a widget; for the
  tests, which check what a user sees.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from typing import Any, Final, TypeVar

from rich.console import RenderableType
from textual.app import App
from textual.events import Key
from textual.geometry import Size
from textual.notifications import Notification
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

WRITTEN_FOR: Final = "8.2.8"
"""The Textual version whose private names this module uses (pinned in constraints.txt)."""

USED: Final[dict[type[Any], tuple[str, ...]]] = {
    App: (
        "_handle_exception",
        "_exit_renderables",
        "_display",
        "_batch_count",
        "_notifications",
        "_unnotify",
    ),
    Screen: ("_compositor",),
    Widget: ("_refresh_scrollbars", "_scroll_update", "_box_model_cache"),
    Key: ("_set_forwarded",),
}
"""The private names used, by the class that has them (an instance's are set in its
``__init__``: looked for in the names its code uses)."""

FrameWatcher = Callable[[Screen[Any], RenderableType | None], None]

ReturnType = TypeVar("ReturnType")


class TextualChanged(ImportError):
    """The Textual installed lacks a private name this module needs."""


def _set_in_init(owner: type[Any], name: str) -> bool:
    """Whether ``owner.__init__`` sets or reads ``name``: the names its code uses, read from
    the compiled function (reading the class's source parses Textual's modules at every
    launch)."""
    code = getattr(owner.__init__, "__code__", None)
    return code is not None and name in code.co_names


def _check() -> None:
    for owner, names in USED.items():
        missing = [name for name in names if not hasattr(owner, name)]
        missing = [name for name in missing if not _set_in_init(owner, name)]
        if missing:
            raise TextualChanged(
                f"runtop was written for Textual {WRITTEN_FOR}; Textual {version('textual')} "
                f"has no {owner.__name__}.{', '.join(missing)}: install textual=={WRITTEN_FOR}"
            )


_check()


class CompatApp(App[ReturnType]):
    """An App that says its crash in one line and writes its first frame whole."""

    crash: BaseException | None = None
    """The exception the app died of, if it did: the command line says it in one line
    and keeps the traceback in a file (``tui.crash``)."""

    frame_watchers: list[FrameWatcher]
    """Called with each frame the app writes, after it is written (the tests watch them)."""

    held_back_a_frame = False
    """A frame was laid out while Textual held frames back (its start-up): the next one
    written is written whole."""

    def __init__(self) -> None:
        super().__init__()
        self.frame_watchers = []

    def _handle_exception(self, error: Exception) -> None:
        # Textual's hook for an exception nothing handled: the app exits, with no traceback
        # printed (its locals would print ledger text).
        if self.crash is None:
            self.crash = error
        super()._handle_exception(error)
        self._exit_renderables.clear()

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        # Textual's hook that writes a frame. While it starts, it holds frames back (a batch
        # update): the first screen's first frame would never be written, and the next would
        # hold only what changed since (rows, without the source line and titles over them).
        if renderable is not None and self._batch_count:
            self.held_back_a_frame = True
        elif renderable is not None and self.held_back_a_frame and screen is self.screen:
            self.held_back_a_frame = False
            renderable = screen._compositor.render_full_update()
        super()._display(screen, renderable)
        for watcher in self.frame_watchers:
            watcher(screen, renderable)


def notices_shown(app: App[Any]) -> list[Notification]:
    """The notices on show (or waiting to be), oldest first."""
    return list(app._notifications)


def withdraw_notice(app: App[Any], notice: Notification) -> None:
    """Take ``notice`` off the screen, as a toast that times out goes.

    Textual takes the toast away but leaves its holder, which keeps its line: the next
    notice would show a line lower. The holder goes too, as when a toast times out.
    """
    if notice in app._notifications:
        app._unnotify(notice)
    holder_id = f"--textual-toast-{notice.identity}"  # ToastRack._toast_id
    for screen in app.screen_stack:
        for holder in screen.query("ToastHolder"):
            if holder.id == holder_id:
                holder.remove()


def refresh_scrollbars(view: ScrollView) -> None:
    """Show the scroll bars ``view``'s virtual size asks for now, not as last laid out."""
    view._refresh_scrollbars()


def grow_scroll_range(view: ScrollView, size: Size) -> None:
    """Set ``view``'s virtual size; when it only grows taller, without a layout.

    A line view of a live run grows at every change of the run, many times a second,
    and a layout of the whole screen for each cost more than drawing it. Growing taller
    changes nothing laid out but the scroll bar, which is updated here (a bar that comes
    or goes still lays the screen out: Textual's own reactive does that).
    """
    old = view.virtual_size
    if size.width != old.width or size.height < old.height or not view.is_mounted:
        view.virtual_size = size
        return
    if size.height != old.height:
        view.set_reactive(Widget.virtual_size, size)
        view._scroll_update(size)


def resize_to_content(widget: Widget) -> None:
    """Lay ``widget`` out again, measured anew for the content it has now.

    Textual keeps a widget's measured size under a count of the layouts asked of it,
    and a second ask before the first is carried out does not count: if the screen
    was laid out in between (for another widget), the size measured then, for the
    old content, is kept. A timeline's summary that came to wrap stayed one line
    (``tests/tui/test_snapshots.py::test_comparison`` at 80x24, about one run in ten).
    """
    widget._box_model_cache.clear()
    widget.refresh(layout=True)


def screen_strips(screen: Screen[Any]) -> list[Strip]:
    """The lines ``screen`` shows now, as drawn."""
    return list(screen._compositor.render_strips())


def screen_lines(screen: Screen[Any]) -> list[str]:
    """The lines ``screen`` shows now, as text."""
    return [strip.text for strip in screen_strips(screen)]


def screen_update(screen: Screen[Any]) -> RenderableType | None:
    """The whole of ``screen`` as a renderable a Rich console can print."""
    return screen._compositor.render_update(full=True)


def forwarded_key(key: str, character: str | None) -> Key:
    """A key as the app hands it on to the focused widget (it has been through the app's
    priority bindings)."""
    event = Key(key, character)
    event._set_forwarded()
    return event
