"""The runs screen's filter box: hidden until ``/`` opens it."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input

from tui.text import inert


class FilterBox(Input):
    """Where a filter is typed, each key as typed: a ``/`` typed first is the filter's
    first character, as in a bare regular expression (``/^summ/``), not the key that
    opened the box pressed again (``^summ/`` would be free text that matches nothing). A
    ``/`` pressed twice shows in the box, where backspace takes it out.

    The editing keys (``ctrl+u``, ``ctrl+w``, ``ctrl+k``, backspace, the cursor's) act as
    they arrive, in order with the characters typed after them: as the Input's bindings,
    Textual would run them only once the key had gone round the app, after the characters
    that followed it in one burst (a paste, tmux's send-keys) were typed. Enter submits at
    once, and the keys after it wait for the runs screen to say where they go (the
    table's, once the filter applies: ``status:failed``, Enter, ``?`` in one burst shows
    the keys, not a ``?`` in the box). ``up`` and
    ``down`` go through the filters applied before, as a shell's history does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # What the key bar says while the box is typed in (typing takes ? and q, and the
        # table's keys are not the box's): the box takes these keys itself as they come
        # (on_key), so the bindings name them; a click on one in the bar presses the key.
        Binding("enter", "submit", "Apply"),
        Binding("escape", "screen.clear_filter", "Clear filter"),
        Binding("up", "recall(-1)", "Earlier filters"),
    ]

    EDITING: ClassVar[dict[str, Callable[[FilterBox], None]]] = {
        "ctrl+u": Input.action_delete_left_all,
        "super+backspace": Input.action_delete_left_all,
        "ctrl+w": Input.action_delete_left_word,
        "ctrl+k": Input.action_delete_right_all,
        "backspace": Input.action_delete_left,
        "delete": Input.action_delete_right,
        "ctrl+d": Input.action_delete_right,
        "left": Input.action_cursor_left,
        "right": Input.action_cursor_right,
        "home": Input.action_home,
        "ctrl+a": Input.action_home,
        "end": Input.action_end,
        "ctrl+e": Input.action_end,
    }
    """The keys the box edits with as they come (the Input binds them: too late)."""

    RECALLING: ClassVar[frozenset[str]] = frozenset({"up", "down"})

    SUBMITTING: ClassVar[frozenset[str]] = frozenset({"enter", "ctrl+j"})
    """Enter; and ``ctrl+j``, as Enter typed before the app set the terminal to raw reads
    (a line feed: the terminal turns a return into one): ``/``, a filter and Enter typed
    as the app starts apply the filter."""

    BORDER: ClassVar[int] = 6
    """The cells of the box's bottom line that are not what it says (corners, spaces)."""

    class SaidMore(Message):
        """What the box says is longer than its bottom line: ``rest`` goes below it."""

        def __init__(self, rest: str) -> None:
            self.rest = rest
            super().__init__()

    def __init__(self, value: str, *, history: list[str], placeholder: str, id: str) -> None:
        super().__init__(value, placeholder, select_on_focus=False, id=id)
        # Not on focus: the box takes focus after keys typed in a burst with ``/`` went in,
        # and selecting them then would have the next key replace them ("/status:failed"
        # would leave "led"). The runs screen selects the last filter when it opens the box.
        self.history = history
        """The filters applied this session, oldest first (shared with the runs screen)."""
        self._recalled: int | None = None
        """Which of :attr:`history` the box holds (``up``), ``None`` while it is typed."""
        self._draft = ""
        """What was typed before ``up`` recalled a filter: ``down`` past the newest is it."""
        self.held: list[tuple[str, str | None]] | None = None
        """The keys that came after Enter, before the filter was applied or refused
        (:meth:`release`); ``None`` while the box is typed in."""
        self.said = ""
        """What the box says on its bottom line (and below it, when longer)."""
        self._rest = ""

    def say(self, said: str) -> None:
        """Say ``said`` (why a filter is not applied) on the box's bottom line; what does
        not fit goes on the lines below it (:class:`SaidMore`), cut between words. At 80
        columns the line cut the list of the statuses a filter may name (``…, s…``)."""
        self.said = inert(said, single_line=True)
        self._lay_out_said()

    def on_resize(self) -> None:
        self._lay_out_said()  # the keys help, opened beside the box, narrows it

    def _lay_out_said(self) -> None:
        width = self.outer_size.width
        room = width - self.BORDER if width else len(self.said)
        head, rest = self.said, ""
        if len(head) > room:
            cut = head.rfind(" ", 0, max(1, room - 1))
            cut = cut if cut > 0 else max(1, room - 2)
            head, rest = head[:cut] + " …", "… " + head[cut:].lstrip()
        self.border_subtitle = Text(head) if head else None
        if rest != self._rest:
            self._rest = rest
            self.post_message(self.SaidMore(rest))

    def submit_now(self) -> None:
        """Enter: the filter is submitted now, and the keys after it are held till it is
        applied (they are the table's then) or refused (the box's)."""
        self.held = []
        self.post_message(self.Submitted(self, self.value))

    def release(self) -> list[tuple[str, str | None]]:
        """The keys held since Enter (key, character), in order; the box takes keys again."""
        held, self.held = self.held or [], None
        return held

    def open(self) -> None:
        """The box is opened (``/``): typed, not recalled, and taking keys."""
        self._recalled = None
        self.held = None

    def takes(self, key: str) -> bool:
        """Whether ``key``, typed now, goes into the box: every key typed does (a ``/``
        first too: it starts a regular expression)."""
        if key not in self.RECALLING:
            self._recalled = None  # typed over: up starts from the newest again
        return True

    @classmethod
    def edits_with(cls, key: str) -> bool:
        """Whether ``key`` edits the box (or recalls a filter), as the box takes it."""
        return key in cls.EDITING or key in cls.RECALLING

    def edit(self, key: str) -> None:
        """Edit as ``key`` does (see :attr:`EDITING`), or recall a filter (``up``, ``down``)."""
        if key in self.RECALLING:
            self.recall(-1 if key == "up" else 1)
            return
        self.EDITING[key](self)

    def action_recall(self, step: int) -> None:
        self.recall(step)

    def recall(self, step: int) -> None:
        """The filter applied before the one shown (``-1``), or after it (``1``)."""
        if not self.history:
            return
        at = len(self.history) if self._recalled is None else self._recalled
        to = at + step
        while 0 <= to < len(self.history) and self.history[to] == self.value:
            to += step  # the filter shown already: the one before it
        if not 0 <= to <= len(self.history) or to == at:
            return
        if self._recalled is None:
            self._draft = self.value
        self._recalled = None if to == len(self.history) else to
        self.value = self._draft if self._recalled is None else self.history[to]
        self.cursor_position = len(self.value)

    def allow_focus(self) -> bool:
        return self.has_class("open")  # closed, it is hidden: not a stop of tab's round

    def on_key(self, event: events.Key) -> None:
        if self.held is None and self.screen.focused is not self:
            # Sent here before Enter applied the filter and the table took focus: the key is
            # sent round the app again, to the table (a burst of ``status:failed``, Enter,
            # ``j``: ``j`` moves down), as the keys held since Enter are.
            event.stop()
            event.prevent_default()
            self.app.post_message(events.Key(event.key, event.character).set_sender(self.app))
        elif self.held is not None:  # after Enter: not the box's till it is known whose
            event.stop()
            event.prevent_default()
            self.held.append((event.key, event.character))
        elif event.key in self.SUBMITTING:
            event.stop()  # not the Input's binding, later, after the keys that follow
            event.prevent_default()
            self.submit_now()
        elif self.takes(event.key) and self.edits_with(event.key):
            event.stop()  # the binding is not run too, later
            event.prevent_default()
            self.edit(event.key)
