from typing import Any


def add_research_status(capture: Any, history: list[Any]) -> None:
    ctx = capture.context_variables
    status = ctx.get("research_status") if ctx is not None else None
    capture.update_system_message(f"{capture.system_message}\n\n[RESEARCH STATUS]\n{status}")
