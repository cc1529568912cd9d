"""HTML as readable text: headings, paragraphs, list items and links kept; scripts, styles,
navigation and hidden parts dropped (stdlib `html.parser`, no third-party parser needed)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "nav",
     "footer", "select", "button"}
)  # fmt: skip
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "aside", "ul", "ol", "dl", "table",
     "blockquote", "pre", "figure", "figcaption", "form", "address", "details", "summary",
     "hr", "body"}
)  # fmt: skip
_LINES = frozenset({"li", "dt", "dd", "tr", "br", "caption"})
_SPACE = re.compile(r"\s+")


def html_to_text(html: str, base_url: str = "") -> tuple[str, str]:
    """Readable text of an HTML page: what a person would read, as plain lines.

    Args:
        html: The page.
        base_url: Where it came from; relative links are resolved against it.

    Returns:
        The page's title and its text: headings as `#` lines, list items as `- ` lines,
        links as `text (url)`, whitespace collapsed except inside `<pre>`.
    """
    parser = _HtmlText(base_url)
    parser.feed(html)
    parser.close()
    return parser.title.strip(), parser.text()


class _HtmlText(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.title = ""
        self._out: list[str] = []
        self._last = "\n"  # the last character written; start as if at a line start
        self._skip: tuple[str, int] | None = None  # the skipped element's tag, and its depth
        self._pre = 0
        self._in_title = False
        self._links: list[tuple[str, int]] = []  # href, where the link text starts in _out

    def text(self) -> str:
        text = "".join(self._out)
        text = re.sub(r"[ \t]+\n", "\n", text)
        return re.sub(r"\n{3,}", "\n\n", text).strip()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip is not None:
            if tag == self._skip[0]:
                self._skip = (tag, self._skip[1] + 1)
            return
        named = dict(attrs)
        hidden = "hidden" in named or named.get("aria-hidden") == "true"
        if tag not in _VOID and (tag in _SKIPPED or hidden):
            self._skip = (tag, 1)
        elif tag == "title":
            self._in_title = True
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._break(2)
            self._write("#" * int(tag[1]) + " ")
        elif tag == "li":
            self._break(1)
            self._write("- ")
        elif tag in ("td", "th") and self._last not in " \n":
            self._write(" ")
        elif tag == "a":
            self._links.append((named.get("href") or "", len(self._out)))
        elif tag == "pre":
            self._break(2)
            self._pre += 1
        elif tag in _BLOCKS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)

    def handle_endtag(self, tag: str) -> None:
        if self._skip is not None:
            name, depth = self._skip
            if tag in ("body", "html"):  # an unclosed skipped element ends with the page
                self._skip = None
            elif tag == name:
                self._skip = (name, depth - 1) if depth > 1 else None
            return
        if tag == "title":
            self._in_title = False
        elif tag == "a" and self._links:
            self._end_link(*self._links.pop())
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self._break(2)
        elif (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456") or tag in _BLOCKS:
            self._break(2)
        elif tag in _LINES:
            self._break(1)

    def handle_data(self, data: str) -> None:
        if self._skip is not None:
            return
        if self._in_title:
            self.title += _SPACE.sub(" ", data)
        elif self._pre:
            self._write(data)
        else:
            data = _SPACE.sub(" ", data)
            if self._last in " \n":
                data = data.lstrip(" ")
            self._write(data)

    def _end_link(self, href: str, start: int) -> None:
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:")):
            return
        target = urljoin(self.base_url, href)
        label = "".join(self._out[start:]).strip()
        if label and label not in (href, target):
            self._write(f" ({target})")
        elif not label:
            self._write(target)

    def _write(self, text: str) -> None:
        if text:
            self._out.append(text)
            self._last = text[-1]

    def _break(self, lines: int) -> None:
        """End the current line, leaving `lines` line breaks (2 is a blank line)."""
        tail = "".join(self._out[-3:])
        have = len(tail) - len(tail.rstrip("\n"))
        if not self._out:
            return
        if have < lines:
            self._write("\n" * (lines - have))
