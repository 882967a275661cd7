#!/usr/bin/env python3
"""mzk's driver for the real mozaiks runtime (the `mozaiks` backend).

mzk embeds this file, writes it to a temporary file and runs it with the
user's Python:

    python mozaiks_driver.py REQUEST.json

It runs ONE workflow bundle through mozaiks 0.2.0 (package `mozaiksai`, on AG2
1.1.2) in this process, fully offline, and reports what happens as JSON lines
in mzk's event schema (runtime/src/events.rs, docs/runtime.md "Events").
One process per run: mozaiks keeps process-wide singletons.

REQUEST.json
    {"bundle": "/abs/bundle", "workflow": "Name", "base_url": "http://127.0.0.1:PORT/v1",
     "model": "mzk-scripted", "message": "launch message" | null, "context": {...},
     "max_turns": null | int, "app_id": "mzk-local", "user_id": "anonymous", "chat_id": "run id"}

stdout: one JSON object per line and nothing else. Everything mozaiks, AG2
or the bundle's tools print goes to stderr (sys.stdout is replaced by
sys.stderr; only the protocol writer keeps the real stdout; mozaiks' warnings
are logged to stderr). Events, in the order they happen, fields as in
events.rs:
    run_started, turn_started, model_response (synthetic: false), tool_call
    (kind llm | auto | lifecycle:<trigger>), tool_result, context_set,
    structured_output, ui_tool, transition, batch_started, task_queued,
    task_started, task_attempt_failed, task_finished, batch_finished, notice,
    paused, user_message, final_context, run_finished.
`transition` carries condition: null; the opening hand-over to the initial
agent is {from: "user", rule: null, kind: "start"}; an AG2 Finish or Handoff
tool result that bypasses the graph gives kind "finish" / "handoff" with
rule null. A hand-over the turn cap cuts short is not reported (the channel
closes with max_turns instead). Events observed before mozaiks starts its
network runner (before_chat lifecycle tools and their context writes) are
held back and written right after run_started, so run_started is always the
first line.

stdin, read only when the run waits:
  * after `paused` (the run waits for the user), ONE line: {"reply": "text"}
    continues the live run with that text (`user_message` is written first);
    {"stop": true} or EOF ends the run as paused.
  * after a `ui_tool` with awaiting_response: true (a UI_Tool waits for its
    component's answer, which mozaiks would wait for forever), ONE line:
    {"ui_response": {...}} is submitted as the component's answer (and echoed
    as a second `ui_tool` with `response`); {"stop": true} or EOF ends the run
    with status and reason "interrupted".
The run ends with `final_context` ({"type": "final_context", "context":
{...}}, the channel's context variables) then `run_finished`, whose status
and reason use mzk's names: completed/<close reason> (workflow_complete …),
failed/workflow_failed | no_transition_matched | max_turns | turn_failed (an
"AG2 turn failed for …" error) | internal_error | failed (anything else, e.g.
the idle deadline or an unknown initial agent), paused/awaiting_user_input;
`error` is mozaiks' own failure text and `turns` the channel's turn count
(the opening message counts).

Driver-level failures (mozaiks missing or not 0.2.0, mongomock_motor missing,
the bundle refused by mozaiks' loader or before its runner started, an
exception inside the driver) print one {"type": "driver_error", "kind":
missing_mozaiks | wrong_version | missing_dependency | bundle_refused |
internal, "message": ...} line and exit with status 3; tracebacks go to
stderr only. An exception mozaiks raises after its runner ran (e.g. while
persisting the final context) is mozaiks' own orchestration error: it ends
the run as failed/internal_error instead.

How the model endpoint learns who is asking: every agent mozaiks builds (the
workflow's agents and each task-batch worker) gets its AG2 OpenAIConfig copied
with `default_headers` {"X-Mzk-Agent": <agent>} plus {"X-Mzk-Task": <task id>}
for a task-batch worker, in a wrapper around
mozaiksai.core.workflow.agents.create_agents. The base URL itself reaches
AG2's real OpenAI client through OPENAI_BASE_URL (mozaiks' config_list
entries carry no base_url), and the key is a dummy so a real key never
leaves the machine.

What mozaiks is made to do differently, and nothing else:
  * MongoDB is mongomock in process (core_config.AsyncIOMotorClient replaced);
  * the bundle is copied alone into a temporary workflows root
    (MOZAIKS_WORKFLOWS_PATH) and mozaiks' log files go to that temp dir;
  * the request's `context` is set on mozaiks' own loaded context through the
    `context_factory` hook of run_workflow_orchestration;
  * `max_turns`, when given, replaces orchestrator.yaml's max_turns;
  * the agent-identifying headers above.

A user reply goes through mozaiks' own path for a paused chat,
SimpleTransport._continue_live_ag2_workflow_run (user_text triggers, then
_AG2LiveWorkflowRun.continue_with_user_message, on_fail tools on failure).

Every other hook is a read-only observer that calls the original and never
changes arguments or results:
  AG2NetworkRunner.run .............. run_started; the run's result
  _AG2LiveWorkflowRun.continue_with_user_message / end_if_closed ... results
                                      of continuations
  Hub.open .......................... the live hubs (agent id -> name)
  WorkflowAdapter.fold / ._select ... context_set of every write that reached
                                      the channel, transition (the matched
                                      compiled rule: condition rule i has
                                      priority i, after_turn rule i has
                                      len(rules)+i), turn counts
  ContextVariablesBridge.consume_context_updates ... the writer id of each
                                      tool write riding on a packet
  ag2 Agent.ask (network turns) ..... turn_started; its event stream gives
                                      model_response, tool_call, tool_result
  runtime_events.validate_agent_structured_output ... structured_output
  AutoToolEventHandler._invoke_tool . auto tool_call / tool_result
  LifecycleToolManager._execute_single_tool ... lifecycle tool_call /
                                      tool_result, before_chat context_set
  task_batches._execute_one_batch / _run_one_task / _validation_feedback,
  AG2TaskBatchRunner.run ............ batch and task events
  SimpleTransport.send_tool_call_event  ui_tool
  WorkflowAdapter.build_round_envelope, the runner's error log ... notices
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import functools
import importlib.metadata
import itertools
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping
from typing import Any

# The protocol owns a private copy of the real stdout (not inherited by
# the processes tools start); file descriptor 1 itself becomes stderr, so
# nothing else — a print, a child process — can write into the protocol.
PROTOCOL_OUT = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

MOZAIKS_VERSION = "0.2.0"
EXIT_DRIVER_ERROR = 3
DUMMY_MONGO_URI = "mongodb://mzk-mongomock.invalid:27017/mzk"
DUMMY_API_KEY = "mzk-local-no-key"
# The opening hand-over mozaiks adds in front of the graph (priority -1).
BOOTSTRAP_PRIORITY = -1
# The fake channel mozaiks folds to pick a `user` initial agent; not the run.
LOCAL_ROUTING_CHANNEL = "mozaiks-local-routing"
INITIATOR_NAME = "mozaiks_user"


class DriverError(Exception):
    """A failure of the driver or its environment, reported as driver_error."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A JSON-safe copy of a value (mozaiks hands out frozen mappings, pydantic
    models, tuples)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.hex()
    if hasattr(value, "model_dump") and callable(value.model_dump):
        try:
            return plain(value.model_dump(mode="json"))
        except Exception:
            pass
    return str(value)


class Protocol:
    """Writes protocol lines to the real stdout, one JSON object per line.

    Lines are held until run_started so it is always the first line; a
    driver_error is written at once (and the held lines go to stderr)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._held: list[dict[str, Any]] = []
        self.started = False

    def emit(self, event_type: str, **fields: Any) -> None:
        line = {"type": event_type, **{k: plain(v) for k, v in fields.items()}}
        with self._lock:
            if not self.started and event_type not in ("run_started", "driver_error"):
                self._held.append(line)
                return
            self._write(line)
            if event_type == "run_started":
                self.started = True
                for held in self._held:
                    self._write(held)
                self._held.clear()

    def driver_error(self, kind: str, message: str) -> None:
        with self._lock:
            for held in self._held:
                print("mzk driver: dropped before run_started:", json.dumps(held), file=sys.stderr)
            self._held.clear()
        self.emit("driver_error", kind=kind, message=message)

    def _write(self, line: dict[str, Any]) -> None:
        self._stream.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._stream.flush()


# ---------------------------------------------------------------------------
# Request, environment, workspace
# ---------------------------------------------------------------------------


def load_request(argv: list[str]) -> dict[str, Any]:
    if len(argv) != 2:
        raise DriverError("internal", "usage: python mozaiks_driver.py REQUEST.json")
    try:
        with open(argv[1], encoding="utf-8") as fh:
            request = json.load(fh)
    except (OSError, ValueError) as err:
        raise DriverError("internal", f"could not read the request file {argv[1]}: {err}") from err
    for key in ("bundle", "workflow", "base_url"):
        if not isinstance(request.get(key), str) or not request[key].strip():
            raise DriverError("internal", f"the request file has no '{key}'")
    request.setdefault("model", "mzk-scripted")
    request.setdefault("context", {})
    request["app_id"] = request.get("app_id") or "mzk-local"
    request["user_id"] = request.get("user_id") or "anonymous"
    request["chat_id"] = request.get("chat_id") or f"mzk-{int(time.time())}"
    if not isinstance(request["context"], dict):
        raise DriverError("internal", "the request's 'context' is not an object")
    return request


def check_environment() -> None:
    """mozaiks 0.2.0 and mongomock_motor must be importable from this Python."""
    python = sys.executable
    try:
        version = importlib.metadata.version("mozaiks")
    except importlib.metadata.PackageNotFoundError:
        raise DriverError(
            "missing_mozaiks",
            f"the Python at {python} has no mozaiks package; install it with "
            f"`{python} -m pip install mozaiks=={MOZAIKS_VERSION} mongomock-motor` "
            "or give mzk another Python",
        ) from None
    if version != MOZAIKS_VERSION:
        raise DriverError(
            "wrong_version",
            f"the Python at {python} has mozaiks {version}, but this backend runs mozaiks "
            f"{MOZAIKS_VERSION}; install it with `{python} -m pip install mozaiks=={MOZAIKS_VERSION}`",
        )
    try:
        import mongomock_motor  # noqa: F401
    except ImportError:
        raise DriverError(
            "missing_dependency",
            f"the Python at {python} has mozaiks {version} but not mongomock-motor, which stands in "
            f"for MongoDB; install it with `{python} -m pip install mongomock-motor`",
        ) from None


def prepare_workspace(request: dict[str, Any]) -> str:
    """Copy the bundle alone into a temporary workflows root and point mozaiks
    (and AG2's OpenAI client) at it and at the local model endpoint. Must run
    before mozaiksai is imported: its workflow manager loads at import."""
    bundle = os.path.abspath(request["bundle"])
    if not os.path.isfile(os.path.join(bundle, "orchestrator.yaml")):
        raise DriverError("bundle_refused", f"{bundle} is not a workflow bundle (no orchestrator.yaml)")
    # Inside mzk's own folder for the run when it names one, so the one
    # cleanup that removes it removes the copy too, however the driver ends.
    parent_dir = request.get("workspace")
    root = tempfile.mkdtemp(prefix="mzk-mozaiks-", dir=parent_dir if parent_dir else None)
    workflows = os.path.join(root, "workflows")
    shutil.copytree(
        bundle,
        os.path.join(workflows, request["workflow"]),
        ignore=shutil.ignore_patterns(".mzk", "__pycache__", ".git", ".venv", "venv", "node_modules"),
        ignore_dangling_symlinks=True,
    )
    # What the bundle's tools import from beside it, as in a real workflows
    # root: the shared helpers and the root package.
    parent = os.path.dirname(bundle)
    shared = os.path.join(parent, "_shared")
    if os.path.isdir(shared):
        shutil.copytree(shared, os.path.join(workflows, "_shared"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    if os.path.isfile(os.path.join(parent, "__init__.py")):
        shutil.copy(os.path.join(parent, "__init__.py"), os.path.join(workflows, "__init__.py"))
    env = os.environ
    env["MOZAIKS_WORKFLOWS_PATH"] = workflows
    env["OPENAI_BASE_URL"] = request["base_url"]
    # A dummy key: the local endpoint needs none and a real one must not leak.
    # The endpoint's per-run key (mzk checks it): a real key never reaches
    # mozaiks, and no other local process can use the endpoint.
    key = str(request.get("api_key") or DUMMY_API_KEY)
    env["OPENAI_API_KEY"] = key
    env["LLM_PRIMARY_API_KEY"] = key
    env["DEFAULT_LLM_MODEL"] = str(request.get("model") or "mzk-scripted")
    env.pop("OPENAI_MODEL_FALLBACK", None)
    env["MOZAIKS_LLM_CONFIG_SKIP_MONGO"] = "1"
    env["MONGO_URI"] = DUMMY_MONGO_URI
    env["LOGS_BASE_DIR"] = os.path.join(root, "logs")
    env["MOZAIKS_AGENT_OUTPUTS_DIR"] = os.path.join(root, "agent_outputs")
    os.makedirs(env["LOGS_BASE_DIR"], exist_ok=True)
    return root


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def patch(owner: Any, name: str, make_wrapper: Any) -> None:
    """Replace owner.name by make_wrapper(original)."""
    original = getattr(owner, name)
    setattr(owner, name, make_wrapper(original))


def tool_result_value(result: Any) -> Any:
    """The value an AG2 ToolResult carries (JSON text is decoded)."""
    values = []
    for part in getattr(result, "parts", None) or []:
        if hasattr(part, "content"):
            text = part.content
            try:
                values.append(json.loads(text))
            except (TypeError, ValueError):
                values.append(text)
        elif hasattr(part, "data"):
            values.append(part.data)
        else:
            values.append(str(part))
    if len(values) == 1:
        return values[0]
    return values


def parse_arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw or "{}")
        except ValueError:
            return raw
    return raw


# ---------------------------------------------------------------------------
# The run: state shared by the observers, and the event they emit
# ---------------------------------------------------------------------------


class Run:
    def __init__(self, request: dict[str, Any], out: Protocol) -> None:
        self.request = request
        self.out = out
        self.runner_started = False
        self.rule_count = 0
        self.policy: Any = None
        self.structured_agents: set[str] = set()
        self.hubs: list[Any] = []
        self.channel_turns = 0
        self.agent_turns = 0
        self.channel_context: dict[str, Any] = {}
        self.last_speaker: str | None = None
        self.result: Any = None
        self.idle_timeout: Any = None
        # Writer ids of the bridge writes consumed for the next packet.
        self.consumed_writers: dict[str, str] = {}
        # The transition _select picked inside the fold under way.
        self.selection: Any = None
        self.call_ids = itertools.count(1)
        self.tool_started: dict[str, float] = {}
        self.lifecycle_outcome: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
            "mzk_lifecycle_outcome", default=None
        )
        self.task_attempts: dict[tuple[str, str], int] = {}
        # The error mozaiks feeds back to a task's next attempt (per asyncio task).
        self.task_feedback: contextvars.ContextVar[str | None] = contextvars.ContextVar(
            "mzk_task_feedback", default=None
        )
        self.task_last_completed: dict[tuple[str, str], bool] = {}
        self.batch_counts: dict[str, list[int]] = {}

    def emit(self, event_type: str, **fields: Any) -> None:
        self.out.emit(event_type, **fields)

    def next_call_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.call_ids)}"

    # -- names ------------------------------------------------------------

    def name_for(self, agent_id: Any) -> str:
        if agent_id is None:
            return "terminate"
        agent_id = str(agent_id)
        for hub in self.hubs:
            try:
                name = hub.name_for(agent_id, default="")
            except Exception:
                name = ""
            if name:
                return "user" if name == INITIATOR_NAME else name
        return "user" if agent_id.lower() in ("user", INITIATOR_NAME) else agent_id

    def owns_channel(self, channel_id: str) -> bool:
        if channel_id == LOCAL_ROUTING_CHANNEL:
            return False
        for hub in self.hubs:
            try:
                if hub.adapter_state(channel_id) is not None:
                    return True
            except Exception:
                continue
        return False

    # -- the network runner ------------------------------------------------

    def on_runner_start(self, request: Any) -> None:
        """mozaiks hands its prepared run to the AG2 network runner."""
        self.runner_started = True
        self.rule_count = len(request.transition_rules or [])
        self.policy = request.context_authority_policy
        self.structured_agents = set((request.structured_registry or {}).keys())
        self.channel_context = plain(dict(request.context_variables or {}))
        self.idle_timeout = request.idle_timeout_seconds
        self.emit(
            "run_started",
            run_id=self.request["chat_id"],
            workflow=self.request["workflow"],
            backend="mozaiks",
            initial_agent=str(request.initial_agent_name or ""),
            seed=request.initial_message or ".",
            max_turns=request.max_turns if isinstance(request.max_turns, int) else 0,
        )

    # -- channel folds: context writes, transitions, turn counts -------------

    def context_writes(self, envelope: Any) -> list[tuple[str, Any, str, bool]]:
        """(key, value, writer, deleted) for each write an envelope carries."""
        from ag2.network import EV_CONTEXT_SET, EV_PACKET

        data = getattr(envelope, "event_data", None) or {}
        if envelope.event_type == EV_PACKET:
            updates = data.get("context_updates") or {}
        elif envelope.event_type == EV_CONTEXT_SET:
            updates = data
        else:
            return []
        sender = self.name_for(envelope.sender_id)
        consumed, self.consumed_writers = ({}, self.consumed_writers) if sender == "user" else (
            self.consumed_writers, {})
        writes: list[tuple[str, Any, str, bool]] = []
        # A fold applies deletes, then sets (mzk reports them in that order).
        for key in sorted(str(k) for k in updates.get("delete") or []):
            writes.append((key, None, consumed.get(key) or self.writer_for(key, sender, envelope), True))
        for key, value in sorted((updates.get("set") or {}).items()):
            writes.append((key, value, consumed.get(key) or self.writer_for(key, sender, envelope), False))
        return writes

    def writer_for(self, key: str, sender: str, envelope: Any) -> str:
        """The writer mozaiks checked a write with, when no bridge write names it."""
        from ag2.network import EV_CONTEXT_SET

        if sender == "user":
            return "live_user_context"
        if envelope.event_type == EV_CONTEXT_SET:
            return "context_bridge"
        # On a packet, a key the bridge did not write came from an agent_text
        # trigger: sentinel_text_trigger when the key lists it, else agent_text.
        from mozaiksai.core.workflow.context.authority import resolve_declared_context_writer

        return resolve_declared_context_writer(
            key, base_writer="agent_text", declared_writer="sentinel_text_trigger", policy=self.policy
        )

    def on_select(self, graph: Any, state: Any, envelope: Any, decision: Any) -> None:
        """Which compiled transition produced `decision` (conditions are pure,
        so re-evaluating them in the same order finds it)."""
        matched = None
        for transition in sorted(graph.transitions, key=lambda t: t.priority):
            try:
                if transition.when.evaluate(state, envelope):
                    matched = transition
                    break
            except Exception:
                break
        self.selection = (matched, decision)

    def on_fold(self, envelope: Any, graph_max_turns: Any, new_state: Any) -> None:
        """A channel envelope was accepted: its writes, then its hand-over."""
        from ag2.network import EV_PACKET, EV_TEXT

        for key, value, writer, deleted in self.context_writes(envelope):
            fields: dict[str, Any] = {"key": key, "value": value, "writer": writer}
            if deleted:
                fields["deleted"] = True
            self.emit("context_set", **fields)
        self.channel_context = plain(getattr(new_state, "context_vars", {}) or {})
        if envelope.event_type not in (EV_TEXT, EV_PACKET):
            return  # context sets and protocol envelopes take no turn
        self.channel_turns = int(getattr(new_state, "turn_count", self.channel_turns) or 0)
        sender = self.name_for(envelope.sender_id)
        self.last_speaker = sender
        selection, self.selection = self.selection, None
        routing = {}
        if envelope.event_type == EV_PACKET:
            routing = (envelope.event_data or {}).get("routing") or {}
        if routing.get("kind") == "finish":
            # An AG2 Finish tool result closes the channel past the graph.
            self.emit("transition", **{"from": sender}, to="terminate", rule=None, kind="finish", condition=None)
            self.emit("notice", message=f"{sender}'s tool {routing.get('tool')} returned an AG2 Finish "
                      f"({routing.get('reason') or 'finished'}); the graph was not consulted")
        elif selection is None:
            if routing.get("kind") == "handoff" and routing.get("target"):
                # An AG2 Handoff tool result names the next speaker itself.
                self.emit("transition", **{"from": sender}, to=self.name_for(routing["target"]),
                          rule=None, kind="handoff", condition=None)
        else:
            self.report_selection(sender, selection, graph_max_turns)

    def report_selection(self, sender: str, selection: Any, graph_max_turns: Any) -> None:
        """The transition the graph picked, as the rule's transition_graph.yaml index."""
        matched, decision = selection
        if matched is None:
            return  # no rule matched: the channel closes with no_transition_matched
        # At the turn cap the rule has matched all the same (its _select ran)
        # and the channel then closes with max_turns: reported as fired, as
        # mzk's engine does.
        to = self.name_for(decision.next_speaker)
        if matched.priority == BOOTSTRAP_PRIORITY:
            self.emit("transition", **{"from": "user"}, to=to, rule=None, kind="start", condition=None)
        elif matched.priority < self.rule_count:
            self.emit("transition", **{"from": sender}, to=to, rule=matched.priority, kind="condition",
                      condition=None)
        else:
            self.emit("transition", **{"from": sender}, to=to, rule=matched.priority - self.rule_count,
                      kind="after_turn", condition=None)

    # -- agent turns -------------------------------------------------------

    def on_agent_event(self, agent: str, event: Any) -> None:
        """One event of an agent's AG2 turn stream."""
        from ag2.events import ModelResponse, ToolCallEvent, ToolErrorEvent, ToolResultEvent

        if isinstance(event, ModelResponse):
            if event.response_force:
                return  # a tool's `final` result standing in for a reply
            calls = list(getattr(event.tool_calls, "calls", None) or [])
            self.emit("model_response", agent=agent, body=self.reply_body(agent, event.content),
                      tool_calls=[c.name for c in calls], synthetic=False)
        elif isinstance(event, ToolCallEvent):
            if event.id in self.tool_started:
                return
            self.tool_started[event.id] = time.perf_counter()
            self.emit("tool_call", agent=agent, tool=event.name, call_id=event.id,
                      arguments=parse_arguments(event.arguments), kind="llm")
        elif isinstance(event, ToolResultEvent):
            started = self.tool_started.pop(event.parent_id, None)
            elapsed = (time.perf_counter() - started) * 1000 if started is not None else 0.0
            fields: dict[str, Any] = {"agent": agent, "tool": event.name or "", "call_id": event.parent_id}
            if isinstance(event, ToolErrorEvent):
                self.report_refusal(event.error)
                fields.update(ok=False, error=f"{type(event.error).__name__}: {event.error}")
            else:
                fields.update(ok=True, result=tool_result_value(event.result))
            self.emit("tool_result", **fields, elapsed_ms=round(elapsed, 3))

    def report_refusal(self, error: BaseException) -> None:
        """A tool's context write the authority policy refused fails the call
        with `context_authority.rejected … key=K writer=W op=…`."""
        text = str(error)
        if type(error).__name__ != "ContextAuthorityError" or not text.startswith("context_authority.rejected"):
            return
        fields = dict(part.split("=", 1) for part in text.split()[1:] if "=" in part)
        self.emit("context_refused", key=fields.get("key", ""), writer=fields.get("writer", ""), error=text)

    def reply_body(self, agent: str, content: Any) -> Any:
        """The reply text, or its JSON object for a structured-output agent."""
        text = content if isinstance(content, str) else ("" if content is None else str(content))
        if agent in self.structured_agents:
            from mozaiksai.core.workflow.outputs.runtime_validation import normalize_json_candidate_text

            try:
                parsed = json.loads(normalize_json_candidate_text(text))
            except (TypeError, ValueError):
                return text
            if isinstance(parsed, dict):
                return parsed
        return text


# ---------------------------------------------------------------------------
# Observers (each wraps one mozaiks/AG2 function; see the header)
# ---------------------------------------------------------------------------


def observe_runner(run: Run) -> None:
    from mozaiksai.core.adapters import ag2_network_runner as runner_mod

    def wrap_run(original: Any) -> Any:
        @functools.wraps(original)
        async def run_(self: Any, request: Any) -> Any:
            run.on_runner_start(request)
            result = await original(self, request)
            run.result = result
            return result

        return run_

    def wrap_continuation(original: Any) -> Any:
        @functools.wraps(original)
        async def continuation(self: Any, *args: Any, **kwargs: Any) -> Any:
            result = await original(self, *args, **kwargs)
            if result is not None:
                run.result = result
            return result

        return continuation

    patch(runner_mod.AG2NetworkRunner, "run", wrap_run)
    patch(runner_mod._AG2LiveWorkflowRun, "continue_with_user_message", wrap_continuation)
    patch(runner_mod._AG2LiveWorkflowRun, "end_if_closed", wrap_continuation)


class _NoticeHandler(logging.Handler):
    """Turns an error mozaiks' runner only logs (its result says
    `internal_error`) into a notice."""

    def __init__(self, run: Run) -> None:
        super().__init__(level=logging.ERROR)
        self.run = run

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:
            return
        self.run.emit("notice", message=f"mozaiks: {message}")


def observe_runner_errors(run: Run) -> None:
    logging.getLogger("mozaiksai.core.adapters.ag2_network_runner").addHandler(_NoticeHandler(run))


def observe_hubs(run: Run) -> None:
    from ag2.network.hub.core import Hub

    original_open = Hub.__dict__["open"].__func__

    async def open_(cls: Any, *args: Any, **kwargs: Any) -> Any:
        hub = await original_open(cls, *args, **kwargs)
        run.hubs.append(hub)
        return hub

    Hub.open = classmethod(open_)


def observe_folds(run: Run) -> None:
    """Context writes and transitions, at the moment the channel accepts them."""
    from ag2.network.adapters.workflow import WorkflowAdapter
    from ag2.network.transitions import TransitionGraph

    original_select = WorkflowAdapter.__dict__["_select"].__func__
    original_fold = WorkflowAdapter.fold

    def select(graph: Any, state: Any, envelope: Any) -> Any:
        decision = original_select(graph, state, envelope)
        if run.owns_channel(str(getattr(envelope, "channel_id", ""))):
            run.on_select(graph, state, envelope, decision)
        return decision

    def fold(self: Any, envelope: Any, state: Any) -> Any:
        if not run.owns_channel(str(getattr(envelope, "channel_id", ""))):
            return original_fold(self, envelope, state)
        run.selection = None
        # A fold that raises (e.g. a failing context_expression) commits
        # nothing: report only what an accepted fold applied.
        new_state = original_fold(self, envelope, state)
        max_turns = None
        if getattr(new_state, "graph_data", None):
            max_turns = TransitionGraph.loads(new_state.graph_data).max_turns
        run.on_fold(envelope, max_turns, new_state)
        return new_state

    def wrap_round(original: Any) -> Any:
        @functools.wraps(original)
        def build_round_envelope(self: Any, *args: Any, **kwargs: Any) -> Any:
            envelope = original(self, *args, **kwargs)
            metadata = kwargs.get("metadata", args[0] if args else None)
            if envelope is None and run.owns_channel(str(getattr(metadata, "channel_id", ""))):
                sender = kwargs.get("sender_id", args[1] if len(args) > 1 else None)
                idle = run.idle_timeout
                wait = "indefinitely (the workflow has a UI_Tool)" if idle == float("inf") else f"{idle} seconds"
                run.emit("notice", message=f"{run.name_for(sender)} sent no message and called no routing tool, "
                         f"so no packet was produced; mozaiks waits {wait} for the channel to progress, "
                         "then fails the run")
            return envelope

        return build_round_envelope

    WorkflowAdapter._select = staticmethod(select)
    WorkflowAdapter.fold = fold
    patch(WorkflowAdapter, "build_round_envelope", wrap_round)


def observe_bridge_writers(run: Run) -> None:
    """Remember the writer id of each bridge write as it leaves for a packet."""
    from mozaiksai.core.workflow.agents.factory import ContextVariablesBridge

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        def consume(self: Any) -> Any:
            run.consumed_writers = {str(k): str(v) for k, v in dict(self._pending_writers).items()}
            return original(self)

        return consume

    patch(ContextVariablesBridge, "consume_context_updates", wrap)


def observe_agent_turns(run: Run) -> None:
    """turn_started, then the turn's model responses and tool calls as AG2
    streams them. Only network turns (dependencies carry the channel)."""
    from ag2.agent import Agent
    from ag2.network.policies import CHANNEL_DEP

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        async def ask(self: Any, *msg: Any, **kwargs: Any) -> Any:
            stream = kwargs.get("stream")
            dependencies = kwargs.get("dependencies") or {}
            if stream is None or CHANNEL_DEP not in dependencies:
                return await original(self, *msg, **kwargs)
            agent = str(self.name)
            run.agent_turns += 1
            run.consumed_writers = {}
            run.emit("turn_started", agent=agent, turn=run.agent_turns)

            async def on_event(event: Any) -> None:
                run.on_agent_event(agent, event)

            sub_id = stream.subscribe(on_event, sync_to_thread=False)
            try:
                return await original(self, *msg, **kwargs)
            finally:
                stream.unsubscribe(sub_id)

        return ask

    patch(Agent, "ask", wrap)


def observe_structured_outputs(run: Run) -> None:
    """The packet handler's validation (not the settlement re-check)."""
    from mozaiksai.core.workflow.outputs import runtime_events

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        def validate(*args: Any, **kwargs: Any) -> Any:
            validation = original(*args, **kwargs)
            agent = kwargs.get("agent_name") or (args[0] if args else "")
            if validation is None:
                return validation
            if validation.validation_passed and validation.structured_data is not None:
                run.emit("structured_output", agent=agent, model=validation.model_name,
                         data=validation.structured_data)
            else:
                # mozaiks fails the turn with "invalid packet output"; the
                # reason is only logged, so say it here.
                run.emit("notice", message=f"{agent}'s reply failed its structured output model "
                         f"{validation.model_name}: {validation.error}")
            return validation

        return validate

    patch(runtime_events, "validate_agent_structured_output", wrap)


def observe_auto_tools(run: Run) -> None:
    from mozaiksai.core.events.auto_tool_handler import AutoToolEventHandler

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        async def invoke(self: Any, binding: Any, kwargs: dict[str, Any]) -> Any:
            call_id = run.next_call_id("auto")
            agent = str(getattr(binding, "agent_name", "") or "")
            tool = str(getattr(binding, "tool_name", "") or "")
            arguments = {k: v for k, v in kwargs.items() if k != "context_variables"}
            run.emit("tool_call", agent=agent, tool=tool, call_id=call_id, arguments=arguments, kind="auto")
            started = time.perf_counter()
            result, status = await original(self, binding, kwargs)
            fields: dict[str, Any] = {"agent": agent, "tool": tool, "call_id": call_id, "ok": status == "ok",
                                      "result": result}
            if status != "ok":
                fields["error"] = (result.get("message") if isinstance(result, dict) else None) or f"status {status}"
            run.emit("tool_result", **fields, elapsed_ms=round((time.perf_counter() - started) * 1000, 3))
            return result, status

        return invoke

    patch(AutoToolEventHandler, "_invoke_tool", wrap)


def context_snapshot(container: Any) -> dict[str, Any] | None:
    for method in ("snapshot", "to_dict"):
        fn = getattr(container, method, None)
        if callable(fn):
            try:
                return plain(fn())
            except Exception:
                return None
    if isinstance(container, Mapping):
        return plain(dict(container))
    return None


def observe_lifecycle_tools(run: Run) -> None:
    from mozaiksai.core.workflow.execution.lifecycle import LifecycleToolManager

    def wrap_emit(original: Any) -> Any:
        @functools.wraps(original)
        async def emit_(self: Any, kind: str, payload: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            outcome = run.lifecycle_outcome.get()
            if outcome is not None and kind in ("lifecycle.tool_result", "lifecycle.tool_error"):
                outcome.update(payload, kind=kind)
            return await original(self, kind, payload, *args, **kwargs)

        return emit_

    def wrap_single(original: Any) -> Any:
        @functools.wraps(original)
        async def single(self: Any, tool: Any, context_variables: Any, wf_logger: Any,
                         call_kwargs: dict[str, Any] | None = None) -> Any:
            trigger = getattr(getattr(tool, "trigger", None), "value", str(getattr(tool, "trigger", "")))
            call_id = run.next_call_id("lifecycle")
            agent = str(getattr(tool, "agent", "") or "")
            run.emit("tool_call", agent=agent, tool=str(tool.function), call_id=call_id,
                     arguments=dict(call_kwargs or {}), kind=f"lifecycle:{trigger}")
            before = context_snapshot(context_variables)
            outcome: dict[str, Any] = {}
            token = run.lifecycle_outcome.set(outcome)
            try:
                result = await original(self, tool, context_variables, wf_logger, call_kwargs)
            finally:
                run.lifecycle_outcome.reset(token)
            fields: dict[str, Any] = {"agent": agent, "tool": str(tool.function), "call_id": call_id}
            if outcome.get("status") == "error":
                fields.update(ok=False, error=outcome.get("error") or "lifecycle tool failed")
            else:
                # mozaiks keeps only str(result) of a lifecycle tool.
                fields.update(ok=True, result=outcome.get("result"))
            run.emit("tool_result", **fields, elapsed_ms=round(float(outcome.get("elapsed_ms") or 0.0), 3))
            report_lifecycle_writes(run, trigger, before, context_snapshot(context_variables))
            return result

        return single

    patch(LifecycleToolManager, "_emit_lifecycle_event", wrap_emit)
    patch(LifecycleToolManager, "_execute_single_tool", wrap_single)


def report_lifecycle_writes(run: Run, trigger: str, before: Any, after: Any) -> None:
    """before_chat writes seed the channel (writer runtime_system); later
    lifecycle writes land on the bridge or a copy and never reach the channel."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return
    changed = sorted(k for k in after if k not in before or before[k] != after[k])
    removed = sorted(k for k in before if k not in after)
    if trigger == "before_chat":
        for key in removed:
            run.emit("context_set", key=key, value=None, writer="runtime_system", deleted=True)
        for key in changed:
            run.emit("context_set", key=key, value=after[key], writer="runtime_system")
    elif changed or removed:
        keys = ", ".join(changed + removed)
        run.emit("notice", message=f"the {trigger} lifecycle tool wrote {keys}; mozaiks does not commit "
                 "these writes to the run's context")


def observe_task_batches(run: Run) -> None:
    from mozaiksai.core.adapters.ag2_task_batch_runner import AG2TaskBatchRunner
    from mozaiksai.core.ports.orchestration import RunStatus
    from mozaiksai.core.workflow import task_batches

    def wrap_batch(original: Any) -> Any:
        @functools.wraps(original)
        async def execute_one_batch(*args: Any, **kwargs: Any) -> Any:
            batch = kwargs["batch"]
            items = kwargs.get("task_items") or []
            run.batch_counts[batch.id] = [0, 0]
            run.emit("batch_started", batch=batch.id, trigger=batch.trigger_agent, tasks=len(items))
            for item in items:
                deps = task_batches._task_dependencies(item, batch.execution.dependency_field)
                run.emit("task_queued", batch=batch.id, task=str(item.get("task_id")),
                         agent=str(item.get(batch.worker.agent_field) or ""), depends_on=[str(d) for d in deps])
            try:
                outcome = await original(*args, **kwargs)
            except Exception:
                done, failed = run.batch_counts.get(batch.id, [0, 0])
                run.emit("batch_finished", batch=batch.id, status="failed", completed=done, failed=failed)
                raise
            run.emit("batch_finished", batch=batch.id, status=str(outcome.get("status")),
                     completed=len(outcome.get("completed_tasks") or []),
                     failed=len(outcome.get("failed_tasks") or []))
            return outcome

        return execute_one_batch

    def wrap_task(original: Any) -> Any:
        @functools.wraps(original)
        async def run_one_task(*args: Any, **kwargs: Any) -> Any:
            batch, task = kwargs["batch"], kwargs["task"]
            key = (batch.id, str(task.get("task_id")))
            counts = run.batch_counts.setdefault(batch.id, [0, 0])
            try:
                output = await original(*args, **kwargs)
            except Exception as err:
                counts[1] += 1
                evidence = getattr(err, "evidence", None)
                kind = evidence.get("failure_kind") if isinstance(evidence, dict) else "execution_failed"
                if run.task_last_completed.get(key):
                    # The last attempt finished but its output was rejected.
                    run.emit("task_attempt_failed", batch=key[0], task=key[1], attempt=run.task_attempts[key],
                             reason="output_rejected", error=str(err))
                    if kind == "execution_failed":
                        kind = "output_rejected"
                run.emit("task_finished", batch=key[0], task=key[1], status="failed",
                         failure_kind=kind, error=str(err))
                raise
            counts[0] += 1
            run.emit("task_finished", batch=key[0], task=key[1], status="completed")
            return output

        return run_one_task

    def wrap_feedback(original: Any) -> Any:
        @functools.wraps(original)
        def validation_feedback(last_error: str, *args: Any, **kwargs: Any) -> str:
            run.task_feedback.set(str(last_error))
            return original(last_error, *args, **kwargs)

        return validation_feedback

    def wrap_attempt(original: Any) -> Any:
        @functools.wraps(original)
        async def attempt(self: Any, request: Any) -> Any:
            key = (str(request.batch_id), str(request.task_id))
            if run.task_last_completed.get(key):
                # The previous attempt finished but mozaiks rejected its output;
                # the rejection is what it feeds back to this attempt.
                run.emit("task_attempt_failed", batch=key[0], task=key[1], attempt=run.task_attempts[key],
                         reason="output_rejected", error=run.task_feedback.get() or "output rejected")
            number = run.task_attempts[key] = run.task_attempts.get(key, 0) + 1
            run.emit("task_started", batch=key[0], task=key[1], attempt=number)
            result = await original(self, request)
            completed = result.status is RunStatus.COMPLETED
            run.task_last_completed[key] = completed
            if not completed:
                reason = {"paused": "expired"}.get(result.status.value, result.close_reason or "worker_failed")
                run.emit("task_attempt_failed", batch=key[0], task=key[1], attempt=number,
                         reason=str(reason), error=str(result.error or result.status.value))
            return result

        return attempt

    patch(task_batches, "_execute_one_batch", wrap_batch)
    patch(task_batches, "_run_one_task", wrap_task)
    patch(task_batches, "_validation_feedback", wrap_feedback)
    patch(AG2TaskBatchRunner, "run", wrap_attempt)


def observe_ui_tools(run: Run, driver: "Driver") -> None:
    """UI tools and surfaces as mozaiks sends them to its (absent) frontend;
    a UI tool that waits for its answer gets it from stdin."""
    import inspect

    from mozaiksai.core.transport.simple_transport import SimpleTransport

    def wrap(original: Any) -> Any:
        signature = inspect.signature(original)

        @functools.wraps(original)
        async def send_tool_call_event(self: Any, *args: Any, **kwargs: Any) -> Any:
            result = await original(self, *args, **kwargs)
            call = signature.bind(self, *args, **kwargs).arguments
            event = {
                "agent": str(call.get("agent_name") or ""),
                "tool": str(call.get("tool_name") or ""),
                "event_id": str(call.get("event_id") or ""),
                "awaiting_response": bool(call.get("awaiting_response", True)),
                "payload": call.get("payload") or {},
            }
            run.emit("ui_tool", **event)
            if event["awaiting_response"]:
                asyncio.get_running_loop().create_task(driver.answer_ui_tool(self, event))
            return result

        return send_tool_call_event

    patch(SimpleTransport, "send_tool_call_event", wrap)


def identify_agents_to_the_endpoint() -> None:
    """Give each agent's model client the X-Mzk-Agent (and X-Mzk-Task) headers."""
    from mozaiksai.core.workflow import agents as agents_pkg

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        async def create_agents(workflow_name: str, context_variables: Any = None, *args: Any, **kwargs: Any) -> Any:
            agents = await original(workflow_name, context_variables, *args, **kwargs)
            task_id = None
            if isinstance(context_variables, Mapping) and context_variables.get("task_run_mode"):
                task_id = context_variables.get("current_task_id")
            for name, agent in (agents or {}).items():
                config = getattr(agent, "config", None)
                if config is None or not hasattr(config, "default_headers") or not hasattr(config, "copy"):
                    continue
                headers = dict(config.default_headers or {})
                headers["X-Mzk-Agent"] = str(name)
                if task_id is not None:
                    headers["X-Mzk-Task"] = str(task_id)
                agent.config = config.copy(default_headers=headers)
            return agents

        return create_agents

    patch(agents_pkg, "create_agents", wrap)


def override_max_turns(max_turns: int) -> None:
    from mozaiksai.core.workflow import orchestration_patterns

    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        def load(workflow_name: str) -> dict[str, Any]:
            return {**original(workflow_name), "max_turns": max_turns}

        return load

    patch(orchestration_patterns, "_load_workflow_config", wrap)


def shorten_idle_deadline() -> None:
    """MZK_MOZAIKS_IDLE_TIMEOUT=SECONDS replaces mozaiks' 300 s deadline for
    a channel that stops making progress (a turn that produced no packet),
    so a local or test run that reaches it ends quickly. Bundles with a
    UI_Tool keep mozaiks' own (none)."""
    raw = os.environ.get("MZK_MOZAIKS_IDLE_TIMEOUT", "").strip()
    if not raw:
        return
    try:
        seconds = float(raw)
    except ValueError:
        raise DriverError("internal", f"MZK_MOZAIKS_IDLE_TIMEOUT must be a number of seconds, not {raw!r}") from None
    from mozaiksai.core.workflow import orchestration_patterns

    orchestration_patterns.DEFAULT_IDLE_TIMEOUT_SECONDS = seconds


def replace_mongodb() -> None:
    from mongomock_motor import AsyncMongoMockClient

    from mozaiksai.core import core_config

    core_config.AsyncIOMotorClient = AsyncMongoMockClient


# ---------------------------------------------------------------------------
# Driving the run
# ---------------------------------------------------------------------------


def refused_bundle_message(workflow: str) -> str | None:
    """mozaiks' loader verdict on the bundle (it loads at import)."""
    from mozaiksai.core.workflow.workflow_manager import workflow_manager

    info = workflow_manager._workflows.get(workflow.lower())
    if info is None:
        return f"mozaiks found no workflow named {workflow} in the bundle"
    if getattr(info, "status", "") == "error":
        return f"mozaiks refused the bundle {workflow}: {info.error}"
    return None


async def read_stdin_line() -> dict[str, Any] | None:
    """One JSON object from stdin; None at EOF or for a blank line."""
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if not line.strip():
        return None
    try:
        answer = json.loads(line)
    except ValueError:
        raise DriverError("internal", f"stdin line is not JSON: {line.strip()[:200]}") from None
    return answer if isinstance(answer, dict) else None


async def read_user_answer() -> str | None:
    """The reply to a pause, or None to stop ({"stop": true}, EOF)."""
    answer = await read_stdin_line()
    if answer is None or answer.get("stop") or not isinstance(answer.get("reply"), str):
        return None
    return answer["reply"]


def outcome(result: Any) -> tuple[str, str, str | None, str | None]:
    """(status, reason, error, failure_message) in mzk's names."""
    from mozaiksai.core.ports.orchestration import RunStatus

    close_reason = str(result.close_reason or "")
    error = str(result.error) if result.error else None
    failure_message = str(result.failure_message) if result.failure_message else None
    if result.status is RunStatus.COMPLETED:
        return "completed", close_reason or "workflow_complete", None, None
    if result.status is RunStatus.PAUSED:
        return "paused", "awaiting_user_input", None, None
    if close_reason in ("workflow_failed", "no_transition_matched", "max_turns") and error == close_reason:
        reason = close_reason
    elif error and error.startswith("AG2 turn failed for"):
        reason = "turn_failed"
    elif error == "internal_error":
        reason = "internal_error"
    else:
        reason = "failed"
    return "failed", reason, error or result.status.value, failure_message


class Driver:
    def __init__(self, request: dict[str, Any], out: Protocol) -> None:
        self.request = request
        self.run = Run(request, out)
        self.main_task: asyncio.Task[Any] | None = None
        self.interrupted: str | None = None

    def install(self) -> None:
        replace_mongodb()
        refused = refused_bundle_message(self.request["workflow"])
        if refused:
            raise DriverError("bundle_refused", refused)
        identify_agents_to_the_endpoint()
        if self.request.get("max_turns") is not None:
            override_max_turns(int(self.request["max_turns"]))
        shorten_idle_deadline()
        observe_runner(self.run)
        observe_runner_errors(self.run)
        observe_hubs(self.run)
        observe_folds(self.run)
        observe_bridge_writers(self.run)
        observe_agent_turns(self.run)
        observe_structured_outputs(self.run)
        observe_auto_tools(self.run)
        observe_lifecycle_tools(self.run)
        observe_task_batches(self.run)
        observe_ui_tools(self.run, self)

    async def context_factory(self) -> Any:
        """mozaiks' own context load, then the request's values on top."""
        from mozaiksai.core.workflow.context.variables import _load_context_async

        request = self.request
        context = await _load_context_async(
            request["workflow"],
            request["app_id"],
            # The request's context is what a host supplies: it also fills
            # the `source: runtime` variables (a build binding, a tenant).
            runtime_context={
                **(request.get("context") or {}),
                "app_id": request["app_id"],
                "chat_id": request["chat_id"],
                "user_id": request["user_id"],
                "workflow_name": request["workflow"],
            },
        )
        for key, value in (request.get("context") or {}).items():
            try:
                context.set(key, value)
            except Exception as err:
                self.run.emit("notice", message=f"mozaiks refused the initial context value {key}: {err}")
        return context

    async def execute(self) -> None:
        """The whole run: start, then each pause and its reply, then the end."""
        self.main_task = asyncio.current_task()
        try:
            if await self.start():
                await self.answer_pauses()
        except asyncio.CancelledError:
            if self.interrupted is None:
                raise
            # A UI tool's answer never came; mozaiks would have waited forever.
            self.finish("interrupted", "interrupted", self.interrupted, None)

    async def start(self) -> bool:
        """Run mozaiks' orchestration until the run ends or pauses; False when
        it already ended as an orchestration error (reported)."""
        from mozaiksai.core.workflow.orchestration_patterns import run_workflow_orchestration

        request, run = self.request, self.run
        try:
            await run_workflow_orchestration(
                request["workflow"],
                request["app_id"],
                request["chat_id"],
                request["user_id"],
                initial_message=request.get("message"),
                context_factory=self.context_factory,
            )
        except Exception as err:
            traceback.print_exc(file=sys.stderr)
            if not run.runner_started:
                # mozaiks' own words (a missing runtime input, an unknown agent).
                raise DriverError("bundle_refused", str(err)) from err
            # Past the runner, mozaiks itself reports an orchestration error
            # (chat.error, then run_complete with error internal_error).
            if run.result is not None:
                status, reason, _, _ = outcome(run.result)
                run.emit("notice", message=f"the network runner ended {status} ({reason}), then mozaiks' "
                         f"orchestration failed: {type(err).__name__}: {err}")
            self.finish("failed", "internal_error", f"{type(err).__name__}: {err}", None)
            return False
        if run.result is None:
            raise DriverError("internal", "mozaiks returned without running the workflow's network runner")
        return True

    async def answer_pauses(self) -> None:
        """While the run waits for the user: `paused`, one stdin line, and the
        reply handed to the live run; then the end."""
        from mozaiksai.core.ports.orchestration import RunStatus

        run = self.run
        while run.result.status is RunStatus.PAUSED:
            run.emit("paused", agent=run.last_speaker or "", turn=run.channel_turns)
            reply = await read_user_answer()
            if reply is None:
                break
            run.emit("user_message", text=reply if reply.strip() else ".")
            await self.continue_with(reply)
        if run.result.status is RunStatus.PAUSED and run.result.live_run is not None:
            # Ending as paused: release the live channel (mozaiks keeps it in
            # process only; nothing can continue it after this process).
            await run.result.live_run.close()
        self.finish(*outcome(run.result))

    async def answer_ui_tool(self, transport: Any, event: dict[str, Any]) -> None:
        """Deliver the UI's answer from one stdin line {"ui_response": ...};
        {"stop": true} or EOF ends the run, which mozaiks would wait on forever."""
        try:
            answer = await read_stdin_line()
        except DriverError as err:
            answer = None
            self.run.emit("notice", message=err.message)
        if answer is None or "ui_response" not in answer:
            self.interrupted = f"stopped while {event['tool']} waited for the UI's answer"
            if self.main_task is not None:
                self.main_task.cancel()
            return
        response = answer["ui_response"]
        self.run.emit("ui_tool", **event, response=response)
        await transport.submit_tool_call_response(
            event["event_id"], response if isinstance(response, dict) else {"value": response}
        )

    async def continue_with(self, reply: str) -> None:
        """Hand the reply to mozaiks the way its transport does for a paused
        chat (user_text triggers, then live_run.continue_with_user_message)."""
        from mozaiksai.core.transport.simple_transport import SimpleTransport

        request, live_run = self.request, self.run.result.live_run
        transport = await SimpleTransport.get_instance()
        await transport._continue_live_ag2_workflow_run(
            live_run=live_run,
            chat_id=request["chat_id"],
            user_id=request["user_id"],
            workflow_name=request["workflow"],
            message=reply,
            app_id=request["app_id"],
        )

    def finish(self, status: str, reason: str, error: str | None, failure_message: str | None) -> None:
        run = self.run
        run.emit("final_context", context=run.channel_context)
        fields: dict[str, Any] = {"status": status, "reason": reason}
        if error:
            fields["error"] = error
        if failure_message:
            fields["failure_message"] = failure_message
        run.emit("run_finished", **fields, turns=run.channel_turns)


def remove_workspace_on_signals(workspace: str) -> None:
    """mzk may stop the run (Ctrl-C, a kill): leave no temporary copy behind."""

    def stop(signum: int, _frame: Any) -> None:
        shutil.rmtree(workspace, ignore_errors=True)
        os._exit(128 + signum)

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stop)


def one_line(message: str, workspace: str | None, bundle: str | None, workflow: str | None) -> str:
    """A driver_error message on one line, naming the user's bundle rather
    than the driver's temporary copy."""
    if workspace and bundle and workflow:
        for root in (os.path.realpath(workspace), workspace):
            message = message.replace(os.path.join(root, "workflows", workflow), os.path.abspath(bundle))
    return " ".join(message.split())


def leave_with_the_runner() -> None:
    """mzk killed outright cannot stop the driver (it has a process group
    of its own, so a terminal's Ctrl-C does not reach it): leave when
    orphaned."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(EXIT_DRIVER_ERROR)

    threading.Thread(target=watch, name="mzk-parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    leave_with_the_runner()
    out = Protocol(PROTOCOL_OUT)
    # mozaiks' and AG2's warnings are useful on stderr; they never touch stdout.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    workspace = None
    request: dict[str, Any] = {}
    try:
        request = load_request(argv)
        check_environment()
        workspace = prepare_workspace(request)
        remove_workspace_on_signals(workspace)
        sys.path.insert(0, workspace)
        try:
            driver = Driver(request, out)
            driver.install()
        except DriverError:
            raise
        except ImportError as err:
            traceback.print_exc(file=sys.stderr)
            raise DriverError("missing_dependency", f"mozaiks could not be imported from {sys.executable}: "
                              f"{err}; reinstall it with `{sys.executable} -m pip install "
                              f"mozaiks=={MOZAIKS_VERSION} mongomock-motor`") from err
        asyncio.run(driver.execute())
        return 0
    except DriverError as err:
        out.driver_error(err.kind, one_line(err.message, workspace, request.get("bundle"), request.get("workflow")))
        return EXIT_DRIVER_ERROR
    except BaseException as err:  # noqa: BLE001 - report anything as one line
        traceback.print_exc(file=sys.stderr)
        message = f"the mozaiks driver failed: {type(err).__name__}: {err}"
        out.driver_error("internal", one_line(message, workspace, request.get("bundle"), request.get("workflow")))
        return EXIT_DRIVER_ERROR
    finally:
        if workspace:
            shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stderr.flush()
    PROTOCOL_OUT.flush()
    # mozaiks and its tools may leave non-daemon threads behind; the run is over.
    os._exit(code)
