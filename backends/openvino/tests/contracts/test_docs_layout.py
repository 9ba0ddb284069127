"""The docs describe what is on disk: the contributors' layout names every file, and links resolve.

The "## Layout" section of backends/openvino/README.md holds one fenced block. Each of
its lines starts with a path relative to backends/openvino/ (a folder ends in "/"),
then a description; a folder's line may name files it holds, as words ending in .py,
.cpp or .h. ``tests/`` is named as a folder only, and ``__init__.py`` files may be left
out. The tests compare that block with the files git tracks, and check that every
relative link in README.md, docs/*.md and backends/openvino/README.md reaches a file,
and a heading when it names one. README.md and docs/*.md state no dates, except
docs/performance.md, which dates each benchmark's run.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

REPO_ROOT = Path(__file__).resolve().parents[4]
PACKAGE = "backends/openvino"
CONTRIBUTORS_README = REPO_ROOT / PACKAGE / "README.md"
TESTS_FOLDER = "tests/"
OPTIONAL_FILE_NAME = "__init__.py"
# A file named in a folder's description: a word such as "state.py", "crc32.cpp" or "kv_cache.h".
FILE_NAME = re.compile(r"[\w.-]+\.(?:py|cpp|h)")
# Characters around a file name in prose: "(crc32.h", "blob.py,", "`npy_file.cpp`:".
PUNCTUATION = "()[]{},;:`'\""

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
INLINE_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
CODE_SPAN = re.compile(r"`+[^`]*`+")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def tracked_package_files() -> Set[str]:
    """Paths relative to backends/openvino/ of every file git tracks there; skips outside a git checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", PACKAGE],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except FileNotFoundError:
        pytest.skip("git is not installed: the layout is compared with the files git tracks")
    if listed.returncode != 0:
        pytest.skip(f"{REPO_ROOT} is not a git checkout: the layout is compared with the files git tracks")
    prefix = PACKAGE + "/"
    return {path[len(prefix) :] for path in listed.stdout.split("\0") if path.startswith(prefix)}


def layout_block(readme_text: str) -> List[str]:
    """The lines of the fenced block in the "## Layout" section."""
    lines = readme_text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Layout"), None)
    if start is None:
        pytest.fail(f"{CONTRIBUTORS_README} has no '## Layout' section")
    block: List[str] = []
    inside = False
    for line in lines[start + 1 :]:
        if not inside and line.startswith("## "):
            break
        if FENCE.match(line):
            if inside:
                return block
            inside = True
            continue
        if inside:
            block.append(line)
    pytest.fail(f"the '## Layout' section of {CONTRIBUTORS_README} has no closed fenced block")


def file_names_in(description: str) -> Iterator[str]:
    for word in description.split():
        word = word.strip(PUNCTUATION)
        if FILE_NAME.fullmatch(word):
            yield word


def documented_layout(block: List[str]) -> Tuple[Set[str], Set[str], List[str]]:
    """(files, folders, lines that do not start with a path) named by the layout block."""
    files: Set[str] = set()
    folders: Set[str] = set()
    malformed: List[str] = []
    for line in block:
        if not line.strip():
            continue
        if line[0].isspace():
            malformed.append(line)
            continue
        path, _, description = line.partition(" ")
        if path.endswith("/"):
            folders.add(path)
            if path != TESTS_FOLDER:
                files.update(path + name for name in file_names_in(description))
        else:
            files.add(path)
    return files, folders, malformed


def parent_folders(path: str) -> Iterator[str]:
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        yield "/".join(parts[:depth]) + "/"


@pytest.fixture(scope="module")
def layout() -> Tuple[Set[str], Set[str], List[str]]:
    return documented_layout(layout_block(CONTRIBUTORS_README.read_text(encoding="utf-8")))


def test_layout_lines_start_with_a_path(layout):
    _, _, malformed = layout
    assert not malformed, "lines of the Layout block must start with a path:\n" + "\n".join(malformed)


def test_layout_names_every_tracked_file(layout):
    files, _, _ = layout
    tracked = tracked_package_files()
    described = {
        path for path in tracked if not path.startswith(TESTS_FOLDER) and Path(path).name != OPTIONAL_FILE_NAME
    }
    missing = sorted(described - files)
    assert not missing, f"files under {PACKAGE}/ that the Layout of {CONTRIBUTORS_README.name} does not name:\n" + (
        "\n".join(missing)
    )


def test_layout_names_no_file_that_does_not_exist(layout):
    files, folders, _ = layout
    tracked = tracked_package_files()
    tracked_folders = {folder for path in tracked for folder in parent_folders(path)}
    stale = sorted((files - tracked) | (folders - tracked_folders))
    assert not stale, f"the Layout of {CONTRIBUTORS_README.name} names what git does not track under {PACKAGE}/:\n" + (
        "\n".join(stale)
    )


def test_layout_names_the_tests_folder(layout):
    _, folders, _ = layout
    assert TESTS_FOLDER in folders, f"the Layout of {CONTRIBUTORS_README.name} does not name {TESTS_FOLDER}"


def documentation_files() -> List[Path]:
    return [REPO_ROOT / "README.md", CONTRIBUTORS_README, *sorted((REPO_ROOT / "docs").glob("*.md"))]


def prose_lines(text: str) -> Iterator[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield line


def relative_links(text: str) -> Iterator[str]:
    for line in prose_lines(text):
        reference = REFERENCE_LINK.match(line)
        if reference:
            yield reference.group(1)
        for target in INLINE_LINK.findall(CODE_SPAN.sub("", line)):
            yield target


def heading_anchors(text: str) -> Set[str]:
    """GitHub's anchors for the headings of a Markdown text: lower case, punctuation dropped, spaces as "-"."""
    anchors: Set[str] = set()
    seen: Dict[str, int] = {}
    for line in prose_lines(text):
        heading = HEADING.match(line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(2).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def broken_links(document: Path) -> List[str]:
    broken: List[str] = []
    for target in relative_links(document.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (document.parent / path_part).resolve() if path_part else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked.read_text(encoding="utf-8")):
            broken.append(f"{target}: {linked.name} has no heading with that anchor")
    return broken


@pytest.mark.parametrize("document", documentation_files(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_relative_links_reach_a_file_and_heading(document):
    broken = broken_links(document)
    assert not broken, f"links in {document.relative_to(REPO_ROOT)} that lead nowhere:\n" + "\n".join(broken)


# An ISO date: 2026-12-04, or a month such as 2026-12; not part of a longer number or a version.
ISO_DATE = re.compile(r"(?<![\w.-])(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?(?![\d-])")
# A file name or path that holds a date, such as benchmarks/results/seq2seq-2026-12-06.md.
DATED_FILE_NAME = re.compile(r"[\w./-]*\d{4}-\d\d(?:-\d\d)?[\w./-]*\.[A-Za-z]+\b")
# The one page that gives its figures with the day they were measured on.
DATED_PAGE = "performance.md"


def undated_documents() -> List[Path]:
    return [
        REPO_ROOT / "README.md",
        *(path for path in sorted((REPO_ROOT / "docs").glob("*.md")) if path.name != DATED_PAGE),
    ]


def stated_dates(text: str) -> List[str]:
    """The lines that state an ISO date once link targets and file names are left out."""
    found: List[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if REFERENCE_LINK.match(line):
            continue
        kept = INLINE_LINK.sub(lambda link: link.group(0)[: link.start(1) - link.start(0)], line)
        kept = DATED_FILE_NAME.sub("", kept)
        dates = ISO_DATE.findall(kept)
        if dates:
            found.append(f"line {number}: {', '.join(dates)}: {line.strip()}")
    return found


@pytest.mark.parametrize("document", undated_documents(), ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_docs_state_no_dates(document):
    """README.md and docs/ state how things are, in the present tense; only docs/performance.md dates its runs.

    A run's date belongs to its file in benchmarks/results/ (history in history-2026-12.md), so
    a page that dates a fact is a lab notebook that goes stale. A date inside a link's target
    or a file name (``[results](../benchmarks/results/seq2seq-2026-12-06.md)``,
    ``history-2026-12.md``) names a file and is allowed; any other ISO date (2026-12-04, or
    a month such as 2026-12), in prose, tables or code blocks, fails. Versions such as
    2026.4.1 are not dates.
    """
    dates = stated_dates(document.read_text(encoding="utf-8"))
    assert not dates, (
        f"{document.relative_to(REPO_ROOT)} states dates; say it in the present tense or link to the dated results:\n"
        + "\n".join(dates)
    )
