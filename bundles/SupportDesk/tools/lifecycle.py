import logging
from typing import Any

log = logging.getLogger(__name__)


def note_chat_start(context_variables: Any = None) -> None:
    log.info("support desk chat started")


async def note_chat_done(
    app_id: str | None = None,
    execution_id: str | None = None,
    chat_id: str | None = None,
    user_id: str | None = None,
    workflow_name: str | None = None,
    **kwargs: Any,
) -> None:
    log.info("support desk run %s finished for chat %s", execution_id, chat_id)
