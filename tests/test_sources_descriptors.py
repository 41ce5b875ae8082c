"""Every source declares, beside its parser, how it is collected, where it lives in a sosreport and a
bug report, its file-name hints and its timeline events (forensics/sources/<name>_spec.py, see
forensics/descriptor.py); collect, the importers and ingest read these declarations. This test walks
every source and checks each part, so a part forgotten or mistyped fails here."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from forensics.collect.specs import COLLECTOR, SPECS
from forensics.descriptor import Descriptor
from forensics.importers import nvbug, sos
from forensics.sources import descriptors, file_hints, registry

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(registry())
MODES = {"once", "snapshot", "stream", "copy"}


def test_every_parser_has_a_descriptor_and_back():
    assert sorted(descriptors()) == SOURCES, "each forensics/sources/<name> needs forensics/sources/<name>_spec.py"
    for name, d in descriptors().items():
        assert isinstance(d, Descriptor) and d.source == name and d.title.strip()


@pytest.mark.parametrize("name", SOURCES)
def test_collect_specs(name):
    d = descriptors()[name]
    for spec in d.collect:
        assert spec.source == name, f"{spec.name}: declared by {name} but feeds {spec.source}"
        assert spec.mode in MODES and spec.when in ("start", "end") and spec.timeout > 0 and spec.cap > 0
        assert spec.expand in (None, "iface", "ibport", "ibport_ib")
        assert ("{iface}" in " ".join(spec.argv)) == (spec.expand == "iface")
        assert ("{ibdev}" in " ".join(spec.argv)) == ("{port}" in " ".join(spec.argv)) == (spec.expand in ("ibport", "ibport_ib"))
        assert spec.expand is None or spec.mode == "snapshot", f"{spec.name}: only snapshots are expanded"
        assert spec.mode != "stream" or spec.argv_once, f"{spec.name}: a stream needs argv_once for --duration 0"
        assert spec.mode != "copy" or (len(spec.argv) == 2 and spec.argv[0] == "copy" and spec.argv[1].startswith("/")
                                       and spec.when == "end"), f"{spec.name}: a copy is ('copy', <absolute path>) at the end"
        assert spec in SPECS, f"{spec.name}: not in forensics.collect.specs.SPECS"
    raws = [s.raw for s in d.collect]
    assert len(raws) == len(set(raws)), f"{name}: two commands write the same raw file"


def test_collector_runs_exactly_the_declared_commands():
    declared = [s for d in descriptors().values() for s in d.collect]
    assert list(SPECS) == declared + list(COLLECTOR)
    names = [s.name for s in SPECS]
    assert len(names) == len(set(names))
    assert all(s.source == "collector" for s in COLLECTOR)


@pytest.mark.parametrize("name", SOURCES)
def test_sosreport_paths(name):
    for path in descriptors()[name].sosreport:
        hit = sos.pick(path.example)
        assert hit is not None and hit[0] == name, f"{path.example}: picked as {hit} (another source's pattern first?)"
        assert hit[1].endswith((".txt", ".csv")) and "/" not in hit[1]


@pytest.mark.parametrize("name", SOURCES)
def test_bug_report_sections(name):
    for sec in descriptors()[name].bug_report:
        assert sec.rx.match(sec.example), f"{sec.example!r} does not match {sec.heading!r}"
        text = (f"{nvbug.SEPARATOR}\n\n{nvbug.START}.\n\nuname: Linux node7 6.8.0 #1 SMP x86_64\n\n"
                f"{nvbug.SEPARATOR}\n\n{sec.example}\n\nsome output line\n")
        rep = nvbug.split_report(text.encode())
        assert [(s.source, s.name) for s in rep.sections] == [(name, sec.name)]


@pytest.mark.parametrize("name", SOURCES)
def test_file_hints(name):
    for hint in descriptors()[name].file_hints:
        file, value = hint.example
        assert file_hints(name, file) == {hint.key: value}


EVENTS_SQL = (ROOT / "queries" / "views" / "70_events.sql").read_text()
HEADER = "\n".join(ln for ln in EVENTS_SQL.splitlines() if ln.startswith("--"))


@pytest.mark.parametrize("name", SOURCES)
def test_events_are_documented_in_the_events_view(name):
    words = set(re.findall(r"[a-z][a-z0-9_]*", HEADER))
    missing = [k for k in descriptors()[name].events if k not in words]
    assert not missing, f"{name} declares events that queries/views/70_events.sql does not list: {missing}"


def test_every_event_kind_has_a_source():
    m = re.search(r"^-- Kinds:(.*?)^-- \(raw\.events_local", HEADER, re.S | re.M)
    assert m, "70_events.sql header: 'Kinds:' list not found"
    prose = re.sub(r"\([^)]*\)|<[^>]*>", " ", m.group(1).replace("\n--", " "))  # (origins), <placeholders>
    listed = set(re.findall(r"\b[a-z]+_[a-z_]+\b", prose))
    declared = {k for d in descriptors().values() for k in d.events} | {"command_failed"}  # (the collector's own)
    assert listed <= declared, f"kinds listed in 70_events.sql that no source declares: {sorted(listed - declared)}"


def test_zipapp_carries_every_descriptor(tmp_path):
    from forensics.collect.zipapp import build

    with zipfile.ZipFile(build(tmp_path / "c.pyz")) as z:
        names = set(z.namelist())
    assert {f"forensics/sources/{n}_spec.py" for n in SOURCES} <= names
    assert "forensics/descriptor.py" in names and "forensics/sources/__init__.py" in names
    assert not [n for n in names if n.startswith("forensics/sources/") and not n.endswith(("_spec.py", "/__init__.py"))]


def test_readme_lists_what_a_new_source_touches():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Adding a source", 1)[1].split("\n## ", 1)[0]
    for part in ("forensics/sources/<name>", "forensics/sources/<name>_spec.py", "schemas/<table>.json",
                 "tests/fixtures/<name>/", "tests/fixtures/README.md", "queries/detectors/"):
        assert part in section, f"README 'Adding a source' does not mention {part}"


README = (ROOT / "README.md").read_text()
COLLECT_SECTION = README.split("### Collect on a node", 1)[1].split("\n### ", 1)[0]
READS_SECTION = README.split("What the sources read:", 1)[1].split("\n### ", 1)[0]


@pytest.mark.parametrize("name", SOURCES)
def test_readme_says_what_each_source_reads_and_collects(name):
    """'Adding a source' item 6: the tool in the README's list of what the sources read, and each
    command its descriptor makes `forensics collect` run (the program, or the file it copies) in
    the collect section."""
    assert f"\n- **{name}**:" in READS_SECTION, f"README 'What the sources read' has no '- **{name}**:' entry"
    for spec in descriptors()[name].collect:
        what = spec.argv[1] if spec.mode == "copy" else spec.argv[0]
        assert what in COLLECT_SECTION, f"{spec.name}: README's collect section does not name {what}"


def test_every_fixture_has_its_origin_in_the_fixtures_readme():
    """'Adding a source' item 4: each real fixture's origin is in tests/fixtures/README.md."""
    from fixture_cases import cases

    text = (ROOT / "tests" / "fixtures" / "README.md").read_text()
    missing = [f"{src}/{f.name}" for src, f in cases() if f.name not in text]
    assert not missing, f"fixtures without their origin in tests/fixtures/README.md: {missing}"
