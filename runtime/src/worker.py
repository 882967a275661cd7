# The mzk Python worker: one process per run. It imports each tool file
# once, binds arguments the way mozaiks 0.2.0 binds them, and runs sync and
# async functions. It talks JSON lines with the runner over stdin and a
# private copy of stdout; the functions' own prints go to stderr. Context
# reads and writes go back to the runner, which applies the authority policy.
import asyncio
import copy
import importlib.util
import inspect
import json
import os
import sys
import threading
import time
import traceback

_out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
sys.stdout = sys.stderr
_loop = asyncio.new_event_loop()
_modules = {}
_by_name = {}


def _send(message):
    _out.write(json.dumps(message, default=str) + "\n")
    _out.flush()


def _receive():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def _json_safe(value):
    return json.loads(json.dumps(value, default=str))


class ContextAuthorityError(Exception):
    """A context write the workflow's authority policy refused."""


class UIToolError(Exception):
    """What mozaiks' UI helpers raise; bundle tools catch it."""


class ContextVariables:
    """The bridge tools receive as `context_variables` (runtime-semantics §3.4)."""

    def __init__(self, overlay=None):
        self._overlay = overlay

    def _ask(self, op, **fields):
        _send(dict(op=op, **fields))
        reply = _receive()
        if not reply.get("ok"):
            raise ContextAuthorityError(reply.get("error", "context_authority.rejected"))
        return reply

    def get(self, key, default=None):
        if self._overlay is not None and key == "structured_output":
            return copy.deepcopy(self._overlay)
        reply = self._ask("get", key=str(key))
        return reply.get("value") if reply.get("found") else default

    def set(self, key, value):
        if self._overlay is not None and key == "structured_output":
            raise ContextAuthorityError("structured_output is read-only")
        self._ask("set", key=str(key), value=_json_safe(value))

    def pop(self, key, default=None):
        value = self.get(key, default)
        self._ask("delete", key=str(key))
        return value

    def delete(self, key):
        self._ask("delete", key=str(key))

    remove = delete

    def keys(self):
        return self._ask("keys")["value"]

    def snapshot(self):
        return self._ask("snapshot")["value"]

    to_dict = snapshot

    @property
    def data(self):
        # mozaiks removed `.data` from every context container (a tool that
        # falls back to it when present must take its other path here too).
        raise AttributeError(
            "_RuntimeContextVariables.data has been removed to prevent mutable-reference "
            "exposure. Use snapshot() for detached serialization."
        )

    def items(self):
        return self.snapshot().items()

    def values(self):
        return self.snapshot().values()

    def update(self, other):
        for key, value in dict(other).items():
            self.set(key, value)

    def contains(self, key):
        return key in self.keys()

    def __contains__(self, key):
        return self.contains(key)

    def __getitem__(self, key):
        reply = self._ask("get", key=str(key))
        if not reply.get("found"):
            raise KeyError(key)
        return reply.get("value")

    def __setitem__(self, key, value):
        self.set(key, value)

    def __delitem__(self, key):
        self.delete(key)


class PromptCapture:
    """What prompt middleware receives (runtime-semantics §4.7)."""

    def __init__(self, name, system_message):
        self.name = name
        self.context_variables = ContextVariables()
        self.system_message = system_message
        self._updated = None

    def update_system_message(self, text):
        self._updated = str(text)
        self.system_message = self._updated


async def _use_ui_tool(tool_id, payload=None, chat_id=None, workflow_name=None, **_):
    """Local stand-in for mozaiks' UI round trip (runtime-semantics §4.4): the
    runner answers from the scenario's scripted tool responses."""
    _send({"op": "ui", "tool_id": str(tool_id), "payload": _json_safe(payload or {}), "awaiting": True})
    reply = _receive()
    if not reply.get("ok"):
        raise RuntimeError(reply.get("error", "no answer for the UI tool"))
    return reply.get("value")


async def _emit_ui_surface(tool_id, payload=None, chat_id=None, workflow_name=None, **_):
    _send({"op": "ui", "tool_id": str(tool_id), "payload": _json_safe(payload or {}), "awaiting": False})
    reply = _receive()
    return reply.get("value")


def _install_ui_shim():
    """Bundle tools import mozaiks' UI helpers; locally they talk to the runner."""
    import importlib.util as util
    import types

    name = "mozaiksai.core.workflow.ui_tools"
    shim = types.ModuleType(name)
    shim.use_ui_tool = _use_ui_tool
    shim.emit_ui_surface = _emit_ui_surface
    shim.UIToolError = UIToolError
    try:
        installed = util.find_spec("mozaiksai") is not None
    except (ImportError, ValueError):
        installed = False
    if not installed:
        parent = None
        for package in ("mozaiksai", "mozaiksai.core", "mozaiksai.core.workflow"):
            module = types.ModuleType(package)
            module.__path__ = []
            sys.modules[package] = module
            if parent is not None:
                setattr(parent, package.rsplit(".", 1)[1], module)
            parent = module
        parent.ui_tools = shim
    sys.modules[name] = shim


def _preload_host():
    """Gives tools the process mozaiks gives them. mozaiks imports its own
    modules (pydantic, platform, its persistence …) long before it puts a
    bundle's folders first on sys.path; a bundle that ships a `tools/platform`
    package must not shadow the standard library's here either, so those
    come first. Where mozaiks is installed, MongoDB is the in-memory
    stand-in mzk's mozaiks engine uses (when mongomock-motor is installed and
    no MONGO_URI is set): local runs never reach a database."""
    import importlib

    for name in ("platform", "pydantic"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - absent or broken: the tool's own import says why
            pass
    if os.environ.get("MONGO_URI"):
        return
    try:
        from mongomock_motor import AsyncMongoMockClient
        from mozaiksai.core import core_config
    except Exception:  # noqa: BLE001 - without both there is nothing to stand in for
        return
    os.environ["MONGO_URI"] = "mongodb://mzk-local-stand-in.invalid:27017/mzk"
    core_config.AsyncIOMotorClient = AsyncMongoMockClient


def _bind_workflow_packages(base_dir, workflow):
    """mozaiks' synthetic packages: `workflows`, `workflows.<name>` and
    `workflows.<name>.tools`, rooted at the bundle's folders."""
    import importlib.machinery
    import types

    roots = {"workflows": os.path.dirname(base_dir), "workflows." + workflow: base_dir}
    tools = os.path.join(base_dir, "tools")
    if os.path.isdir(tools):
        roots["workflows." + workflow + ".tools"] = tools
    for name, root in roots.items():
        module = types.ModuleType(name)
        module.__file__ = os.path.join(root, "__init__.py")
        module.__package__ = name
        module.__path__ = [root]
        spec = importlib.machinery.ModuleSpec(name, loader=None, is_package=True)
        spec.submodule_search_locations = module.__path__
        module.__spec__ = spec
        sys.modules[name] = module


def _import_paths(base_dir, path):
    """mozaiks' order, first on sys.path (`_ensure_workflow_import_paths`):
    the folder above the workflows root, the workflows root, the bundle,
    then the tool's folder, each resolved."""
    order = [os.path.dirname(os.path.dirname(base_dir)), os.path.dirname(base_dir), base_dir,
             os.path.dirname(path)]
    order = [os.path.realpath(entry) for entry in order]
    for entry in reversed(order):
        if entry in sys.path:
            sys.path.remove(entry)
        sys.path.insert(0, entry)


def _load(path, function):
    module = _modules.get(path)
    if module is None:
        base_dir = os.environ.get("MZK_BUNDLE_DIR")
        workflow = os.environ.get("MZK_WORKFLOW")
        inside = base_dir and workflow and os.path.abspath(path).startswith(base_dir + os.sep)
        if not _modules:
            _preload_host()
            if inside:
                _bind_workflow_packages(base_dir, workflow)
        if inside:
            _import_paths(base_dir, path)
            name = "workflows.%s.tools.%s" % (workflow, os.path.splitext(os.path.basename(path))[0])
            # mozaiks caches tool modules by name: a second file with the
            # same stem gets the first one's module, as there.
            if name in _by_name:
                _modules[path] = _by_name[name]
                return _attribute(_by_name[name], function, path)
        else:
            directory = os.path.dirname(path)
            for entry in (directory, os.path.dirname(directory)):
                if entry not in sys.path:
                    sys.path.insert(0, entry)
            name = "mzk_tool_%d" % len(_modules)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            if sys.modules.get(name) is module:
                sys.modules.pop(name, None)
            raise
        _modules[path] = module
        _by_name[name] = module
    return _attribute(module, function, path)


def _attribute(module, function, path):
    target = getattr(module, function)
    if not callable(target):
        raise TypeError("%s in %s is not callable" % (function, path))
    return target


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def _normal(name):
    return "".join(c for c in name.lower() if c.isalnum())


def _bind(fn, request):
    kind = request["kind"]
    args = request.get("args") or {}
    params = _parameters(fn)
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params.values())
    if kind == "llm":
        if "context_variables" in args:
            raise ContextAuthorityError("context_authority.tool_context_override")
        kwargs = dict(args)
        if "context_variables" in params:
            kwargs["context_variables"] = ContextVariables()
        return (), kwargs
    if kind == "auto":
        named = [
            n for n, p in params.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n != "context_variables"
        ]
        by_normal = {_normal(n): n for n in named}
        kwargs = {}
        for field, value in args.items():
            target = by_normal.get(_normal(field))
            if target is not None:
                kwargs[target] = value
        for extra, value in (request.get("extras") or {}).items():
            if extra in named and extra not in kwargs and value is not None:
                kwargs[extra] = value
        if "context_variables" in params:
            kwargs["context_variables"] = ContextVariables(overlay=request.get("overlay"))
        return (), kwargs
    if kind == "lifecycle":
        kwargs = dict(args)
        if request.get("filter", True) and not takes_kwargs:
            kwargs = {k: v for k, v in kwargs.items() if k in params}
        if "context_variables" in params:
            kwargs["context_variables"] = ContextVariables()
        return (), kwargs
    if kind == "middleware":
        capture = PromptCapture(request.get("agent", ""), request.get("system_message", ""))
        request["_capture"] = capture
        return (capture, []), {}
    raise ValueError("unknown call kind %r" % kind)


def _call(request):
    fn = _load(request["file"], request["function"])
    args, kwargs = _bind(fn, request)
    result = fn(*args, **kwargs)
    if inspect.isawaitable(result):
        result = _loop.run_until_complete(result)
    reply = {"op": "result", "ok": True, "value": _json_safe(result)}
    capture = request.get("_capture")
    if capture is not None:
        reply["system_message"] = capture.system_message
    return reply


def _watch_parent():
    # A runner killed outright cannot stop its worker: leave when orphaned.
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def main():
    threading.Thread(target=_watch_parent, daemon=True).start()
    _install_ui_shim()
    _send({"op": "ready", "python": sys.version.split()[0]})
    while True:
        request = _receive()
        if request.get("op") != "call":
            continue
        try:
            reply = _call(request)
        except BaseException as error:  # noqa: BLE001 - every failure goes back as a tool error
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            reply = {
                "op": "result",
                "ok": False,
                "error": "%s: %s" % (type(error).__name__, error),
                "traceback": traceback.format_exc(),
            }
        _send(reply)


main()
