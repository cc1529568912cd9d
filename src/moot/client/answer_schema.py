"""`--json-schema`: the person's agent answers with JSON that fits a schema.

The schema joins the agent's instructions, and a turn gate checks each final answer (a turn
without tool calls, or a `finish`): an answer that is not such JSON is sent back through the
gate with what is wrong, at most `TRIES` times in a call; then the run stops (`gate_stopped`),
which front ends tell as an answer that never fit.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from moot.client.errors import SetupError
from moot.core.gate import GateDecision, ModelTurn, TurnGate

TRIES = 3
"""Answers of one call that may miss the schema; the last one that misses stops the run."""


def schema_instructions(schema: dict[str, Any]) -> str:
    return (
        "Your final answer must be a single JSON value that fits this JSON Schema, with no "
        f"other text around it:\n{json.dumps(schema)}"
    )


def answer_json(text: str) -> Any:
    """The JSON value of an answer, a ```json fence around it allowed.

    Raises:
        ValueError: It is not JSON.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return json.loads(body)


def schema_gate(schema: dict[str, Any], agent: str) -> TurnGate:
    """The gate that holds `agent`'s final answers to `schema`.

    Raises:
        SetupError: `schema` is not a JSON Schema.
    """
    import jsonschema  # type: ignore[import-untyped]  # no stubs installed

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise SetupError(f"--json-schema is not a JSON Schema: {exc.message}") from None
    validator = jsonschema.validators.validator_for(schema)(schema)
    misses: dict[str, int] = {}

    def gate(turn: ModelTurn) -> GateDecision | None:
        if turn.agent != agent:
            return None
        names = {c.name for c in turn.tool_calls}
        if names - {"finish"}:
            return None  # not an answer yet
        text = turn.text
        if names:
            text = str(turn.tool_calls[0].arguments.get("message", ""))
        try:
            value = answer_json(text)
            validator.validate(value)
        except (ValueError, jsonschema.ValidationError) as exc:
            why = exc.message if isinstance(exc, jsonschema.ValidationError) else "not JSON"
            misses[turn.call_id] = missed = misses.get(turn.call_id, 0) + 1
            if missed >= TRIES:
                return GateDecision.stop(f"the answer did not fit the JSON schema ({why})")
            return GateDecision.retry(
                f"Your answer does not fit the JSON schema ({why}). Answer again with only "
                "the JSON value."
            )
        # The answer as plain JSON (no fence), so front ends read the output as it is.
        plain = json.dumps(value)
        if text == plain:
            return None
        if names:
            call = turn.tool_calls[0]
            finish = msgspec.structs.replace(call, arguments={**call.arguments, "message": plain})
            return GateDecision.replace(turn.text, (finish,))
        return GateDecision.replace(plain)

    return gate
