from typing import Any

from mozaiksai.core.workflow.ui_tools import emit_ui_surface


async def show_reply(
    agent_message: str,
    answer: str,
    next_steps: list[str] | None = None,
    chat_id: str | None = None,
    context_variables: Any = None,
) -> dict[str, Any]:
    """UI_Surface auto tool: emits its own surface (the auto-tool handler does not)."""
    payload = {"agent_message": agent_message, "answer": answer, "next_steps": next_steps or []}
    event_id = await emit_ui_surface("SupportReplyCard", payload, chat_id=chat_id, workflow_name="SupportDesk")
    return {"status": "ok", "surface_event_id": event_id}
