"""Executors for the map step: run one function over a list of argument tuples.

:class:`SerialExecutor` runs them here, one after the other (tests, and callers without Ray).
:class:`RayExecutor` runs each as a Ray task of one CPU: on the cluster at `address`, else on a Ray
started for this process on this machine (``ray.init(num_cpus=...)``). Paths handed to the tasks
(the bundle's extracted tree in the cache folder) must be readable by every Ray node: one machine,
or a filesystem every node mounts at the same path.
"""
from __future__ import annotations

import os

from forensics.errors import UserError


class SerialExecutor:
    """Map in this process (`slots` = 1)."""

    name = "serial"
    slots = 1

    def map(self, fn, items: list[tuple]) -> list:
        return [fn(*args) for args in items]

    def close(self) -> None:
        pass


class RayExecutor:
    """Map as Ray tasks (one CPU each); `slots` = the cluster's CPUs."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise UserError("--engine ray needs Ray: pip install 'forensics[ray]'") from None
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            if address:
                _check_reachable(address)
            if not address:
                # one polars thread per task (the tasks share this machine's CPUs): the workers of a
                # Ray started here inherit this environment (a runtime_env would cost a second pool
                # of workers, 2-3 CPU seconds)
                os.environ.setdefault("POLARS_MAX_THREADS", "1")
                # a Ray for one offline run: no usage report sent anywhere (this tool never goes on the
                # network), and no metrics its daemons would export every few seconds for a dashboard
                # nobody opens (no CPU saving measurable here: it is within the noise of this shared machine)
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                os.environ.setdefault("RAY_enable_metrics_collection", "0")
            _quiet_token_notice()
            try:
                if address:
                    ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
                else:
                    start_local_ray(ray, num_cpus or os.cpu_count() or 1)
            except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when its node does not
                # start in time ("The current node timed out during startup": seen at load 60 on 2 cores)
                if not address:
                    try:
                        ray.shutdown()  # what it had started
                    except Exception:  # noqa: BLE001
                        pass
                where = f"at {address}" if address else "on this machine"
                first = (str(exc).splitlines() or [type(exc).__name__])[0]
                raise UserError(f"cannot start or reach Ray {where}: {first}") from None
            self._started = True
        self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote: dict = {}

    def map(self, fn, items: list[tuple]) -> list:
        ray = self._ray
        task = self._remote.get(fn)
        if task is None:
            task = self._remote[fn] = ray.remote(num_cpus=1, max_retries=0)(fn)
        refs = [task.remote(*args) for args in items]
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause if getattr(exc, "cause", None) is not None else exc
            raise cause from None

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


#: Ray's settings for a Ray started here (its ``_system_config``): no per-handler timing statistics
#: in its event loops (``event_stats``, for debugging Ray itself) and no task events sent to its GCS
#: (``task_events_report_interval_ms`` = 0: they feed the dashboard's task list and timeline, which
#: nobody opens here). Each halved an idle worker's CPU in probes on this machine (0.20 -> 0.07-0.11
#: CPU s per 30 s, benchmarks/ray_start.py); findings do not depend on them. And workers at this
#: process's own priority (``worker_niceness`` 0): Ray's default, 15, runs every task 15 nice levels below
#: the driver (19 under ``nice -n 15``), for a cluster whose driver must stay responsive; here the tasks
#: are the analysis, and on a busy machine they got a third of the CPU share the local engine gets,
#: so a run lasted 2-2.5 times longer and Ray's background, which grows with wall time, with it.
LOCAL_RAY_CONFIG = {"event_stats": False, "task_events_report_interval_ms": 0, "worker_niceness": 0}


def start_local_ray(ray, num_cpus: int) -> None:
    """Start a Ray of `num_cpus` CPUs on this machine for this process, lean: with
    :data:`LOCAL_RAY_CONFIG`, and without the two daemons an offline run never uses, the log monitor
    (it forwards workers' output to a driver that asked for none, ``log_to_driver=False``) and the
    autoscaler's monitor (one machine, nothing to scale). Ray's ``init`` does not expose these two
    switches (its ``RayParams`` has them: ``include_log_monitor``, ``no_monitor``), so they are set on
    the parameters ``init`` builds, for this call only; a Ray without them starts both, as before.
    Checked on Ray 2.60.0: no public way does this for ``ray.init`` (the CLI's ``ray start --head``
    has ``--include-log-monitor`` and a hidden ``--no-monitor``, but a head started so outlives this
    process and must be stopped apart); tests/test_engine.py::test_the_local_ray_is_lean fails when a
    Ray release stops honouring them. Measured: benchmarks/results/fleet_scale-2026-12-06-c.md."""
    try:
        from ray._private import parameter
    except ImportError:  # another layout of Ray's internals: its defaults
        parameter = None
    original = getattr(parameter, "RayParams", None)
    if original is not None:
        class _Lean(original):
            def __init__(self, *a, **kw):
                super().__init__(*a, **kw)
                if hasattr(self, "include_log_monitor") and hasattr(self, "no_monitor"):
                    self.include_log_monitor = False
                    self.no_monitor = True

        parameter.RayParams = _Lean
    try:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 _system_config=dict(LOCAL_RAY_CONFIG))
    finally:
        if original is not None:
            parameter.RayParams = original


_TOKEN_NOTICE = "Token authentication is enabled for this Ray cluster"


def _drop_token_notice(record) -> bool:
    return not (record.levelno < 40 and str(record.msg).startswith(_TOKEN_NOTICE))


def _quiet_token_notice() -> None:
    """Ray (2.60) logs a notice on stderr each time it starts a local cluster with token
    authentication on, its default: a run's output must not carry it. Only that notice is dropped
    (by its text, below ERROR); Ray's errors and other warnings still show."""
    import logging

    lg = logging.getLogger("ray._private.authentication.authentication_token_setup")
    if _drop_token_notice not in lg.filters:
        lg.addFilter(_drop_token_notice)


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """One line and exit 2 for a HOST:PORT (or ray://HOST:PORT) nobody listens on: Ray itself
    retries such an address for minutes. ``auto`` (the cluster this machine belongs to) is Ray's."""
    import socket

    hostport = address.removeprefix("ray://")
    if hostport == "auto" or ":" not in hostport:
        return
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot reach Ray at {address}: {exc.strerror or exc}") from None


def make_executor(engine: str, address: str | None = None):
    """The executor of `engine` ("local" runs serially here; "ray": :class:`RayExecutor`)."""
    if engine == "ray":
        return RayExecutor(address)
    if address:
        raise UserError("--ray-address goes with --engine ray")
    return SerialExecutor()
