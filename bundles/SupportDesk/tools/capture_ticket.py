from typing import Any


def capture_ticket(summary: str, context_variables: Any = None) -> dict[str, Any]:
    """LLM-called: stores the summary (context_bridge) and sets the routing flag (deterministic_tool)."""
    if context_variables is None:
        return {"status": "error", "message": "runtime context missing"}
    text = summary.strip()
    context_variables.set("ticket_summary", text or None)
    context_variables.set("ticket_captured", bool(text))
    return {"status": "ok", "captured": bool(text)}
