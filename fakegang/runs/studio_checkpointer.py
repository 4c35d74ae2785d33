"""The checkpointer `langgraph dev` uses (langgraph.json `checkpointer.path`): our SQLite file.

Without it the dev server keeps its own pickled store under `.langgraph_api/` and never sees the
episodes the CLI wrote. The path comes from `FAKEGANG_DB_PATH` (what `fakegang studio` sets; the
graph's `Context.db_path` reads the same variable), so Studio and the CLI share one file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from fakegang.graph.context import Context


def db_path() -> str:
    """FAKEGANG_DB_PATH, else the default: read through `Context`, which owns both."""
    return Context().db_path


@asynccontextmanager
async def create_checkpointer() -> AsyncIterator[AsyncSqliteSaver]:
    path = db_path()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        yield saver
