"""Tables for people: cell text printed literally, never mangled by a narrow screen.

Three layouts, chosen by where the text goes and how wide it is:

- a **boxed table** (rich) on a terminal, when every column fits at its full width;
- **vertical records** (``-[ record 3 ]-`` then ``column | value`` lines, as ``psql \\x``) on a
  terminal too narrow for that: one value per line, wrapped by the terminal only at its end;
- **aligned plain columns** when standard output is a pipe or a file: one row per line, columns
  separated by two spaces, nothing wrapped or cut (for ``grep``, ``less -S``, ``sort``).

Cell text is data: it is never read as rich markup or emoji codes (``0000:ab:00.0`` stays as it
is), and control characters are shown as escapes (:func:`forensics.report.textsafe.printable`).
"""
from __future__ import annotations

import json
import sys
from typing import IO, Any

import polars as pl

from forensics.report.textsafe import printable


def cell_text(v: Any) -> str:
    """One cell as literal, printable text: None is empty, lists and structs are JSON."""
    if v is None:
        return ""
    if isinstance(v, (list, dict)):
        return printable(json.dumps(v, default=str))
    return printable(v)


def _cells(df: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    head = [printable(c) for c in df.columns]
    return head, [[cell_text(v) for v in row] for row in df.iter_rows()]


def _widths(head: list[str], rows: list[list[str]]) -> list[int]:
    return [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]


def boxed_width(widths: list[int]) -> int:
    """Columns a rich boxed table needs: each cell padded by one space, borders between cells."""
    return sum(widths) + 3 * len(widths) + 1


def render_plain(df: pl.DataFrame) -> str:
    """Aligned columns, one row per line (the layout for pipes and files)."""
    head, rows = _cells(df)
    w = _widths(head, rows)
    lines = ["  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in [head] + rows]
    return "\n".join(lines) + "\n"


def render_vertical(df: pl.DataFrame, width: int = 80) -> str:
    """One record per block, one ``column | value`` line per column (the layout for narrow terminals)."""
    head, rows = _cells(df)
    nw = max((len(h) for h in head), default=0)
    out = []
    for n, r in enumerate(rows, 1):
        tag = f"-[ record {n} ]"
        out.append(tag + "-" * max(3, min(width, nw + 20) - len(tag)))
        out += [f"{h.ljust(nw)} | {v}".rstrip() for h, v in zip(head, r)]
    return "\n".join(out) + "\n" if out else ""


def emit_table(df: pl.DataFrame, title: str | None = None, file: IO[str] | None = None,
               width: int | None = None, terminal: bool | None = None) -> None:
    """Print `df` for a person in the layout that fits (see the module docstring).

    `terminal` and `width` default to what `file` (standard output) is: a terminal and its width."""
    file = file or sys.stdout
    if terminal is None:
        terminal = bool(getattr(file, "isatty", lambda: False)())
    if df.width == 0:
        file.write("(no columns)\n")
        return
    if not terminal:
        if title:
            file.write(f"# {printable(title)}\n")
        file.write(render_plain(df))
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=file, width=width, highlight=False, markup=False, emoji=False, soft_wrap=False)
    head, rows = _cells(df)
    w = _widths(head, rows)
    if boxed_width(w) > console.width:
        if title:
            file.write(f"{printable(title)}\n")
        file.write(render_vertical(df, console.width))
        return
    table = Table(title=Text(printable(title)) if title else None, show_lines=False)
    for h, cw in zip(head, w):
        table.add_column(Text(h), no_wrap=True, min_width=cw, overflow="ignore")
    for r in rows:
        table.add_row(*[Text(c) for c in r])
    console.print(table)
