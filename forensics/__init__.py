"""forensics: offline log and counter forensics for GPU training clusters.

From Python (a notebook), without the command line:

>>> import forensics                                                   # doctest: +SKIP
>>> a = forensics.analyze("incident.tar")                              # doctest: +SKIP
>>> a.findings                     # a polars frame, most likely root cause first   # doctest: +SKIP
>>> b = forensics.open_bundle("incident.tar"); b.sql("SELECT count(*) FROM events")  # doctest: +SKIP

Errors are exceptions of :mod:`forensics.errors` (bad input: :class:`forensics.errors.UserError`);
nothing here prints.
"""

__version__ = "0.1.0"


def analyze(*paths, **kwargs):
    """Analyse one bundle (or several, merged; or loose inputs such as a dmesg file or a sosreport)
    and return the :class:`forensics.analysis.Analysis` (``.findings``, ``.hosts``, ``.coverage``,
    ``.failed_commands``, ``.errors``, ``.to_json()``). Keyword arguments are those of
    :func:`forensics.analysis.analyze_paths` (``only``, ``since``, ``until``, ``cache_dir``,
    ``progress``, ``host``, ``tz``, ...)."""
    from forensics.analysis import analyze_paths

    if len(paths) == 1 and isinstance(paths[0], (list, tuple)):
        paths = tuple(paths[0])
    return analyze_paths(list(paths), **kwargs)


def open_bundle(path, **kwargs):
    """Open a bundle (tar or directory) for SQL; see :mod:`forensics.db`."""
    from forensics.db import open_bundle as _open

    return _open(path, **kwargs)
