"""The JSON schema a model sees for a tool function, and the argument model behind it."""

from __future__ import annotations

import json
from enum import Enum, IntEnum
from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from moot.tools import ToolContext
from moot.tools.schema import context_parameters, docstring_description, parameters_schema


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Priority(IntEnum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    """A point on the grid."""

    x: int
    y: int = 0


class Line(BaseModel):
    start: Point
    end: Point


class Node(BaseModel):
    children: list[Node] = []


def schema_of(fn: Any) -> dict[str, Any]:
    return parameters_schema(fn)[0]


def property_of(fn: Any, name: str) -> dict[str, Any]:
    return schema_of(fn)["properties"][name]


def test_top_level_shape_required_and_no_extra_properties() -> None:
    def f(path: str, limit: int = 10) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
        },
        "required": ["path"],
        "additionalProperties": False,
    }


def test_no_parameters_gives_empty_object_without_required() -> None:
    def f() -> None: ...

    assert schema_of(f) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_list_of_int_is_an_array_of_integers() -> None:
    def f(ids: list[int]) -> None: ...

    assert property_of(f, "ids") == {"type": "array", "items": {"type": "integer"}}


def test_literal_becomes_enum() -> None:
    def f(mode: Literal["fast", "slow"] = "fast") -> None: ...

    assert property_of(f, "mode") == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}


def test_enum_subclass_becomes_enum_of_values_inlined() -> None:
    def f(color: Color, priority: Priority = Priority.LOW) -> None: ...

    schema = schema_of(f)
    assert schema["properties"] == {
        "color": {"type": "string", "enum": ["red", "blue"]},
        "priority": {"type": "integer", "enum": [1, 2], "default": 1},
    }
    assert "$defs" not in json.dumps(schema)


def test_annotated_string_becomes_description() -> None:
    def f(path: Annotated[str, "File to read, relative to the workspace"]) -> None: ...

    assert property_of(f, "path") == {
        "type": "string",
        "description": "File to read, relative to the workspace",
    }


def test_pydantic_field_description_in_annotated_or_as_default() -> None:
    def f(
        a: Annotated[int, Field(description="From Annotated", ge=0)],
        b: int = Field(3, description="From the default"),
    ) -> None: ...

    assert schema_of(f)["properties"] == {
        "a": {"type": "integer", "description": "From Annotated", "minimum": 0},
        "b": {"type": "integer", "description": "From the default", "default": 3},
    }
    assert schema_of(f)["required"] == ["a"]


def test_optional_with_default_is_nullable_and_not_required() -> None:
    def f(a: int | None = None, b: Optional[float] = None) -> None:  # noqa: UP045
        ...

    schema = schema_of(f)
    assert schema["properties"] == {
        "a": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "b": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
    }
    assert "required" not in schema


def test_optional_without_default_is_still_required() -> None:
    def f(a: int | None) -> None: ...

    assert schema_of(f)["required"] == ["a"]


def test_nested_model_is_inlined_without_refs_or_titles() -> None:
    def f(line: Annotated[Line, "The segment"]) -> None: ...

    point = {
        "type": "object",
        "description": "A point on the grid.",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    assert property_of(f, "line") == {
        "type": "object",
        "description": "The segment",
        "properties": {"start": point, "end": point},
        "required": ["start", "end"],
    }
    text = json.dumps(schema_of(f))
    assert "$ref" not in text
    assert "$defs" not in text
    assert '"title"' not in text


def test_recursive_model_is_rejected_since_it_cannot_be_inlined() -> None:
    def f(tree: Node) -> None: ...

    with pytest.raises(TypeError, match="Node refers to itself"):
        parameters_schema(f)


def test_dicts_are_objects() -> None:
    def f(env: dict[str, int], extra: dict) -> None: ...

    assert schema_of(f)["properties"] == {
        "env": {"type": "object", "additionalProperties": {"type": "integer"}},
        "extra": {"type": "object", "additionalProperties": True},
    }


def test_scalars_and_tuples() -> None:
    def f(
        flag: bool,
        ratio: float,
        pair: tuple[int, str],
        many: tuple[int, ...] = (),
    ) -> None: ...

    assert schema_of(f)["properties"] == {
        "flag": {"type": "boolean"},
        "ratio": {"type": "number"},
        "pair": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
        },
        "many": {"type": "array", "items": {"type": "integer"}, "default": []},
    }


def test_missing_annotation_means_any() -> None:
    def f(value, other=1) -> None: ...

    assert schema_of(f)["properties"] == {"value": {}, "other": {"default": 1}}
    _, model = parameters_schema(f)
    assert model.model_validate({"value": [1, "x"]}).value == [1, "x"]


def test_title_is_kept_when_it_is_a_parameter_name() -> None:
    def f(title: str) -> None: ...

    assert schema_of(f)["properties"] == {"title": {"type": "string"}}


def test_names_pydantic_reserves_are_still_parameter_names() -> None:
    def f(schema: str, json: int, _hidden: int = 0) -> None: ...

    properties, model = parameters_schema(f)
    assert list(properties["properties"]) == ["schema", "json", "_hidden"]
    validated = model.model_validate({"schema": "s", "json": 1, "_hidden": 2})
    assert validated.model_dump(by_alias=True) == {"schema": "s", "json": 1, "_hidden": 2}


def test_tool_context_is_left_out_of_the_schema() -> None:
    def f(path: str, ctx: ToolContext) -> None: ...

    assert schema_of(f)["properties"] == {"path": {"type": "string"}}
    assert schema_of(f)["required"] == ["path"]
    assert context_parameters(f) == ("ctx",)


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda *args: None, id="args"),
        pytest.param(lambda **kwargs: None, id="kwargs"),
    ],
)
def test_var_parameters_are_rejected(fn: Any) -> None:
    with pytest.raises(TypeError, match="named parameters"):
        parameters_schema(fn)


def test_unresolvable_annotation_is_a_clear_type_error() -> None:
    def f(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
        ...

    with pytest.raises(TypeError, match="Cannot resolve the annotations"):
        parameters_schema(f)


def documented(path: str, limit: int, mode: Annotated[str, "From Annotated"] = "r") -> None:
    """Read a file from the workspace,
    numbering its lines.

    Long files are cut at `limit` lines.

    Args:
        path: The file, relative to the workspace.
        limit (int): How many lines to read;
            more are cut.
        mode: Docstring loses to Annotated.

    Returns:
        Nothing.
    """


def test_description_is_the_docstring_first_paragraph_on_one_line() -> None:
    assert docstring_description(documented) == (
        "Read a file from the workspace, numbering its lines."
    )


def test_docstring_args_describe_parameters_unless_annotated() -> None:
    assert schema_of(documented)["properties"] == {
        "path": {"type": "string", "description": "The file, relative to the workspace."},
        "limit": {"type": "integer", "description": "How many lines to read; more are cut."},
        "mode": {"type": "string", "description": "From Annotated", "default": "r"},
    }


def test_no_docstring_means_empty_description() -> None:
    def f() -> None: ...

    assert docstring_description(f) == ""


def test_argument_model_validates_to_real_types() -> None:
    def f(line: Line, color: Color, ids: list[int]) -> None: ...

    _, model = parameters_schema(f)
    validated = model.model_validate(
        {"line": {"start": {"x": 1}, "end": {"x": 2, "y": 3}}, "color": "blue", "ids": ["1", 2]}
    )
    assert validated.line == Line(start=Point(x=1), end=Point(x=2, y=3))
    assert validated.color is Color.BLUE
    assert validated.ids == [1, 2]
