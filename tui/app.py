"""The runtop app: one store of runs, the runs screen, and the one-key actions.

:func:`make_app` builds it from :class:`~tui.settings.Settings` and the
sources to open; tests use the same factory.
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from pathlib import PurePath
from time import monotonic
from typing import Any, ClassVar, Final

from rich.console import RenderableType
from textual import work
from textual.actions import ActionParseResult, SkipAction
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.events import Event, Key
from textual.notifications import Notification, Notify
from textual.screen import ModalScreen, Screen
from textual.timer import Timer

from inspector import ActionRefused, ReplaySource, RunKey, RunSource, RunStore, RunView
from inspector.filters import FIELDS as FILTER_FIELDS
from tui.format import short_id
from tui.screens.runs import RunsScreen
from tui.screens.selected_run import SelectedRunScreen
from tui.settings import Settings, load_state, save_state
from tui.store_news import StoreNews

ACTION_KEYS = {"c": "cancel", "r": "resume", "a": "approve", "d": "approve"}
"""What the store is asked it can do to the run for each run key (a denial answers an
approval too): why the key is greyed, if it is."""

RUN_KEYS: Final[dict[str, str]] = {"c": "cancel", "r": "resume", "a": "approve", "d": "deny"}
"""The keys that open a confirmation over the run selected, and their actions."""

KEY_ON_ITS_WAY_AT_MOST: Final = 1.0
"""Seconds a key handed on is taken to be on its way, at most: one whose widget went away
with it (a screen popped) never says it has gone round."""

HELD_AT_MOST: Final = 10.0
"""Seconds keys are held behind a run key at most, should it be lost on its way without
going round (it goes round in milliseconds; on a loaded machine a held second let the
burst go on while the key was still on its way: its letters ran as keys)."""

PALETTE_SAYS: Final[dict[str, str]] = {
    "quit": "Leave runtop",
    "help": "Every key of this screen and what it does",
    "open": "The selected run: its events, as they come",
    "calls": "The selected tool's calls: run, time, duration, outcome",
    "back": "The screen before this one",
    "cancel": "Cancel the selected run, with a reason",
    "resume": "Re-issue the selected run with its input",
    "approve": "Approve the selected run's pending approval",
    "deny": "Deny the selected run's pending approval",
    "copy": "Copy the selected run's id",
    "tools": "Per-tool counts, errors and latencies",
    "replay_toggle": "Pause the replay, or play it",
    "replay_step": "One more event of the replay",
    "replay_speed": "The replay's speed: 1x, 2x, 10x, at once",
    "replay_restart": "The replay again from the start",
    "swap": "The compared runs the other way round",
    "zoom(2)": "Around the selected node",
    "zoom(0.5)": "Around the selected node",
    "whole": "The timeline of the whole run again",
    "choose": "The selected node's event in the event stream",
}
"""What an action does, as the command palette says it under its title (the key bar's word
for it: one word for one action, in the bar, the palette and ``?``), before its key."""

RUNS_PALETTE_SAYS: Final[dict[str, str]] = {
    "filter": "The runs by "
    + ", ".join(f"{field}:" for field in FILTER_FIELDS)
    + ", text, /regex/",
    "sort": "Cycle the column the runs are sorted by",
    "reverse": "The sort the other way round, by the same column",
    "tree": "Child runs under their parent",
    "mark": "Mark the selected run to compare, or unmark it",
    "toggle_mark": "Mark the selected run to compare, or unmark it",
    "compare": "The two marked runs side by side",
}
"""What the runs screen's actions do, in the palette."""

RUN_PALETTE_SAYS: Final[dict[str, str]] = {
    "back": "Close the search or the timeline, else back to the runs",
    "copy": "Copy the selected event's detail, else the run id",
    "follow": "Keep the newest event selected and in view",
    "show_all": "Show all of a long output",
    "raw": "The selected event's ledger line",
    "parent": "Open the run that started this one, or the one it was resumed from",
    "compare": "This run beside the run it resumed, or that resumed it",
    "search": "Find text in the run's events; n / N step",
    "next_match": "The next match of the search",
    "previous_match": "The match before",
    "timeline": "Where the run's time went, node by node",
}
"""What a run screen's actions do, in the palette."""

MOST_NOTICES: Final = 5
"""Notices on show at once over a screen, at most: a sixth takes the oldest's place (a burst
of them rose over the runs' source line and counts at 80x24)."""

MOST_NOTICES_ON_A_RUN: Final = 1
"""On a run, one notice at a time, the newest: in the line under its counts, as a status
line says a message (a second one went over the detail pane)."""

IMPORT_RUN_SCREEN_AFTER: Final = 0.3
"""Seconds after the first frame that the run screen is imported, on the main thread."""


class RuntopApp(App[None]):
    """Watch agent runs, open one, and cancel, resume or approve with one key."""

    TITLE = "runtop"

    CSS_PATH: ClassVar[list[str | PurePath]] = [
        *(
            f"widgets/{name}.tcss"
            for name in (
                "key_bar",
                "run_table",
                "source_line",
                "run_preview",
                "keys_help",
            )
        ),
        "screens/runs.tcss",
        "notices.tcss",
    ]
    """The styles of the first screen's widgets, beside them (a screen's are beside the
    screen, its CSS_PATH, with those of widgets only it shows: read when it is first shown).

    The runs screen's too, though it names them itself: the first screen's styles read
    with the app's, its push does not parse every style again (Textual re-parses all
    sources when a screen brings a new one: ~15 ms of the first frame here).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        # The keys that open a confirmation have priority: run as the app takes the key from
        # the terminal, before it hands on the keys that came after it (a reason and Enter,
        # typed in one burst), so those reach the confirmation, not the table under it. An
        # Input focused takes them as letters first (Textual leaves a priority binding out
        # where the focused Input would take its key): the filter box, the palette's, a
        # reason box. See _run_key_now for when they wait their turn instead.
        Binding("c", "cancel", "Cancel run", priority=True),
        Binding("r", "resume", "Resume", priority=True),
        Binding("a", "approve", "Approve", priority=True),
        Binding("d", "deny", "Deny", priority=True),
        Binding("y", "copy", "Copy"),
        Binding("t", "tools", "Tool calls"),
        Binding("question_mark", "help", "Keys"),
        Binding("escape", "close_help", "Close the keys", show=False, priority=True),
        Binding("space", "replay_toggle", "Pause/play"),
        Binding("n", "replay_step", "Step"),
        Binding("x", "replay_speed", "Speed"),
        Binding("R", "replay_restart", "Restart"),
    ]

    def __init__(
        self,
        store: RunStore,
        settings: Settings,
        *,
        sources: Iterable[RunSource] = (),
        on_exit: Callable[[], Awaitable[None]] | None = None,
        starting: str = "",
    ) -> None:
        super().__init__()
        self.starting = starting
        """What the empty table says until the first run comes (the demo's: its agents
        are starting), in place of "No runs yet"."""
        self.store = store
        self.settings = settings
        self.pending_sources = list(sources)
        self.on_exit_hook = on_exit
        self.last_filter = str(load_state(settings.state_file).get("filter", ""))
        """The last filter applied, this session or the one before (offered by ``/``)."""
        self.theme = settings.theme

        self._notice_screens: dict[str, Screen[Any]] = {}
        """The screen each notice on show was raised on (by the notice's identity)."""

        self._keys_on_their_way: dict[object, tuple[DOMNode, float]] = {}
        """The keys handed on to a widget that have not yet gone round it, its screen and the
        app: where each is, and when it was handed on (see _follow_round)."""
        self._taking_a_key = False
        """A key from the terminal is being taken (its priority bindings run now)."""
        self._held_keys: list[Key] | None = None
        """Keys from the terminal held behind a run key on its way (see _hold_behind)."""
        self._holding_for: Key | None = None
        self._hold_token: object | None = None
        """The run key held for, as :meth:`_follow_round` follows it."""
        self._last_followed: object | None = None
        self._hold_timer: Timer | None = None

    _held_back = False
    """A frame was drawn while Textual held frames back (its start-up): the next one written
    is drawn whole."""

    crash: BaseException | None = None
    """The exception the app died of, if it did: the command line says it in one line."""

    def _handle_exception(self, error: Exception) -> None:
        """Textual's hook for an exception nothing handled: the app exits.

        Textual would print a Rich traceback, locals and all (ledger text
        among them), after restoring the terminal; the command line says it
        in one line instead and keeps the traceback in a file (tui.crash).
        Overrides a private method of Textual (pinned in constraints.txt):
        ``test_crash`` fails if it stops being called.
        """
        if self.crash is None:
            self.crash = error
        super()._handle_exception(error)
        self._exit_renderables.clear()

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        """Textual's hook that writes a frame to the terminal: after start-up, whole.

        Textual holds frames back while it starts (a batch update): the runs
        screen's first frame, laid out then, was never written, and the first
        frame written after held only what had changed since (the table's rows
        or its message, without the source line and the column titles over
        them) until the next full frame, 50-250 ms later. Overrides a private
        method of Textual (pinned in constraints.txt):
        ``test_the_first_frame_written_is_whole`` fails if it stops being called.
        """
        if renderable is not None and self._batch_count:
            self._held_back = True
        elif renderable is not None and self._held_back and screen is self.screen:
            self._held_back = False
            renderable = screen._compositor.render_full_update()
        super()._display(screen, renderable)

    def remember_filter(self, text: str) -> None:
        """The filter just applied: offered again by ``/``, in this session and the next."""
        self.last_filter = text
        if text:
            save_state(self.settings.state_file, filter=text)

    def on_mount(self) -> None:
        for source in self.pending_sources:
            self.store.add_source(source)  # listed as opening until it first speaks
        self.show_runs()
        self.follow_store()
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self.call_after_refresh(self.set_timer, IMPORT_RUN_SCREEN_AFTER, _import_run_screen)

    def show_runs(self) -> None:
        """The first screen: every run, over the source line."""
        self.push_screen(
            RunsScreen(
                self.store,
                clock=self.settings.clock,
                remembered=self.last_filter,
                starting=self.starting,
            )
        )

    # -- notices ------------------------------------------------------------------------

    def on_notify(self, event: Notify) -> None:
        """A notice said again while it shows replaces it (its time starts again) instead of
        stacking a copy (``c`` pressed three times on an ended run said it three times); at
        most :data:`MOST_NOTICES` show over a screen (one on a run), the oldest giving way.

        Runs before Textual's own handler adds the notice; on the main thread, whichever
        thread called ``notify``.
        """
        notice = event.notification
        if not self.screen_stack:
            return  # said as the app exits, its screens gone: Textual's handler drops it too
        screen = self.screen
        for shown in list(self._notifications):
            if self._notice_screens.get(shown.identity) is screen and _same(shown, notice):
                self._forget_notice(shown)
        here = [
            shown
            for shown in self._notifications
            if self._notice_screens.get(shown.identity) is screen
        ]
        most = MOST_NOTICES_ON_A_RUN if _shows_a_run(screen) else MOST_NOTICES
        for oldest in here[: max(0, len(here) + 1 - most)]:
            self._forget_notice(oldest)  # the newest in view, none over the header or keys
        self._notice_screens = {
            identity: on
            for identity, on in self._notice_screens.items()
            if identity in {shown.identity for shown in self._notifications}
        }
        self._notice_screens[notice.identity] = screen

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """A notice is about the screen it was raised on: it goes with it (back from a run,
        the run's notices do not sit over the runs table). A confirmation, shown over its
        screen, keeps that screen's notices in view."""
        if isinstance(screen, ModalScreen):
            return
        for shown in list(self._notifications):
            if self._notice_screens.get(shown.identity) is not screen:
                self._forget_notice(shown)

    def _forget_notice(self, notice: Notification) -> None:
        """Take ``notice`` off the screen (Textual's own way, as a toast that times out).

        Textual takes its toast away but leaves the toast's holder, which kept its line: the
        next notice was shown a line lower (over the detail pane of a run). The holder goes
        too, as it does when a toast times out.
        """
        self._notice_screens.pop(notice.identity, None)
        self._unnotify(notice)
        holder_id = f"--textual-toast-{notice.identity}"  # Textual's (ToastRack._toast_id)
        for screen in self.screen_stack:
            for holder in screen.query("ToastHolder"):
                if holder.id == holder_id:
                    holder.remove()

    @work(exclusive=True, group="store")
    async def follow_store(self) -> None:
        """Hand each batch of store changes to the screen on top, as ``StoreChanged``."""
        news = StoreNews(self)
        async for change in self.store.changes():
            news.offer(change)

    async def on_unmount(self) -> None:
        await self.store.close()
        if self.on_exit_hook is not None:
            await self.on_exit_hook()

    # -- which run the keys act on ----------------------------------------------------

    def current_run(self) -> RunView | None:
        screen = self.screen
        if isinstance(screen, SelectedRunScreen):
            return screen.current_run()
        return None

    def refusal(self, action: str) -> str | None:
        """Why ``action`` cannot be done to the current run, or ``None``."""
        return self._refusal_on(self.screen, action)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.screen_stack:
            return False  # the app exiting, its screens gone: no key applies
        if action == "close_help":  # otherwise Escape is the screen's (and its bar says so)
            return bool(self.screen.query("HelpPanel"))
        screen = self._keys_screen()
        if action == "tools":
            return self.check_action_on(screen, action)  # hidden where it is shown
        if action.startswith("replay_"):
            return bool(self.replays())
        if action == "copy":  # not where there is nothing to copy (the tools' stats)
            if callable(getattr(screen, "copy_text", None)):
                return True  # its text is not asked for here: a screen still composing
            return isinstance(screen, SelectedRunScreen) and screen.current_run() is not None
        kind = {"cancel": "cancel", "resume": "resume", "approve": "approve", "deny": "approve"}
        if action not in kind:
            return True
        run = screen.current_run() if isinstance(screen, SelectedRunScreen) else None
        if run is None and not isinstance(screen, RunsScreen):
            return False  # a screen of no run (the tool calls): the keys do not apply there
        return None if self._refusal_on(screen, kind[action]) else True

    def _check_action_state(self, action: str, default_namespace: DOMNode) -> bool | None:
        """Textual's hook that asks whether a bound key applies now (shown, greyed or
        hidden), for the key bar, the palette and ``?`` alike: the runs screen's ``C`` is
        greyed, and not offered, until two runs are marked (pressed anyway, it says why).

        Overrides a private method of Textual (pinned in constraints.txt):
        ``test_compare_is_greyed_and_not_offered_until_two_runs_are_marked`` fails if it
        stops being called. A key press asks the screen's ``check_action`` itself.
        """
        state = super()._check_action_state(action, default_namespace)
        if state and action == "compare" and isinstance(default_namespace, RunsScreen):
            marked = [key for key in default_namespace.marked if self.store.get(key) is not None]
            return True if len(marked) >= 2 else None
        return state

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Run ``action`` (a key's, or the palette's); then the keys are asked again what
        they can do: what one did may change another (a second mark makes ``C`` compare,
        an unmark greys it), with nothing else changed to ask them."""
        done = await super().run_action(action, default_namespace, namespaces)
        if done and self.screen_stack:
            self.screen_stack[-1].refresh_bindings()
        return done

    def _keys_screen(self) -> Screen[Any]:
        """The screen the app's keys are asked about: the one on top, or under a modal one
        (the palette, a confirmation) the screen it was opened over. Textual asks a modal
        screen for its own keys only (its binding chain stops at it), so while one is open
        the app is asked for the bar of a screen below it: that bar keeps its keys (under
        the palette it showed every run key, greyed or not, as if they applied)."""
        stack: list[Screen[Any]] = self.screen_stack
        return next((on for on in reversed(stack) if not isinstance(on, ModalScreen)), self.screen)

    async def on_key(self, event: Key) -> None:
        """A greyed action's key says why it is greyed instead of doing nothing; a run key
        that waited its turn (:meth:`_run_key_now`) and came round does its action now.
        The keys typed behind it (:meth:`_hold_behind`) then follow it, or, if it was
        refused, are set aside."""
        if event is not self._holding_for:
            await self._run_key_came_round(event)
            return
        refused: str | None = None
        try:
            refused = await self._run_key_came_round(event)
        finally:
            held = self._release_held(replay=refused is None)
        if refused is not None and held:
            self.notify(
                f"{refused}; the {len(held)} keys typed after it were not used",
                severity="warning",
                markup=False,
            )
            return
        if refused is not None:
            self.notify(refused, severity="warning", markup=False)

    async def _run_key_came_round(self, event: Key) -> str | None:
        """A run key handed on has come round to the app: act on it; what was refused."""
        action = ACTION_KEYS.get(event.key)
        if action is None or isinstance(self.screen, ModalScreen):
            return None
        reason = self.refusal(action)
        if reason is not None:
            said = f"cannot {action}: {reason}"
            if event is not self._holding_for:
                self.notify(said, severity="warning", markup=False)
            return said
        focused = self.focused
        if focused is not None and focused.check_consume_key(event.key, event.character):
            return None  # a box took the focus meanwhile: the key is its letter, not ours
        await self.run_action(RUN_KEYS[event.key])
        return None

    def _hold_behind(self, key: Key) -> None:
        """Hold the keys taken from the terminal after a run key that was handed on (it
        waits its turn behind keys ahead of it, or is refused) until it comes round.

        Typed in one burst with it (a reason, Enter), they went to the table while it was
        on its way: the confirmation it opened then sat with an empty box, or, the key
        refused, the reason's letters ran as keys (``r`` and Enter a resume). Held, they
        follow it to its confirmation, or are set aside when it is refused. A key that
        never comes to :meth:`on_key` (a widget took it) lets them go on once it
        has gone round (:meth:`_gone_round`), as they would have.
        """
        self._held_keys = []
        self._holding_for = key
        self._hold_token = self._last_followed
        self._hold_timer = self.set_timer(  # a last resort: it goes round well before
            HELD_AT_MOST, partial(self._release_held, replay=True)
        )

    def _release_held(self, *, replay: bool) -> list[Key]:
        """Stop holding keys; ``replay`` them, in order, as keys from the terminal."""
        held, self._held_keys, self._holding_for = self._held_keys or [], None, None
        self._hold_token = None
        if self._hold_timer is not None:
            self._hold_timer.stop()
            self._hold_timer = None
        if replay:
            for key in held:
                self.post_message(Key(key.key, key.character))
        return held

    # -- keys on their way ----------------------------------------------------------------

    async def on_event(self, event: Event) -> None:
        """A key from the terminal: its priority bindings run as it is taken; handed on, it
        is followed round (:meth:`_follow_round`) until it has gone round its widget, its
        screen and the app."""
        if not isinstance(event, Key) or event.is_forwarded:
            await super().on_event(event)
            return
        if self._held_keys is not None:
            self._held_keys.append(event)  # behind a run key still on its way
            return
        self._taking_a_key = True
        try:
            await super().on_event(event)
        finally:
            self._taking_a_key = False
        if event.is_forwarded and self.screen_stack:
            self._follow_round(self.focused or self.screen)
            if event.key in RUN_KEYS and self._holds_behind(event):
                self._hold_behind(event)

    def _holds_behind(self, key: Key) -> bool:
        """Whether ``key``, a run key handed on, is one whose burst to hold: not over a
        confirmation (the keys are its), not a letter a focused box types."""
        focused = self.focused
        if isinstance(self.screen, ModalScreen):
            return False
        return focused is None or not focused.check_consume_key(key.key, key.character)

    def _follow_round(self, to: DOMNode) -> None:
        """Follow a key just handed on to ``to`` round the way it goes: ``to``, then each
        node above it, to the app. A callback queued behind it in each, hop by hop, comes
        after the key there, and after whatever it did there (a box focused, a screen
        pushed, a binding run)."""
        key = object()
        self._keys_on_their_way[key] = (to, monotonic())
        self._last_followed = key
        self._hop(key, list(to.ancestors_with_self))

    def _hop(self, key: object, way: list[DOMNode]) -> None:
        if not way or key not in self._keys_on_their_way:
            self._keys_on_their_way.pop(key, None)  # gone round
            self._gone_round(key)
            return
        at, *rest = way
        self._keys_on_their_way[key] = (at, self._keys_on_their_way[key][1])
        if not at.call_later(self._hop, key, rest):
            self._keys_on_their_way.pop(key, None)  # its widget is going away, the key too
            self._gone_round(key)

    def _gone_round(self, key: object) -> None:
        """A key followed has gone round (or away with its widget): a run key the keys
        behind it were held for that never came to :meth:`on_key` (a widget took it) lets
        them go on, as they would have gone."""
        if key is self._hold_token and self._held_keys is not None:
            self._release_held(replay=True)

    def _keys_ahead(self) -> bool:
        """Whether a key handed on before the one being taken is still on its way."""
        now = monotonic()
        for key, (at, since) in list(self._keys_on_their_way.items()):
            if now - since > KEY_ON_ITS_WAY_AT_MOST or not (at is self or at.is_attached):
                del self._keys_on_their_way[key]
        return bool(self._keys_on_their_way)

    def _run_key_now(self) -> None:
        """Skip the run key's action (``SkipAction``) where it is not the key's to do now.

        Over a confirmation or the palette the key is not ours: typed in the burst that
        opened a confirmation, it goes on to the confirmation, which types it into its
        reason box. (``check_action`` answers for the screen under a modal one, where the
        palette lists the keys.)

        Taken from the terminal while keys typed before it are still on their way (``/``
        then ``error`` on a run: its ``r``), acting now would overtake them: ``r`` would
        resume the run the search was typed on. It waits its turn instead, handed on as
        they were, and acts as it comes round (:meth:`on_key`), if they left it ours.
        """
        if isinstance(self.screen, ModalScreen):
            raise SkipAction()
        if self._taking_a_key and self._keys_ahead():
            raise SkipAction()

    # -- replays -------------------------------------------------------------------------

    def replays(self) -> list[ReplaySource]:
        """The replays open (the replay keys are shown only with one)."""
        return [source for source in self.pending_sources if isinstance(source, ReplaySource)]

    def action_replay_toggle(self) -> None:
        if self.replays() and all(replay.finished.is_set() for replay in self.replays()):
            for replay in self.replays():  # played to the end: space plays it again
                replay.play()
                replay.restart()
            self.notify("replay from the start", timeout=1.5)
            return
        for replay in self.replays():
            if replay.paused:
                replay.play()
            else:
                replay.pause()
        paused = all(replay.paused for replay in self.replays())
        self.notify("replay paused (n steps)" if paused else "replay playing", timeout=1.5)

    def action_replay_restart(self) -> None:
        """``R``: the replay again from its first event, paused or playing as it was.

        Played at once, it would be at its end again before a frame was drawn: ``R``
        changed nothing on screen. It waits at the start instead, as a player's seek to
        the start shows the first frame: space plays it, ``n`` steps, ``x`` slows it.
        """
        for replay in self.replays():
            if replay.speed <= 0:
                replay.pause()
            replay.restart()
        if all(replay.paused for replay in self.replays()):
            at_once = any(replay.speed <= 0 for replay in self.replays())
            plays = (
                "space plays it at once, n steps, x slows it" if at_once else "space plays, n steps"
            )
            self.notify(f"replay from the start, paused: {plays}", timeout=3)
        else:
            self.notify("replay from the start", timeout=1.5)

    def action_replay_step(self) -> None:
        for replay in self.replays():
            replay.step(1)

    def action_replay_speed(self) -> None:
        order = [1.0, 2.0, 10.0, 0.0]
        for replay in self.replays():
            at = order.index(replay.speed) if replay.speed in order else -1
            replay.set_speed(order[(at + 1) % len(order)])  # the source line says it

    # -- actions --------------------------------------------------------------------------

    def action_cancel(self) -> None:
        self._run_key_now()
        run = self.current_run()
        if run is None or self.refusal("cancel"):
            return

        # On the main thread, when first asked for.
        from tui.screens.cancel import CANCELED_WITHOUT_REASON, CancelScreen

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self._act(
                    self.store.cancel(run.key, reason or CANCELED_WITHOUT_REASON),
                    f"cancel requested for {run.run_id}",
                )

        self.push_screen(CancelScreen(run), confirmed)

    def action_resume(self) -> None:
        """Resume the run (a new run with its input), after a confirmation."""
        self._run_key_now()
        run = self.current_run()
        if run is None or self.refusal("resume"):
            return

        def confirmed(resume: bool | None) -> None:
            if resume:
                self._resume(run.key)

        from tui.screens.resume import ResumeScreen

        self.push_screen(ResumeScreen(run), confirmed)

    @work(group="actions")
    async def _resume(self, key: RunKey) -> None:
        try:
            new_id = await self.store.resume(key)
        except ActionRefused as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self.notify(f"resumed as {new_id}" if new_id else "resume requested", markup=False)

    def action_approve(self) -> None:
        self._answer(approve=True)

    def action_deny(self) -> None:
        self._answer(approve=False)

    def _answer(self, *, approve: bool) -> None:
        """Approve or deny, after a confirmation that shows the question and takes a reason."""
        self._run_key_now()
        run = self.current_run()
        if run is None or self.refusal("approve"):
            return
        verdict = "approved" if approve else "denied"

        def confirmed(reason: str | None) -> None:
            if reason is not None:
                self._act(
                    self.store.approve(run.key, approve, reason or f"{verdict} in runtop"),
                    f"{verdict}: {short_id(run.run_id)}",  # short: the preview stays in view
                )

        from tui.screens.approval import ApprovalScreen

        self.push_screen(ApprovalScreen(run, approve=approve), confirmed)

    def _act(self, action: Awaitable[None], done: str) -> None:
        async def run_it() -> None:
            try:
                await action
            except ActionRefused as error:
                self.notify(str(error), severity="error", markup=False)
                return
            self.notify(done, markup=False)

        self.run_worker(run_it(), group="actions")

    def action_copy(self) -> None:
        copy_text = getattr(self.screen, "copy_text", None)  # a run's event, a comparison
        if callable(copy_text):
            text = str(copy_text())
        else:
            run = self.current_run()
            text = run.run_id if run is not None else ""
        if text:
            self.copy_to_clipboard(text)
            self.notify("copied to the clipboard", timeout=1.5)

    def action_help(self) -> None:
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_show_help_panel(self) -> None:
        """``?``: every key of the screen, ours first (:mod:`tui.widgets.keys_help`)."""
        from tui.widgets.keys_help import KeysHelp  # when first asked for, not at launch

        if not self.screen.query("HelpPanel"):
            self.screen.mount(KeysHelp())

    def action_close_help(self) -> None:
        """Escape closes the ``?`` panel first; with none open, the screen has Escape."""
        self.action_hide_help_panel()

    def action_tools(self) -> None:
        # Imported on the main thread when first asked for: its DataTable is 6 ms of
        # CPU that a launch does not need.
        from tui.screens.tools import ToolsScreen

        if isinstance(self.screen, ToolsScreen):
            self.pop_screen()
        else:
            self.push_screen(ToolsScreen(self.store, clock=self.settings.clock))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette (``ctrl+p``) over ``screen``: what can be done there now,
        each titled with the key bar's word for it (what ``?`` lists too: one word for one
        action), then what it does and the key that does it.

        Built from the screen's keys, not Textual's own list (whose Keys, Quit, Maximize and
        Screenshot named no key and spoke Textual's words): an action is offered where its
        key is bound and not greyed (cancel, approve and deny only where the run can take
        them; Open only with a run selected; Compare only with two runs marked), so a key
        that does not apply on a screen is not offered there. Theme and Screenshot, which
        have no key, follow."""
        keys = _keys_on(self, screen)
        named = getattr(screen, "key_description", None)
        from tui.screens.run import RunScreen  # the palette opened: on the main thread

        says = {
            **PALETTE_SAYS,
            **(RUNS_PALETTE_SAYS if isinstance(screen, RunsScreen) else {}),
            **(RUN_PALETTE_SAYS if isinstance(screen, RunScreen) else {}),
        }
        if callable(getattr(screen, "copy_text", None)) and not isinstance(screen, RunScreen):
            says["copy"] = "Copy what this screen shows, as plain text"
        if getattr(screen, "lists_tool_calls", False):
            says["open"] = "The selected call's run, at that call"
        if screen.query("HelpPanel"):
            says["help"] = "Close the list of keys"
        if callable(named) and named("tree", "Tree") != "Tree":
            says["tree"] = "The runs as a list again, not a tree"
        if callable(named) and named("next_match", "Next match") != "Next match":
            says["next_match"] = "One more event of the replay"
        for action, (key, namespace, word, shown) in keys.items():
            if action not in says and not shown:
                continue  # a key only ? lists (the cursor's): not an action to pick
            if not self._offered(screen, action):
                continue
            said = says.get(action, "")
            yield SystemCommand(
                word,
                f"{said} ({key})" if said else f"({key})",
                partial(self.run_action, action, namespace),
            )
        yield SystemCommand(
            "Theme", "The colours; runtop --theme picks them at launch", self.action_change_theme
        )
        yield SystemCommand(
            "Screenshot",
            "Save this screen as an SVG file in the current directory",
            lambda: self.set_timer(0.1, self.deliver_screenshot),
        )

    def _offered(self, screen: Screen[Any], action: str) -> bool:
        """Whether the palette offers ``action``, enabled on ``screen``: Open and Copy only
        with something to open or copy (their keys would do nothing)."""
        if action == "open":
            return isinstance(screen, SelectedRunScreen) and screen.current_run() is not None
        if action == "copy":
            copy_text = getattr(screen, "copy_text", None)
            if callable(copy_text):
                return bool(copy_text())
            return isinstance(screen, SelectedRunScreen) and screen.current_run() is not None
        return True

    def _refusal_on(self, screen: Screen[Any], kind: str) -> str | None:
        """Why ``kind`` (cancel, resume, approve) cannot be done to ``screen``'s run."""
        if self.settings.read_only:
            return "runtop was started with --read-only"
        run = screen.current_run() if isinstance(screen, SelectedRunScreen) else None
        if run is None:
            return "no run is selected"
        return self.store.refusal(run.key, kind)  # type: ignore[arg-type]

    def check_action_on(self, screen: Screen[Any], action: str) -> bool:
        """Whether the app's ``action`` applies on ``screen`` (the tool calls: not on their
        own screens, where ``t`` would stack them again)."""
        if action == "tools":
            return not getattr(screen, "lists_tool_calls", False)
        return True


def _keys_on(app: App[Any], screen: Screen[Any]) -> dict[str, tuple[str, DOMNode, str, bool]]:
    """Each action that a key does on ``screen`` now, not greyed: the key as the key bar
    shows it (a shown key before a hidden one), where the action is, what the bar calls it
    there, and whether the bar shows it."""
    named = getattr(screen, "key_description", None)
    keys: dict[str, tuple[str, DOMNode, str, bool]] = {}
    active = sorted(screen.active_bindings.values(), key=lambda bound: not bound.binding.show)
    for namespace, binding, enabled, _ in active:
        if not enabled or binding.action in keys:
            continue
        description = binding.description
        if callable(named):
            description = named(binding.action, description)
        keys[binding.action] = (app.get_key_display(binding), namespace, description, binding.show)
    return keys


def _shows_a_run(screen: Screen[Any]) -> bool:
    """Whether ``screen`` is a run's (imported here when first asked, on the main thread)."""
    from tui.screens.run import RunScreen

    return isinstance(screen, RunScreen)


def _same(shown: Notification, notice: Notification) -> bool:
    """Whether two notices say the same thing, the same way."""
    return (shown.message, shown.title, shown.severity, shown.markup) == (
        notice.message,
        notice.title,
        notice.severity,
        notice.markup,
    )


def _import_run_screen() -> None:
    """Import the run screen (its widgets, the timeline, the comparison) while the table is read.

    ~25 ms of CPU that the first frame does not need; imported on the first
    Enter instead, it made opening a run that much slower. A timer's callback
    runs on the main thread: nothing imports it at the same time.
    """
    import tui.screens.run  # noqa: F401


def run_until_exit(app: RuntopApp) -> int:
    """Run ``app`` until it exits; its exit status, or what it died of raised again."""
    app.run()
    if app.crash is not None:
        raise app.crash
    return app.return_code or 0


def make_app(
    settings: Settings,
    sources: Iterable[RunSource],
    *,
    on_exit: Callable[[], Awaitable[None]] | None = None,
    starting: str = "",
) -> RuntopApp:
    """The app over ``sources``, as the command line and the tests build it."""
    freeze_start_up()
    store = RunStore(flush_interval=settings.flush_interval)
    return RuntopApp(store, settings, sources=sources, on_exit=on_exit, starting=starting)


_start_up_frozen = False


def freeze_start_up() -> None:
    """Move what start-up made out of the garbage collector's way, once in a process.

    The imports (Textual, Rich, msgspec, ours) leave ~38,000 tracked objects
    that live as long as the process. The one full collection that falls in
    the first load of 10,000 runs walked them all with the load's objects:
    25-45 ms of the launch's CPU (bench/tui.py, 10,000 runs from memory).
    Frozen (``gc.freeze``), they are left out of every collection, and no
    full collection falls before the first frame.

    Nothing is switched off, so nothing has to be switched back on if the
    app fails: what is made after this call is collected as before. The
    price: garbage cycles the imports left are never freed (kilobytes, once).
    Later calls (tests make many apps in a process) freeze nothing, or an
    earlier app's runs would never be freed (``tests/tui/test_launch_collector.py``).
    """
    global _start_up_frozen
    if not _start_up_frozen:
        _start_up_frozen = True
        gc.freeze()
