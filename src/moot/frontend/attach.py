"""Images and PDFs the person attaches to a message, as every front end shows them.

A file named as `@shot.png`, pasted or dragged in as its path, given to `moot -p` as
`-i FILE`, or an image pasted from the clipboard becomes one `Attachment` and a chip in the
message, `[image 1: shot.png 1280x720]` or `[pdf 1: spec.pdf 12 pages]`, which names it where
the person put it. In the app's and the REPL's prompt:

- `@shot.png ` (an image or PDF of the workspace, a space after it) becomes the chip
  `[image 1: shot.png 1280x720]`; one still at the end of the message when it is sent too.
- A pasted (or dragged) path of an image or PDF becomes its chip; other pastes are text.
- `ctrl+v` pastes the clipboard's image as a chip (`moot.frontend.clipboard`); when the
  clipboard holds text, its text.
- Backspace right after a chip removes it whole; a chip deleted any other way leaves its
  attachment out too: what is sent carries the attachments of the chips still in the message.

Whether a file can be attached, and what is attached of it (an image fitted in the runtime's
limits, a PDF's pages), is the runtime's one check (`moot.client.attachments`), the same in
every front end; this layer cannot import it, so a front end hands it in as `Check`. What is
here is what only front ends do: chips, pasted paths, `@path` words, placeholders.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

import msgspec

from moot.image_header import image_size, image_type
from moot.protocol.messages import Attachment

PDF = "application/pdf"
SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": PDF,
}
"""The names that say a file is one of the kinds attached (and not text for `@path`)."""

CHIP = re.compile(r"\[(image|pdf) (\d+): [^\[\]\n]*\]")
"""A chip in a message: its kind and number."""
_MENTION = re.compile(r"(?<![\w@/])@(\"[^\"\n]+\"|[^\s`'\"<>()\[\]{}]+)")
_TRAILING = ".,;:!?"


Check = Callable[[Path, str], Attachment]
"""The runtime's check of a file (`moot.client.attachments.attachment_from_path`): the
attachment of the file at the path, named by the string; raises a `ValueError` saying why not
(`AttachmentError`)."""


class Attached(msgspec.Struct, frozen=True):
    """An attachment with what its chip says about it."""

    attachment: Attachment
    size: int
    """Bytes attached (an image as the check fitted it)."""
    detail: str = ""
    """`1280x720`, `12 pages`: of what is attached; empty when that says nothing."""

    @property
    def kind(self) -> str:
        return "pdf" if self.attachment.mime_type == PDF else "image"

    def chip(self, number: int) -> str:
        """`[image 1: shot.png 1280x720]`."""
        name = re.sub(r"[\[\]\n]", " ", self.attachment.name or "(no name)")
        return f"[{self.kind} {number}: {name} {self.detail or human_size(self.size)}]"


def human_size(size: int) -> str:
    """`812 B`, `14.2 KB`, `3.1 MB`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def claims(name: str) -> str | None:
    """The kind a file's name says it is (`shot.png`: `image/png`); None for other names."""
    return SUFFIXES.get(Path(name).suffix.lower())


def from_attachment(attachment: Attachment) -> Attached:
    """What a chip or a placeholder says of an attachment: its size in pixels as the check
    gave it (else as its header says: an editor's, an MCP server's) or its pages; never
    raises: what cannot be read says only its size."""
    try:
        data = base64.b64decode(attachment.data, validate=False)
    except (binascii.Error, ValueError):
        return Attached(attachment, 0)
    detail = ""
    if attachment.mime_type == PDF:
        pages = pdf_pages(data)
        detail = f"{pages} page{'s' if pages != 1 else ''}" if pages else ""
    elif attachment.width and attachment.height:
        detail = f"{attachment.width}x{attachment.height}"
    elif image_type(data) == attachment.mime_type and (dims := image_size(data)) is not None:
        detail = f"{dims[0]}x{dims[1]}"
    return Attached(attachment, len(data), detail)


def placeholder(attachment: Attachment, number: int) -> str:
    """The one line the chat shows for a message's attachment: `[image 1: shot.png
    1280x720, 14.2 KB]`."""
    attached = from_attachment(attachment)
    name = re.sub(r"[\[\]\n]", " ", attachment.name or "(no name)")
    about = ", ".join(part for part in (attached.detail, human_size(attached.size)) if part)
    return f"[{attached.kind} {number}: {name} {about}]"


def placeholders(attachments: Iterable[Attachment]) -> list[str]:
    """`placeholder` of each of a message's attachments, numbered from 1 as its chips are."""
    return [placeholder(a, n) for n, a in enumerate(attachments, 1)]


def pdf_pages(data: bytes) -> int:
    """Pages of a PDF: its page objects counted (0 when they are in compressed streams)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


# ---- what the person typed or pasted --------------------------------------------------------


def pasted_paths(text: str, cwd: Path) -> list[Path] | None:
    """The files a paste names when it is nothing but paths of images or PDFs (a terminal
    pastes a dragged file as its path: quoted, backslash-escaped or as a `file://` URI);
    None when it is anything else, which is pasted as text."""
    text = text.strip()
    whole = cwd / Path(text).expanduser()
    if claims(text) and "\n" not in text and whole.is_file():  # one path, spaces unescaped
        return [whole]
    if not text or len(text) > 8192 or "\n" in text.strip("\n"):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines or len(lines) > 20:
            return None
        words = lines
    else:
        try:
            words = shlex.split(text)
        except ValueError:
            return None
    found: list[Path] = []
    for word in words:
        if word.startswith("file://"):
            word = unquote(urlsplit(word).path)
        path = (cwd / Path(word).expanduser()) if word else None
        if path is None or claims(word) is None or not path.is_file():
            return None
        found.append(path)
    return found or None


def mentioned_files(text: str, cwd: Path, *, finished_only: bool = False) -> list[tuple[str, Path]]:
    """The `@path` words of `text` that name images or PDFs (by their names) that exist, as
    (word as typed, path); `finished_only` keeps the ones a space or a line end follows (a word
    still being typed is left alone)."""
    found: list[tuple[str, Path]] = []
    for match in _MENTION.finditer(text):
        raw = match.group(0)
        if finished_only and (match.end() >= len(text) or not text[match.end()].isspace()):
            continue
        word = match.group(1).strip('"').rstrip(_TRAILING)
        if claims(word) is None:
            continue
        path = cwd / Path(word).expanduser()
        if path.is_file() and not _leads_out(path, cwd):
            found.append((raw[: 1 + len(word) + (2 if raw[1:2] == '"' else 0)], path))
    return found


def _leads_out(path: Path, root: Path) -> bool:
    """Whether `path`, a workspace path as written, is a symlink (or below one) to a file
    outside `root`: a repository's `docs/spec.pdf -> ~/Documents/taxes.pdf` would send that
    file to the model when the person mentions what looks like the repository's own."""
    written = os.path.normpath(path)
    real_root = os.path.realpath(root)
    inside = written == os.path.normpath(root) or written.startswith(
        os.path.normpath(root) + os.sep
    )
    real = os.path.realpath(path)
    return inside and not real.startswith(real_root.rstrip(os.sep) + os.sep)


def numbers(text: str) -> list[int]:
    """The chip numbers in `text`, in order."""
    return [int(m.group(2)) for m in CHIP.finditer(text)]


def next_number(taken: Iterable[int]) -> int:
    return max(taken, default=0) + 1


class Chips:
    """The attachments of the message being typed, by the number their chip shows.

    A chip is text in the message: deleting it leaves its attachment out, and what is sent
    carries the attachments whose chips are still there, in the order they appear.

    Args:
        check: The runtime's check of a file (`Check`).
    """

    def __init__(self, check: Check) -> None:
        self.held: dict[int, Attached] = {}
        self._check = check
        self._refused: dict[tuple[Path, int, int], ValueError] = {}

    def add(self, attachment: Attachment, text: str = "") -> str:
        """Hold `attachment`; its chip, numbered after the chips of the message `text` (each
        message counts from 1: a number held for an earlier message is taken over)."""
        number = next_number(numbers(text))
        attached = from_attachment(attachment)
        self.held[number] = attached
        return attached.chip(number)

    def add_file(self, path: Path, name: str, text: str = "") -> str:
        """`add` of a file, as the check makes it. Raises the check's `ValueError`."""
        return self.add(self.checked(path, name), text)

    def checked(self, path: Path, name: str) -> Attachment:
        """The check's attachment of `path`. A file it refused is refused again without
        being read while it is unchanged (the prompt asks at every key typed after it).

        Raises:
            ValueError: why it cannot be attached (`AttachmentError`).
        """
        try:
            st = path.stat()
            key: tuple[Path, int, int] | None = (path, st.st_mtime_ns, st.st_size)
        except OSError:
            key = None  # the check says why
        if key is not None and key in self._refused:
            raise self._refused[key]
        try:
            return self._check(path, name)
        except ValueError as exc:
            if key is not None:
                self._refused[key] = exc
            raise

    def mentions(self, text: str, cwd: Path, *, finished_only: bool = False) -> str:
        """`text` with each `@path` of an image or PDF replaced by its chip.

        Raises:
            ValueError: one of them cannot be attached, as the check says (nothing is
                replaced then).
        """
        found = mentioned_files(text, cwd, finished_only=finished_only)
        return self.place(text, self.check(found)) if found else text

    def check(self, found: Iterable[tuple[str, Path]]) -> list[tuple[str, Attachment]]:
        """The check's attachment of each `@path` word `mentioned_files` found (it may take a
        few hundred ms: a front end may call it in a thread).

        Raises:
            ValueError: one of them cannot be attached, as the check says.
        """
        return [(word, self.checked(path, word[1:].strip('"'))) for word, path in found]

    def place(self, text: str, checked: Iterable[tuple[str, Attachment]]) -> str:
        """`text` with each word of `checked` replaced by its attachment's chip."""
        for word, attachment in checked:
            text = text.replace(word, self.add(attachment, text), 1)
        return text

    def outgoing(
        self, text: str, cwd: Path, say: Callable[[str], None]
    ) -> tuple[str, tuple[Attachment, ...]] | None:
        """The message to send (its `@path` images and PDFs as chips) and its attachments;
        None, and why `say`s so, when one of them cannot be attached: nothing is sent then."""
        try:
            text = self.mentions(text, cwd)
        except ValueError as exc:  # `AttachmentError`: the runtime's check said why
            say(f"{exc}; nothing was sent")
            return None
        return text, self.attachments(text)

    def attachments(self, text: str) -> tuple[Attachment, ...]:
        """What goes with `text`: the attachments of its chips, in order, each once."""
        seen: list[int] = []
        for number in numbers(text):
            if number in self.held and number not in seen:
                seen.append(number)
        return tuple(self.held[n].attachment for n in seen)

    def restore(self, text: str, attachments: Iterable[Attachment]) -> None:
        """Hold `attachments` again under the chips of `text` (a message given back)."""
        for number, attachment in zip(dict.fromkeys(numbers(text)), attachments, strict=False):
            self.held[number] = from_attachment(attachment)

    def clear(self) -> None:
        self.held.clear()

    def chip_before(self, text: str, cursor: int) -> tuple[int, int] | None:
        """The (start, end) of the chip that ends at `cursor`, so one backspace removes it."""
        for match in CHIP.finditer(text):
            if match.end() == cursor and int(match.group(2)) in self.held:
                return match.start(), match.end()
        return None


def for_prompt(
    prompt: str, files: Iterable[str], root: Path, cwd: Path, check: Check
) -> tuple[str, tuple[Attachment, ...]]:
    """A headless task's message and attachments: its `@path` images and PDFs as chips (a
    path in the workspace `root`, as every `@path`), then the files given with it (`-i FILE`,
    from `cwd`), in that order.

    Raises:
        ValueError: one of them cannot be attached, as `check` says (and nothing is sent).
    """
    chips = Chips(check)
    text = chips.mentions(prompt, root)
    found = list(chips.attachments(text))
    for name in files:
        path = Path(name[7:] if name.startswith("file://") else name).expanduser()
        found.append(chips.checked(cwd / path, name))
    return text, tuple(found)
