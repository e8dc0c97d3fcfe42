"""The command-line entry: list tools, play a scenario's reference dialogue."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pytest_toolsandbox.tools.augment import VARIANTS, offered_tools
from pytest_toolsandbox.tools.registry import all_tools


def _tools_command(args: argparse.Namespace) -> int:
    registry = all_tools()
    offered = {tool.tool: tool for tool in offered_tools(list(registry), registry, variant=args.variant)}
    entries = []
    for name, spec in registry.items():
        schema = offered[name]
        entries.append({
            "name": schema.name, "tool": name, "domain": spec.domain, "action": spec.action,
            "visible_to": str(spec.visible_to), "reads": sorted(map(str, spec.reads)),
            "writes": sorted(map(str, spec.writes)), "description": schema.description,
            "parameters": [{"name": p.name, "required": p.required, "description": p.description,
                            **({"default": p.default} if not p.required else {})} for p in spec.parameters],
            "json_schema": schema.parameters,
            "openai": schema.openai(), "anthropic": schema.anthropic(),
        })
    if args.json:
        print(json.dumps(entries, indent=2, sort_keys=True, default=repr))
        return 0
    for entry in entries:
        label = "action" if entry["action"] else "read"
        params = ", ".join(f"{p['name']}{'' if p['required'] else '?'}" for p in entry["parameters"])
        print(f"{entry['name']:<36} {entry['domain']:<10} {label:<6} ({params})")
    print(f"{len(entries)} tools")
    return 0


def _run_command(args: argparse.Namespace) -> int:
    from pytest_toolsandbox.episode import run_episode
    from pytest_toolsandbox.roles.scripted import ReferenceAgent, ScriptedUser
    from pytest_toolsandbox.scenario.loader import ScenarioError, load_scenario

    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as error:
        print(error, file=sys.stderr)
        return 2
    trajectory = run_episode(scenario, ReferenceAgent(scenario), ScriptedUser(scenario), variant=args.variant)
    if args.json:
        sys.stdout.write(trajectory.to_json())
        return 0
    from pytest_toolsandbox.report.conversation import format_conversation

    print(format_conversation(trajectory))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_toolsandbox",
                                     description="ToolSandbox scenarios, tools and trajectories.")
    commands = parser.add_subparsers(dest="command", required=True)
    tools = commands.add_parser("tools", help="list the tool registry with schemas and labels")
    tools.add_argument("--json", action="store_true", help="machine-readable output")
    tools.add_argument("--variant", default="base", choices=sorted(VARIANTS),
                       help="show the schemas as this augmentation variant presents them")
    tools.set_defaults(handler=_tools_command)
    run = commands.add_parser("run", help="play a scenario's reference dialogue and print the trajectory")
    run.add_argument("scenario", help="path to a scenario YAML file")
    run.add_argument("--json", action="store_true", help="print the trajectory JSON")
    run.add_argument("--variant", default="base", choices=sorted(VARIANTS))
    run.set_defaults(handler=_run_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.handler(args)
