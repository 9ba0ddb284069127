"""workarounds.py names every fix, and every fix names its entry (see that module)."""

import functools
import importlib
import inspect
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
import test_openvino_bugs
from executorch_openvino.conversion.rewrites import REWRITES
from executorch_openvino.conversion.translators import FOR_OLDER_FRONTENDS, TRANSLATORS
from executorch_openvino.partition.argument_rules import ARGUMENT_RULES
from executorch_openvino.passes import PASSES
from executorch_openvino.workarounds import (
    NOT_A_WORKAROUND_ATTRIBUTE,
    WORKAROUND_ATTRIBUTE,
    WORKAROUNDS,
    works_around,
)

PACKAGE = "executorch_openvino"


def _function(fix: Callable) -> Callable:
    """The function behind a list entry: through functools.partial and functools.wraps."""
    while isinstance(fix, functools.partial):
        fix = fix.func
    return inspect.unwrap(fix)


def _dotted_name(function: Callable) -> str:
    return f"{function.__module__}.{function.__qualname__}".removeprefix(f"{PACKAGE}.")


def _resolve(dotted_name: str) -> Any:
    """The object a registry fix names, such as "passes.accurate_log1p.accurate_log1p"."""
    parts = dotted_name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            value: Any = importlib.import_module(".".join([PACKAGE, *parts[:split]]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[split:]:
            value = getattr(value, attribute)
        return value
    raise ModuleNotFoundError(dotted_name)


def _check_runtime_fix(name: str, workaround_id: str) -> None:
    """A C++ fix, "runtime/<file>:<function>": the function is in the file, and a comment
    there names the entry as workarounds.py does."""
    path, function = name.split(":")
    source = (Path(__file__).resolve().parents[2] / path).read_text()
    assert f" {function}(" in source, f"{path} defines no {function}"
    assert f"workarounds.py: {workaround_id}" in source, f"{path} has no comment naming {workaround_id}"


def _listed_fixes() -> Dict[str, Callable]:
    """Every pass, rewrite, translation and argument rule the delegate runs, by dotted name."""
    listed: List[Callable] = [*PASSES, *REWRITES, *TRANSLATORS.values(), *FOR_OLDER_FRONTENDS.values()]
    listed += list(ARGUMENT_RULES.values())
    return {_dotted_name(_function(fix)): fix for fix in listed}


@pytest.mark.parametrize("name", sorted(_listed_fixes()))
def test_every_listed_pass_rewrite_translation_and_rule_says_what_it_works_around(name):
    fix = _listed_fixes()[name]
    ids = getattr(fix, WORKAROUND_ATTRIBUTE, None) or getattr(_function(fix), WORKAROUND_ATTRIBUTE, None)
    why_not = getattr(_function(fix), NOT_A_WORKAROUND_ATTRIBUTE, None)
    assert bool(ids) != bool(why_not), (
        f"{name}: mark it @works_around(<id in workarounds.py>) or @not_a_workaround(why)"
    )
    for workaround_id in ids or ():
        assert name in WORKAROUNDS[workaround_id].fixes, f"{workaround_id} in workarounds.py does not list {name}"


@pytest.mark.parametrize("workaround_id", sorted(WORKAROUNDS))
def test_every_registry_entry_names_fixes_that_exist_and_name_it_back(workaround_id):
    entry = WORKAROUNDS[workaround_id]
    assert entry.fixes, f"{workaround_id} names no fix"
    for name in entry.fixes:
        if name.startswith("runtime/"):
            _check_runtime_fix(name, workaround_id)
            continue
        fix = _resolve(name)
        if callable(fix):
            marks = getattr(fix, WORKAROUND_ATTRIBUTE, ())
            assert workaround_id in marks, f"{name} is not marked @works_around({workaround_id!r})"


@pytest.mark.parametrize("workaround_id", sorted(WORKAROUNDS))
def test_every_registry_entry_has_an_openvino_alone_test(workaround_id):
    assert callable(getattr(test_openvino_bugs, f"test_{workaround_id}", None)), (
        f"tests/workarounds/test_openvino_bugs.py has no test_{workaround_id}"
    )


def test_every_openvino_alone_test_belongs_to_a_registry_entry():
    tests = [name for name in vars(test_openvino_bugs) if name.startswith("test_")]
    assert sorted(name.removeprefix("test_") for name in tests if name.removeprefix("test_") not in WORKAROUNDS) == []


def test_every_registry_entry_names_the_release_it_was_seen_on_and_an_issue_or_none():
    for entry in WORKAROUNDS.values():
        assert entry.seen_on.count(".") == 2, f"{entry.id}: seen_on {entry.seen_on!r} is not a release"
        issue = entry.upstream_issue
        assert issue is None or issue.startswith("https://github.com/openvinotoolkit/openvino/issues/"), entry.id


def test_marking_a_fix_with_an_unknown_id_fails_at_import():
    with pytest.raises(KeyError, match="no_such_bug"):
        works_around("no_such_bug")
