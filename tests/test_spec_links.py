"""The specification, the code and the tests cite each other (spec/README.md, "Rule IDs").

1. Every rule ID defined in spec/ is cited in lazyloop/ and in tests/ (other than this file).
2. Every rule ID that lazyloop/ or tests/ cites is defined in spec/.
3. The ambiguity register in lazyloop/ambiguity.py and spec/ambiguities.md list the same
   entries, with the same rule, readings and default.

Each missing link is one parametrized test case, so the pytest summary is the to-do list.
The checks read files only; they import nothing from lazyloop except the register.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec"
CODE = ROOT / "lazyloop"
TESTS = ROOT / "tests"
THIS = Path(__file__).resolve()
REGISTER_DOC = SPEC / "ambiguities.md"
REGISTER_CODE = CODE / "ambiguity.py"

FAMILIES = ("stream", "iterator", "recurrence", "trip", "output", "laziness", "structure",
            "profile", "onnx", "openvino")
RULE_ID = rf"(?:{'|'.join(FAMILIES)})/[a-z0-9]+(?:-[a-z0-9]+)*"
# a rule ID standing alone: not part of a longer name or path (onnx/loop vs onnx/loop5, a/b/c)
TOKEN = re.compile(rf"(?<![\w/.-])({RULE_ID})(?![\w/#-])")
# forms that cite a rule: `x/y`, "x/y", 'x/y', and the IDs after "rule:" / "rules:"
QUOTED = re.compile(rf"""([`"'])({RULE_ID})\1""")
LABELLED = re.compile(r"\brules?\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
HEADING = re.compile(r"^#{1,6}\s.*$", re.MULTILINE)
BACKTICKED = re.compile(rf"`({RULE_ID})`")

CORE_RULES = [
    "stream/memo", "stream/invariant", "stream/map", "stream/order", "stream/shape",
    "iterator/forward", "iterator/reverse", "iterator/bounds", "recurrence/def",
    "trip/count", "trip/while", "trip/both",
    "output/last", "output/concat", "output/reverse", "laziness/dead",
    "structure/acyclic", "structure/exit", "structure/limits", "structure/recurrence",
    "structure/while-input", "structure/last-value", "structure/length", "structure/nesting",
    "structure/shapes", "profile/tensorrt-dtypes",
]

TEXT_SUFFIXES = {".py", ".md", ".txt", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini"}


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# ---------------------------------------------------------------------------------------------
# What spec/ defines
# ---------------------------------------------------------------------------------------------

def rule_documents():
    """The documents that define rules: top-level spec/*.md except the ambiguity register."""
    if not SPEC.is_dir():
        return []
    return sorted(p for p in SPEC.glob("*.md") if p != REGISTER_DOC)


def definitions():
    """{rule ID: [file, ...]} for every backticked ID in a heading of a rule document."""
    found = {}
    for doc in rule_documents():
        for heading in HEADING.findall(doc.read_text(encoding="utf-8")):
            for rule in BACKTICKED.findall(heading):
                found.setdefault(rule, []).append(rel(doc))
    return found


# ---------------------------------------------------------------------------------------------
# What lazyloop/ and tests/ cite
# ---------------------------------------------------------------------------------------------

def source_files(top: Path):
    if not top.is_dir():
        return []
    return sorted(p for p in top.rglob("*")
                  if p.is_file() and p.suffix in TEXT_SUFFIXES and p.resolve() != THIS
                  and "__pycache__" not in p.parts)


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return ""


def mentions(files):
    """{rule ID: [file, ...]}: every standalone occurrence of an ID-shaped token."""
    found = {}
    for path in files:
        for rule in set(TOKEN.findall(read(path))):
            found.setdefault(rule, []).append(rel(path))
    return found


def citations(files):
    """{rule ID: [file, ...]}: IDs cited in backticks or quotes, or listed after `rule:`."""
    found = {}
    for path in files:
        text = read(path)
        cited = {m.group(2) for m in QUOTED.finditer(text)}
        for line in LABELLED.findall(text):
            cited |= set(TOKEN.findall(line))
        for rule in cited:
            found.setdefault(rule, []).append(rel(path))
    return found


CODE_FILES = source_files(CODE)
TEST_FILES = source_files(TESTS)
DEFINED = definitions()
CODE_MENTIONS = mentions(CODE_FILES)
TEST_MENTIONS = mentions(TEST_FILES)
CITED = {}
for _files in (CODE_FILES, TEST_FILES):
    for _rule, _where in citations(_files).items():
        CITED.setdefault(_rule, []).extend(_where)


def test_spec_defines_the_core_rules():
    missing = [r for r in CORE_RULES if r not in DEFINED]
    assert not missing, (f"spec/ has no heading defining {missing}; define each in a top-level "
                         f"spec/*.md heading such as '### `{(missing or ['x/y'])[0]}` — title'")


def test_each_rule_is_defined_once():
    twice = {r: files for r, files in DEFINED.items() if len(files) > 1}
    assert not twice, "rule IDs defined by more than one heading: " + "; ".join(
        f"{r} in {files}" for r, files in sorted(twice.items()))


@pytest.mark.parametrize("rule", sorted(DEFINED))
def test_rule_cited_in_code(rule):
    assert rule in CODE_MENTIONS, (
        f"rule {rule} (defined in {DEFINED[rule]}) is cited nowhere in lazyloop/: name it in "
        f"the docstring or comment of the code implementing it, or as the rule of the error "
        f"it raises")


@pytest.mark.parametrize("rule", sorted(DEFINED))
def test_rule_cited_in_tests(rule):
    assert rule in TEST_MENTIONS, (
        f"rule {rule} (defined in {DEFINED[rule]}) is cited by no test in tests/: add "
        f"'# rule: {rule}' to a test that checks it")


@pytest.mark.parametrize("rule", sorted(CITED))
def test_cited_rule_exists_in_spec(rule):
    assert rule in DEFINED, (
        f"{rule} is cited in {sorted(set(CITED[rule]))} but no spec/*.md heading defines it: "
        f"add the rule to spec/, or fix the citation")


# ---------------------------------------------------------------------------------------------
# The ambiguity register: lazyloop/ambiguity.py REGISTER vs spec/ambiguities.md
# ---------------------------------------------------------------------------------------------

def register_in_code():
    """{id: {"rule", "readings", "default"}} from REGISTER; by import, else by parsing."""
    try:
        if str(ROOT) not in sys.path:
            sys.path.insert(0, str(ROOT))
        from lazyloop.core.ambiguity import REGISTER
        return {k: {"rule": a.rule, "readings": list(a.readings), "default": a.default}
                for k, a in REGISTER.items()}
    except Exception:  # the package does not import: read the literal entries instead
        return register_by_parsing()


def register_by_parsing():
    fields = ("id", "rule", "question", "readings", "default")
    entries = {}
    tree = ast.parse(REGISTER_CODE.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Ambiguity":
            values = dict(zip(fields, node.args))
            values.update({k.arg: k.value for k in node.keywords})
            try:
                entry = {k: ast.literal_eval(v) for k, v in values.items()}
            except ValueError:
                continue
            entries[entry["id"]] = {"rule": entry["rule"], "readings": list(entry["readings"]),
                                    "default": entry["default"]}
    return entries


ENTRY = re.compile(r"^#{2,4}\s+(A\d+)\b.*$", re.MULTILINE)
ANY_HEADING = re.compile(r"^#{1,4}\s", re.MULTILINE)


def register_in_spec():
    """{id: section text} for every `## A<n> ...` / `### A<n> ...` section."""
    if not REGISTER_DOC.is_file():
        return {}
    text = REGISTER_DOC.read_text(encoding="utf-8")
    sections = {}
    for m in ENTRY.finditer(text):
        nxt = ANY_HEADING.search(text, m.end())
        sections.setdefault(m.group(1), []).append(text[m.start():nxt.start() if nxt else len(text)])
    return sections


CODE_REGISTER = register_in_code()
SPEC_REGISTER = register_in_spec()


def field(section: str, name: str):
    m = re.search(rf"\*\*{name}:\*\*\s*`([^`]+)`", section)
    return m.group(1) if m else None


def readings_listed(section: str):
    """Reading names: the backticked names that start the items under **Readings:**."""
    m = re.search(r"\*\*Readings:\*\*(.*?)(?=^\s*-\s+\*\*|\Z)", section, re.S | re.M)
    block = m.group(1) if m else ""
    return re.findall(r"^\s+-\s+`([^`]+)`", block, re.M)


def _order(ids):
    return sorted(ids, key=lambda a: (int(a[1:]) if a[1:].isdigit() else 10**9, a))


@pytest.mark.parametrize("ambiguity", _order(set(CODE_REGISTER) | set(SPEC_REGISTER)))
def test_ambiguity_documented(ambiguity):
    where = rel(REGISTER_DOC)
    assert ambiguity in CODE_REGISTER, (
        f"{where} has a section {ambiguity} but REGISTER in {rel(REGISTER_CODE)} has no such "
        f"entry: add it there too")
    assert ambiguity in SPEC_REGISTER, (
        f"REGISTER in {rel(REGISTER_CODE)} has {ambiguity} but {where} has no section "
        f"'### {ambiguity} — ...' for it")
    assert len(SPEC_REGISTER[ambiguity]) == 1, f"{where} has {ambiguity} more than once"
    section = SPEC_REGISTER[ambiguity][0]
    entry = CODE_REGISTER[ambiguity]
    problems = []
    if field(section, "Rule") != entry["rule"]:
        problems.append(f"rule: code says {entry['rule']!r}, spec says {field(section, 'Rule')!r}")
    if field(section, "Default") != entry["default"]:
        problems.append(f"default: code says {entry['default']!r}, "
                        f"spec says {field(section, 'Default')!r}")
    listed = readings_listed(section)
    if sorted(listed) != sorted(entry["readings"]):
        problems.append(f"readings: code has {sorted(entry['readings'])}, spec lists {sorted(listed)}")
    assert not problems, f"{ambiguity} differs between {rel(REGISTER_CODE)} and {where}: " + \
        "; ".join(problems)


def test_register_default_readings_exist():
    bad = [f"{k} default {e['default']!r} not among {e['readings']}"
           for k, e in CODE_REGISTER.items() if e["default"] not in e["readings"]]
    assert not bad, "; ".join(bad)
