#!/usr/bin/env python3
"""Writes mutated copies of workflow bundles for the conformance suite.

Two sets:
  * catalogue mutants: the author mistakes of the bundle-format catalogue,
    applied to the SupportDesk example bundle (ids `c<row>`);
  * random mutants: generic single-edit mutations of the real bundles and the
    examples, drawn from a seeded RNG (ids `r<number>`).

Each mutant is a bundle folder `<out>/<Base>X<id>` whose orchestrator
workflow_name is renamed to match the folder, so that all mutants can share one
workflows root (mozaiks validates one root per process). Prints one JSON line
per mutant: {"id", "folder", "base", "operator", "file", "detail"}.

Needs PyYAML (run it with the reference virtualenv's interpreter).
"""
import argparse
import copy
import json
import random
import shutil
import string
from pathlib import Path

import yaml

BUNDLE_FILES = [
    "orchestrator.yaml",
    "agents.yaml",
    "transition_graph.yaml",
    "context_variables.yaml",
    "structured_outputs.yaml",
    "middleware.yaml",
    "a2a.yaml",
    "tools.yaml",
    "ui_config.yaml",
    "extended_orchestration/task_batches.yaml",
]


def load(path):
    with open(path, encoding="utf-8-sig") as handle:
        return yaml.safe_load(handle)


def dump(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(data, handle, sort_keys=False, allow_unicode=True)


class Mutant:
    """A copy-on-write view of a bundle's files."""

    def __init__(self, base_dir):
        self.base_dir = base_dir
        self.files = {}

    def get(self, name):
        if name not in self.files:
            path = self.base_dir / name
            self.files[name] = load(path) if path.exists() else None
        return self.files[name]

    def set(self, name, data):
        self.files[name] = data

    def write(self, folder, workflow_name):
        shutil.copytree(self.base_dir, folder)
        orchestrator = self.get("orchestrator.yaml")
        if isinstance(orchestrator, dict) and orchestrator.get("workflow_name") == load(self.base_dir / "orchestrator.yaml").get("workflow_name"):
            orchestrator = dict(orchestrator)
            orchestrator["workflow_name"] = workflow_name
            self.files["orchestrator.yaml"] = orchestrator
        for name, data in self.files.items():
            if data is None and not (self.base_dir / name).exists():
                continue
            dump(folder / name, data)


# --------------------------------------------------------------- catalogue (part a)

def rules(m):
    return m.get("transition_graph.yaml")["transition_rules"]


def rule_from(m, source, target=None):
    for rule in rules(m):
        if rule["source_agent"] == source and (target is None or rule["target_agent"] == target):
            return rule
    raise KeyError((source, target))


def agent(m, name):
    return next(a for a in m.get("agents.yaml")["agents"] if a["name"] == name)


def tool(m, function):
    return next(t for t in m.get("tools.yaml")["tools"] if t["function"] == function)


def definitions(m):
    return m.get("context_variables.yaml")["definitions"]


def models(m):
    return m.get("structured_outputs.yaml")["models"]


def conveyor(m):
    return m.get("extended_orchestration/task_batches.yaml")["conveyors"][0]


def orch(m):
    return m.get("orchestrator.yaml")


CATALOGUE = [
    ("1", "schema_version missing", lambda m: orch(m).pop("schema_version")),
    ("1b", "schema_version wrong", lambda m: orch(m).update(schema_version="mozaiks.orchestrator.v2")),
    ("2a", "workflow_name differs from folder", lambda m: orch(m).update(workflow_name="SomethingElse")),
    ("3", "startup_mode instead of workflow_startup_mode", lambda m: orch(m).update(startup_mode=orch(m).pop("workflow_startup_mode"))),
    ("3b", "invalid startup mode", lambda m: orch(m).update(workflow_startup_mode="AgentLed")),
    ("4", "max_turns 0", lambda m: orch(m).update(max_turns=0)),
    ("4b", "max_turns 1000", lambda m: orch(m).update(max_turns=1000)),
    ("5", "legacy initial_message_to_user", lambda m: orch(m).update(initial_message_to_user="hi")),
    ("5b", "visual_agents in orchestrator", lambda m: orch(m).update(visual_agents=["IntakeAgent"])),
    ("6", "initial_agent names no agent", lambda m: orch(m).update(initial_agent="NoSuchAgent")),
    ("7", "trigger with only description", lambda m: orch(m).update(triggers=[{"description": "only text"}])),
    ("8", "failure_message_key undeclared", lambda m: orch(m).update(failure_message_key="nope_message")),
    ("8b", "failure_message_key type str", lambda m: definitions(m)["desk_failure_message"].update(type="str")),
    ("9", "duplicate agent name", lambda m: m.get("agents.yaml")["agents"].append(copy.deepcopy(agent(m, "LogAgent")))),
    ("10", "agent without prompt", lambda m: agent(m, "LogAgent").pop("system_message")),
    ("10b", "blank prompt section content", lambda m: agent(m, "IntakeAgent")["prompt_sections"][0].update(content="   ")),
    ("11", "auto_tool_mode on agent", lambda m: agent(m, "LogAgent").update(auto_tool_mode=True)),
    ("12", "structured_outputs_required omitted", lambda m: agent(m, "LogAgent").pop("structured_outputs_required")),
    ("13", "structured_outputs_required without registry model", lambda m: m.get("structured_outputs.yaml")["registry"].pop("LogAgent")),
    ("14", "target_agent typo", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").update(target_agent="ClasifierAgent")),
    ("15", "unknown source_agent", lambda m: rule_from(m, "ReplyAgent").update(source_agent="GhostAgent")),
    ("16", "after_turn with condition_key", lambda m: rule_from(m, "ReplyAgent").update(condition_key="research_status")),
    ("17", "legacy condition field", lambda m: rule_from(m, "ResearchPlannerAgent", "ReplyAgent").update(condition="${research_status} == 'completed'")),
    ("17b", "condition_type llm", lambda m: rule_from(m, "ResearchPlannerAgent", "ReplyAgent").update(condition_type="llm")),
    ("18a", "context_equals without condition_key", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").pop("condition_key")),
    ("18b", "context_equals without condition_value", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").pop("condition_value")),
    ("19", "condition_key undeclared", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").update(condition_key="ticket_capturd")),
    ("19b", "expression reference undeclared", lambda m: rule_from(m, "ResearchPlannerAgent", "ReplyAgent").update(context_expression="${research_stat} == 'completed'")),
    ("20a", "expression with arithmetic", lambda m: rule_from(m, "ResearchPlannerAgent", "ReplyAgent").update(context_expression="len(${research_status}) > -1")),
    ("20b", "dotted reference", lambda m: rule_from(m, "ResearchPlannerAgent", "ReplyAgent").update(context_expression="${research_status.value} == 'completed'")),
    ("21a", "termination_reason with target user", lambda m: rule_from(m, "IntakeAgent", "user").update(termination_reason="workflow_failed")),
    ("21a2", "termination_reason with Terminate spelling", lambda m: rule_from(m, "ReplyAgent").update(target_agent="Terminate")),
    ("21b", "TerminateTarget with target user", lambda m: rule_from(m, "IntakeAgent", "user").update(transition_target="TerminateTarget")),
    ("22", "routing variable without deterministic writer", lambda m: definitions(m)["ticket_captured"].update(writer_ids=["context_bridge"])),
    ("23", "two after_turn rules for one source", lambda m: rules(m).append(copy.deepcopy(rule_from(m, "ReplyAgent")))),
    ("24a", "string condition_value for boolean", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").update(condition_value="true")),
    ("24b", "outcome route on unknown value", lambda m: rule_from(m, "ClassifierAgent", "ResearchPlannerAgent").update(condition_value="approved")),
    ("25", "agent with no outgoing rule", lambda m: m.get("transition_graph.yaml").update(transition_rules=[r for r in rules(m) if r["source_agent"] != "ReplyAgent"])),
    ("26", "definitions as a list", lambda m: m.get("context_variables.yaml").update(definitions=[{"name": k, **v} for k, v in definitions(m).items()])),
    ("27", "unknown source.type", lambda m: definitions(m)["customer_plan"]["source"].update(type="database")),
    ("27b", "missing source", lambda m: definitions(m)["customer_plan"].pop("source")),
    ("28", "default contradicts type", lambda m: definitions(m)["research_results"]["source"].update(default=[])),
    ("29", "reserved variable name", lambda m: definitions(m).update(structured_output={"type": "object", "source": {"type": "computed"}})),
    ("29b", "ag: prefix", lambda m: definitions(m).update({"ag:state": {"type": "object", "source": {"type": "computed"}}})),
    ("30", "agent view lists undeclared variable", lambda m: m.get("context_variables.yaml")["agents"]["IntakeAgent"]["variables"].append("ghost_var")),
    ("31a", "user_text trigger without match", lambda m: definitions(m)["mentioned_refund"]["source"]["triggers"][0].pop("match")),
    ("31b", "trigger match {}", lambda m: definitions(m)["mentioned_refund"]["source"]["triggers"][0].update(match={})),
    ("32a", "unknown writer id", lambda m: definitions(m)["research_status"].update(writer_ids=["task_batch", "llm"])),
    ("32b", "immutable with writers", lambda m: definitions(m)["desk_mode"].update(authority_class="immutable_runtime_authority", writer_ids=["deterministic_tool"])),
    ("32c", "persisted tool-only variable", lambda m: definitions(m)["desk_mode"].update(persisted=True)),
    ("33", "name matches an authority pattern", lambda m: definitions(m).update(max_tokens={"type": "integer", "source": {"type": "state", "default": 5}})),
    ("34", "tool_type missing", lambda m: tool(m, "lookup_plan").pop("tool_type")),
    ("34b", "tool_type Standard", lambda m: tool(m, "lookup_plan").update(tool_type="Standard")),
    ("35", "realization mismatch", lambda m: tool(m, "show_reply")["ui"].update(realization="shipped_component")),
    ("35b", "shell primitive", lambda m: tool(m, "show_reply")["ui"].update(workflow_primitive="composer_reply")),
    ("35c", "missing ui.realization", lambda m: tool(m, "show_reply")["ui"].pop("realization")),
    ("36", "Agent_Tool with ui", lambda m: tool(m, "lookup_plan").update(ui={"component": "X", "mode": "inline"})),
    ("36b", "UI_Surface with ui_contract", lambda m: tool(m, "show_reply").update(ui_contract={"surface_kind": "agent_tool"})),
    ("37", "tool file missing", lambda m: tool(m, "lookup_plan").update(file="no_such_file.py")),
    ("38", "outcome with bind_to_agent true", lambda m: tool(m, "classify_ticket").update(bind_to_agent=True)),
    ("38b", "outcome with agent list", lambda m: tool(m, "classify_ticket").update(agent=["ClassifierAgent"])),
    ("39", "error_value not in values", lambda m: tool(m, "classify_ticket")["outcome"].update(error_value="failed")),
    ("39b", "retry_on without max_attempts", lambda m: tool(m, "classify_ticket")["outcome"].update(max_attempts=1)),
    ("39c", "max_attempts quoted", lambda m: tool(m, "classify_ticket")["outcome"].update(max_attempts="2")),
    ("40", "outcome variable wrong default", lambda m: definitions(m)["triage_outcome"]["source"].update(default="routed")),
    ("40b", "attempts default false", lambda m: definitions(m)["triage_attempts"]["source"].update(default=False)),
    ("40c", "outcome variable extra writer", lambda m: definitions(m)["triage_outcome"].update(writer_ids=["deterministic_tool", "task_batch"])),
    ("41", "outcome missing route", lambda m: m.get("transition_graph.yaml").update(transition_rules=[r for r in rules(m) if r.get("condition_value") != "needs_details"])),
    ("41b", "error route to an agent", lambda m: rule_from(m, "ClassifierAgent", "terminate").update(target_agent="IntakeAgent", termination_reason=None)),
    ("42", "outcome owner with second auto tool", lambda m: m.get("tools.yaml")["tools"].append({**copy.deepcopy(tool(m, "show_reply")), "agent": "ClassifierAgent", "function": "show_class"})),
    ("42b", "outcome owner is the initial agent", lambda m: orch(m).update(initial_agent="ClassifierAgent")),
    ("43", "auto tool without registry model", lambda m: m.get("structured_outputs.yaml")["registry"].update(ReplyAgent=None) or agent(m, "ReplyAgent").update(structured_outputs_required=False)),
    ("46a", "run-level lifecycle with agent", lambda m: m.get("tools.yaml")["lifecycle_tools"][1].update(agent="ReplyAgent")),
    ("46a2", "unknown lifecycle trigger", lambda m: m.get("tools.yaml")["lifecycle_tools"][1].update(trigger="on_finish")),
    ("46b", "dead lifecycle trigger", lambda m: m.get("tools.yaml")["lifecycle_tools"][0].update(trigger="after_agent", agent="ReplyAgent")),
    ("48", "structured_outputs schema_version missing", lambda m: m.get("structured_outputs.yaml").pop("schema_version")),
    ("48b", "structured_outputs wrapper", lambda m: m.set("structured_outputs.yaml", {"structured_outputs": m.get("structured_outputs.yaml")})),
    ("49", "registry to missing model", lambda m: m.get("structured_outputs.yaml")["registry"].update(LogAgent="Missing")),
    ("49b", "registry to a literal", lambda m: m.get("structured_outputs.yaml")["registry"].update(LogAgent="TriageOutcome")),
    ("50", "list without items", lambda m: models(m)["CustomerReply"]["fields"]["next_steps"].pop("items")),
    ("50b", "empty fields", lambda m: models(m)["Evidence"].update(fields={})),
    ("50c", "union without variants", lambda m: models(m).update(Choice={"type": "union", "variants": []})),
    ("51", "unsupported field type boolean", lambda m: models(m)["Evidence"]["fields"].update(verified={"type": "boolean"})),
    ("52", "middleware for unknown agent", lambda m: m.get("middleware.yaml")["prompt_middleware"][0].update(agent="ReplAgent")),
    ("53", "unknown visual agent", lambda m: m.get("ui_config.yaml")["visual_agents"].append("GhostAgent")),
    ("54", "concurrency 64", lambda m: conveyor(m).update(concurrency=64)),
    ("54b", "version 2", lambda m: m.get("extended_orchestration/task_batches.yaml").update(version=2)),
    ("54c", "retry_limit 9", lambda m: conveyor(m).update(retry_limit=9)),
    ("54d", "duplicate conveyor ids", lambda m: m.get("extended_orchestration/task_batches.yaml")["conveyors"].append(copy.deepcopy(conveyor(m)))),
    ("55", "conveyor result key undeclared", lambda m: conveyor(m).update(id="investigate")),
    ("57", "undeclared execution agent", lambda m: conveyor(m)["execution_agents"].append("GhostAgent")),
    ("59", "typo key conditon_key", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").update(conditon_key=rule_from(m, "IntakeAgent", "ClassifierAgent").pop("condition_key"))),
    ("59b", "typo key autotoolcall", lambda m: tool(m, "show_reply").update(autotoolcall=tool(m, "show_reply").pop("auto_tool_call"))),
    ("62", "pending_turn_replay invalid", lambda m: agent(m, "LogAgent").update(pending_turn_replay="skip")),
    ("63", "sentinel_text_trigger declared", lambda m: definitions(m)["ticket_summary"].update(writer_ids=["sentinel_text_trigger"])),
    ("65", "unknown transition_target", lambda m: rule_from(m, "IntakeAgent", "ClassifierAgent").update(transition_target="RevertToInitiatorTarget")),
    ("66", "legacy user alias", lambda m: rule_from(m, "IntakeAgent", "user").update(target_agent="user_proxy")),
    ("67", "visual_agents null", lambda m: m.get("ui_config.yaml").update(visual_agents=None)),
]


# --------------------------------------------------------------- random operators (part b)

def walk(node, path=()):
    """Yields (container, key, value, path) for every mapping entry and list item."""
    if isinstance(node, dict):
        for key, value in list(node.items()):
            yield node, key, value, path + (key,)
            yield from walk(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield node, index, value, path + (index,)
            yield from walk(value, path + (index,))


def typo(rng, word):
    word = str(word)
    if len(word) < 3:
        return word + "x"
    i = rng.randrange(len(word))
    choice = rng.randrange(3)
    if choice == 0:
        return word[:i] + word[i + 1:]
    if choice == 1:
        return word[:i] + rng.choice(string.ascii_lowercase) + word[i:]
    return word.upper() if word != word.upper() else word.lower()


def op_delete_key(rng, data):
    entries = [(c, k, p) for c, k, v, p in walk(data) if isinstance(c, dict)]
    if not entries:
        return None
    container, key, path = rng.choice(entries)
    del container[key]
    return f"deleted {'.'.join(map(str, path))}"


def op_add_unknown_key(rng, data):
    maps = [v for _, _, v, _ in walk(data) if isinstance(v, dict)] + ([data] if isinstance(data, dict) else [])
    if not maps:
        return None
    target = rng.choice(maps)
    name = rng.choice(["extra", "notes", "enabled", "priority", "legacy_key"])
    if name in target:
        return None
    target[name] = rng.choice(["x", 1, True, None])
    return f"added key {name}"


def op_typo_key(rng, data):
    entries = [(c, k, p) for c, k, v, p in walk(data) if isinstance(c, dict) and isinstance(k, str)]
    if not entries:
        return None
    container, key, path = rng.choice(entries)
    new = typo(rng, key)
    if new == key or new in container:
        return None
    container[new] = container.pop(key)
    return f"renamed key {'.'.join(map(str, path))} -> {new}"


def op_change_string(rng, data):
    entries = [(c, k, v, p) for c, k, v, p in walk(data) if isinstance(v, str)]
    if not entries:
        return None
    container, key, value, path = rng.choice(entries)
    new = rng.choice([typo(rng, value), value.upper(), "bogus_value", value + " "])
    if new == value:
        return None
    container[key] = new
    return f"changed {'.'.join(map(str, path))}: {value[:40]!r} -> {new[:40]!r}"


def op_change_type(rng, data):
    entries = [(c, k, v, p) for c, k, v, p in walk(data)]
    if not entries:
        return None
    container, key, value, path = rng.choice(entries)
    options = [[], {}, 7, True, None, "text", ["a", "b"], 2.5]
    options = [o for o in options if type(o) is not type(value)]
    new = rng.choice(options)
    container[key] = new
    return f"retyped {'.'.join(map(str, path))} to {type(new).__name__}"


def op_number(rng, data):
    entries = [(c, k, v, p) for c, k, v, p in walk(data) if isinstance(v, int)]
    if not entries:
        return None
    container, key, value, path = rng.choice(entries)
    new = rng.choice([-1, 0, 10_000, str(value), float(value), value + 1])
    container[key] = new
    return f"number {'.'.join(map(str, path))}: {value!r} -> {new!r}"


def op_duplicate_item(rng, data):
    lists = [v for _, _, v, _ in walk(data) if isinstance(v, list) and v]
    if not lists:
        return None
    target = rng.choice(lists)
    target.append(copy.deepcopy(rng.choice(target)))
    return "duplicated a list item"


def op_rename_variable(rng, data):
    if not isinstance(data, dict) or not isinstance(data.get("definitions"), dict) or not data["definitions"]:
        return None
    defs = data["definitions"]
    name = rng.choice(list(defs))
    defs[typo(rng, name) + "_v2"] = defs.pop(name)
    return f"renamed variable {name}"


OPERATORS = {
    "delete_key": op_delete_key,
    "add_unknown_key": op_add_unknown_key,
    "typo_key": op_typo_key,
    "change_string": op_change_string,
    "change_type": op_change_type,
    "number": op_number,
    "duplicate_item": op_duplicate_item,
    "rename_variable": op_rename_variable,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--catalogue-base", required=True, type=Path, help="the SupportDesk example bundle")
    parser.add_argument("--bases", required=True, nargs="+", type=Path, help="bundles for random mutants")
    parser.add_argument("--shared", type=Path, help="a _shared folder to copy beside the mutants")
    parser.add_argument("--count", type=int, default=320)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    if args.shared:
        shutil.copytree(args.shared, args.out / "_shared")

    def emit(mid, mutant, base_dir, operator, file, detail):
        folder_name = f"{base_dir.name}X{mid}"
        mutant.write(args.out / folder_name, folder_name)
        print(json.dumps({"id": mid, "folder": folder_name, "base": base_dir.name, "operator": operator, "file": file, "detail": detail}))

    for row, detail, fn in CATALOGUE:
        mutant = Mutant(args.catalogue_base)
        fn(mutant)
        emit(f"c{row}", mutant, args.catalogue_base, "catalogue", "", detail)

    rng = random.Random(args.seed)
    operators = sorted(OPERATORS)
    made = 0
    attempts = 0
    while made < args.count and attempts < args.count * 50:
        attempts += 1
        base = rng.choice(args.bases)
        files = [f for f in BUNDLE_FILES if (base / f).exists()]
        file = rng.choice(files)
        name = operators[made % len(operators)]
        mutant = Mutant(base)
        data = copy.deepcopy(mutant.get(file))
        if data is None:
            continue
        detail = OPERATORS[name](rng, data)
        if detail is None:
            continue
        mutant.set(file, data)
        made += 1
        emit(f"r{made:04d}", mutant, base, name, file, detail)


if __name__ == "__main__":
    main()
