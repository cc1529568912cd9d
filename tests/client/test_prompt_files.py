"""`@path` words and the caps on what they attach (`moot.client.prompt_files`); the session-level
behaviour (deny rules, resume) is in `test_client_session_ops.py`."""

from __future__ import annotations

from pathlib import Path

from moot.client import prompt_files
from moot.client.prompt_files import PromptFiles, mentions
from moot.workspace.paths import Workspace


def test_which_words_are_mentions() -> None:
    # `@c` is a mention too; a word that names no file (a decorator, a handle) attaches nothing.
    text = "fix @a.py, then @src/b.py! not me@example.com or `@c`; @a.py again; (@d.md) @"
    assert mentions(text) == ["a.py", "src/b.py", "c", "d.md"]


def test_a_messages_files_are_capped_in_number_and_in_size(tmp_path: Path) -> None:
    for n in range(12):
        (tmp_path / f"f{n}.txt").write_text("x" * 30_000)
    (tmp_path / "empty.txt").write_text("")
    files = PromptFiles(Workspace(tmp_path))(
        " ".join(f"@f{n}.txt" for n in range(12)) + " @empty.txt", lambda path: ""
    )
    assert len(files) == prompt_files.MAX_FILES + 1
    attached = [f for f in files if f.text]
    assert sum(len(f.text) for f in attached) <= prompt_files.MAX_TOTAL_CHARS
    assert len(attached) == 8 and "pass 250,000 characters" in files[8].note
    assert files[-1].note == f"more than {prompt_files.MAX_FILES} files named"


def test_an_empty_file_and_a_refused_one_say_so(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "key.pem").write_text("secret")
    files = PromptFiles(Workspace(tmp_path))(
        "@empty.txt @key.pem", lambda path: "denied by Read(*.pem)" if path.endswith(".pem") else ""
    )
    assert [(f.path, f.text, f.note) for f in files] == [
        ("empty.txt", "", "an empty file"),
        ("key.pem", "", "not attached: denied by Read(*.pem)"),
    ]
    assert files[1].for_model() == "[@key.pem: not attached: denied by Read(*.pem)]"
