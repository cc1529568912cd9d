"""What a model can call: the `Tool` seam, its result and context, and `@tool` for functions.

A tool's `invoke` answers every failure that is the model's or the tool's with an error result
the model can read and act on, so the loop never has to catch tool exceptions; only
cancellation propagates.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload, runtime_checkable

import msgspec

from moot.protocol.approval import SideEffect
from moot.protocol.messages import Attachment
from moot.tools.context import OUTSIDE_A_RUN, ToolContext

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError
    from pydantic_core import ErrorDetails

__all__ = ["OUTSIDE_A_RUN", "SideEffect", "Tool", "ToolContext", "ToolResult", "tool"]
"""`SideEffect` is the approval seam's (`moot.protocol.approval`) and `ToolContext` lives in
`moot.tools.context`; tools use both, so they are importable from here too."""

# What OpenAI, Anthropic and Gemini all accept as a function name.
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_INPUT_REPR = 80


class ToolResult(msgspec.Struct, frozen=True):
    """What a tool answers; the model sees `content` and, where supported, `attachments`."""

    content: str
    """The text the model reads."""
    is_error: bool = False
    """True when the call failed; providers flag the result so the model knows to recover."""
    attachments: tuple[Attachment, ...] = ()
    """Images or other binary output, for providers that accept them in tool results."""
    display: Mapping[str, Any] = msgspec.field(default_factory=dict)
    """Structured data for front ends (a diff, a task list); never sent to the model."""

    @classmethod
    def error(cls, message: str) -> ToolResult:
        """A failed call's result.

        Args:
            message: What went wrong, written for the model to act on.

        Returns:
            A result with `is_error` set.
        """
        return cls(content=message, is_error=True)


class FinishedThenInterrupted(asyncio.CancelledError):
    """A tool interrupted once its work was done (an edit written, its diagnostics still
    awaited): the tool step records `result` as the call's, then the interrupt goes on.

    A `CancelledError`, so that everything above the tool step treats it as the interrupt it is.
    """

    def __init__(self, result: ToolResult) -> None:
        super().__init__("interrupted once the tool was done")
        self.result = result


@runtime_checkable
class Tool(Protocol):
    """A tool a model can call. `invoke` never raises except `asyncio.CancelledError`."""

    name: str
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments; treat it as read-only, it is shared by every request."""
    side_effect: SideEffect

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool; bad arguments and tool failures come back as error results."""
        ...


def decided_as(
    tool: Tool | None, name: str, arguments: dict[str, Any], scope: str = ""
) -> tuple[str, SideEffect, dict[str, Any]]:
    """The call as the permission seam decides it: (tool name, side effect, arguments).

    Mostly the call itself; a tool that runs commands it works out (`lint`, `test`:
    `moot.tools.verify_tool`) says which `bash` call it amounts to by a `decided_as` method, so
    the rules about commands hold for it as for `bash`. A tool that cannot say (its project
    files unreadable) is decided as itself. `scope` names the one call decided
    (`call_scope(ctx)`), so that the tool holds that very call, when it runs, to what it was
    decided as: two calls of one turn with the same arguments are two decisions.
    """
    side_effect = tool.side_effect if tool is not None else SideEffect.READ_ONLY
    form = getattr(tool, "decided_as", None)
    if form is None:
        return name, side_effect, arguments
    try:
        found: tuple[str, SideEffect, dict[str, Any]] = form(arguments, scope)
    except Exception:  # a tool's fault must not skip the decision
        return name, side_effect, arguments
    return found


def call_scope(call_id: str, tool_call_id: str) -> str:
    """The `scope` of one tool call of one agent call (see `decided_as`)."""
    return f"{call_id}/{tool_call_id}"


class HopVerdict(msgspec.Struct, frozen=True):
    """How a session's rules settle a `web_fetch` of one redirect target."""

    decision: Literal["allow", "ask", "deny"]
    reason: str = ""


class RedirectCheck(Protocol):
    """The seam through which `web_fetch` puts a redirect to another host to the session's
    rules, as the approval step put its first URL (`moot.tools.redirects`); tools never
    import the runtime."""

    def check(self, url: str, ctx: ToolContext) -> HopVerdict:
        """Settle a `web_fetch` of `url` within the call `ctx`."""
        ...


class FunctionTool:
    """A `Tool` made from a plain function, sync or async; still callable like the function.

    Sync functions run in a worker thread (`asyncio.to_thread`), so a blocking tool never stalls
    the event loop and read-only calls can run side by side.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        side_effect: SideEffect = SideEffect.WRITES_WORKSPACE,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        """Wrap `fn`, reading its schema from the signature and docstring now, not per call.

        Args:
            fn: The function to wrap.
            name: The name the model calls it by; defaults to the function's name.
            description: What it does, for the model; defaults to the docstring's first paragraph.
            side_effect: What running it can change.
            parameters: The schema `fn`'s signature gives, when known ahead (the built-in tools'
                generated specs): then pydantic and the argument model wait for the first call
                whose arguments the schema alone cannot settle (`moot.tools.quick_args`).

        Raises:
            TypeError: The signature cannot be described (see `parameters_schema`).
            ValueError: The name is not 1-64 letters, digits, `_` or `-`, as providers require.
        """
        # Imported here, not at load: `moot -p` loads this module but builds no tool before its
        # first model request (see tools/lazy.py).
        from moot.tools.quick_args import plain_arguments
        from moot.tools.signature import docstring_description, signature_of

        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        if not _TOOL_NAME.fullmatch(self.name):
            raise ValueError(
                f"Tool name {self.name!r} must be 1-64 letters, digits, '_' or '-'; pass name="
            )
        self.description = docstring_description(fn) if description is None else description
        self.side_effect = SideEffect(side_effect)
        self._arguments_model: type[BaseModel] | None = None
        self._signature = signature_of(fn)
        if parameters is None:
            from moot.tools.schema import context_parameters

            self.parameters, self._arguments_model = _schema(fn)
            self._context_names = frozenset(context_parameters(fn))
        else:
            # The schema leaves out exactly the `ToolContext` parameters: no annotation is
            # resolved, so none needs pydantic (`moot.tools.schema.PYDANTIC_NAMES`).
            self.parameters = parameters
            given = parameters.get("properties", {})
            self._context_names = frozenset(p for p in self._signature.parameters if p not in given)
        self._plain = plain_arguments
        # The schema settles a call alone only where every parameter can be passed by name.
        self._quick = parameters is not None and all(
            p.kind is not inspect.Parameter.POSITIONAL_ONLY
            for p in self._signature.parameters.values()
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool(name={self.name!r}, side_effect={self.side_effect.value!r})"

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate `arguments`, run the function and turn what it returns into a result.

        Args:
            arguments: The model's arguments, by parameter name.
            ctx: Passed to any parameter annotated `ToolContext`.

        Returns:
            The function's result; an error result naming each bad field when the arguments do
            not validate, or naming the exception when the function raises.
        """
        if not isinstance(arguments, dict):
            kind = type(arguments).__name__
            return ToolResult.error(
                f"Invalid arguments for {self.name}: expected an object, got {kind}"
            )
        if self._quick and self._plain(arguments, self.parameters):
            args: list[Any] = []
            kwargs = {**arguments, **dict.fromkeys(self._context_names, ctx)}
        else:
            from pydantic import ValidationError  # loaded with the argument model

            try:
                validated = self._model().model_validate(arguments)
            except ValidationError as exc:
                return ToolResult.error(_describe_invalid(self.name, exc))
            args, kwargs = self._call_arguments(validated, ctx)
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(*args, **kwargs)
            else:
                value = await asyncio.to_thread(self.fn, *args, **kwargs)
            if inspect.isawaitable(value):  # e.g. a sync wrapper that returns a coroutine
                value = await value
            return _to_result(value)
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return ToolResult.error(f"Tool {self.name} failed: {detail}")

    def _model(self) -> type[BaseModel]:
        """The argument model, built at its first use when the schema was given."""
        if self._arguments_model is None:
            _, self._arguments_model = _schema(self.fn)
        return self._arguments_model

    def _call_arguments(
        self, validated: BaseModel, ctx: ToolContext
    ) -> tuple[list[Any], dict[str, Any]]:
        # Attribute access, not model_dump, keeps nested models and enum members as they are.
        values = {
            info.alias: getattr(validated, field)
            for field, info in type(validated).model_fields.items()
        }
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for name, param in self._signature.parameters.items():
            value = ctx if name in self._context_names else values[name]
            if param.kind is inspect.Parameter.POSITIONAL_ONLY:
                args.append(value)
            else:
                kwargs[name] = value
        return args, kwargs


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    side_effect: SideEffect = SideEffect.WRITES_WORKSPACE,
    parameters: dict[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    side_effect: SideEffect = SideEffect.WRITES_WORKSPACE,
    parameters: dict[str, Any] | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a function into a tool, as `@tool` or `@tool(side_effect=SideEffect.READ_ONLY)`.

    The default side effect is deliberately not read-only: a tool that does not say what it
    touches is run in order, never alongside other calls, and asks for approval in the default
    permission mode. Mark tools that only read as `READ_ONLY`.

    Args:
        fn: The function, when used bare as `@tool`.
        name: The name the model calls it by; defaults to the function's name.
        description: What it does, for the model; defaults to the docstring's first paragraph.
        side_effect: What running it can change.
        parameters: The schema the signature gives, when known ahead (see `FunctionTool`).

    Returns:
        A `FunctionTool`, or a decorator that makes one when called with options only.
    """

    def wrap(function: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            function,
            name=name,
            description=description,
            side_effect=side_effect,
            parameters=parameters,
        )

    return wrap if fn is None else wrap(fn)


def tool_spec(t: Tool) -> dict[str, Any]:
    """What providers send a model about a tool.

    Args:
        t: The tool.

    Returns:
        `{"name", "description", "parameters"}`; the parameters are a copy, so a provider that
        adapts the schema for its wire format cannot corrupt the tool's own.
    """
    return {"name": t.name, "description": t.description, "parameters": copy.deepcopy(t.parameters)}


def as_text(value: object) -> str:
    """A tool's output as text an event can hold: bytes decoded as UTF-8, a `str` subclass as
    a plain `str`, and a file name's undecodable bytes (Python keeps them as lone surrogates,
    which no JSON can hold) as `\\xe9` escapes, so the model still sees which file it was."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    text = str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape" if _escaped_only(text) else "replace")
        return raw.decode("utf-8", "backslashreplace")
    return text


def _escaped_only(text: str) -> bool:
    """Whether every surrogate in `text` is one `surrogateescape` made from a byte."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


def _to_result(value: Any) -> ToolResult:
    """Map a function's return value: text as is, None as "", anything else as compact JSON."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult("")
    if isinstance(value, str):
        return ToolResult(value)
    from pydantic_core import to_json  # loaded with the tool's argument model

    # fallback=str: the call already happened, so an odd value is shown rather than failed.
    return ToolResult(to_json(value, fallback=str).decode())


def _schema(fn: Callable[..., Any]) -> tuple[dict[str, Any], type[BaseModel]]:
    # Here, not at load: pydantic (for the argument model) costs tens of milliseconds.
    from moot.tools.schema import parameters_schema

    return parameters_schema(fn)


def _describe_invalid(tool_name: str, exc: ValidationError) -> str:
    problems = [_describe_error(error) for error in exc.errors(include_url=False)]
    return f"Invalid arguments for {tool_name}: " + "; ".join(problems)


def _describe_error(error: ErrorDetails) -> str:
    text = error["msg"]
    if error["type"] != "missing":  # a missing field's "input" is the whole argument object
        text += f" (got {_short_repr(error['input'])})"
    where = _format_loc(error["loc"])
    return f"'{where}': {text}" if where else text


def _format_loc(loc: Sequence[int | str]) -> str:
    where = ""
    for part in loc:
        where += f"[{part}]" if isinstance(part, int) else f".{part}" if where else str(part)
    return where


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_INPUT_REPR else text[: _MAX_INPUT_REPR - 3] + "..."
