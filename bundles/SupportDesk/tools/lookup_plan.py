from typing import Any


async def lookup_plan(email: str, context_variables: Any = None) -> dict[str, Any]:
    """LLM-called: `email` comes from the model, `context_variables` is injected."""
    plan = "enterprise" if email.lower().endswith("@example.org") else "basic"
    if context_variables is not None:
        context_variables.set("customer_plan", plan)
    return {"status": "ok", "plan": plan}
