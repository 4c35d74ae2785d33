"""Structured output through a JSON-schema `response_format` instead of tool calling.

The local llama.cpp wrapper and the deterministic stand-in both produce structured answers by
constraining (or scripting) the *text* to a JSON object.  LangChain's default
`with_structured_output` needs tool calling, which neither has, so both models use this helper:
it binds `response_format={"type": "json_object", "schema": ...}` and parses the text with
pydantic.  The return shape with `include_raw=True` matches LangChain's
(`{"raw": AIMessage, "parsed": model | None, "parsing_error": Exception | None}`), so
`fakegang.tools.models.llm.decide` treats every model the same way.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from pydantic import BaseModel


def schema_to_json_schema(schema: dict[str, Any] | type[BaseModel]) -> dict[str, Any]:
    """JSON schema of a pydantic model class, or the dict itself."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, dict):
        return schema
    raise TypeError(f"unsupported schema type for structured output: {type(schema)!r}")


def json_schema_structured_output(
    model: BaseChatModel,
    schema: dict[str, Any] | type[BaseModel],
    *,
    include_raw: bool = False,
) -> Runnable:
    """A runnable that asks `model` for JSON matching `schema` and parses it."""
    json_schema = schema_to_json_schema(schema)
    bound = model.bind(response_format={"type": "json_object", "schema": json_schema})
    parser: Runnable
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        parser = PydanticOutputParser(pydantic_object=schema)
    else:
        parser = JsonOutputParser()
    if not include_raw:
        return bound | parser
    parse_ok = RunnablePassthrough.assign(
        parsed=itemgetter("raw") | parser, parsing_error=lambda _: None
    )
    parse_none = RunnablePassthrough.assign(parsed=lambda _: None)
    return RunnableMap(raw=bound) | parse_ok.with_fallbacks(
        [parse_none], exception_key="parsing_error"
    )


class JsonSchemaChatModel(BaseChatModel):
    """Base of our in-process chat models (the local llama.cpp one and the stand-in): their
    structured output is the JSON-schema `response_format` route above."""

    def with_structured_output(
        self,
        schema: dict[str, Any] | type[BaseModel],
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable:
        """JSON-schema constrained output (see `json_schema_structured_output`)."""
        return json_schema_structured_output(self, schema, include_raw=include_raw)
