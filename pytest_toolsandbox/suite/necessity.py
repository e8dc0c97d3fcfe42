"""Is every milestone needed? Take away the reference step(s) that satisfy it and replay.

"The steps that satisfy a milestone" are found from the matcher's own mapping, not guessed from the
milestone's text: the best mapping of the full reference dialogue puts the milestone at a message,
and `steps.owners` says which reference piece produced that message (a call, its reply, or a text
step). That piece is taken away (calls dropped; text steps replaced by a filler line so the user still
gets the floor and says the next scripted line) and the dialogue is replayed and re-scored. If the
milestone still reaches similarity 1.0, it is matched somewhere else now; when another reference piece
produced that message (the reference does the same thing twice), it is taken away as well and the
loop goes on. The milestone is *needed* when its own similarity finally drops below 1.0 (so the score
drops with it) and the verdict no longer reaches it; it is *vacuous* when it still reaches 1.0, or
is still reached by its facts, at a message no remaining reference piece produced — the user's first
message, or a filler — i.e. nothing the agent does is required for it.

Requiring the milestone's own similarity to drop, not just the score, catches a vacuous milestone
that shares its message with a needed one (the needed one would make the score drop on its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.suite.play import play_reference
from pytest_toolsandbox.suite.steps import Piece, describe_message, owners, pieces, script
from pytest_toolsandbox.tools.registry import ToolSpec
from pytest_toolsandbox.world.trajectory import Trajectory
from pytest_toolsandbox.world.world import World

FULL = 1.0 - 1e-9


@dataclass(frozen=True)
class Vacuous:
    """A milestone that still reaches 1.0 once the steps satisfying it are gone."""

    milestone: str
    removed: tuple[Piece, ...]
    index: int | None
    message: str

    def explain(self, scenario: Scenario) -> str:
        at = f"message {self.index} ({self.message})"
        if not self.removed:
            return (f"milestone {self.milestone!r} is vacuous: it reaches 1.0 at {at}, before the agent does "
                    "anything — make it require a change or call the agent must make")
        steps = "; ".join(piece.describe(scenario.reference) for piece in self.removed)
        return (f"milestone {self.milestone!r} is vacuous: it still reaches 1.0 without {steps} — it is then "
                f"matched at {at}, which no remaining reference step produced; make it require what the step does")


def vacuous_milestones(scenario: Scenario, trajectory: Trajectory, evaluation: Evaluation,
                       registry: Mapping[str, ToolSpec], start: World | None = None) -> list[Vacuous]:
    """The vacuous milestones of a scenario whose reference scores 1.0 (`trajectory`, `evaluation`);
    `start` is the starting world to fork for each replay (None: build it each time)."""
    found = []
    limit = len(pieces(scenario.reference)) + 1
    for position, outcome in enumerate(evaluation.milestones):
        removed: set[Piece] = set()
        current_trajectory, current = trajectory, evaluation
        entries = script(scenario.reference)
        for _ in range(limit):
            met, index = _still_met(current, position)
            if not met:
                break
            owner = owners(current_trajectory.messages, entries).get(index) if index is not None else None
            if owner is None or owner in removed:
                message = current_trajectory.messages[index] if index is not None else None
                found.append(Vacuous(outcome.name, tuple(sorted(removed)), index,
                                     describe_message(message) if message else "nowhere"))
                break
            removed.add(owner)
            entries = script(scenario.reference, removed)
            current_trajectory = play_reference(scenario, registry, reference=[entry.step for entry in entries],
                                                start=start)
            current = evaluate(scenario, current_trajectory, registry)
    return found


def _still_met(evaluation: Evaluation, position: int) -> tuple[bool, int | None]:
    """Whether milestone `position` still counts as met, and where: similarity 1.0, or reached by the
    verdict (its facts hold on a filler line: facts that any answer satisfies)."""
    outcome = evaluation.milestones[position]
    if outcome.similarity >= FULL:
        return True, outcome.index
    verdict = evaluation.verdict.milestones[position] if evaluation.verdict is not None else None
    if verdict is not None and verdict.reached:
        return True, verdict.index
    return False, None
