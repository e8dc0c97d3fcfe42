"""The controller: the only process that sees every result (the only one without xdist, else the xdist
controller) and the only writer of reports. It counts the selected items, stops the run before it starts
when a role or a cassette is missing, collects each item's record and trajectory as its report arrives,
and at the end writes summary.json, the HTML report, the Markdown summary and the per-category table.
The progress line (`ProgressDisplay`) is drawn around pytest's own output.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolsandbox.basics.vocabulary import REFERENCE_PROMPTS_FILE
from pytest_toolsandbox.options import display
from pytest_toolsandbox.running.ahead import current_pool
from pytest_toolsandbox.running.budget_stop import run_budget
from pytest_toolsandbox.running.configure import local_script, settings
from pytest_toolsandbox.running.exit_status import RunEnd, exit_status
from pytest_toolsandbox.running.heap import freeze_heap
from pytest_toolsandbox.running.items import TEST_NAME, is_scenario_id, make_case, scenario_found
from pytest_toolsandbox.running.selection import done as selected_done
from pytest_toolsandbox.running.selection import probe_roles, set_done

if TYPE_CHECKING:
    from pytest_toolsandbox.report.text.progress import Emitter, Progress
    from pytest_toolsandbox.report.writing.collector import RunCollector
    from pytest_toolsandbox.running.previous import PreviousReport


AUTO_PROGRESS_ITEMS = 50
"""`--progress auto` shows the line for runs of more items than this even without a model role."""


class Controller:
    """Registered on the controller (or the only process without xdist), never on workers."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = settings(config)
        self.started = datetime.now(UTC)
        self.summary: dict[str, Any] | None = None
        self.output_notes: list[str] = []
        self.runs_tests = False
        self.probed = False
        self.checked = False
        self.stopped = False
        self.baseline_summary = self._read_baseline()
        self.dropped_earlier = 0
        """`--resume`: records in the resumed directory that cannot belong to its run (dropped)."""
        self.earlier = self._read_earlier()
        """`--resume`: the records of the run being completed, by item id."""
        self.fingerprint: dict[str, Any] | None = None
        """What this run's results depend on (report/results/fingerprint.py), once its items are collected."""
        self.previous: PreviousReport | None = None
        if not self._inspecting():
            from pytest_toolsandbox.running.previous import PreviousReport

            self.previous = PreviousReport(self.settings.report_dir)
            self.previous.set_aside(keep_journal=self.settings.resume is not None)
        self.emitter: Emitter | None = None
        self.progress_decided = False
        self.expected_ids: set[str] = set()
        """The selected scenario items (the order of the report's trajectory pages)."""
        self.failing_reports: dict[str, int] = {}
        """Failed reports per scenario item (what pytest counts in `session.testsfailed`)."""
        config.pluginmanager.register(ProgressDisplay(self), "toolsandbox-progress")

    @functools.cached_property
    def progress(self) -> Progress:
        """The live progress counts, created (like the collector) once a scenario item is collected. A
        scheduler reports its real running count by setting `progress.running` to a no-argument
        callable (report/text/progress.py; without xdist the controller does it itself). At most `slots`
        episodes run at once: xdist workers × `--concurrency`."""
        from pytest_toolsandbox.report.text.progress import Progress

        workers = getattr(self.config.option, "numprocesses", None) or 0
        progress = Progress(slots=max(workers, 1) * self.settings.concurrency)
        if not workers and self.settings.concurrency > 1:
            progress.running = self._episodes_playing
        return progress

    def _episodes_playing(self) -> int | None:
        """Without xdist the episode scheduler is in this process: the episodes it plays now, and at
        least the item pytest is running (it may play its episode in its own turn); None before it starts."""
        pool = current_pool(self.config)
        return None if pool is None else max(pool.scheduler.running, 1)

    def start_progress(self) -> Emitter | None:
        """Called as the first item starts, when the item count is known: whether and how the line shows."""
        if self.progress_decided:
            return self.emitter
        self.progress_decided = True
        if "progress" not in self.__dict__:  # no scenario item in this run: nothing to show, nothing imported
            return None
        from pytest_toolsandbox.recording.preflight import models_of
        from pytest_toolsandbox.report.text.progress import Emitter

        self.progress.begin()
        config, run = self.config, self.settings
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or config.option.verbose < 0 or run.progress == "off" or not self.progress.expected:
            return None
        models = any(models_of([agent, run.user], run.model_options) for agent in run.agents)
        if run.progress == "auto" and not (models or self.progress.expected > AUTO_PROGRESS_ITEMS):
            return None
        writer = config.get_terminal_writer()
        # other output while the status shows (-s or tee-sys prints, live logs) would land on it: plain lines then
        redraw = (reporter.isatty() and writer.hasmarkup and config.getoption("capture") not in ("no", "tee-sys")
                  and not config.getini("log_cli"))

        def write_line(text: str, last: bool) -> None:
            """A line of its own, after pytest's dots (under xdist pytest does not track that line). A
            line amid the run stays open when pytest starts its next output with a newline anyway (file
            names or -v lines, but not under xdist, which hides file names), which would otherwise leave
            an empty line."""
            reporter.ensure_newline()
            if writer.width_of_current_line:
                writer.line()
            writer.write(text)
            if last or not reporter.showfspath:
                writer.line()

        self.emitter = Emitter(self.progress, write_line, writer if redraw else None)
        return self.emitter

    def _read_baseline(self) -> dict[str, Any] | None:
        """The whole baseline summary, read now: this run may overwrite the file (same report dir)."""
        if self.settings.baseline is None:
            return None
        from pytest_toolsandbox.report.ci.baseline_file import load_baseline_data
        from pytest_toolsandbox.report.results.summary import SummaryError

        try:
            return load_baseline_data(self._baseline_path())
        except SummaryError:
            return None  # already reported as a usage error by read_settings when unreadable

    def _read_earlier(self) -> dict[str, Any]:
        if self.settings.resume is None:
            return {}
        from pytest_toolsandbox.report.results.fingerprint import run_fingerprint
        from pytest_toolsandbox.running.resume import ResumeError, done, earlier_records

        now = run_fingerprint(self.settings.as_json(self.config.rootpath), {})
        try:
            earlier = earlier_records(self.settings.resume, now, self.config.rootpath)
        except ResumeError as error:
            raise pytest.UsageError(f"--resume: {error}") from None
        self.dropped_earlier = earlier.dropped
        set_done(self.config, frozenset(done(earlier.records)))
        return earlier.records

    def _baseline_path(self) -> Path:
        assert self.settings.baseline is not None
        return self.config.rootpath / self.settings.baseline.path

    @functools.cached_property
    def collector(self) -> RunCollector:
        """Created (and the report stack imported) only once a scenario item is collected or reported."""
        from pytest_toolsandbox.report.writing.collector import RunCollector

        collector = RunCollector(self.settings.report_dir, self.settings.trials, resume=bool(self.earlier),
                                 rules=self.settings.rules)
        collector.preload(self.earlier.values())
        if "progress" in self.__dict__:
            collector.expect(self.progress.expected, self.expected_ids)
        if self.fingerprint is not None:
            collector.start_journal(self._journal_header())
        return collector

    def _journal_header(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "started": self.started.isoformat(timespec="seconds")}

    def _expect(self, nodeids: Iterable[str]) -> None:
        """Count the selected scenario items. The report stack is not imported for that: at the end of
        collection it would delay the first episode by the import of its scoring modules."""
        ids = [nodeid for nodeid in nodeids if is_scenario_id(nodeid)]
        if ids:
            self.expected_ids.update(ids)
            self.progress.expected = max(self.progress.expected, len(ids))
            if "collector" in self.__dict__:
                self.collector.expect(len(ids), ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        baseline = self.settings.baseline
        if baseline is not None:
            node.workerinput["toolsandbox_baseline"] = baseline.as_shipped()
        node.workerinput["toolsandbox_done"] = sorted(selected_done(self.config))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._expect(item.nodeid for item in session.items)
        self._preflight([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        scenario_ids = [nodeid for nodeid in ids if is_scenario_id(nodeid)]
        if scenario_ids:
            freeze_heap(self.config)  # the controller keeps every record: its collections grow too
        self._expect(scenario_ids)
        if not self.checked:
            self._preflight(ids)
        if scenario_ids and not self.probed:
            self.probed = True
            reason = self._probe(scenario_ids[0])
            if reason is not None:
                self.stopped = True  # nothing ran: keep the last run's summary
                pytest.exit(reason, returncode=pytest.ExitCode.USAGE_ERROR)
            if self.runs_tests:
                self._begin_run()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """An overriding `toolsandbox_agent` that ignores `--agent` (see ScenarioFile.collect) stops the
        whole run, with or without xdist (whose workers would otherwise run the other files)."""
        from pytest_toolsandbox.running.agent_override import MESSAGE_START

        if report.failed and str(report.longrepr).startswith(MESSAGE_START):
            self.stopped = True
            pytest.exit("toolsandbox: stopped before the first item (the error above)",
                        returncode=pytest.ExitCode.USAGE_ERROR)

    def _probe(self, nodeid: str) -> str | None:
        """The roles built once for the first scenario, on the controller (workers cannot stop the run)."""
        from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

        try:
            scenario = load_scenario(self.config.rootpath / nodeid.partition("::")[0])
        except ScenarioError:
            return None  # the workers report it as a collection error
        cases = [make_case(agent, self.settings.variants[0], 1, self.settings) for agent in self.settings.agents]
        return probe_roles(self.config, scenario.model_copy(update={"path": nodeid.partition("::")[0]}), cases)

    def _preflight(self, nodeids: list[str]) -> None:
        """Stop the whole run at once when model items lack a cassette (replay) or a key (record)."""
        import os
        import shlex

        from pytest_toolsandbox.recording.cassettes import cassette_path
        from pytest_toolsandbox.recording.preflight import RecordedItem, models_of, problem

        self.checked = True
        run = self.settings
        cases = {make_case(agent, variant, trial, run).id: (agent, variant, trial)
                 for agent in run.agents for variant in run.variants for trial in range(1, run.trials + 1)}
        items = []
        for nodeid in filter(is_scenario_id, nodeids):
            path, _, rest = nodeid.partition("::")
            case = cases.get(rest[len(TEST_NAME) + 1:-1])
            models = models_of([case[0], run.user], run.model_options) if case else ()
            if case and models:
                cassette = cassette_path(run.cassette_dir, path, case[0], run.user, case[1], case[2])
                items.append(RecordedItem(cassette, models))
        invocation = self.config.invocation_params.dir
        command = shlex.join(["pytest", *self.config.invocation_params.args])
        message = problem(items, run.record_mode, command,
                          {item.cassette: display(item.cassette, invocation) for item in items},
                          environ_has_ci=bool(os.environ.get("CI")), local_script=local_script(self.config))
        if message is not None:
            self.stopped = True
            pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Only sessions that run tests write a report (not --fixtures, --collect-only, --setup-plan)."""
        option = self.config.option
        self.runs_tests = not (option.collectonly or getattr(option, "setuponly", False))
        if self.runs_tests and self._scenarios_selected():  # under xdist: when the workers' collections arrive
            self._begin_run()

    def _inspecting(self) -> bool:
        """Sessions that only show what would run (they never write or remove a report)."""
        option = self.config.option
        return any(getattr(option, name, False) for name in ("collectonly", "setuponly", "setupplan", "showfixtures",
                                                             "show_fixtures_per_test"))

    def _scenarios_selected(self) -> bool:
        return "progress" in self.__dict__ and self.progress.expected > 0

    def _begin_run(self) -> None:
        """Items are about to run: the run's fingerprint is taken (the selected scenario files as they are
        now) for the journal to start with, and the previous run's set-aside report goes (running/previous.py)."""
        if self.fingerprint is not None:
            return
        from pytest_toolsandbox.report.results.fingerprint import run_fingerprint, scenario_digests

        paths = {nodeid.partition("::")[0] for nodeid in self.expected_ids}
        paths |= {record["path"] for record in self.earlier.values()}
        self.fingerprint = run_fingerprint(self.settings.as_json(self.config.rootpath),
                                           scenario_digests(self.config.rootpath, paths))
        if "collector" in self.__dict__:  # else the collector starts it when the first result arrives: its
            self.collector.start_journal(self._journal_header())  # imports must not delay the first episode
        if self.previous is not None:
            self.previous.discard()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not is_scenario_id(report.nodeid):
            return
        from pytest_toolsandbox.report.pages.trajectory_html import PageContext

        if report.failed and not hasattr(report, "wasxfail"):  # as pytest counts session.testsfailed
            self.failing_reports[report.nodeid] = self.failing_reports.get(report.nodeid, 0) + 1

        if report.location is not None:  # after the -v line: failure headlines name the scenario file
            report.location = (report.location[0], report.location[1], report.nodeid)
        trajectory = getattr(report, "toolsandbox_trajectory", None)
        if trajectory is not None:
            del report.toolsandbox_trajectory  # written to disk below; keep memory for records only
        context = getattr(report, "toolsandbox_context", None)
        budget = run_budget(self.config)
        if budget is not None and getattr(report, "toolsandbox_record", None) is not None:
            budget.add(report.toolsandbox_record)
        self.collector.add_phase(report.nodeid, report.when, report.failed, report.duration,
                                 getattr(report, "worker_id", None), getattr(report, "toolsandbox_record", None),
                                 trajectory, getattr(report, "toolsandbox_slug", None),
                                 PageContext(context["goal"], context["knowledge"], tuple(context["reference"]))
                                 if context else None)
        done = self.progress.done
        if report.when == "???":
            self.progress.amend(report.nodeid, "error")
        elif report.nodeid in self.collector.records and (hasattr(report, "toolsandbox_record") or report.failed):
            self.progress.add(report.nodeid, self.collector.records[report.nodeid])  # its outcome as the summary's
        if self.emitter is not None and self.progress.done > done:
            self.emitter.item_finished()

    def _ran_agents(self) -> list[str]:
        """The agents this run has results of, by the name they are gated under (an agent a conftest.py
        builds goes by its own identity), the `--agent` specs first; the specs when nothing finished."""
        from pytest_toolsandbox.report.results.record import agent_key

        ran = {agent_key(record) for record in self.collector.records.values()}
        return [*(a for a in self.settings.agents if a in ran), *sorted(ran - set(self.settings.agents))] \
            or list(self.settings.agents)

    def _judge(self, baseline: dict[str, Any] | None) -> Any:
        """The gate's verdicts (report/ci/gate.py), added to `baseline`; None without a baseline to judge by."""
        if baseline is None or self.baseline_summary is None:
            return None
        from pytest_toolsandbox.report.ci.gate import run_gate

        result = run_gate(self.baseline_summary["records"], self.collector.finished_records(), baseline["gates"],
                          self.settings.baseline_alpha, self.settings.baseline_min_effect)
        baseline["gate"] = result.as_json()
        return result

    def _run(self, exitstatus: int) -> dict[str, Any]:
        from pytest_toolsandbox.report.results.metadata import git_state, versions

        finished = datetime.now(UTC)
        return {
            "started": self.started.isoformat(timespec="seconds"),
            "finished": finished.isoformat(timespec="seconds"),
            "duration": round((finished - self.started).total_seconds(), 3),
            "exit_status": int(exitstatus), "versions": versions(), "git": git_state(self.config.rootpath),
            "options": self.settings.as_json(self.config.rootpath),
            "agents": self._ran_agents(), "users": [self.settings.user],
            "models": self._models(),
            "workers": getattr(self.config.option, "numprocesses", None) or 0,
            "fingerprint": self.fingerprint,
            "imported_suite": self._imported_suite(),
        }

    def _models(self) -> dict[str, Any]:
        """Which model each model spec named, played and was answered by (report/results/models.py)."""
        from pytest_toolsandbox.report.results.models import models_summary
        from pytest_toolsandbox.running.model_notes import run_models

        return models_summary(run_models(self.settings), self.collector.finished_records(), self.settings.user)

    def _keep_previous(self, exitstatus: int) -> None:
        """This session writes no report: the previous one is put back, unless the session was stopped
        while collecting (it may have been about to replace it: the set-aside files stay hidden)."""
        if self.previous is None:
            return
        if exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR) and (
                scenario_found(self.config) or self.settings.resume is not None or not self.runs_tests):
            self.previous.keep_aside()
            return
        self.previous.restore()

    def pytest_unconfigure(self) -> None:
        """A configured session that never ran one (`--help`): the previous report goes back."""
        if self.previous is not None:
            self.previous.restore()

    def _imported_suite(self) -> bool:
        """Whether the run's scenarios are imported reference-benchmark files (their folder holds the
        reference's prompts): the report then sets them next to the paper's tables."""
        folders = {Path(record["path"]).parent for record in self.collector.finished_records()}
        return bool(folders) and all((self.config.rootpath / folder / REFERENCE_PROMPTS_FILE).is_file()
                                     for folder in folders)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.stopped:
            if self.previous is not None:
                self.previous.restore()  # stopped before any item ran: the last run's report stays
            return
        if not self.runs_tests:
            self._keep_previous(exitstatus)
            return
        if self.earlier:  # a resumed run whose items were all done still writes its summary
            self._begin_run()
            self.collector  # noqa: B018
        if "collector" not in self.__dict__ and not self._scenarios_selected():
            self._keep_previous(exitstatus)  # no scenario item selected: the last run's summary stays
            return
        self._begin_run()
        baseline = (self.settings.baseline.as_json(self._ran_agents(), self.settings.rules) if self.settings.baseline
                    else None)
        gate = self._judge(baseline)
        budget = run_budget(self.config)
        if budget is not None:
            budget.finish()
            if budget.reason is not None and self.collector.unfinished():
                self.collector.stop_reason = budget.reason  # docs/scale-out.md
        from pytest_toolsandbox.running.model_stop import stopped_reason

        if (model_gone := stopped_reason(session)) is not None:
            self.collector.stop_reason = model_gone
        end = RunEnd(exitstatus, session.testsfailed, self._noisy_failures(gate),
                     gate is not None and bool(gate.regressed_groups), self.collector.stop_reason is not None)
        status = exit_status(end)  # what the results decide: the summary records it
        self.summary = self.collector.finish(self._run(status), status == pytest.ExitCode.INTERRUPTED, baseline)
        gated_by = self.settings.baseline
        if self.summary is not None and self.baseline_summary is not None and gated_by is not None:
            from pytest_toolsandbox.report.pages.comparison_html import baseline_sections, write_comparison

            report_dir = self.settings.report_dir
            sections = baseline_sections(self.baseline_summary, self._baseline_path(), self.summary, report_dir,
                                         label=f"baseline {gated_by.path}")
            try:
                write_comparison(report_dir, sections, self.settings.baseline_alpha, self.settings.baseline_min_effect,
                                 root="", empty=f"The baseline holds results of "
                                 f"{', '.join(gated_by.recorded_for)} only: no agent of this run "
                                 "was gated by it.")
            except OSError as error:
                self.collector.write_errors.add_error(error, report_dir / "comparison.html")
        if self.summary is not None:
            self._write_outputs(self.summary)
        for path, reason in self.previous.failures if self.previous is not None else ():
            self.collector.write_errors.add(path, reason)
        session.exitstatus = exit_status(replace(end, write_failed=bool(self.collector.write_errors)))

    def _noisy_failures(self, gate: Any) -> int:
        """Failed reports of the tasks the gate found noisy (report/ci/gate.py): failures it forgives."""
        if gate is None:
            return 0
        from pytest_toolsandbox.report.ci.gate import forgiven

        noisy = forgiven(gate.tasks, self.collector.finished_records())
        return sum(self.failing_reports.get(nodeid, 0) for nodeid in noisy)

    def _write_outputs(self, summary: dict[str, Any]) -> None:
        """The Markdown summary, the refreshed baseline, and the report directory without stale files."""
        import os

        from pytest_toolsandbox.report.writing.outputs import write_outputs

        run = self.settings
        written = write_outputs(summary, run.report_dir, run.markdown, run.update_baseline, os.environ,
                                lambda path: display(path, self.config.invocation_params.dir))
        self.output_notes = written.notes
        self.collector.write_errors.extend(written.errors)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        from pytest_toolsandbox.report.results.usage import usage_line
        from pytest_toolsandbox.report.text.table import format_table
        from pytest_toolsandbox.report.text.terminal import terminal_safe

        summary = self.summary
        where = display(self.settings.report_dir, self.config.invocation_params.dir)
        if summary["baseline"]:
            self._write_gate(terminalreporter, summary, where)
        terminalreporter.write_sep("=", "toolsandbox: per-category results")
        for line in format_table(summary["aggregates"], self.settings.trials):
            terminalreporter.write_line(terminal_safe(line))
        usage = usage_line(summary["usage"]) if "usage" in summary else None
        if usage:
            terminalreporter.write_line(usage)
        from pytest_toolsandbox.report.results.models import models_text

        if models := models_text(summary["run"].get("models")):
            terminalreporter.write_line(terminal_safe(f"models: {models}"))
        from datetime import date

        from pytest_toolsandbox.running.model_notes import model_warnings, played_notes, run_models

        notes = played_notes(summary["run"].get("models"), date.today())
        if self.config.option.verbose < 0:  # -q hides the header, which said these once
            notes = model_warnings(run_models(self.settings), date.today()) + notes
        for note in notes:
            terminalreporter.write_line(terminal_safe(note), yellow=True)
        counts = summary["counts"]
        note = (f" — PARTIAL: {counts['finished']} of {counts['expected']} items finished"
                if summary["partial"] else "")
        if self.collector.summary_written:
            terminalreporter.write_line(f"report: {where}/index.html, {where}/summary.json{note}")
        else:
            terminalreporter.write_line(f"report: NOT written: {where}/summary.json could not be written (below); "
                                        "the results above are this run's only record", red=True)
        if summary.get("stop_reason"):
            terminalreporter.write_line(f"toolsandbox: stopped starting episodes: {summary['stop_reason']}; "
                                        f"{len(summary['unfinished'])} item(s) not run — complete the run with "
                                        f"--resume {where}", yellow=True)
        elif summary["partial"] and self.collector.summary_written:
            terminalreporter.write_line(f"toolsandbox: {counts['expected'] - counts['finished']} item(s) not finished "
                                        f"— complete the run with the same command and --resume {where} (only those "
                                        "items run)", yellow=True)
        budget = run_budget(self.config)
        if budget is not None and budget.max_spend is not None and budget.unpriced:
            terminalreporter.write_line(f"toolsandbox: {budget.unpriced} item(s) on models without a price do not "
                                        "count towards --max-spend (pass --price-table, or cap --max-run-tokens)",
                                        yellow=True)
        for line in self.output_notes:
            terminalreporter.write_line(terminal_safe(line))
        if self.dropped_earlier and self.settings.resume is not None:
            terminalreporter.write_line(f"toolsandbox: --resume dropped {self.dropped_earlier} record(s) of "
                                        f"{display(self.settings.resume, self.config.invocation_params.dir)} that "
                                        "cannot belong to its run (unknown scenario, agent, variant or trial)",
                                        yellow=True)
        errors = self.collector.write_errors
        if errors:
            terminalreporter.write_line(f"toolsandbox: {len(errors)} output file(s) could not be written; results "
                                        "above are complete, the files are not (exit status 1) — not written:",
                                        red=True)
            for line in errors.lines():
                terminalreporter.write_line(terminal_safe(f"  {line}"), red=True)

    @staticmethod
    def _write_gate(terminalreporter: Any, summary: dict[str, Any], where: str) -> None:
        """The gate first: what regressed and by how much, then what improved, then what it could not see."""
        from pytest_toolsandbox.report.ci.gate_text import change_counts, gate_findings, gate_note, gate_verdict
        from pytest_toolsandbox.report.text.terminal import terminal_safe

        baseline = summary["baseline"]
        regressed, improved = gate_findings(summary)
        terminalreporter.write_sep("=", "toolsandbox: baseline gate", red=bool(regressed), green=not regressed)
        if not baseline["gates"]:  # nothing to judge: say whom the baseline is for, and nothing else
            terminalreporter.write_line(terminal_safe(f"baseline {baseline['path']}: {gate_note(baseline)}"),
                                        yellow=True)
            return
        terminalreporter.write_line(terminal_safe(gate_verdict(summary)), red=bool(regressed))
        for title, findings, red in (("regressed", regressed, True), ("improved", improved, False)):
            if findings:
                terminalreporter.write_line(f"{title}:", red=red, green=not red)
            for finding in findings:
                link = f"  ({where}/{finding.page})" if finding.page else ""
                terminalreporter.write_line(terminal_safe(f"{'    ' if finding.depth else '  '}{finding.text}{link}"),
                                            red=red and not finding.depth)
        gate = baseline.get("gate") or {}
        noisy = gate.get("noisy_tasks") or []
        if noisy:
            terminalreporter.write_line(f"noisy (fewer passes within chance, not failing the run): "
                                        f"{len(noisy)} task(s)")
            for verdict in noisy[:10]:
                terminalreporter.write_line(terminal_safe(
                    f"  {verdict['task']}: {verdict['baseline'][0]}/{verdict['baseline'][1]} → "
                    f"{verdict['now'][0]}/{verdict['now'][1]} passed (p = {verdict['p']:.3f})"))
        for note in gate.get("notes") or []:
            terminalreporter.write_line(terminal_safe(f"cannot detect: {note}"), yellow=True)
        terminalreporter.write_line(terminal_safe(f"baseline {baseline['path']}: {change_counts(baseline)}"
                                                  + (f"; tests at alpha {gate['alpha']:g}, minimum effect "
                                                     f"{gate['min_effect']:g}" if gate else "")))
        note = gate_note(baseline)
        if note:
            terminalreporter.write_line(terminal_safe(f"  {note}"),
                                        yellow=bool(baseline.get("ungated") or baseline.get("differs")))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str],
                                    session: pytest.Session) -> None:
        if "collector" not in self.__dict__:
            return
        from pytest_toolsandbox.report.pages.site import CATEGORY_TABLE_STYLE, category_table

        aggregates = self.collector.aggregates()
        if aggregates:
            prefix.append(f"<style>{CATEGORY_TABLE_STYLE}</style><h2>ToolSandbox per-category results</h2>"
                          + category_table(aggregates, self.settings.trials, link_root=None))


class ProgressDisplay:
    """Keeps the progress status line out of pytest's way: hook wrappers around the terminal
    reporter's per-item output hide the line just before pytest writes and show it right after
    (report/text/progress.py explains the drawing); the final line comes before pytest's summary."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    def _around(self) -> Iterator[None]:
        emitter = self.controller.start_progress()
        if emitter is not None:
            emitter.hide()
        try:
            return (yield)
        finally:
            if emitter is not None:
                emitter.show()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self) -> Iterator[None]:
        return (yield from self._around())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self) -> Iterator[None]:
        return (yield from self._around())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self) -> Iterator[None]:
        return (yield from self._around())

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.controller.emitter is not None and not self.controller.stopped:
            self.controller.emitter.end()
