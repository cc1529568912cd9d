"""A parser process: `python -m moot.repomap.parse_worker ROOT` reads batches of files to
parse on stdin and writes their `Parsed` on stdout, so the repository map parses on every core
(tree-sitter parses with the GIL held: threads would take turns). See `moot.repomap.parallel`.

Each message, either way, is a 4-byte little-endian length and that many bytes of msgpack: a
batch is a list of `[path, language]`, its answer a list of `Parsed` in the same order. The
process ends when its stdin does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from moot.repomap.languages import LANGUAGES, Grammars
from moot.repomap.parse import parse_file, read_message, write_message


def main() -> int:
    root = Path(sys.argv[1])
    specs = {spec.name: spec for spec in LANGUAGES}
    grammars = Grammars()
    batches = msgspec.msgpack.Decoder(list[tuple[str, str]])
    encoder = msgspec.msgpack.Encoder()
    while (message := read_message(sys.stdin.buffer)) is not None:
        batch = batches.decode(message)
        parsed = [parse_file(root, rel, specs[language], grammars) for rel, language in batch]
        write_message(sys.stdout.buffer, encoder.encode(parsed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
