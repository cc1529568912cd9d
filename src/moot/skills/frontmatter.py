"""YAML frontmatter: the `---` block at the top of `SKILL.md`, commands and agent files.

Most frontmatter is a few `key: value` lines. Those are read here without YAML: importing
PyYAML costs ~10 ms, and moot reads the shipped skills before every first model request. Any
line this reader is not sure about (nesting, lists, block scalars, escapes, anything YAML would
type as a number, a date or null) sends the whole block to `yaml.safe_load`, so the result is
always what YAML itself says; a property test checks that the two agree wherever the fast path
answers (`tests/skills/test_skills_frontmatter.py`).
"""

from __future__ import annotations

import re
from typing import Any

_KEY_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):(?: +(.*))?")
_SIMPLE_DOUBLE = re.compile(r'"([^"\\]*)"')
_SIMPLE_SINGLE = re.compile(r"'([^']*)'")
# YAML 1.1 (PyYAML) reads these words as booleans or null; only exact `true`/`false` are kept
# on the fast path, the rest go to YAML.
_TYPED_WORDS = frozenset({"yes", "no", "on", "off", "true", "false", "null", "y", "n"})
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`+.~\\")
_SPECIAL_VALUES = frozenset({"<<", "="})
"""Values PyYAML resolves to tags of their own (merge, value): left to YAML."""


class FrontmatterError(ValueError):
    """The frontmatter is not YAML, or not a mapping; the message says where."""


class _Unsure(Exception):
    """The fast reader leaves this block to YAML."""


def split_document(text: str) -> tuple[dict[str, Any] | None, str]:
    """The frontmatter mapping and the body after it.

    Args:
        text: The whole file. A UTF-8 byte order mark and CRLF line ends are accepted.

    Returns:
        The frontmatter (None when the file has none) and the body.

    Raises:
        FrontmatterError: The block is not closed, is not YAML, or is not a mapping.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n") and text.rstrip() != "---":
        return None, text
    lines = text.split("\n")
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "---":
            break
    else:
        raise FrontmatterError("the frontmatter's closing `---` line is missing")
    block = lines[1:end]
    body = "\n".join(lines[end + 1 :])
    return parse_block(block), body


def parse_block(lines: list[str]) -> dict[str, Any]:
    """The mapping a frontmatter block holds.

    Raises:
        FrontmatterError: It is not YAML, or not a mapping.
    """
    try:
        return _fast(lines)
    except _Unsure:
        return _yaml("\n".join(lines))


def _fast(lines: list[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for line in lines:
        if not line.isprintable():  # tabs, other line breaks, control characters
            raise _Unsure
        if not line.strip() or line.startswith("#"):
            continue
        match = _KEY_LINE.fullmatch(line)
        if match is None:
            raise _Unsure
        key, raw = match.group(1), (match.group(2) or "").rstrip()
        if key in found or key.lower() in _TYPED_WORDS:
            raise _Unsure
        found[key] = _scalar(raw)
    return found


def _scalar(raw: str) -> str | bool:
    if not raw:
        raise _Unsure  # null, or a nested block on the lines below
    if quoted := _SIMPLE_DOUBLE.fullmatch(raw) or _SIMPLE_SINGLE.fullmatch(raw):
        return quoted.group(1)
    if raw in ("true", "false"):
        return raw == "true"
    if (
        raw[0] in _NOT_PLAIN_START
        or raw[0].isdigit()
        or raw.lower() in _TYPED_WORDS
        or raw in _SPECIAL_VALUES
        or ": " in raw
        or " #" in raw
        or raw.endswith(":")
    ):
        raise _Unsure
    return raw


def _yaml(text: str) -> dict[str, Any]:
    import yaml  # only for frontmatter the fast reader is unsure about (see the module doc)

    # The C loader when PyYAML was built with libyaml: the same results, several times faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        value = yaml.load(text, Loader=loader)  # a safe loader, chosen above
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise FrontmatterError(f"the frontmatter is not valid YAML{where}: {problem}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterError(
            f"the frontmatter must be `key: value` lines, not a {type(value).__name__}"
        )
    return {str(key): item for key, item in value.items()}
