"""Settling a tool call's arguments from its JSON schema alone, when that is enough.

A tool's pydantic argument model costs pydantic itself (~50 ms to import) and the model's build
(~10 ms a tool) at the tool's first call: in `moot -p`, between the model's first answer and
the next request. Most calls need none of it: every argument is already exactly the type its
schema names (a model writes JSON, and JSON strings, integers and booleans arrive as `str`,
`int` and `bool`) and within its bounds, nothing is missing and nothing is extra. For such a
call pydantic would hand each value back unchanged, so `plain_arguments` says so and the tool
runs without it.

Anything else goes to pydantic, which coerces (`"5"` for an integer) or refuses with its own
error message, exactly as before: this module never refuses a call and never converts a value.
It reads only the schema keywords below; a property with any other keyword (an enum, a
pattern, an array, a nested object, a number) is left to pydantic.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, type] = {"string": str, "integer": int, "boolean": bool}
"""JSON schema types whose JSON values decode to exactly these Python types, which pydantic
returns as they are (`type(v) is` tests: a `bool` is an `int` to `isinstance`)."""
_KEYWORDS = frozenset({"type", "description", "default", "minimum", "maximum", "anyOf"})
"""The keywords of a property this module understands; any other sends the call to pydantic."""


def plain_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether pydantic would accept `arguments` under `schema` and change none of them.

    Args:
        arguments: A model's arguments, by parameter name.
        schema: The tool's JSON schema (an object of `properties`, `required`,
            `additionalProperties: false`, as `moot.tools.schema` makes it).

    Returns:
        True only when every argument names a property, each is exactly of its property's type
        and within its bounds, and every required property is given. False means "ask
        pydantic", never "invalid".
    """
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        return False
    properties = schema.get("properties", {})
    if not all(name in arguments for name in schema.get("required", ())):
        return False
    return all(
        name in properties and _plain_value(value, properties[name])
        for name, value in arguments.items()
    )


def _plain_value(value: Any, prop: dict[str, Any]) -> bool:
    if not prop.keys() <= _KEYWORDS:
        return False
    if "anyOf" in prop:
        if "type" in prop:
            return False
        return any(_plain_value(value, branch) for branch in prop["anyOf"])
    kind = prop.get("type")
    if kind == "null":
        return value is None and len(prop) == 1
    expected = _TYPES.get(kind) if isinstance(kind, str) else None
    if expected is None or type(value) is not expected:
        return False
    if "minimum" in prop or "maximum" in prop:
        if expected is not int:
            return False
        return prop.get("minimum", value) <= value <= prop.get("maximum", value)
    return True
