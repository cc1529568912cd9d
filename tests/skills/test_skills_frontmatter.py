"""Frontmatter: the fast reader answers only where it agrees with YAML, and hands the rest to
YAML; a block that is not YAML or not a mapping is a clear error, never a traceback."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.skills.frontmatter import FrontmatterError, _fast, _Unsure, parse_block, split_document


def test_a_document_without_frontmatter_is_all_body() -> None:
    assert split_document("# Title\n\ntext\n") == (None, "# Title\n\ntext\n")


def test_plain_lines_quoted_values_and_booleans() -> None:
    text = (
        "\ufeff---\r\nname: code-review\r\ndescription: Review code, then report.\r\n"
        "argument-hint: \"[path]\"\r\nlicense: 'MIT'\r\ndisable-model-invocation: true\r\n"
        "# a comment\r\n\r\n---\r\nBody $ARGUMENTS\r\n"
    )
    fields, body = split_document(text)
    assert fields == {
        "name": "code-review",
        "description": "Review code, then report.",
        "argument-hint": "[path]",
        "license": "MIT",
        "disable-model-invocation": True,
    }
    assert body == "Body $ARGUMENTS\n"


def test_what_the_fast_reader_is_unsure_of_goes_to_yaml() -> None:
    block = [
        "name: x",
        "metadata:",
        "  author: me",
        "  version: 1.0",
        "allowed-tools:",
        "  - Read",
        "  - Bash(git diff:*)",
        "description: >",
        "  folded",
        "  text",
    ]
    assert parse_block(block) == {
        "name": "x",
        "metadata": {"author": "me", "version": 1.0},
        "allowed-tools": ["Read", "Bash(git diff:*)"],
        "description": "folded text",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: x\n", "closing `---` line is missing"),
        ("---\nname: [x\n---\n", "not valid YAML (line"),
        ("---\n- a\n- b\n---\n", "must be `key: value` lines, not a list"),
        ("---\njust text\n---\n", "must be `key: value` lines, not a str"),
    ],
)
def test_bad_frontmatter_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=message.replace("[", r"\[").replace("(", r"\(")):
        split_document(text)


def test_an_empty_block_is_an_empty_mapping() -> None:
    assert split_document("---\n---\nbody") == ({}, "body")


# ---- the fast reader agrees with YAML wherever it answers -------------------------------------

_WORDS = st.sampled_from(
    ["name", "description", "on", "yes", "No", "null", "true", "False", "x", "a-b", "k_1"]
)
_VALUES = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
    st.sampled_from(
        [
            "true",
            "false",
            "True",
            "yes",
            "~",
            "null",
            "1.5",
            "0x1F",
            "2024-01-01",
            "=",
            "<<",
            "a: b",
            "a #b",
            "a#b",
            "'q'",
            "'it''s'",
            '"d"',
            '"e\\n"',
            "[a]",
            "{a: 1}",
            "- x",
            "&a x",
            "*a",
            "!t x",
            "|",
            ">",
            "@x",
            "`x`",
            "%x",
            "C# and F#",
            "a, b",
            "path:line",
            "-1",
            "+1",
            ".5",
            ".inf",
            "x:",
            "a ]",
            "é ü",
            "\u00a0x",
            "x\u2028y",
            "  spaced  ",
        ]
    ),
)
_LINES = st.one_of(
    st.tuples(_WORDS, _VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.tuples(_WORDS, _VALUES).map(lambda kv: f"{kv[0]}:{kv[1]}"),
    st.sampled_from(["", "# comment", "  indented: x", "---", "...", "key", "\tx: y"]),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_LINES, max_size=6))
def test_the_fast_reader_agrees_with_yaml_wherever_it_answers(lines: list[str]) -> None:
    try:
        fast = _fast(lines)
    except _Unsure:
        return
    expected = yaml.load("\n".join(lines), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert fast == (expected or {})
