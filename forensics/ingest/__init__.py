"""Ingest: a bundle's raw files -> its parsed tables (``tables/<table>/host=<host>/*.parquet``).

- :func:`load` (``forensics.ingest.load(path, cache_dir=None, progress=None) -> Path``): the
  directory of a bundle with its parsed tables, extracted (by :mod:`forensics.bundle.cache`) and
  ingested at most once (:mod:`forensics.ingest.load`).
- :func:`ingest_bundle`, :func:`tables_current` (:mod:`forensics.ingest.run`): every host of a tree.
- :mod:`forensics.ingest.host`: one host's files; :mod:`forensics.ingest.hostfacts`: what host.json
  and commands.jsonl say (parse contexts, the hosts table's facts);
  :mod:`forensics.ingest.collector_tables`: the collector's own files (commands, processes, NICs).
- :mod:`forensics.ingest.pool`: hosts in worker processes; :mod:`forensics.ingest.archive`: raw files
  streamed from the archive.
- :mod:`forensics.ingest.files`: one file through its parser (:func:`parse_path`, in chunks for big
  logs); :mod:`forensics.ingest.sink`: the Parquet writers.
"""
from __future__ import annotations

from forensics.ingest.files import iter_chunks, parse_file, parse_path
from forensics.ingest.load import load
from forensics.ingest.run import ingest_bundle, parser_versions, tables_current

__all__ = ["ingest_bundle", "iter_chunks", "load", "parse_file", "parse_path", "parser_versions", "tables_current"]
