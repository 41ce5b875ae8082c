"""`forensics simulate`: write a simulated incident bundle (raw outputs + ground truth)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from forensics.cli._common import UserError


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    def simulate_cmd(
        scenario: Optional[str] = typer.Option(None, "--scenario", help="scenario name (see --list); NAME@early|late|short "
                                                                  "places the fault in time; a+b puts two faults in one job"),
        nodes: int = typer.Option(8, "--nodes", help="number of nodes"),
        gpus_per_node: int = typer.Option(8, "--gpus-per-node", help="GPUs per node (1-8)"),
        duration: str = typer.Option("10m", "--duration", help="collection length: 90s, 3m, 1h"),
        interval: str = typer.Option("1s", "--interval", help="sampling interval: 1s, 2s"),
        seed: int = typer.Option(0, "--seed", help="random seed (same seed and arguments = same bytes)"),
        clock_skew_ms: float = typer.Option(50.0, "--clock-skew-ms", help="largest per-host clock offset (ms)"),
        no_confounders: bool = typer.Option(False, "--no-confounders", help="leave out the fleet's benign variation "
                                                                            "(GPU spread, checkpoints, evaluation phases, boot messages, "
                                                                            "frontend drops, normal pauses, rank-0 CPU)"),
        same_host: bool = typer.Option(False, "--same-host", help="with a+b: both faults on one host"),
        fabric: Optional[str] = typer.Option(None, "--fabric", help="the rails' link layer: roce or infiniband "
                                                                    "(default: infiniband for ib_congestion, else roce)"),
        out: Optional[Path] = typer.Option(None, "--out", help="bundle to write (.tar, .tar.gz, .tar.zst); "
                                                               "default sim-<scenario>-<seed>.tar.gz"),
        raw_only: bool = typer.Option(False, "--raw-only", help="do not parse the raw outputs into tables/"),
        list_: bool = typer.Option(False, "--list", help="list the scenarios and exit"),
        json_out: bool = typer.Option(False, "--json", help="print a JSON summary (with the truth) on stdout"),
    ) -> None:
        """Simulate a data-parallel training job with a fault and write its bundle (raw outputs in the
        formats the real tools print, tables, truth/labels.json)."""
        from forensics.simulate import SimConfig, list_scenarios, write_bundle
        from forensics.simulate.compose import parse_scenario
        from forensics.timeutil import parse_duration

        if list_:
            for name, desc in list_scenarios():
                print(f"{name:<22} {desc}")
            return
        if not scenario:
            raise UserError("--scenario is required (see forensics simulate --list)")
        try:
            parse_scenario(scenario)
            cfg = SimConfig(scenario=scenario, nodes=nodes, gpus_per_node=gpus_per_node,
                            duration_s=parse_duration(duration), interval_s=parse_duration(interval), seed=seed,
                            clock_skew_ms=clock_skew_ms, confounders=not no_confounders, same_host=same_host,
                            fabric=fabric)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        out = out or Path(f"sim-{scenario.replace('+', '_').replace('@', '-')}-{seed}.tar.gz")
        from forensics.collect.tarball import compression_for

        try:
            compression_for(out)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if not out.parent.exists():
            raise UserError(f"{out.parent}: no such directory")

        def progress(msg: str) -> None:
            print(f"simulate: {msg}", file=sys.stderr)

        try:
            summary = write_bundle(cfg, out, tables=False if raw_only else None, progress=progress)
        except (OSError, ValueError) as exc:
            raise UserError(f"{out}: {exc}") from None
        if json_out:
            sys.stdout.write(json.dumps(summary) + "\n")
        else:
            labels = summary["labels"]
            print(f"{summary['out']}: {cfg.nodes} nodes x {cfg.gpus_per_node} GPUs, {duration} at {interval}, "
                  f"scenario {scenario}, seed {seed}; {len(labels['faults'])} fault(s), {len(labels['effects'])} "
                  f"effect(s) in truth/labels.json", file=sys.stderr)
