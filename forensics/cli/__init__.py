"""Command line: a thin typer app. Each module of this package registers its verbs.

A module ``forensics/cli/<area>.py`` defines ``register(app: typer.Typer) -> None``; modules are
discovered, so adding a verb never means editing this file.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import typer

from forensics.cli._common import UserError

app = typer.Typer(
    name="forensics",
    help="Offline log and counter forensics for GPU training clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _load() -> None:
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        mod.register(app)


_load()


def _plain_metavars(cmd) -> None:
    """Help that names values as a reader does (``--host HOST``, ``--format text|json|md``,
    ``BUNDLES...``), not by their Python types (``<str>``, ``<bool>``, ``<list[Path]>``,
    ``{bundles}``); a metavar given explicitly (``--keep CLASS``) is kept."""
    for sub in getattr(cmd, "commands", {}).values():
        _plain_metavars(sub)
    help_option = cmd.get_help_option

    def plain_help_option(ctx, make=help_option):
        opt = make(ctx)
        if opt is not None:
            opt.metavar = ""
        return opt

    cmd.get_help_option = plain_help_option
    for p in cmd.params:
        if p.metavar is not None:
            continue
        if p.param_type_name == "argument":
            label = p.name.upper() + ("..." if p.nargs != 1 else "")
            p.metavar = label
            usage = label if p.required else f"[{label}]"
            p.get_usage_pieces = lambda ctx, u=usage: [u]
            p.display_type_rich = lambda ctx: None  # (the name column says it already)
        elif getattr(p, "is_flag", False):
            p.metavar = ""
        elif getattr(getattr(p, "type_descriptor", None), "choices", None):
            p.metavar = "|".join(str(getattr(c, "value", c)) for c in p.type_descriptor.choices)
        else:
            p.metavar = p.name.upper()


def command():
    """The click command of the whole CLI, with readable metavars (what `forensics` runs)."""
    cmd = typer.main.get_command(app)
    _plain_metavars(cmd)
    return cmd


class _Stdout:
    """Standard output as the commands see it: a write that fails for another reason than a closed
    pipe (a full disk, a closed descriptor) is one UserError line, never a traceback; a reader
    that went away (``| head``) ends the command quietly."""

    def __init__(self, real):
        self._real = real

    def _do(self, fn, *args):
        if self._real is None:
            raise UserError("cannot write to standard output: it is closed")
        try:
            return getattr(self._real, fn)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise UserError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def write(self, text):
        return self._do("write", text)

    def flush(self):
        return self._do("flush") if self._real is not None else None

    def isatty(self):
        return self._real is not None and self._real.isatty()

    def __getattr__(self, name):
        return getattr(self._real, name)


_interrupted = False


def _on_interrupt(signum, frame):
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _on_interrupt_at_exit(signum, frame):
    """Ctrl-C once the command is done (the interpreter's teardown of DuckDB, polars and threads can
    take a moment): the same one line and exit 130, never a death by signal with nothing said."""
    import os

    try:
        sys.stderr.write("forensics: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(130)


def _quiet_stdout() -> None:
    """After a broken pipe: nothing more is written, and the interpreter's final flush stays silent."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):
        pass
    sys.stdout = open(os.devnull, "w")


def main() -> None:
    """The console entry point: user errors as one line (exit 2), Ctrl-C as one line (exit 130),
    a reader that closed the pipe as a quiet exit (1)."""
    import signal

    global _interrupted
    _interrupted = False
    real = sys.stdout
    sys.stdout = _Stdout(real)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)
    code = 0
    try:
        try:
            command()(prog_name="forensics")
        finally:
            if sys.stdout is not real:
                sys.stdout.flush()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except UserError as exc:
        if not _interrupted:
            print(f"forensics: error: {exc}", file=sys.stderr)
        code = exc.exit_code
    except BrokenPipeError:
        code = 1
    except KeyboardInterrupt:
        _interrupted = True
    except Exception as exc:
        from forensics.errors import write_error

        err = None if _interrupted else write_error(exc, getattr(exc, "filename", None) or "output")
        if err is not None:  # a full disk (or a file-size limit) anywhere: one line, never a traceback
            print(f"forensics: error: {err}", file=sys.stderr)
            code = err.exit_code
        elif not _interrupted:  # (a query stopped by Ctrl-C surfaces as DuckDB's error)
            raise
    finally:
        if isinstance(sys.stdout, _Stdout):
            sys.stdout = real
    if signal.getsignal(signal.SIGINT) is _on_interrupt:
        # Ctrl-C after the command's work: while threads finish, the same one line and exit 130; from
        # the exit handlers on it is ignored, because the interpreter's teardown resets Python's
        # handlers to the default (a death by SIGINT with nothing said); the run's status stands
        import atexit

        signal.signal(signal.SIGINT, _on_interrupt_at_exit)
        atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
    if code == 1 and sys.exc_info()[0] is None and _is_broken(real):
        _quiet_stdout()
    if _interrupted:
        print("forensics: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)


def _is_broken(stream) -> bool:
    """Whether writing to `stream` now fails with a broken pipe (typer ends such a run with exit 1)."""
    try:
        stream.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError, AttributeError):
        return False
    return False
