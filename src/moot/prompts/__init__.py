"""The texts moot sends a model, kept as versioned template files beside this module.

- `system.md`: the system prompt of the person's agent (rendered by `moot.client.prompt`).
- `environment.md`: the environment section, also given to peers from agent definitions.
- `init.md`: the prompt of `/init` and `moot init`.

A template holds `{{name}}` placeholders and nothing else that is special; `render` fills them
and refuses a template that names one it was not given, so a typo fails a test, not a session.
Every change to `system.md` shows up in `tests/client/test_system_prompt.py`'s snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
_COMMENT = re.compile(r"\A<!--.*?-->\n", re.DOTALL)


@cache
def template(name: str) -> str:
    """The template `name` (`system`, `environment`, `init`), without its leading comment."""
    text = (_HERE / f"{name}.md").read_text(encoding="utf-8")
    return _COMMENT.sub("", text, count=1)


def render(text: str, values: Mapping[str, str]) -> str:
    """`text` with every `{{name}}` replaced by `values[name]`.

    Raises:
        KeyError: The template names a placeholder `values` does not hold.
    """

    def fill(match: re.Match[str]) -> str:
        return values[match.group(1)]

    return _PLACEHOLDER.sub(fill, text)
