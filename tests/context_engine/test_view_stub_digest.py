"""The lines a view stub keeps of its output (view.stub_lines_chars): what agents quote, within a budget."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.context_engine.view.stub_digest import LISTING, READ, RUN, SEARCH, digest, output_kind


def bash(command: str) -> str:
    return json.dumps({"command": command})


SOURCE = "\n".join(
    [
        "import os",
        "from django.utils.encoding import filepath_to_uri",
        "",
        "class Storage:",
        '    """Base storage."""',
        *[f"    value_{i} = compute(value_{i - 1})  # filler line {i}" for i in range(1, 60)],
        "    def get_available_name(self, name, max_length=None):",
        *[f"        step_{i} = name.strip()  # body {i}" for i in range(40)],
        "    async def save(self, name, content):",
        "        return name",
    ]
)


def test_a_file_read_keeps_its_definition_lines_first_then_imports_in_file_order():
    kept = digest("bash", bash("cat django/core/files/storage.py"), SOURCE, 400)
    assert kept is not None and kept.kind == READ
    assert kept.lines == (
        "import os",
        "from django.utils.encoding import filepath_to_uri",
        "class Storage:",
        "    def get_available_name(self, name, max_length=None):",
        "    async def save(self, name, content):",
    )
    assert kept.render().splitlines()[0] == "definitions (5):"


def test_numbered_listings_keep_their_line_numbers():
    numbered = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(SOURCE.splitlines(), 1))
    kept = digest("bash", bash("nl -ba django/core/files/storage.py | sed -n '1,200p'"), numbered, 200)
    assert kept is not None and kept.kind == READ
    assert "     4  class Storage:" in kept.lines
    assert all(len(line) + 1 for line in kept.lines) and sum(len(x) + 1 for x in kept.lines) <= 200
    assert kept.of == 5 and len(kept.lines) < 5  # the budget left some out, and the heading says of how many


def test_a_search_keeps_its_matching_lines_in_order_within_the_budget():
    output = "\n".join(f"django/db/models/query_{i}.py:{10 * i}:    qs = self._iterable_class(self)" for i in range(40))
    kept = digest("bash", bash("grep -rn _iterable_class django/"), output, 300)
    assert kept is not None and kept.kind == SEARCH
    assert kept.lines == tuple(output.splitlines()[:4])  # 64 to 65 characters each: four fit in 300
    assert kept.render().startswith(f"matching lines ({len(kept.lines)} of 40):")


def test_a_failing_run_keeps_the_error_and_the_innermost_frame():
    output = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "reproduce_issue.py", line 12, in <module>',
            "    main()",
            *[
                f'  File "django/db/models/mod_{i}.py", line {i}, in helper_{i}' + f"\n    helper_{i + 1}()"
                for i in range(30)
            ],
            '  File "django/db/models/sql/compiler.py", line 1140, in execute_sql',
            "    cursor = self.connection.cursor()",
            "django.db.utils.OperationalError: no such table: auth_user",
        ]
    )
    kept = digest("bash", bash("python reproduce_issue.py"), output, 300)
    assert kept is not None and kept.kind == RUN
    assert kept.lines[-1] == "django.db.utils.OperationalError: no such table: auth_user"
    assert '  File "django/db/models/sql/compiler.py", line 1140, in execute_sql' in kept.lines
    assert "    cursor = self.connection.cursor()" in kept.lines


def test_a_test_run_keeps_the_failing_assertion():
    output = "\n".join(
        [*[f"test_case_{i} (tests.TestX) ... ok" for i in range(80)], "FAIL: test_slug (tests.TestX)"]
        + ["    self.assertEqual(slugify(value), 'a-b')", "AssertionError: 'a_b' != 'a-b'", "Ran 81 tests", "FAILED"]
    )
    kept = digest("bash", bash("./tests/runtests.py utils_tests"), output, 400)
    assert kept is not None and kept.kind == RUN
    assert {"FAIL: test_slug (tests.TestX)", "AssertionError: 'a_b' != 'a-b'"} <= set(kept.lines)
    assert "    self.assertEqual(slugify(value), 'a-b')" in kept.lines


def test_a_listing_keeps_entries_and_hermes_tools_are_known_by_name():
    listing = "total 80\n" + "\n".join(f"drwxr-xr-x 2 root root 4096 Oct 24 2024 app_{i}" for i in range(50))
    kept = digest("bash", bash("cd /testbed && ls -la tests/"), listing, 200)
    assert kept is not None and kept.kind == LISTING and not any(line.startswith("total") for line in kept.lines)
    assert output_kind("search_files", "{}", []) == SEARCH and output_kind("read_file", "{}", []) == READ


def test_host_json_results_are_read_through_their_output_field():
    result = json.dumps({"output": "src/a.py:3:def parse_header(x):\n" * 30, "exit_code": 0})
    kept = digest("terminal", bash("rg -n parse_header"), result, 200)
    assert kept is not None and kept.lines == ("src/a.py:3:def parse_header(x):",)  # one line, not thirty


def test_nothing_is_kept_without_a_budget_for_unknown_outputs_or_small_ones():
    assert digest("bash", bash("cat a.py"), SOURCE, 0) is None
    assert digest("bash", bash("echo hi"), "hello world\n" * 100, 400) is None  # nothing agents quote
    assert digest("bash", bash("cat a.py"), "def f():\n    return 1\n", 400) is None  # a quarter is 6 chars


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["cat a.py", "grep -rn x .", "python t.py", "ls", "sed -n '1,9p' a.py", "make"]),
    st.lists(
        st.sampled_from(
            [
                "def f(x):",
                "class A(B):",
                "import os",
                "a.py:3:x = 1",
                'File "a.py", line 3, in f',
                "Traceback (most recent call last):",
                "ValueError: bad",
                "    x = 1",
                "\tlong " * 60,
                "",
            ]
        ),
        max_size=80,
    ),
    st.integers(0, 2000),
)
def test_a_digest_is_deterministic_within_budget_and_made_of_output_lines(command, lines, budget):
    output = "\n".join(lines)
    kept = digest("bash", bash(command), output, budget)
    assert kept == digest("bash", bash(command), output, budget)
    if kept is None:
        return
    assert sum(len(line) + 1 for line in kept.lines) <= min(budget, len(output) // 4)
    shown = [line.replace("\t", "  ").rstrip() for line in lines]
    assert all(
        line in shown or (line.endswith("…") and any(s.startswith(line[:-1]) for s in shown)) for line in kept.lines
    )
    assert len(set(kept.lines)) == len(kept.lines) <= kept.of
