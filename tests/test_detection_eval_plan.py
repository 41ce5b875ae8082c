"""benchmarks/detection_eval.py's matrix in parts (issue 16 item 6): --node-counts splits the plan, --merge
joins the parts' JSON into one report. Planning and merging only: no bundle is simulated here."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "detection_eval.py"


@pytest.fixture(scope="module")
def de():
    spec = importlib.util.spec_from_file_location("detection_eval_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake_result(r: dict, false: int = 0) -> dict:
    """What run_one returns for run `r`: its fault found, ranked first; `false` unexplained findings."""
    fault = r["scenario"] != "healthy"
    kind = r["scenario"].split("+")[0].split("@")[0]
    return {**r, "faults": int(fault), "findings": int(fault) + false,
            "per_kind": ({kind: {"tp": 1, "fp": false, "faults": 1, "found": 1}} if fault else
                         {"anomaly": {"tp": 0, "fp": false, "faults": 0, "found": 0}} if false else {}),
            "root_first": True if fault else None, "false": [f"anomaly/warning@node0{i}" for i in range(false)],
            "missed": [], "critical": 0, "explained": 0, "unobservable": [], "simulate_s": 0.1, "analyze_s": 0.1}


def part_doc(de, counts, drop=0, extra=None, mode="full", complete=True) -> dict:
    sets = de.plan_sets(mode, True, None, None, counts)
    return {"mode": mode, "cases": [], "cell": None, "node_counts": counts, "command": "x", "commit": "abc",
            "complete": complete,
            "sets": [{"title": t, "planned": len(runs),
                      "results": [fake_result(r) for r in runs[drop:]] + (extra or [])} for t, runs in sets]}


@pytest.mark.parametrize("heldout", [False, True])
def test_node_count_parts_are_exactly_the_full_plan(de, heldout):
    whole = [de.run_key(r) for r in de.plan_runs("full", heldout, None, None)]
    small = [de.run_key(r) for r in de.plan_runs("full", heldout, None, None, [2, 8])]
    large = [de.run_key(r) for r in de.plan_runs("full", heldout, None, None, [32, 64])]
    assert len(whole) == len(set(whole)) == 196
    assert len(small) == len(large) == 98  # 18 healthy cells + 40 fault cases at each half's two node counts
    assert not set(small) & set(large) and set(small) | set(large) == set(whole)
    assert {k[2] for k in small} == {2, 8}
    # every fault case keeps its one cell per node count: filtering moves no case to another cell
    assert [k for k in whole if k[2] in (2, 8)] == small


@pytest.mark.parametrize("heldout", [False, True])
def test_duration_parts_are_exactly_a_node_count_part(de, heldout):
    part = [de.run_key(r) for r in de.plan_runs("full", heldout, None, None, [32])]
    short = [de.run_key(r) for r in de.plan_runs("full", heldout, None, None, [32], [180.0, 900.0])]
    hour = [de.run_key(r) for r in de.plan_runs("full", heldout, None, None, [32], [3600.0])]
    assert len(part) == 49 and len(short) + len(hour) == 49 and short and hour
    assert [k for k in part if k[4] != 3600.0] == short and {k[4] for k in hour} == {3600.0}


def test_merge_of_two_parts_is_the_whole_report(de):
    a, b = part_doc(de, [2, 8]), part_doc(de, [32, 64])
    b["sets"][0]["results"][0] = fake_result(b["sets"][0]["results"][0], false=2)  # a healthy 32-node run
    merged, notes = de.merge_parts([b, a])  # in either order
    assert notes == []
    whole = de.plan_sets("full", True, None, None)
    assert [t for t, _, _ in merged] == [t for t, _ in whole]
    for (_, results, planned), (_, runs) in zip(merged, whole):
        assert [de.run_key(r) for r in results] == [de.run_key(r) for r in runs]  # plan order
        assert planned == len(runs)
    text = "\n".join(de.report(merged[0][0], merged[0][1]))
    assert "Root cause ranked first (both among the first two for paired faults): 160/160" in text
    healthy_nh = sum(r["nodes"] * r["duration_s"] / 3600 for r in whole[0][1] if r["scenario"] == "healthy")
    assert f"{2 / healthy_nh:.3f} (2 in {healthy_nh:.2f} node-hours" in text
    assert "| anomaly | 0.00 [0.00, 0.66] |" in text  # 0 true of 2 found: its Wilson interval


def test_merge_names_missing_duplicate_and_cut_short_parts(de):
    a = part_doc(de, [2, 8])
    b = part_doc(de, [32, 64], drop=1, complete=False)
    dup = a["sets"][1]["results"][5]
    a["sets"][1]["results"].append(dup)
    merged, notes = de.merge_parts([a, b])
    joined = "\n".join(notes)
    assert "cut short" in joined
    assert f"{de.DEV_TITLE}: 195 of 196 planned runs; missing 1 at 32 nodes 3 min" in joined
    assert f"{de.HELDOUT_TITLE}: 195 of 196 planned runs; missing 1 at 32 nodes 3 min" in joined
    assert "is in two parts; the first kept" in joined
    assert [len(results) for _, results, _ in merged] == [195, 195]
    with pytest.raises(ValueError, match="different plans"):
        de.merge_parts([a, part_doc(de, [2], mode="quick")])


def test_cli_refuses_incoherent_options_and_merges_files(de, tmp_path):
    with pytest.raises(SystemExit):
        de.main(["--full", "--node-counts", "2,8", "--nodes", "2"])
    with pytest.raises(SystemExit):
        de.main(["--merge", "x.json", "--node-counts", "2"])
    with pytest.raises(SystemExit):
        de.main(["--full", "--node-counts", "3", "--out", str(tmp_path)])  # no run of the matrix at 3 nodes
    for name, counts in (("p1.json", [2, 8]), ("p2.json", [32, 64])):
        (tmp_path / name).write_text(json.dumps(part_doc(de, counts)))
    assert de.main(["--merge", str(tmp_path / "p1.json"), str(tmp_path / "p2.json"), "--out", str(tmp_path)]) == 0
    md = next(tmp_path.glob("detection_eval-*-full-merged.md")).read_text()
    assert "merged from 2 parts" in md and "The parts together hold the whole plan." in md
    back = json.loads(next(tmp_path.glob("detection_eval-*-full-merged.json")).read_text())
    assert back["complete"] and [s["planned"] for s in back["sets"]] == [196, 196]
