from typing import Any


def classify_ticket(outcome: str, agent_message: str, priority: str = "normal", context_variables: Any = None) -> dict[str, str]:
    """Outcome tool: the runtime stores `outcome` in triage_outcome and counts attempts."""
    if context_variables is None:
        raise ValueError("classification needs the runtime context")
    if outcome == "rejected":
        context_variables.set("desk_failure_message", "This request is outside what the support desk can handle.")
    return {"outcome": outcome}
