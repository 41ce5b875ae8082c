"""benchmarks/fleet_scale.py says how its runs were niced as each analysis process read it (os.nice(0)), not
"run under nice" whatever was done: a report of runs at niceness 0 must not claim `nice`."""
from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "fleet_scale.py"


def _module():
    spec = importlib.util.spec_from_file_location("fleet_scale", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_report_states_the_niceness_the_runs_had():
    mod = _module()
    assert doctest.testmod(mod).failed == 0
    assert mod.niceness_text([{"niceness": 0}, {"niceness": 0}]) == "not run under `nice` (niceness 0)"
    assert mod.niceness_text([{"niceness": 19}]) == "run under `nice` (niceness 19)"
    assert mod.niceness_text([{}]).startswith("niceness not recorded")
    assert "run under `nice`" not in SCRIPT.read_text().split("def report(", 1)[1].split("\n\n\n", 1)[0]


def test_a_run_records_its_own_niceness():
    """one() puts os.nice(0) of the analysing process in its JSON line (what the report reads)."""
    text = SCRIPT.read_text()
    one = text.split("def one(", 1)[1].split("\n\n\n", 1)[0]
    assert '"niceness": os.nice(0)' in one
