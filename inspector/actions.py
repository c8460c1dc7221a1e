"""What can be done to a run (cancel, resume, approve or deny), and why not when it cannot.

:data:`RUN_ACTIONS` is the one list of them: each with its key, the words its key bar,
palette and ``?`` say, and what the run is asked (:data:`Action`). The app's keys, bars,
palette, typed-ahead keys and ``check_action``, and the commands, all read it; a new run
key is one entry here, the confirmation that does it (a method of
:class:`tui.run_actions.RunKeys` of the entry's name) and its test.

Whether one can be done now is one decision every key, key bar, palette entry and
``runtop cancel`` reads, in the same words: the run first (sent over OpenTelemetry?
ended? a cancel already asked? an approval awaited?), then what its source can carry
(:meth:`RunSource.refusal`: a ledger written by another program takes no control files,
a server may be read-only), then whether the source can be reached now.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import Final, Literal

from inspector.source import RunSource
from ledger_reader import RunStatus, RunSummary

Action = Literal["cancel", "resume", "approve"]
"""What can be asked of a run and its source (a denial answers an approval: ``approve``):
what :func:`refusal` decides."""


@dataclass(frozen=True)
class RunAction:
    """One thing a user can do to a run: its key and words, and what the run is asked."""

    name: str
    """Its name: the key's action (``run_key('cancel')``), the confirmation that does it
    (the method of :class:`tui.run_actions.RunKeys` of that name), the command's."""
    key: str
    """The key that does it on a screen with a run."""
    asks: Action
    """What the run is asked it can take (:func:`refusal`): a denial answers an approval."""
    word: str
    """The key bar's word for it (and the palette's title)."""
    says: str
    """What it does, as the palette and ``?`` say."""
    command: bool = True
    """Whether it is a command too (``runtop cancel``): its module ``tui/commands/NAME.py``
    declares its options (``HELP``, ``add_arguments``) and does it (``run``)."""
    pair: str | None = None
    """The action it stays with in a narrow key bar (``a`` without ``d`` reads as the only
    answer to an approval)."""


RUN_ACTIONS: Final = (
    RunAction("cancel", "c", "cancel", "Cancel run", "Cancel the selected run, with a reason"),
    RunAction("resume", "r", "resume", "Resume", "Re-issue the selected run with its input"),
    RunAction(
        "approve",
        "a",
        "approve",
        "Approve",
        "Approve the selected run's pending approval",
        pair="deny",
    ),
    RunAction(
        "deny", "d", "approve", "Deny", "Deny the selected run's pending approval", pair="approve"
    ),
)
"""Every run action, in the order the key bar shows them: the only list of them."""


def run_action(name: str) -> RunAction:
    """The run action called ``name``.

    Raises:
        KeyError: no run action has that name.
    """
    for action in RUN_ACTIONS:
        if action.name == name:
            return action
    raise KeyError(name)


def asked() -> tuple[Action, ...]:
    """What the run actions ask of a run, each once (what a screen's keys' states read)."""
    return tuple(dict.fromkeys(action.asks for action in RUN_ACTIONS))


OTLP_REFUSAL: Final = "sent over OpenTelemetry; runtop cannot stop it"
"""Why runs from OTLP spans (``writer: "otlp"``) take no action: runtop does not run them."""


AGENT_RESUME: Final = {
    "claude-code": "claude --resume {run_id}",
    "codex": "codex resume {run_id}",
    "gemini-cli": "gemini --resume",
}
"""The coding agents whose sessions runtop reads, and how each takes one up again."""


def agent_refusal(action: Action, summary: RunSummary) -> str:
    """Why a coding agent's session takes no action from here: runtop only reads its file;
    the agent runs in a terminal of its own, where it is stopped, resumed and answered."""
    agent = summary.writer or "the agent"
    match action:
        case "cancel":
            return f"a {agent} session runs in its own terminal: stop it there (Esc)"
        case "resume":
            command = AGENT_RESUME.get(agent, "").format(run_id=summary.run_id.split(".")[0])
            return f"resume it in {agent}: {command}" if command else f"resume it in {agent}"
        case _:
            return f"answer it in {agent}'s own terminal: runtop only reads its session"


def os_user() -> str | None:
    """The name of the user this process runs as: who a cancel or an answer to an approval
    sent from here says asked (``--user`` names another); ``None`` when the system has
    no name for it (a container's unnamed uid)."""
    try:
        return getpass.getuser() or None
    except (OSError, KeyError):
        return None


def not_running(summary: RunSummary, action: Action = "cancel") -> str:
    """Why a run that is not live cannot be cancelled (or answered), in its status's word:
    a stale or abandoned run has not ended, and is not said to have."""
    # What is missing: something running to stop, or a writer to read the answer.
    nothing = "nothing to cancel" if action == "cancel" else "no writer would read the answer"
    match summary.status:
        case RunStatus.STALE:
            return f"the run is stale (its writer went quiet): {nothing}"
        case RunStatus.ABANDONED:
            return f"the run is abandoned (its writer is gone): {nothing}"
        case RunStatus.IDLE:
            return "the session is idle (nothing written for a while): nothing runs to cancel"
        case RunStatus.SUSPENDED:
            return "the run is suspended (on its approval): nothing runs to cancel"
        case _:
            return f"the run already ended ({summary.status.value})"


def run_refusal(action: Action, summary: RunSummary) -> str | None:
    """Why ``action`` cannot be done to the run ``summary`` describes, whatever its source
    can carry, or ``None``."""
    if summary.writer == "otlp":
        return OTLP_REFUSAL  # whatever its state: runtop never runs it
    if summary.writer in AGENT_RESUME:
        return agent_refusal(action, summary)
    match action:
        case "cancel":
            if not summary.status.is_live:
                return not_running(summary)
            if summary.cancel_requested:
                return "a cancel is already in progress"
        case "approve":
            if summary.pending_approval is None:
                return "the run is not waiting on an approval"
            if summary.status is not RunStatus.SUSPENDED and not summary.status.is_live:
                return not_running(summary, action)  # suspended: on its approval
        case "resume":
            if summary.status.is_live:
                return "the run is still running"
    return None


def refusal(
    action: Action, summary: RunSummary, source: RunSource, *, reachable: bool = True
) -> str | None:
    """Why ``action`` cannot be done now to the run ``summary`` describes, through
    ``source`` (``reachable``: whether the source answers now), or ``None`` if it can."""
    refused = run_refusal(action, summary) or source.refusal(action, summary)
    if refused is None and not reachable:
        # Asked anyway, the request fails ("cannot be reached") after the confirmation.
        return f"its source {source.name} cannot be reached now"
    return refused
