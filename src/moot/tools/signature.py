"""What a tool function's signature and docstring say, read without pydantic.

`moot.tools.schema` builds a tool's JSON schema and argument model from these (with pydantic);
a tool whose schema is known ahead (the built-in tools' generated specs, see
`moot.tools.builtin_specs`) needs only these at construction, so its first call can run before
pydantic loads (`FunctionTool`, `moot.tools.quick_args`).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from moot.tools.context import ToolContext

ARGS_HEADERS = frozenset({"Args:", "Arguments:", "Parameters:"})
"""The headers of a Google-style docstring's section on parameters."""
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def context_parameters(
    fn: Callable[..., Any], names: Mapping[str, Any] | None = None
) -> tuple[str, ...]:
    """Name the parameters of `fn` that take the runtime's `ToolContext` rather than arguments.

    Args:
        fn: The function a tool wraps.
        names: Names its annotations may use besides its module's (see `type_hints`).

    Returns:
        Those parameter names, in signature order.

    Raises:
        TypeError: `fn` takes `*args` or `**kwargs`, or an annotation does not resolve.
    """
    hints = type_hints(fn, names)
    found = []
    for param in signature_of(fn).parameters.values():
        hint = hints.get(param.name)
        if typing.get_origin(hint) is Annotated:
            hint = typing.get_args(hint)[0]
        if hint is ToolContext:
            found.append(param.name)
    return tuple(found)


def docstring_description(fn: Callable[..., Any]) -> str:
    """The first paragraph of `fn`'s docstring, joined onto one line, as a tool description.

    Args:
        fn: The function a tool wraps.

    Returns:
        The description, or "" when there is no docstring or it opens with a section.
    """
    doc = inspect.getdoc(fn) or ""
    first = _PARAGRAPH_BREAK.split(doc.strip(), maxsplit=1)[0]
    if first.splitlines() and first.splitlines()[0].strip() in ARGS_HEADERS:
        return ""
    return " ".join(line.strip() for line in first.splitlines())


def signature_of(fn: Callable[..., Any]) -> inspect.Signature:
    """`fn`'s signature. Raises: TypeError: it takes `*args` or `**kwargs`."""
    signature = inspect.signature(fn)
    for param in signature.parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            star = "*" if param.kind is inspect.Parameter.VAR_POSITIONAL else "**"
            raise TypeError(
                f"{describe_function(fn)} takes {star}{param.name}; a tool needs named parameters"
                " so that its arguments can be described to a model"
            )
    return signature


def type_hints(fn: Callable[..., Any], names: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`fn`'s annotations, resolved in its module, with `names` besides (`moot.tools.schema`
    gives pydantic's `Field`, so a tool's module need not import pydantic to use it).

    Raises:
        TypeError: An annotation does not resolve.
    """
    try:
        return typing.get_type_hints(fn, localns=dict(names or {}), include_extras=True)
    except (NameError, TypeError) as exc:
        raise TypeError(
            f"Cannot resolve the annotations of {describe_function(fn)}: {exc}. Types used in a"
            " tool's signature must be importable from its module, not local to a function."
        ) from exc


def describe_function(fn: Callable[..., Any]) -> str:
    """`fn` named for an error message."""
    return f"tool function {getattr(fn, '__qualname__', fn)!r}"
