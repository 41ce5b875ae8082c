"""Every detector declares itself completely, and what it declares is what the rest of the project
knows: the findings schema's kind/severity/layer enums, the causality table, the README."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from forensics import schema
from forensics.detect.catalog import KINDS, LAYERS, SEVERITIES
from forensics.detect.causality import CAUSES
from forensics.detect.rules import KIND_FIELDS, Rule, declarations, parse_rule, rules, used_params

REPO = Path(__file__).resolve().parent.parent
DETECTORS = sorted(p for p in (REPO / "queries" / "detectors").glob("*") if p.suffix in (".sql", ".model")
                   and not p.name.startswith("_"))


def _enum(column):
    return next(c for c in schema.load("findings")["columns"] if c["name"] == column)["enum"]


def test_every_detector_file_is_read():
    assert sorted(d.path.name for d in declarations()) == sorted(p.name for p in DETECTORS)


@pytest.mark.parametrize("path", DETECTORS, ids=lambda p: p.name)
def test_header_complete_and_known(path):
    d = parse_rule(path)  # raises on a missing, unknown or duplicated field
    assert d.kind in _enum("kind"), f"{path.name}: kind {d.kind} not in schemas/findings.json"
    assert d.severity in SEVERITIES
    assert d.description and d.source
    if d.variant_of is None:
        assert d.layer in LAYERS, f"{path.name}: layer {d.layer}"
        assert d.confirm and d.remediation
        for c in d.caused_by:
            assert c.kind in KINDS, f"{path.name}: caused_by names unknown kind {c.kind}"
    else:
        main = KINDS[d.variant_of]
        assert path.stem in main.detectors and f"{d.variant_of}.sql" in {p.name for p in DETECTORS}


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r.name)
def test_params_declared_and_used(rule):
    used = used_params(rule.sql)
    assert used == set(rule.params), \
        f"{rule.name}: used but not declared {sorted(used - set(rule.params))}, declared but unused {sorted(set(rule.params) - used)}"


def test_kinds_are_the_schema_enum():
    assert sorted(KINDS) == sorted(_enum("kind"))


def test_causes_built_from_headers():
    for name, kind in KINDS.items():
        assert CAUSES.get(name, ()) == kind.caused_by


def test_readme_lists_the_catalogue():
    text = (REPO / "README.md").read_text()
    m = re.search(r"^Finding kinds: (.*?)\.$", text, re.M | re.S)
    assert m, "README.md lost its 'Finding kinds:' line"
    assert sorted(re.findall(r"`(\w+)`", m.group(1))) == sorted(KINDS)


HEADER = """-- kind: pfc_storm
-- layer: nic_fabric
-- severity: critical
-- root_rank: 13
-- caused_by: link_flap@host
-- confirm: ethtool -S x
-- remediation: fix it
-- description: d
-- source: s
-- param: n = 5   a number
SELECT $n
"""


@pytest.mark.parametrize("edit,message", [
    (lambda h: h.replace("-- layer: nic_fabric\n", ""), "lacks '-- layer:'"),
    (lambda h: h.replace("-- source: s\n", ""), "lacks '-- source:'"),
    (lambda h: h.replace("-- description: d", "-- descripton: d"), "unknown header field"),
    (lambda h: h.replace("link_flap@host", "link_flap@rack"), "caused_by item"),
    (lambda h: h.replace("root_rank: 13", "root_rank: high"), "not an integer"),
    (lambda h: h.replace("-- severity: critical\n", "-- severity: critical\n-- variant_of: pfc_storm\n"),
     "declares its kind's"),
    (lambda h: h.replace("-- kind: pfc_storm\n", "-- kind: pfc_storm\n-- kind: link_flap\n"), "declared twice"),
])
def test_bad_headers_are_refused(tmp_path, edit, message):
    p = tmp_path / "x.sql"
    p.write_text(edit(HEADER))
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_rule(p)
    p.write_text(HEADER)
    assert parse_rule(p).params == {"n": 5}


def test_kind_fields_are_declared_once_per_kind():
    for name, kind in KINDS.items():
        mains = [d for d in declarations() if d.kind == name and d.variant_of is None]
        assert len(mains) == 1, name
        assert all(getattr(mains[0], f) is not None for f in KIND_FIELDS)


def test_layers_and_severities_defined_once():
    from forensics.detect.catalog import LAYER_LABELS

    assert sorted(LAYER_LABELS) == sorted(LAYERS)
    assert SEVERITIES == ("info", "warning", "critical")  # increasing: the SQL macro agrees
    import duckdb

    from forensics.resources import data_dir

    con = duckdb.connect()
    con.execute((data_dir("queries") / "views" / "00_macros.sql").read_text())
    assert [con.execute("SELECT severity_rank(?)", [s]).fetchone()[0] for s in SEVERITIES] == [0, 1, 2]


def test_a_shell_variable_in_a_header_comment_is_no_parameter():
    """`$iface` in a confirm line is text for the operator; only the SQL's own `$name` need defaults."""
    from forensics.detect.engine import _params_for

    rule = Rule(name="x", kind="link_flap", severity="warning", description="d", path=Path("x.sql"),
                sql="-- confirm: ethtool -S $iface | grep pause\nSELECT $min_flaps AS v", params={"min_flaps": 3})
    assert used_params(rule.sql) == {"min_flaps"}
    assert _params_for(rule, None) == {"min_flaps": 3}


# the setup scripts' tables (queries/detectors/_*.sql) that only a host-local detector may read
_SETUP_TABLES = sorted(set(re.findall(r"CREATE OR REPLACE TEMP (?:TABLE|VIEW) (\w+)",
                                      "\n".join(p.read_text() for p in (REPO / "queries" / "detectors").glob("_*.sql")))))


@pytest.mark.parametrize("path", DETECTORS, ids=lambda p: p.name)
def test_locality_declared(path):
    """Every detector says whether it needs one host's rows (`-- locality: host`: the Ray engine runs
    it in the map, per host group) or compares hosts (`cross`: run once in the reduce, where only
    the window tables of WINDOW_TABLES are carried over from the setup scripts)."""
    from forensics.detect.rules import LOCALITIES, WINDOW_TABLES

    d = parse_rule(path)
    assert d.locality_declared, f"{path.name}: header lacks '-- locality: host|cross'"
    assert d.locality in LOCALITIES
    if d.locality == "cross" and d.sql:
        body = "\n".join(line for line in d.sql.splitlines() if not line.startswith("--"))
        read = {t for t in _SETUP_TABLES if re.search(rf"\b{t}\b", body)}
        assert read <= set(WINDOW_TABLES), \
            f"{path.name}: a cross-host detector reads {sorted(read - set(WINDOW_TABLES))}, which the reduce does not have"


def test_window_tables_are_made_by_the_setup_scripts():
    from forensics.detect.rules import WINDOW_TABLES

    assert set(WINDOW_TABLES) <= set(_SETUP_TABLES)


def test_bad_locality_is_refused(tmp_path):
    src = (REPO / "queries" / "detectors" / "straggler.sql").read_text()
    p = tmp_path / "straggler.sql"
    p.write_text(src.replace("-- locality: cross", "-- locality: rack"))
    with pytest.raises(ValueError, match="locality 'rack'"):
        parse_rule(p)
