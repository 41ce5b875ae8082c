"""The process budget (`forensics --max-memory SIZE ...`) and `forensics cache ls|prune`."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Optional

import typer

from forensics.cli._common import UserError


def register(app: typer.Typer) -> None:
    @app.callback()
    def budget(
        max_memory: Optional[str] = typer.Option(
            None, "--max-memory", metavar="SIZE",
            help="memory this run may use, e.g. 4G (default: $FORENSICS_MAX_MEMORY, else half the RAM, at most 1.5G); "
                 "DuckDB gets 60% of it and spills or stops with one line beyond"),
    ) -> None:
        """Offline log and counter forensics for GPU training clusters."""
        from forensics import limits

        try:
            limits.set_max_memory(max_memory)
        except limits.LimitError as exc:
            raise UserError(str(exc)) from None

    cache_app = typer.Typer(help="List or prune the parsed-bundle cache (size-limited, least recently used first out).",
                            no_args_is_help=True)
    app.add_typer(cache_app, name="cache")
    dir_opt = typer.Option(None, "--cache-dir", help="the cache folder (default $FORENSICS_CACHE_DIR or ~/.cache/forensics)")

    @cache_app.command("ls")
    def cache_ls(cache_dir: Optional[Path] = dir_opt) -> None:
        """Every cache entry: size, last use, what it is; then the total and the limit."""
        from forensics import limits
        from forensics.bundle import cache

        root = cache.cache_root(cache_dir)
        entries = cache.entries(root)
        for e in entries:
            used = dt.datetime.fromtimestamp(e.used, dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
            print(f"{limits.human(e.size):>10}  {used}  {e.path.name}  {e.what}")
        total = sum(e.size for e in entries)
        print(f"{len(entries)} entries, {limits.human(total)} in {root} (limit {limits.human(limits.cache_limit(root))})")

    @cache_app.command("prune")
    def cache_prune(
        cache_dir: Optional[Path] = dir_opt,
        max_size: Optional[str] = typer.Option(None, "--max-size", metavar="SIZE",
                                               help="keep at most this much (default: the cache limit; 0 empties it)"),
    ) -> None:
        """Remove least recently used entries until the cache fits its limit (or --max-size), and the
        work folders of runs that were killed (never those of a run in progress)."""
        from forensics import limits
        from forensics.bundle import cache

        root = cache.cache_root(cache_dir)
        try:
            keep = limits.parse_size(max_size) if max_size is not None else limits.cache_limit(root)
        except limits.LimitError as exc:
            raise UserError(str(exc)) from None
        left = cache.sweep_work(root)
        if left:
            print(f"removed {len(left)} work folder{'s' if len(left) > 1 else ''} of runs that were killed")
        removed, freed = cache.prune(root, keep)
        print(f"removed {removed} entries, freed {limits.human(freed)}")
