"""Reading pickles that strangers made, without running them.

A pickle is a program: its GLOBAL/STACK_GLOBAL opcodes import any callable (``os.system``) and
REDUCE/BUILD/NEWOBJ/INST/OBJ call it, so ``pickle.load`` of an untrusted file runs whatever its
author chose. Flight Recorder dumps need none of that: PyTorch writes them with its own pickler as
plain dicts, lists, tuples, strings, numbers, booleans and None. So :func:`loads_plain`

1. walks the opcodes first (:func:`pickletools.genops`, which only decodes, never executes) and
   refuses the input, naming the first offending opcode and the global it names, if any opcode could
   import, call or look up anything (or the input is truncated or not a pickle);
2. only then unpickles, with an Unpickler whose ``find_class`` and ``persistent_load`` always refuse
   (the Python documentation's "restricting globals", with nothing allowed), so even an opcode the
   first step missed cannot reach a global.

Limits: input size (a bundle member is already bounded) and the number of opcodes, so a crafted
file cannot make either step run for long.

>>> import pickle
>>> loads_plain(pickle.dumps({"version": "2.5", "entries": [(1, None, True, 1.5)]}, protocol=2))
{'version': '2.5', 'entries': [(1, None, True, 1.5)]}
>>> class Evil:
...     def __reduce__(self):
...         return (print, ("owned",))
>>> loads_plain(pickle.dumps(Evil()))
Traceback (most recent call last):
...
forensics.sources._safe_pickle.PickleRefused: pickle refused: opcode STACK_GLOBAL at byte ... would import builtins.print (only plain containers, strings, numbers, booleans and None are read)
"""
from __future__ import annotations

import io
import pickle
import pickletools

MAX_OPCODES = 20_000_000

# opcodes that import, call, build objects or look outside the pickle: none is allowed
_FORBIDDEN = frozenset({
    "GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX",
    "EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID", "NEXT_BUFFER", "READONLY_BUFFER",
})


class PickleRefused(ValueError):
    """The input is not a pickle of plain data (or not a whole pickle); the message is one line."""


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):  # noqa: D401 - pickle's hook
        raise PickleRefused(f"pickle refused: it would import {module}.{name}")

    def persistent_load(self, pid):
        raise PickleRefused("pickle refused: it refers to a persistent object outside the file")


def _global_name(ops: list, i: int) -> str:
    """The module.name a GLOBAL or STACK_GLOBAL at ops[i] would import, as far as the opcodes say."""
    op, arg, _ = ops[i]
    if op.name == "GLOBAL" and isinstance(arg, str):
        return arg.replace(" ", ".")
    strings = [a for o, a, _ in ops[max(0, i - 6):i] if isinstance(a, str) and ("UNICODE" in o.name or "STRING" in o.name)]
    return ".".join(str(s) for s in strings[-2:]) if strings else "?"


def check_plain(data: bytes) -> None:
    """Raise PickleRefused unless `data` is one whole pickle of plain data only."""
    recent: list = []
    n = 0
    try:
        for op, arg, pos in pickletools.genops(io.BytesIO(data)):
            n += 1
            if n > MAX_OPCODES:
                raise PickleRefused(f"pickle refused: more than {MAX_OPCODES:,} opcodes")
            recent.append((op, arg, pos))
            if len(recent) > 8:
                recent.pop(0)
            if op.name in _FORBIDDEN:
                what = ""
                if op.name in ("GLOBAL", "STACK_GLOBAL"):
                    what = f" would import {_global_name(recent, len(recent) - 1)}"
                elif op.name in ("REDUCE", "NEWOBJ", "NEWOBJ_EX", "INST", "OBJ"):
                    what = " would call an object"
                raise PickleRefused(f"pickle refused: opcode {op.name} at byte {pos}{what} (only plain containers, "
                                    "strings, numbers, booleans and None are read)")
    except PickleRefused:
        raise
    except (ValueError, EOFError, IndexError, pickle.UnpicklingError, UnicodeDecodeError, OverflowError) as exc:
        raise PickleRefused(f"not a whole pickle: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def loads_plain(data: bytes):
    """The plain data in pickle `data`: dicts, lists, tuples, sets, str, bytes, int, float, bool, None.
    Anything else (a global, a call, an object, a truncated stream) raises PickleRefused; nothing in
    the input is ever executed."""
    check_plain(data)
    try:
        return _NoGlobals(io.BytesIO(data)).load()
    except PickleRefused:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, OverflowError, MemoryError,
            RecursionError) as exc:
        raise PickleRefused(f"not a whole pickle: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
