"""Every Python process moot starts runs with `-P`: moot runs in the workspace, and `python -m`
puts the working directory first on the import path, where a repository's `json.py` or
`msgspec.py` would run on the host as the process imports that module (the repo map's parser
processes and the Landlock zygote did). A static guard: each list of arguments in moot's source
that starts with `sys.executable` and runs a module holds `-P` before `-m`."""

from __future__ import annotations

import ast
from pathlib import Path

import moot

SOURCE = Path(moot.__file__).parent


def _argument_lists(tree: ast.AST) -> list[ast.List | ast.Call]:
    """List literals, and calls such as `create_subprocess_exec(sys.executable, ...)`, whose
    first element is `sys.executable`."""
    found: list[ast.List | ast.Call] = []
    for node in ast.walk(tree):
        first = (
            node.elts[0]
            if isinstance(node, ast.List) and node.elts
            else node.args[0]
            if isinstance(node, ast.Call) and node.args
            else None
        )
        if isinstance(first, ast.Attribute) and ast.unparse(first) == "sys.executable":
            found.append(node)  # type: ignore[arg-type]
    return found


def test_every_python_moot_starts_keeps_the_workspace_off_its_import_path() -> None:
    unsafe, checked = [], 0
    for path in sorted(SOURCE.rglob("*.py")):
        for node in _argument_lists(ast.parse(path.read_text(encoding="utf-8"))):
            items = node.elts if isinstance(node, ast.List) else node.args
            words = [item.value for item in items if isinstance(item, ast.Constant)]
            if "-m" not in words:
                continue
            checked += 1
            if "-P" not in words[: words.index("-m")]:
                unsafe.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert checked >= 4  # the sentinel, the zygote, the parser processes, the MCP host
    assert not unsafe, f"python -m without -P: {unsafe}"
