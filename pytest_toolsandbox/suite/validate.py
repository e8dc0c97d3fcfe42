"""`python -m pytest_toolsandbox validate`: the suite checks itself, scenario by scenario.

Per scenario file (each failure names the file, the check, the variant(s) and the milestone):

- schema      the file loads (the loader's own errors: field, allowed values).
- tools       every tool a milestone names, and every tool a minefield's `tool_call` names, is offered
              to the agent in every variant (a `tool_call` minefield on a withheld tool can never
              fire; an `attempted_call` minefield can, and may name one).
- reference   the reference dialogue, played in each of the 8 variants, is played as written (every
              step, in order, ended by the user), scores exactly 1.0, fires no minefield …
- diagnosis   … and has no diagnosis finding.
- unhelpful   the always-declining agent fails every scenario (in an insufficient_information one its
              refusal names nothing that is missing).
- missing     an insufficient_information scenario lists what the agent lacks (`missing`); no other does.
- vacuous     every milestone is needed (see `necessity`).
- determinism the trajectory of every variant is byte-identical to a second run in another interpreter
              (other hash seed, scenarios in reverse order).
- paraphrase  `paraphrase_of` names another scenario file that exists and loads.
- facts       every text milestone states what makes its text right (`facts`, a `contains` target or
              a ROUGE `floor`) and carries `accept` / `reject` examples …
- examples    … and each example, put in place of the reference message that reaches the milestone,
              passes (accept) or fails (reject) as a whole item in the base variant (suite/examples.py).
- mutants     the answers generated from each `agent_says` milestone's facts, world and reference answer
              (suite/mutants.py), put in the same place, are judged the way they must be: every wrong
              one fails, every right one passes, unless the milestone waives it with a reason; the
              same for a `final_answer` on the reference's closing message (suite/final_answer_mutants.py).
- events      a scenario has at least one milestone or minefield (else every agent passes it).

Warnings (reported, not failures) flag category tags that disagree with the reference dialogue.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pytest_toolsandbox.evaluation import evaluate
from pytest_toolsandbox.evaluation.result import Evaluation
from pytest_toolsandbox.scenario.loader import ScenarioError, find_scenarios, load_scenario
from pytest_toolsandbox.scenario.models import Scenario
from pytest_toolsandbox.scenario.world_builder import build_world
from pytest_toolsandbox.suite.digests import DigestRun
from pytest_toolsandbox.suite.examples import declaration_problems, example_problems, states_what_is_right
from pytest_toolsandbox.suite.mutation import FINAL_ANSWER, MutationResult, mutation_test, owner
from pytest_toolsandbox.suite.necessity import FULL, vacuous_milestones
from pytest_toolsandbox.suite.play import Digest, digest, play_reference, play_unhelpful
from pytest_toolsandbox.suite.steps import describe_message, owners, pieces, script
from pytest_toolsandbox.tools.augment import VARIANTS, tools_for
from pytest_toolsandbox.tools.registry import ToolSpec, all_tools
from pytest_toolsandbox.world.messages import Role
from pytest_toolsandbox.world.trajectory import Trajectory
from pytest_toolsandbox.world.world import World

INSUFFICIENT = "insufficient_information"


@dataclass(frozen=True)
class Problem:
    """One finding about one file; `variants` is empty when the check does not depend on the variant."""

    file: str
    check: str
    message: str
    milestone: str | None = None
    variants: tuple[str, ...] = ()

    def line(self) -> str:
        where = ""
        if self.variants:
            where = " [every variant]" if len(self.variants) == len(VARIANTS) else f" [{', '.join(self.variants)}]"
        return f"{self.file}: {self.check}{where}: {self.message}"


@dataclass
class Findings:
    """What the checks of one file found; variant-level problems are merged across variants."""

    file: str
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    reference: str = ""  # "written" or "synthesised" once the file loads
    mutation: MutationResult | None = None
    _by_variant: dict[tuple[str, str, str | None], list[str]] = field(default_factory=dict)

    def error(self, check: str, message: str, milestone: str | None = None, variant: str | None = None) -> None:
        if variant is None:
            self.errors.append(Problem(self.file, check, message, milestone))
        else:
            self._by_variant.setdefault((check, message, milestone), []).append(variant)

    def merged_errors(self) -> list[Problem]:
        merged = [Problem(self.file, check, message, milestone, tuple(variants))
                  for (check, message, milestone), variants in self._by_variant.items()]
        return [*self.errors, *merged]


@dataclass
class Report:
    """The whole run: every file's findings, and how long it took."""

    files: list[str]
    errors: list[Problem]
    warnings: list[Problem]
    notes: list[Problem]
    seconds: float
    references: dict[str, str] = field(default_factory=dict)  # file → "written" / "synthesised"
    mutation: dict[str, MutationResult] = field(default_factory=dict)  # files with at least one mutant

    @property
    def ok(self) -> bool:
        return not self.errors

    def mutation_json(self) -> dict[str, object]:
        """Per file: counts, score and each mutant judged otherwise than it must be or waived."""
        files = {}
        for file, result in self.mutation.items():
            files[file] = {**result.summary(), "score": round(result.score, 4),
                           "survivors": [{"milestone": j.milestone, "id": j.mutant.id, "text": j.mutant.text,
                                          "wrong": j.mutant.wrong} for j in result.survivors],
                           "waived": [{"milestone": j.milestone, "id": j.mutant.id, "reason": j.waived}
                                      for j in result.judged if j.waived is not None]}
        totals = Counter[str]()
        for result in self.mutation.values():
            totals.update(result.summary())
        return {"totals": dict(totals), "files": files}

    def to_json(self) -> str:
        return json.dumps({
            "ok": self.ok, "files": len(self.files), "items": len(self.files) * len(VARIANTS),
            "seconds": round(self.seconds, 2),
            "errors": [asdict(p) for p in self.errors], "warnings": [asdict(p) for p in self.warnings],
            "notes": [asdict(p) for p in self.notes], "references": self.references,
            "mutation": self.mutation_json(),
        }, indent=2, ensure_ascii=False)

    def text(self) -> str:
        lines = []
        for title, problems in (("errors", self.errors), ("warnings", self.warnings), ("notes", self.notes)):
            if problems:
                lines.append(f"{title}:")
                lines.extend(f"  {problem.line()}" for problem in problems)
        lines.extend(self._mutation_lines())
        kinds = Counter(self.references.values())
        if kinds:
            lines.append("reference dialogues: " + ", ".join(
                f"{count} {kind}" + (" from the milestones" if kind == "synthesised" else " by an author")
                for kind, count in sorted(kinds.items())))
        failing = len({problem.file for problem in self.errors})
        verdict = "OK" if self.ok else f"FAILED: {len(self.errors)} errors in {failing} files"
        lines.append(f"validated {len(self.files)} scenario files ({len(self.files) * len(VARIANTS)} items) in "
                     f"{self.seconds:.1f} s: {verdict}, {len(self.warnings)} warnings, {len(self.notes)} notes")
        return "\n".join(lines)


    def _mutation_lines(self) -> list[str]:
        if not self.mutation:
            return []
        lines = ["mutation score per scenario (wrong answers that fail, right answers that pass; waived not counted):"]
        totals = Counter[str]()
        for file, result in self.mutation.items():
            counts = result.summary()
            totals.update(counts)
            waived = f", {counts['waived']} waived" if counts["waived"] else ""
            lines.append(f"  {file}: {result.score:.0%} ({counts['killed']}/{counts['wrong']} wrong fail, "
                         f"{counts['held']}/{counts['right']} right pass{waived})")
        lines.append(f"mutants: {totals['generated']} generated, {totals['killed']} of {totals['wrong']} wrong "
                     f"answers fail, {totals['held']} of {totals['right']} right answers pass, "
                     f"{totals['waived']} waived")
        return lines


def check_tools_offered(scenario: Scenario, registry: Mapping[str, ToolSpec], found: Findings) -> None:
    """Milestone tools (`tool_call`, `attempted_call`) and minefield `tool_call` tools must be offered in
    every variant. A minefield's `attempted_call` may name a withheld tool: an agent can still try it by
    name, and that attempt is what the minefield catches."""
    for variant in scenario.solvable_in or VARIANTS:
        offered = {tool.tool for tool in tools_for(Role.AGENT, scenario, registry, variant)}
        for kind, events in (("milestone", scenario.milestones), ("minefield", scenario.minefields)):
            for name, event in events.items():
                tools = [tool for tool, _ in event.tool_call_alternatives()]
                if kind == "milestone":
                    tools += [tool for tool, _ in event.attempted_call_alternatives()]
                for tool in dict.fromkeys(tools):
                    if tool in offered:
                        continue
                    why = " (it is in deny:)" if tool in scenario.deny else " (add it to tools:)"
                    if kind == "minefield":
                        why += "; its tool_call can never run — use attempted_call to catch attempts"
                    found.error("tools", f"{kind} {name!r} names {tool!r}, which the agent is not offered{why}",
                                name, variant)


def _played_as_written(scenario: Scenario, trajectory: Trajectory) -> list[str]:
    """Why the trajectory is not the reference dialogue as written (empty when it is)."""
    problems = []
    if trajectory.error:
        problems.append(f"the episode crashed: {trajectory.error}")
    if trajectory.ended_by == "max_messages":
        problems.append(f"the user never ended the conversation (max_messages {scenario.max_messages} reached)")
    owned = owners(trajectory.messages, script(scenario.reference))
    played = list(dict.fromkeys(owned[i] for i in sorted(owned)))
    unplayed = [piece for piece in pieces(scenario.reference) if piece not in played]
    if unplayed:
        problems.append("reference step(s) never played: "
                        + "; ".join(piece.describe(scenario.reference) for piece in unplayed))
    if played != sorted(played):
        problems.append("reference steps were played out of order (a user: step must directly follow the "
                        "agent: text it answers): " + " → ".join(f"reference[{p.step}]" for p in played))
    extra = [m for m in trajectory.messages if m.sender is Role.AGENT and m.index not in owned]
    if extra:
        problems.append(f"the reference agent ran out of steps and had to improvise at message {extra[0].index} "
                        f"(the user was still talking); add the missing agent step")
    return problems


def check_reference(scenario: Scenario, trajectory: Trajectory, evaluation: Evaluation, variant: str,
                    found: Findings) -> None:
    for problem in _played_as_written(scenario, trajectory):
        found.error("reference", problem, variant=variant)
    for outcome in evaluation.milestones:
        if outcome.similarity < FULL:
            parts = ", ".join(f"{label} {value:.3g}" for label, value in outcome.constraints.items())
            found.error("reference", f"milestone {outcome.name!r} reaches only {outcome.similarity:.4g} "
                        f"(at message {outcome.index}: {parts})", outcome.name, variant)
    for outcome in evaluation.minefields:
        if outcome.similarity > 0.0:
            message = trajectory.messages[outcome.index] if outcome.index is not None else None
            at = f" at message {outcome.index} ({describe_message(message)})" if message else ""
            found.error("reference", f"minefield {outcome.name!r} fires{at}", outcome.name, variant)
    if evaluation.verdict is not None and evaluation.verdict.unexplained:
        found.error("reference", f"the verdict fails it: {evaluation.verdict.unexplained}", variant=variant)
    if evaluation.verdict is not None and evaluation.verdict.final_answer and not evaluation.verdict.final_answer.held:
        found.error("reference", f"the verdict fails it: {evaluation.verdict.final_answer.describe()}", variant=variant)
    for finding in evaluation.diagnosis:
        detail = f": {finding.detail}" if finding.detail else ""
        at = f" at messages {finding.indices}" if finding.indices else ""
        found.error("diagnosis", f"{finding.code}{at}{detail}", variant=variant)


def check_unhelpful(scenario: Scenario, registry: Mapping[str, ToolSpec], start: World, found: Findings) -> None:
    """The always-declining agent fails: elsewhere it does nothing, and in an insufficient-information
    scenario its refusal names nothing that is missing."""
    evaluation = evaluate(scenario, play_unhelpful(scenario, registry, start), registry)
    if not evaluation.passed(scenario.explicit_threshold):
        return
    if INSUFFICIENT in scenario.categories:
        found.error("unhelpful", "the always-declining agent passes: \"I'm sorry, I can't help with that.\" counts "
                    "as an explanation; make `missing` name what the agent lacks (the tool or the information)")
        return
    reached = [o.name for o in evaluation.milestones if o.similarity >= FULL]
    what = f"milestones {reached} are reached" if reached else "the scenario has no milestones"
    found.error("unhelpful", f"the always-declining agent passes (score {evaluation.score:.4g}): {what} "
                "without the agent doing anything")


def check_missing(scenario: Scenario, found: Findings) -> None:
    """`missing` is what an insufficient-information verdict asks the agent to name, and only that."""
    if INSUFFICIENT in scenario.categories and not scenario.missing and scenario.reference_source == "synthesised":
        found.notes.append(Problem(found.file, "missing", "the imported base withholds no tool, so what is missing "
                                   "cannot be derived: its verdict asks for a refusal that claims no success"))
    elif INSUFFICIENT in scenario.categories and not scenario.missing:
        found.error("missing", "an insufficient_information scenario lists what the agent lacks, so that its "
                    "explanation can be judged: add `missing: [the tool or information, …]`")
    elif INSUFFICIENT not in scenario.categories and scenario.missing:
        found.error("missing", "`missing` applies to insufficient_information scenarios only; remove it")


def check_paraphrase(scenario: Scenario, path: Path, registry: Mapping[str, ToolSpec], found: Findings) -> None:
    if scenario.paraphrase_of is None:
        return
    sibling = (path.parent / scenario.paraphrase_of)
    if not sibling.is_file():
        found.error("paraphrase", f"paraphrase_of {scenario.paraphrase_of!r}: no such file ({sibling}); give a "
                    "path relative to this file")
        return
    if sibling.resolve() == path.resolve():
        found.error("paraphrase", "paraphrase_of names this file itself; name the sibling scenario")
        return
    try:
        other = load_scenario(sibling, registry)
    except ScenarioError as error:
        found.error("paraphrase", f"paraphrase_of {scenario.paraphrase_of!r} does not load: {error}")
        return
    if other.user.first_message.strip() == scenario.user.first_message.strip():
        found.warnings.append(Problem(found.file, "paraphrase", f"same first_message as {scenario.paraphrase_of!r};"
                                      " a paraphrase should word the request differently"))


def check_categories(scenario: Scenario, found: Findings) -> None:
    """Category tags that disagree with the reference dialogue (warnings)."""
    calls = sum(len(step.calls) for step in scenario.reference)
    user_steps = len(scenario.user_lines)
    tags = set(scenario.categories)
    rules = [
        ("multiple_user_turn" in tags and not user_steps, "multiple_user_turn but the reference has no user: step"),
        ("single_user_turn" in tags and user_steps, "single_user_turn but the reference has user: steps"),
        ("single_tool_call" in tags and calls != 1, f"single_tool_call but the reference makes {calls} calls"),
        ("multiple_tool_call" in tags and calls < 2, f"multiple_tool_call but the reference makes {calls} call(s)"),
        (INSUFFICIENT in tags and not scenario.minefields, "insufficient_information without minefields"),
        (INSUFFICIENT in tags and (not scenario.reference or scenario.reference[-1].agent is None),
         "insufficient_information reference should end with the agent explaining what it cannot do"),
        (not scenario.user.knowledge.strip(), "user.knowledge is empty: say what the user knows and must not invent"),
    ]
    if scenario.reference_source == "synthesised":  # the witness shows reachability, not how people talk
        rules = [(broken, message) for broken, message in rules
                 if "reference" not in message and "user." not in message]
    found.warnings.extend(Problem(found.file, "categories", message) for broken, message in rules if broken)


def _where_they_differ(path: Path, variant: str, theirs: Digest | None, registry: Mapping[str, ToolSpec]) -> str:
    """Where a second run differs, described from a fresh replay (only on the rare failing path)."""
    if theirs is None:
        return "the second run did not play it"
    trajectory = play_reference(load_scenario(path, registry), registry, variant)
    index = digest(trajectory).first_difference(theirs)
    if index is None:
        return "same messages, different world snapshots"
    if index >= len(trajectory.messages):
        return f"the second run has more messages than the first ({len(trajectory.messages)})"
    return f"first at message {index}: {describe_message(trajectory.messages[index])}"


def check_file(path: Path, registry: Mapping[str, ToolSpec],
               mutants: bool = True) -> tuple[Findings, dict[str, Digest]]:
    """Every check that needs only this file; returns the findings and each variant's digest."""
    found = Findings(str(path))
    try:
        scenario = load_scenario(path, registry)
    except ScenarioError as error:
        for line in str(error).splitlines():
            found.error("schema", line.removeprefix(f"{path}: "))
        return found, {}
    try:
        return _check_loaded(scenario, path, registry, found, mutants)
    except Exception as error:  # a bug or an unforeseen input must not hide the other files' results
        found.error("crash", f"checking raised {type(error).__name__}: {error}")
        return found, {}


def check_mutants(scenario: Scenario, registry: Mapping[str, ToolSpec], base: tuple[Trajectory, Evaluation],
                  start: World, found: Findings) -> None:
    """Every generated answer judged as it must be (wrong ones fail, right ones pass), or waived."""
    result = mutation_test(scenario, registry, base, start)
    if result.judged or result.stale:
        found.mutation = result
    for judged in result.survivors:
        where = "final_answer" if judged.milestone == FINAL_ANSWER else "the milestone"
        hint = (f"add a fact it breaks, or waive it on {where} with a reason" if judged.mutant.wrong
                else f"widen the facts to this form, or waive it on {where} with a reason")
        found.error("mutants", f"{judged.describe()}; {hint}", judged.milestone)
    for milestone, mutant in result.stale:
        found.error("mutants", f"{owner(milestone)} waives {mutant!r}, which is not a generated mutant "
                    "(the reference answer or the facts changed?); remove the waiver", milestone)


def _check_loaded(scenario: Scenario, path: Path, registry: Mapping[str, ToolSpec],
                  found: Findings, mutants: bool = True) -> tuple[Findings, dict[str, Digest]]:
    found.reference = scenario.reference_source
    if scenario.solvable_in:
        found.notes.append(Problem(found.file, "variants", "solvable only in " + ", ".join(scenario.solvable_in)
                                   + "; the reference dialogue is checked there"))
    check_tools_offered(scenario, registry, found)
    check_missing(scenario, found)
    start = build_world(scenario)  # forked per episode; the second (digest) run builds afresh each time
    digests: dict[str, Digest] = {}
    base: tuple[Trajectory, Evaluation] | None = None
    for variant in VARIANTS:
        trajectory = play_reference(scenario, registry, variant, start=start)
        evaluation = evaluate(scenario, trajectory, registry)
        if scenario.solvable_in is None or variant in scenario.solvable_in:
            check_reference(scenario, trajectory, evaluation, variant, found)
        digests[variant] = digest(trajectory)
        if variant == "base":
            base = trajectory, evaluation
    check_unhelpful(scenario, registry, start, found)
    # examples and mutants replace a step of a reference that works (a vacuous milestone does not stop them)
    played_as_written = base is not None and base[1].score >= FULL and not found.merged_errors()
    if played_as_written and base is not None and not scenario.solvable_in:
        for vacuous in vacuous_milestones(scenario, base[0], base[1], registry, start):
            found.error("vacuous", vacuous.explain(scenario), vacuous.milestone)
    problems = declaration_problems(scenario)
    if scenario.reference_source == "synthesised":
        # an imported benchmark's facts are derived by the importer, which writes no accept / reject examples
        # (the mutation stage below generates them); a text it could not turn into facts is reached only at
        # ROUGE-L 1.0, and there similarity is the figure to read
        wordings = [name for name, milestone in scenario.milestones.items()
                    if (milestone.said("agent_says") or milestone.said("user_says"))
                    and not states_what_is_right(milestone)]
        if wordings:
            found.notes.append(Problem(found.file, "facts", f"imported text milestone(s) {', '.join(wordings)} without "
                                       "facts: the verdict needs their exact wording; compare similarity there"))
    else:
        for problem in problems:
            found.error("facts", problem.message, problem.milestone)
    if played_as_written and base is not None:
        for problem in example_problems(scenario, registry, base, start):
            found.error("examples", problem.message, problem.milestone)
        if mutants:
            check_mutants(scenario, registry, base, start, found)
    if not scenario.milestones and not scenario.minefields and scenario.reference_source == "synthesised":
        found.notes.append(Problem(found.file, "events", "the imported base has neither milestones nor minefields; "
                                   "only an insufficient-information explanation can fail it"))
    elif not scenario.milestones and not scenario.minefields:
        found.error("events", "the scenario has neither milestones nor minefields, so every agent passes it; "
                    "add a minefield on the harm (e.g. attempted_call on the tool it must not use)")
    check_paraphrase(scenario, path, registry, found)
    check_categories(scenario, found)
    return found, digests


def collect(paths: Iterable[str | Path]) -> list[Path]:
    """Scenario files under the given files/folders, each once, in a stable order."""
    files: dict[Path, None] = {}
    for root in paths:
        if not Path(root).exists():
            raise FileNotFoundError(f"{root}: no such file or directory")
        files.update(dict.fromkeys(find_scenarios(root)))
    return sorted(files)


def validate(files: Sequence[Path], determinism: bool = True, mutants: bool = True) -> Report:
    """Run every check on `files` (see the module docstring); `mutants=False` skips the mutation stage."""
    started = time.perf_counter()
    registry = all_tools()
    second_run = DigestRun([str(path) for path in files]) if determinism else None
    errors, warnings, notes = [], [], []
    references = {}
    mutation = {}
    all_digests = {}
    try:
        for path in files:
            found, digests = check_file(path, registry, mutants)
            all_digests[str(path)] = digests
            errors.extend(found.merged_errors())
            warnings.extend(found.warnings)
            notes.extend(found.notes)
            if found.reference:
                references[str(path)] = found.reference
            if found.mutation is not None:
                mutation[str(path)] = found.mutation
    except BaseException:  # e.g. Ctrl-C: do not leave the second interpreter running
        if second_run is not None:
            second_run.process.kill()
        raise
    if second_run is not None:
        try:
            theirs = second_run.result()
        except RuntimeError as error:  # reported once, not as a difference in every file
            theirs, all_digests = {}, {}
            errors.append(Problem("(all files)", "determinism", str(error)))
        for file, digests in all_digests.items():
            other = theirs.get(file, {})
            differ = [variant for variant, mine in digests.items() if other.get(variant) != mine]
            if differ:
                where = _where_they_differ(Path(file), differ[0], other.get(differ[0]), registry)
                errors.append(Problem(file, "determinism", f"two runs gave different trajectories ({where}); "
                                      "look for unseeded randomness, set/hash order or state kept between "
                                      "scenarios", variants=tuple(differ)))
    errors.sort(key=lambda problem: problem.file)
    return Report([str(path) for path in files], errors, warnings, notes, time.perf_counter() - started, references,
                  mutation)
