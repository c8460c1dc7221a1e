"""The runtop app: one store of runs, the runs screen, and the app-wide keys.

:func:`make_app` builds it from :class:`~tui.settings.Settings` and the
sources to open; tests use the same factory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import PurePath
from typing import ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.command import CommandPalette, Provider
from textual.events import Event, Key
from textual.notifications import Notify

from inspector import RunSource, RunStore
from inspector.actions import Action
from inspector.replay import ReplayControls
from tui.notices import Notices
from tui.palette import Palette, RuntopCommands
from tui.run_actions import RunKeys
from tui.run_keys import RunKeysApp
from tui.runtop_screen import RuntopScreen
from tui.screens.runs import RunsScreen
from tui.screens.runs_views import ViewChoices
from tui.settings import Settings, load_state, save_state
from tui.start_up import configure_process
from tui.store_news import StoreNews
from tui.typed_ahead import TypeAhead

IMPORT_RUN_SCREEN_AFTER = 0.3
"""Seconds after the first frame that the run screen is imported, on the main thread."""


class RuntopApp(RunKeysApp):
    """Watch agent runs, open one, and cancel, resume or approve with one key."""

    TITLE = "runtop"

    CSS_PATH: ClassVar[list[str | PurePath]] = [
        *(
            f"widgets/{name}.tcss"
            for name in ("key_bar", "run_table", "source_line", "run_preview", "keys_help")
        ),
        "screens/runs.tcss",
        "notices.tcss",
    ]
    """The styles of the first screen's widgets, and the runs screen's own (it names them
    too): read with the app's, the first screen's push does not parse every style again
    (Textual re-parses all sources when a screen brings a new one). Other screens' styles
    are beside them, read when first shown."""

    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {
        RuntopCommands,
        ViewChoices,
    }
    """The palette: the keys of the screen it is opened over (:mod:`tui.palette`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", tooltip="Leave runtop"),
        Binding(
            "question_mark", "help", "Keys", tooltip="Every key of this screen and what it does"
        ),
        Binding("escape", "close_help", "Close the keys", show=False, priority=True),
        Binding("space", "replay_toggle", "Pause/play", tooltip="Pause the replay, or play it"),
        Binding("n", "replay_step", "Step", tooltip="One more event of the replay"),
        Binding("x", "replay_speed", "Speed", tooltip="The replay's speed: 1x, 2x, 10x, at once"),
        Binding("R", "replay_restart", "Restart", tooltip="The replay again from the start"),
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
        """What the empty table says until the first run comes (the demo: its agents
        are starting), in place of "No runs yet"."""
        self.store = store
        self.settings = settings
        self.pending_sources = list(sources)
        self.replay = ReplayControls(self.pending_sources)
        """The replays open: their keys apply only with one."""
        self.on_exit_hook = on_exit
        self.last_filter = str(load_state(settings.state_file).get("filter", ""))
        """The last filter applied, this session or the one before (offered by ``/``)."""
        self.theme = settings.theme
        self.notices = Notices(self)
        self.keys = TypeAhead(self, self.refusal)
        self.run_keys = RunKeys(self, store, read_only=settings.read_only)

    def on_runs_screen_filter_applied(self, message: RunsScreen.FilterApplied) -> None:
        """The filter just applied: offered again by ``/``, in this session and the next."""
        self.last_filter = message.text
        if message.text:
            save_state(self.settings.state_file, filter=message.text)

    def on_mount(self) -> None:
        for source in self.pending_sources:
            self.store.add_source(source)  # listed as opening until it first speaks
        self.push_screen(
            RunsScreen(
                self.store,
                clock=self.settings.clock,
                remembered=self.last_filter,
                starting=self.starting,
                views_file=self.settings.views_file,
                replay=self.replay,
            )
        )
        self.follow_store()
        self.screen_change_signal.subscribe(self, self.notices.screen_changed)
        self.call_after_refresh(self.set_timer, IMPORT_RUN_SCREEN_AFTER, _import_run_screen)

    def on_notify(self, event: Notify) -> None:
        """One notice per thing said, a few per screen (:mod:`tui.notices`)."""
        if not self.screen_stack:
            return  # said as the app exits, its screens gone: Textual's handler drops it too
        self.notices.noticed(event.notification)

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

    # -- which run the keys act on, and whether they apply --------------------------------

    def refusal(self, kind: Action) -> str | None:
        """Why ``kind`` (cancel, resume, approve) cannot be done to the run of the screen on
        top (its run keys' refusal)."""
        screen = self.screen
        run = screen.current_run() if isinstance(screen, RuntopScreen) else None
        return self.run_keys.refusal(kind, run)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.screen_stack:
            return False  # the app exiting, its screens gone: no key applies
        if action == "close_help":  # otherwise Escape is the screen's (and its bar says so)
            return bool(self.screen.query("HelpPanel"))
        if action.startswith("replay_"):
            return bool(self.replay)
        return True

    # -- keys typed in a burst (tui.typed_ahead) -----------------------------------------

    async def on_event(self, event: Event) -> None:
        if isinstance(event, Key) and not event.is_forwarded:
            await self.keys.take(event, super().on_event)
        else:
            await super().on_event(event)

    async def on_key(self, event: Key) -> None:
        """A greyed run key says why instead of doing nothing; the keys held behind one
        go on (before its binding, which Textual runs next, opens its confirmation)."""
        await self.keys.reached_app(event)

    # -- replays ---------------------------------------------------------------------------

    def action_replay_toggle(self) -> None:
        self.notify(self.replay.toggle(), timeout=1.5)

    def action_replay_restart(self) -> None:
        said = self.replay.restart()
        self.notify(said, timeout=3 if self.replay.paused else 1.5)

    def action_replay_step(self) -> None:
        self.replay.step()

    def action_replay_speed(self) -> None:
        self.replay.next_speed()

    def on_runtop_screen_replay_step(self, message: RuntopScreen.ReplayStep) -> None:
        self.replay.step()

    # -- the other app-wide keys -----------------------------------------------------------

    def action_command_palette(self) -> None:
        """The palette (``ctrl+p``): Textual's, but Enter waits for its search
        (:class:`~tui.palette.Palette`)."""
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(Palette(id="--command-palette"))

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


def _import_run_screen() -> None:
    """Import the run screen (its widgets, the timeline, the comparison) while the table is
    read: the first frame does not need it, and imported on the first Enter it would make
    opening a run slower. A timer's callback runs on the main thread: nothing imports it
    at the same time."""
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
    configure_process()
    store = RunStore(flush_interval=settings.flush_interval, user=settings.user)
    return RuntopApp(store, settings, sources=sources, on_exit=on_exit, starting=starting)
