"""An item's episode played in the item's turn (or waited for, when the pool started it early), with the
outcomes that are the item's own errors rather than the agent's failures: a role that crashed, an
episode over its time limit, an overridden episode fixture that raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_toolsandbox.running.errors import PASSTHROUGH, EpisodeError, EpisodeTimeoutError, ToolsandboxError
from pytest_toolsandbox.running.items import ItemContext, page_hint
from pytest_toolsandbox.running.prepare import warn_sequential

if TYPE_CHECKING:
    from pytest_toolsandbox.world.trajectory import Trajectory


def play_item(context: ItemContext, episode: Callable[[], Trajectory]) -> Trajectory:
    """The played episode, kept for the item's report; a role that crashed makes the item an error."""
    from pytest_toolsandbox.running.ahead import AheadEpisode
    from pytest_toolsandbox.running.watchdog import EpisodeTimeout, call_with_timeout
    from pytest_toolsandbox.tools.errors import describe_exception

    node = context.node
    timeout = context.run.episode_timeout
    warn_sequential(node)
    try:
        # an AheadEpisode started before this item's turn
        trajectory = episode.wait(timeout) if isinstance(episode, AheadEpisode) else call_with_timeout(episode, timeout)
    except EpisodeTimeout as timeout:
        raise EpisodeTimeoutError(f"{node.nodeid}: {timeout}; raise the limit with --episode-timeout "
                                  "or the toolsandbox_episode_timeout ini key") from None
    except PASSTHROUGH:
        raise
    except BaseException as error:  # an overridden episode fixture may raise anything: this item errors alone
        raise ToolsandboxError(f"{node.nodeid}: the episode raised {describe_exception(error)}") from None
    # imported only now: the first item's import of these (with scipy) would hold the interpreter while the
    # first episodes start; during the wait above, a concurrent run imports them when nothing else runs
    from pytest_toolsandbox.report.results.item_report import keep_for_report
    from pytest_toolsandbox.report.text.failure import episode_error_message

    trajectory = keep_for_report(node, trajectory, context.run.limits.max_message_chars)
    if trajectory.ended_by == "error":
        raise EpisodeError(episode_error_message(trajectory, page_hint(node)), trajectory)
    save_recording(node.funcargs.get("toolsandbox_cassette"))
    return trajectory


def save_recording(cassette: Any) -> None:
    """Save the item's cassette as soon as its episode has ended well, not at teardown: an interrupt
    between the item's report and its teardown must not keep the result but lose the recording."""
    if cassette is None:
        return
    from pytest_toolsandbox.recording.episode_recording import EpisodeRecording

    if isinstance(cassette, EpisodeRecording):
        cassette.finish(keep=True)
