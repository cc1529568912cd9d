"""Read a plain function's signature and docstring as a tool's JSON schema and argument model.

Models only ever see the schema, and they see it on every request, so it is kept small and
self-contained: no `title` keys (pure noise, paid for in tokens every turn) and no `$ref`s
(some providers, Gemini among them, reject them), with nested models inlined instead.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Set
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model

from moot.tools.signature import (
    ARGS_HEADERS,
    describe_function,
    docstring_description,
    signature_of,
    type_hints,
)
from moot.tools.signature import context_parameters as _context_parameters

__all__ = ["JsonSchema", "context_parameters", "docstring_description", "parameters_schema"]

JsonSchema = dict[str, Any]

PYDANTIC_NAMES: dict[str, Any] = {"Field": Field}
"""What a tool's annotations may name without importing it: a tool module whose schema is
known ahead imports `Field` only for type checking, so that loading it loads no pydantic."""

_ARG_ENTRY = re.compile(r"\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)")

# Keywords whose value is a map of name -> schema, a list of schemas, or one schema. Everything
# else (`default`, `enum`, `const`, ...) is data and copied untouched, so a property or a
# default dict key that happens to be called "title" survives.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONES = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames"})
# `discriminator` is an OpenAPI keyword whose mapping points into `$defs`, which we inline away.
_DROPPED_KEYS = frozenset({"title", "$defs", "discriminator"})


def parameters_schema(fn: Callable[..., Any]) -> tuple[JsonSchema, type[BaseModel]]:
    """Build the JSON schema a model sees for `fn`'s parameters, and the model that checks them.

    Parameters annotated with `ToolContext` are left out: the runtime passes them in.

    Args:
        fn: The function (sync or async) a tool wraps.

    Returns:
        The schema, `{"type": "object", "properties": ..., "required": ...,
        "additionalProperties": False}` (`required` left out when empty), and a pydantic model
        that validates a model's arguments by parameter name.

    Raises:
        TypeError: `fn` takes `*args` or `**kwargs`, an annotation does not resolve, or a
            type has no JSON schema (or is recursive, which cannot be inlined).
    """
    fields: dict[str, Any] = {}
    arg_docs = _arg_descriptions(inspect.getdoc(fn) or "")
    hints = type_hints(fn, PYDANTIC_NAMES)
    context_names = set(context_parameters(fn))
    params = signature_of(fn).parameters
    for param in params.values():
        if param.name in context_names:
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[_field_name(param.name, taken=params.keys() | fields.keys())] = (
            _annotate(annotation, param.name, arg_docs.get(param.name)),
            default,
        )
    try:
        model = create_model(
            f"{getattr(fn, '__name__', 'tool')}Arguments",
            __config__=ConfigDict(extra="forbid", protected_namespaces=()),
            **fields,
        )
        raw = model.model_json_schema()
        tidy = _tidy(raw, raw.get("$defs", {}), frozenset())
    except (PydanticUserError, TypeError) as exc:
        raise TypeError(f"Cannot build a tool schema for {describe_function(fn)}: {exc}") from exc
    schema: JsonSchema = {"type": "object", "properties": tidy.get("properties", {})}
    if tidy.get("required"):
        schema["required"] = tidy["required"]
    schema["additionalProperties"] = False
    return schema, model


def context_parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """`moot.tools.signature.context_parameters`, with the names of `PYDANTIC_NAMES`."""
    return _context_parameters(fn, PYDANTIC_NAMES)


def _arg_descriptions(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style `Args:` section, continuation lines joined."""
    descriptions: dict[str, str] = {}
    header_indent: int | None = None
    entry_indent: int | None = None
    current: str | None = None
    for line in doc.splitlines():
        indent = len(line) - len(line.lstrip())
        if header_indent is None:
            if line.strip() in ARGS_HEADERS:
                header_indent = indent
            continue
        if not line.strip():
            continue
        if indent <= header_indent:
            break  # the next section, or prose after the Args section
        if entry_indent is None:
            entry_indent = indent
        if indent <= entry_indent:
            match = _ARG_ENTRY.fullmatch(line.strip())
            current = str(match["name"]) if match else None
            if match and current is not None:
                descriptions[current] = str(match["text"]).strip()
        elif current is not None:
            descriptions[current] = f"{descriptions[current]} {line.strip()}".strip()
    return {name: text for name, text in descriptions.items() if text}


def _annotate(annotation: Any, name: str, doc_description: str | None) -> Any:
    """Wrap a parameter's type so pydantic sees its alias and description.

    Later `Annotated` metadata wins in pydantic, which gives the precedence we want: a plain
    string in `Annotated`, then a `Field(description=...)`, then the docstring's `Args:` entry.
    """
    metadata: list[Any] = []
    if typing.get_origin(annotation) is Annotated:
        annotation, *metadata = typing.get_args(annotation)
    strings = [item for item in metadata if isinstance(item, str)]
    others = [item for item in metadata if not isinstance(item, str)]
    parts: list[Any] = []
    if doc_description:
        parts.append(Field(description=doc_description))
    parts.extend(others)
    if strings:
        parts.append(Field(description=strings[0]))
    parts.append(Field(alias=name))
    return Annotated[(annotation, *parts)]


def _field_name(param_name: str, taken: Set[str]) -> str:
    """A model field name for a parameter; the parameter's own name is always the alias.

    Pydantic refuses names with a leading underscore and warns on names that shadow BaseModel
    attributes (`schema`, `json`, `copy`...), all fair names for a tool parameter.
    """
    if not param_name.startswith("_") and not hasattr(BaseModel, param_name):
        return param_name
    candidate = f"arg_{param_name.lstrip('_')}"
    while candidate in taken or hasattr(BaseModel, candidate):
        candidate += "_"
    return candidate


def _tidy(node: JsonSchema, defs: JsonSchema, expanding: frozenset[str]) -> JsonSchema:
    """Copy a schema without titles, with each `$ref` replaced by what it points to."""
    if "$ref" in node:
        ref = node["$ref"].rsplit("/", 1)[-1]
        if ref in expanding:
            raise TypeError(f"{ref} refers to itself; a recursive type cannot be inlined")
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        # Sibling keys (a field's description or default) override the referenced type's.
        return {**_tidy(defs[ref], defs, expanding | {ref}), **_tidy(siblings, defs, expanding)}
    tidy: JsonSchema = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key in _SCHEMA_MAPS:
            tidy[key] = {name: _tidy(sub, defs, expanding) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS:
            tidy[key] = [_tidy(sub, defs, expanding) for sub in value]
        elif key in _SCHEMA_ONES and isinstance(value, dict):
            tidy[key] = _tidy(value, defs, expanding)
        else:
            tidy[key] = value
    return tidy
