"""The final answer's verdict: the facts of a scenario's `final_answer` on the agent's last message to the user.

Judged with the same fact machinery as a text milestone (evaluation/facts.py: denials, alternatives,
exclusive values, labels and units, `required: false`), on one message: the agent's last message to
the user, its closing word on the task. An earlier message counts only behind closing words that
contradict nothing ("You're welcome!" after the answer, to a user who said thanks): a correct answer
later taken back ("Sorry, I couldn't add it after all", "Actually, it is for 6 PM") is no answer, and
neither is an empty message, none at all, or a last message sent before the last milestone was reached
(a question asked before the work, then silence). The facts of the scenario's text milestones are the
context (their values may stand beside the final answer's, as between text milestones). This is the
verdict only: nothing here is a milestone, so the similarity is untouched (scenario/final_answer.py
says why the field exists).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_toolsandbox.evaluation.facts import Fact, NoneOf, explain_missing, missing_fact
from pytest_toolsandbox.evaluation.result import FinalAnswerVerdict, MilestoneVerdict
from pytest_toolsandbox.evaluation.verdict import quote
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.trajectory import Trajectory


def judge_final_answer(scenario: Scenario, trajectory: Trajectory,
                       reached: Sequence[MilestoneVerdict] = ()) -> FinalAnswerVerdict | None:
    """Whether the agent's last message to the user holds the scenario's `final_answer` facts (None: the
    scenario states none). `reached`: the verdicts of the milestones; the final answer must come no
    earlier than the last one reached (a question asked before the work is no word on it)."""
    if scenario.final_answer is None:
        return None
    facts = scenario.final_answer.facts
    last = next((message for message in reversed(trajectory.messages)
                 if message.sender is Role.AGENT and message.recipient is Role.USER), None)
    if last is None:
        return FinalAnswerVerdict(held=False, missing="the agent sent no message to the user")
    done = max(((verdict.index, verdict.name) for verdict in reached if verdict.reached and verdict.index is not None),
               default=None)
    if done is not None and last.index < done[0]:
        return FinalAnswerVerdict(held=False, index=last.index, missing=(
            f"the agent sent the user no message after message {done[0]}, where milestone {done[1]!r} was reached "
            f"(its last was message {last.index})"))
    if not last.content.strip():
        return FinalAnswerVerdict(held=False, index=last.index,
                                  missing=f"the agent's last message to the user (message {last.index}) is empty")
    context = [fact for milestone in scenario.milestones.values() for fact in milestone.facts or ()]
    fact = missing_fact(last.content, facts, context)
    if fact is None:
        return FinalAnswerVerdict(held=True, index=last.index)
    since = done[0] if done is not None else 0
    closing_words = [last]
    for earlier in reversed([message for message in trajectory.messages if message.index < last.index
                             and message.index >= since and message.sender is Role.AGENT
                             and message.recipient is Role.USER and message.content.strip()]):
        if missing_fact(closing_words[-1].content, _contradictions(facts), context) is not None:
            break  # the later message takes something back: the earlier answer does not stand
        if missing_fact(earlier.content, facts, context) is None:
            return FinalAnswerVerdict(held=True, index=earlier.index)
        closing_words.append(earlier)
    why = explain_missing(fact, last.content, (*facts, *context))
    return FinalAnswerVerdict(held=False, index=last.index, closest=last.content, fact=fact.describe(),
                              missing=f"the agent's last message to the user {quote(last.content)} {why}")


def _contradictions(facts: Sequence[Fact]) -> list[Fact]:
    """The part of `facts` a message breaks by saying something, not by leaving it out: the phrases it must
    not say, and values that must be right where given (a required value asked for only where given)."""
    kept: list[Fact] = []
    for fact in facts:
        if isinstance(fact, NoneOf):
            kept.append(fact)
        elif getattr(fact, "required", None) is not None:
            kept.append(fact.model_copy(update={"required": False}))
    return kept
