"""An MCP server's question (`mcp_question_asked`) as a form: its fields, read from the
requested schema, and the person's typed text made into the values the schema wants.

MCP's form elicitation asks for a flat object: each property a string, a number, an integer,
a boolean, a string `enum` (one of some values, maybe titled: `oneOf` consts, `enumNames`), or
an array of such values (several, typed with commas between). The app and the REPL ask the
same fields and check the answers the same way, here.
"""

from __future__ import annotations

from typing import Any

import msgspec

TRUE = frozenset({"y", "yes", "true", "1", "on"})
FALSE = frozenset({"n", "no", "false", "0", "off"})
KINDS = ("string", "number", "integer", "boolean", "enum", "list")


class Field(msgspec.Struct, frozen=True):
    """One value the server asks for."""

    name: str
    title: str
    kind: str
    """string, number, integer, boolean, enum (one of `options`) or list (some of them)."""
    required: bool = False
    description: str = ""
    options: tuple[str, ...] = ()
    """For `enum` and `list`: the values to pick from."""
    names: tuple[str, ...] = ()
    """What each option means to the person, when the server titled them ("" when not)."""
    default: Any = None

    def label(self) -> str:
        """The field as the person reads it: `Title (integer, required): description`."""
        shown = ", ".join(
            f"{option} ({name})" if name else option
            for option, name in zip(
                self.options, self.names or [""] * len(self.options), strict=True
            )
        )
        kind = {"enum": f"one of {shown}", "list": f"some of {shown}, with commas"}.get(
            self.kind, self.kind
        )
        need = ", required" if self.required else ""
        about = f": {self.description}" if self.description else ""
        return f"{self.title} ({kind}{need}){about}"


def form_fields(schema: dict[str, Any]) -> list[Field]:
    """The fields of a requested schema, in the order the server listed them."""
    required = set(schema.get("required") or ())
    fields = []
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        several = spec.get("type") == "array"
        options, names = _options(spec.get("items") or {} if several else spec)
        kind = "list" if several else "enum" if options else str(spec.get("type", "string"))
        fields.append(
            Field(
                name=name,
                title=str(spec.get("title") or name),
                kind=kind if kind in KINDS else "string",
                required=name in required,
                description=str(spec.get("description") or ""),
                options=options,
                names=names,
                default=spec.get("default"),
            )
        )
    return fields


def _options(spec: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The values an enum offers, and their titles (`oneOf`/`anyOf` consts, `enumNames`)."""
    titled = spec.get("oneOf") or spec.get("anyOf") or ()
    if titled:
        pairs = [(str(o.get("const")), str(o.get("title") or "")) for o in titled if "const" in o]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    values = tuple(str(v) for v in spec.get("enum") or ())
    names = tuple(str(n) for n in spec.get("enumNames") or ())
    return values, names if len(names) == len(values) else ()


def field_value(field: Field, text: str) -> Any:
    """The value `text` gives `field`; None when it is left empty (an optional field).

    Raises:
        ValueError: `text` does not fit (a word for a number, a value not offered, a required
            field left empty); the message says what would.
    """
    text = text.strip()
    if not text:
        if field.default is not None:
            return field.default
        if field.required:
            raise ValueError(f"{field.title} is required")
        return None
    match field.kind:
        case "integer":
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"{field.title} wants a whole number") from None
        case "number":
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"{field.title} wants a number") from None
            return int(number) if number.is_integer() else number
        case "boolean":
            if text.lower() in TRUE | FALSE:
                return text.lower() in TRUE
            raise ValueError(f"{field.title} wants yes or no")
        case "enum":
            if text in field.options:
                return text
            raise ValueError(f"{field.title} is one of {', '.join(field.options)}")
        case "list":
            chosen = [part.strip() for part in text.split(",") if part.strip()]
            wrong = [c for c in chosen if field.options and c not in field.options]
            if wrong:
                raise ValueError(f"{field.title} takes some of {', '.join(field.options)}")
            return chosen
    return text


def form_content(fields: list[Field], texts: dict[str, str]) -> dict[str, Any]:
    """The answer to send: each field's value from what was typed, empty optional ones left
    out.

    Raises:
        ValueError: A value does not fit (see `field_value`).
    """
    content = {}
    for field in fields:
        value = field_value(field, texts.get(field.name, ""))
        if value is not None:
            content[field.name] = value
    return content
