"""Completion at the REPL's prompt: slash commands with their descriptions, a command's own
arguments, and `@paths` (fuzzy, capped, read once and again after `forget_paths`)."""

from __future__ import annotations

import threading

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from moot.commands.builtin import builtin_commands
from moot.protocol.client import WorkspaceFiles
from moot.repl.completion import MAX_PATHS, PromptCompleter


class Files:
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self.reads = 0

    def __call__(self) -> WorkspaceFiles:
        self.reads += 1
        return WorkspaceFiles(tuple(self.paths))


def complete(completer: PromptCompleter, text: str) -> list[tuple[str, str, str]]:
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.display_text, c.display_meta_text) for c in found]


def completer(files: Files | None = None) -> PromptCompleter:
    return PromptCompleter(builtin_commands(), lambda: None, files or Files([]))  # type: ignore[arg-type,return-value]


def test_a_slash_completes_commands_with_their_descriptions() -> None:
    found = complete(completer(), "/st")

    assert found == [("/status", "/status", "The session: model, mode, sandbox, tools")]
    assert ("/mode", "/mode [default|acceptEdits|plan|dontAsk|bypassPermissions]") in [
        (text, shown) for text, shown, _ in complete(completer(), "/")
    ]


def test_a_commands_argument_completes_from_the_command() -> None:
    assert [text for text, _, _ in complete(completer(), "/mode ac")] == ["acceptEdits"]


def test_a_slash_inside_a_message_completes_no_command() -> None:
    assert complete(completer(), "look at /st") == []


def test_at_completes_paths_fuzzily_best_first_read_once_until_forgotten() -> None:
    files = Files(["src/moot/repl/prompt.py", "docs/promptly.md", "tests/repl/test_repl.py"])
    prompt = completer(files)

    assert [t for t, _, _ in complete(prompt, "fix @prompt")] == [
        "@src/moot/repl/prompt.py",
        "@docs/promptly.md",
    ]
    assert [t for t, _, _ in complete(prompt, "and @trp")] == [
        "@tests/repl/test_repl.py",
        "@src/moot/repl/prompt.py",
    ]
    assert files.reads == 1
    prompt.forget_paths()
    complete(prompt, "@x")
    assert files.reads == 2


def test_path_completions_are_capped() -> None:
    paths = [f"pkg/module_{i}.py" for i in range(500)]

    assert len(complete(completer(Files(paths)), "@mod")) == MAX_PATHS


def test_every_file_is_offered_and_a_listing_under_way_or_cut_short_says_so() -> None:
    """Only the first 20,000 files were offered (issue 31); while another key's completion
    lists them (a big repository's index still building), the list says so, and what the
    listing left out is said under it."""
    paths = [f"pkg{group:02}/m{number:03}.py" for group in range(26) for number in range(1000)]
    cut = WorkspaceFiles((*paths, "deep/a/b/c/d/pkg99/last_one.py"), ("stopped at the time limit",))
    listing, release = threading.Event(), threading.Event()

    def slow_files() -> WorkspaceFiles:
        listing.set()
        release.wait(30)
        return cut

    prompt = PromptCompleter(builtin_commands(), lambda: None, slow_files)  # type: ignore[arg-type,return-value]
    first = threading.Thread(target=complete, args=(prompt, "@pkg99"))
    first.start()
    try:
        assert listing.wait(30)
        assert complete(prompt, "@pkg99") == [("@pkg99", "listing the workspace's files…", "")]
    finally:
        release.set()
        first.join(30)
    assert complete(prompt, "@pkg99last") == [
        ("@deep/a/b/c/d/pkg99/last_one.py", "deep/a/b/c/d/pkg99/last_one.py", ""),
        ("@pkg99last", "[stopped at the time limit]", ""),
    ]
