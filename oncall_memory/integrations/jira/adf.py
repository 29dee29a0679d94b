"""Atlassian Document Format (Jira Cloud's rich text in REST v3) to Markdown, so a Jira description or
comment is read by the same section reader as a post-mortem.

ADF is a tree of nodes (`doc` > `paragraph` > `text`, headings with `attrs.level`, lists, code blocks,
panels, tables, mentions, emoji, cards). Block nodes become Markdown lines; inline nodes their words; an
unknown node its children's text, so a new node type loses nothing. Walked with an explicit stack: a
tree nested deeper than Python's recursion limit is read like any other, in time linear in its size.
"""

from __future__ import annotations

from typing import Any

# Block nodes that end a line (or a paragraph) in Markdown.
_BLOCKS = {"paragraph", "heading", "codeBlock", "blockquote", "panel", "rule", "tableRow", "mediaSingle", "expand"}


def to_markdown(node: Any) -> str:
    """Markdown for an ADF document (or any node of one); a plain string is returned as it is."""
    if isinstance(node, str):
        return node
    if not isinstance(node, dict):
        return ""
    out: list[str] = []
    # (node, list prefix) to open, or a string to write when a block closes
    stack: list[Any] = [(node, "")]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        current, prefix = item
        if not isinstance(current, dict):
            continue
        kind = current.get("type")
        attrs: dict[str, Any] = current["attrs"] if isinstance(current.get("attrs"), dict) else {}
        children: list[Any] = current["content"] if isinstance(current.get("content"), list) else []
        if kind == "text":
            out.append(str(current.get("text") or ""))
            continue
        if kind == "hardBreak":
            out.append("\n")
            continue
        if kind in ("mention", "emoji", "status", "date", "placeholder"):
            out.append(str(attrs.get("text") or attrs.get("shortName") or ""))
            continue
        if kind in ("inlineCard", "blockCard", "embedCard"):
            out.append(str(attrs.get("url") or ""))
            continue
        opening, closing = "", ""
        if kind == "heading":
            level: int = attrs["level"] if isinstance(attrs.get("level"), int) else 2
            opening, closing = "\n" + "#" * min(max(level, 1), 6) + " ", "\n\n"
        elif kind == "codeBlock":
            opening, closing = "\n```\n", "\n```\n\n"
        elif kind == "listItem":
            opening, closing = "\n" + prefix, "\n"
        elif kind in ("bulletList", "orderedList"):
            closing = "\n"
        elif kind == "tableCell" or kind == "tableHeader":
            closing = " | "
        elif kind in _BLOCKS:
            closing = "\n\n"
        out.append(opening)
        stack.append(closing)
        item_prefix = "1. " if kind == "orderedList" else "- " if kind == "bulletList" else prefix
        # a list item's paragraphs stay on its line: its prefix is written once, by the item
        stack.extend((child, item_prefix) for child in reversed(children))
    text = "".join(out)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()
