"""sysstat JSON (iostat -o JSON, sadf -j) read line by line, so a truncated file still yields its complete
records."""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterator
from forensics.sources._sysstat.tokens import BadValue


# ---------------------------------------------------------------- sysstat JSON (iostat -o JSON, sadf -j)


class JsonError(ValueError):
    pass


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*')
_DEC = json.JSONDecoder()
_OPENERS = re.compile(r'(?:\s*"(?:[^"\\]|\\.)*"\s*:\s*[\[{])*\s*$')


class JsonLines:
    """Feed sysstat's JSON line by line: ``on_open(path)`` / ``on_value(path, value)`` callbacks.

    sysstat writes one object member or one array element per line, so walking the lines keeps the
    line number of every record and survives a truncated document. `path` lists the member names
    from the root (array levels add nothing); ``on_open`` fires when an object opens as an array
    element (a new statistics record, for instance).
    """

    def __init__(self, on_open: Callable[[list[str], int], None], on_value: Callable[[list[str], Any, int], None]):
        self.stack: list[tuple[str | None, str]] = []
        self.on_open, self.on_value = on_open, on_value

    def path(self) -> list[str]:
        return [k for k, _ in self.stack if k is not None]

    def feed(self, line: str, line_no: int) -> None:
        """Process one line; on JsonError nothing of the line has been applied."""
        s = line.strip()
        stack = list(self.stack)
        events: list[tuple[str, list[str], Any]] = []
        i, n = 0, len(s)
        while i < n:
            c = s[i]
            if c in " \t\r,":
                i += 1
            elif c in "}]":
                if not stack or stack[-1][1] != ("{" if c == "}" else "["):
                    raise JsonError(f"unbalanced {c!r}")
                stack.pop()
                i += 1
            else:
                key = None
                m = _KEY.match(s, i)
                if m and (not stack or stack[-1][1] == "{"):
                    try:
                        key = json.loads('"' + m.group(1) + '"')
                    except ValueError:
                        raise JsonError("bad member name") from None
                    i = m.end()
                    if i >= n:
                        raise JsonError("member without value")
                elif stack and stack[-1][1] == "{":
                    raise JsonError("expected a member name")
                try:
                    val, end = _DEC.raw_decode(s, i)
                except RecursionError:  # nested past Python's limit: not sadf's JSON
                    raise JsonError(f"JSON nested too deeply at column {i + 1}") from None
                except ValueError:
                    # an object or array left open: sysstat opens them only at the end of a line
                    if s[i] in "{[" and _OPENERS.match(s, i + 1):
                        stack.append((key, s[i]))
                        if s[i] == "{" and key is None and len(stack) > 1 and stack[-2][1] == "[":
                            events.append(("open", [k for k, _ in stack if k is not None], None))
                        i += 1
                        continue
                    raise JsonError(f"bad or truncated JSON at column {i + 1}") from None
                events.append(("value", [k for k, _ in stack if k is not None] + ([key] if key is not None else []), val))
                i = end
        self.stack = stack
        for kind, path, val in events:
            if kind == "open":
                self.on_open(path, line_no)
            else:
                self.on_value(path, val, line_no)


def json_tok(v: Any) -> str:
    """A JSON number back to text for the shared converters (None -> N/A); a string stays itself."""
    t = type(v)
    if t is float or t is int or t is str:  # type(), not isinstance: a JSON true is no number
        return str(v)
    if v is None:
        return "N/A"
    raise BadValue(f"unexpected JSON value {str(v)[:40]!r}")


def _objects(val: Any, what: str) -> Iterator[dict]:
    """The objects of an array member (or the one object), each checked to be one."""
    for e in val if isinstance(val, list) else [val]:
        if not isinstance(e, dict):
            raise JsonError(f"{what} entry is not an object")
        yield e


class HostsJson:
    """The ``{"sysstat": {"hosts": [{..., "statistics": [{...}, ...]}]}}`` frame that iostat -o JSON and sadf -j
    share, walked over `JsonLines`: ``on_host()`` when a host entry starts, ``on_record()`` when a statistics
    record starts, ``on_stat(sub, value, line_no)`` for a member ``sub`` of a record, ``on_member(path, value,
    line_no)`` for any other member of a host (returns False when it is not one the reader knows: an error).
    ``walk`` hands each member of an object to the same dispatch."""

    def __init__(self, on_host: Callable[[], None], on_record: Callable[[], None],
                 on_stat: Callable[[list[str], Any, int], None], on_member: Callable[[list[str], Any, int], bool]):
        self.on_host, self.on_record, self.on_stat, self.on_member = on_host, on_record, on_stat, on_member
        self.lines = JsonLines(self._open, self.value)

    def feed(self, line: str, line_no: int) -> None:
        self.lines.feed(line, line_no)

    def _open(self, path: list[str], line_no: int) -> None:
        if path == ["sysstat", "hosts", "statistics"]:
            self.on_record()
        elif path == ["sysstat", "hosts"]:
            self.on_host()

    def walk(self, path: list[str], val: dict, line_no: int) -> None:
        for k, v in val.items():
            self.value(path + [k], v, line_no)

    def value(self, path: list[str], val: Any, line_no: int) -> None:
        if path in ([], ["sysstat"]) and isinstance(val, dict):
            return self.walk(path, val, line_no)
        if path[:2] != ["sysstat", "hosts"]:
            raise JsonError(f"unexpected JSON member {'.'.join(path)!r}")
        rest = path[2:]
        if not rest:
            for h in _objects(val, "host"):
                self.on_host()
                self.walk(path, h, line_no)
            return
        if rest[0] == "statistics":
            if len(rest) > 1:
                return self.on_stat(rest[1:], val, line_no)
            for e in _objects(val, "statistics"):
                self.on_record()
                self.walk(path, e, line_no)
            return
        if not self.on_member(path, val, line_no):
            raise JsonError(f"unexpected JSON member {'.'.join(path)!r}")
