"""Engines: where `forensics analyze` does its work. Same SQL, same findings on each.

- ``local`` (the default, nothing to install): this machine; the ingest's worker processes parse,
  one DuckDB runs every detector (:func:`forensics.detect.engine.run_all`).
- ``ray`` (the optional extra ``forensics[ray]``): map and reduce on a Ray cluster, or on a local
  Ray started for the run. The map runs per group of hosts, twice:

  1. parse (:func:`forensics.engine.mapstep.parse_group`): the group's raw files into its tables
     (Parquet, ``tables/<table>/host=<h>/``), merged in manifest order as the local ingest's are;
  2. detect (:func:`forensics.engine.mapstep.detect_group`): one DuckDB over the group's tables only,
     with the clock offsets estimated over all hosts (the anchors are read from every host's NCCL
     and kernel rows), runs the views and every ``-- locality: host`` detector and writes the
     host-local findings and the per host x 30 s window tables (``WINDOW_TABLES``) as Parquet.

  The reduce (:func:`forensics.engine.reduce.reduce_findings`) opens one DuckDB over the bundle's
  tables and those window tables, runs the ``-- locality: cross`` detectors (peer comparison,
  settings that differ across hosts, a collective's ranks) and the anomaly model, links causes
  across hosts (NCCL peers) and ranks.

The map functions are library functions of plain arguments (paths, host lists, frames), so that
other callers (a fleet archive) can run them on any executor: :class:`SerialExecutor` here, or
:class:`forensics.engine.executors.RayExecutor`.
"""
from __future__ import annotations

from forensics.engine.executors import SerialExecutor, make_executor
from forensics.engine.run import MapReduce

ENGINES = ("local", "ray")

__all__ = ["ENGINES", "MapReduce", "SerialExecutor", "make_executor"]
