"""The lean view's plan: steps, hot zone, pins, determinism and monotonic stubs."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stowage.context_engine.view import ViewItem, plan_view


def output(tokens: int, pins: tuple[tuple[int, int], ...] = ()) -> ViewItem:
    return ViewItem(tokens, cold_tokens=tokens - 40, pins=pins)


def batch(tokens: int = 50) -> ViewItem:
    return ViewItem(tokens, batch=True)


def session(n: int, out_tokens: int = 1000) -> list[ViewItem]:
    """``n`` tool steps: an assistant call then its output."""
    items = [ViewItem(500)]  # the user's request
    for _ in range(n):
        items += [batch(), output(out_tokens)]
    return items


def test_nothing_is_stubbed_inside_the_hot_zone():
    plan = plan_view(session(5), hot_tokens=10_000, step_tokens=2000)
    assert plan.stubbed == [] and plan.steps == 0 and plan.hot_start == 0


def test_cold_outputs_wait_for_a_full_step_then_go_all_at_once():
    # 1050 tokens a step, hot zone 3000: outputs leave it one by one, a step needs 3 cold ones (2880 >= 2500)
    plans = [plan_view(session(n), hot_tokens=3000, step_tokens=2500) for n in range(1, 12)]
    stubbed_counts = [len(p.stubbed) for p in plans]
    assert stubbed_counts == sorted(stubbed_counts)  # never fewer
    jumps = [b - a for a, b in zip(stubbed_counts, stubbed_counts[1:], strict=False) if b != a]
    assert jumps and all(j >= 3 for j in jumps), stubbed_counts  # several outputs per step, never one by one
    final = plans[-1]
    assert all(i < final.hot_start for i in final.stubbed)


def test_the_newest_tool_batch_stays_even_when_bigger_than_the_hot_zone():
    items = session(3) + [batch(), output(9000), output(9000)]
    plan = plan_view(items, hot_tokens=2000, step_tokens=500)
    newest_batch = len(items) - 3
    assert plan.hot_start <= newest_batch
    assert not set(plan.stubbed) & {len(items) - 1, len(items) - 2}


def test_a_pinned_output_is_passed_over_and_stubbed_by_the_first_step_after_its_pin():
    items = session(2)
    pinned_index = len(items) - 1
    items[pinned_index] = output(1000, pins=((pinned_index, pinned_index + 6),))
    grown = items + [x for _ in range(10) for x in (batch(), output(1000))]
    early = plan_view(grown[: pinned_index + 6], hot_tokens=1500, step_tokens=1500)  # the pin still holds
    assert pinned_index not in early.stubbed and early.stubbed  # others went, the pinned one stayed
    assert early.pinned == [pinned_index]
    late = plan_view(grown, hot_tokens=1500, step_tokens=1500)
    assert pinned_index in late.stubbed


def test_near_the_trigger_a_deep_step_stubs_cold_outputs_below_a_full_step():
    items = session(12)  # 12,500 tokens; with a 3,000-token hot zone a regular step needs 20,000 cold tokens
    regular = plan_view(items, hot_tokens=3000, step_tokens=20_000)
    assert regular.stubbed == [] and regular.steps == 0
    deep = plan_view(items, hot_tokens=3000, step_tokens=20_000, deep_at=9000, deep_min=1000)
    assert deep.stubbed and deep.deep_steps >= 1 and deep.steps == deep.deep_steps
    assert all(i < deep.hot_start for i in deep.stubbed)
    sent = sum(i.tokens for i in items) - sum(items[i].cold_tokens for i in deep.stubbed)
    assert sent < 9000 + 2100  # back under the limit but for what grew since the last step
    # under the limit, or less than deep_min to take out: nothing
    assert plan_view(items, hot_tokens=3000, step_tokens=20_000, deep_at=14_000, deep_min=1000).stubbed == []
    assert plan_view(items, hot_tokens=3000, step_tokens=20_000, deep_at=9000, deep_min=50_000).stubbed == []


def test_items_that_cannot_be_stubbed_never_are():
    items = [ViewItem(5000) for _ in range(20)] + session(2)
    plan = plan_view(items, hot_tokens=1000, step_tokens=100)
    assert all(i >= 20 for i in plan.stubbed)


sizes = st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4000), st.booleans()), min_size=1, max_size=80)


def _items(spec: list[tuple[int, int, bool]]) -> list[ViewItem]:
    items = []
    for position, (kind, tokens, pinned) in enumerate(spec):
        if kind == 0:
            items.append(batch(tokens))
        elif kind == 1:
            items.append(ViewItem(tokens))
        else:
            items.append(output(tokens + 41, ((position, position + 7),) if pinned else ()))
    return items


def assert_grows_in_steps(items: list[ViewItem], **knobs: Any) -> None:
    """The plans of every prefix of ``items``: deterministic, once stubbed always stubbed, and between steps
    the stubs unchanged (the view only grows at its end) with each stub's step kept."""
    previous = None
    for end in range(1, len(items) + 1):
        plan = plan_view(items[:end], **knobs)
        assert plan == plan_view(items[:end], **knobs)
        assert all(items[i].cold_tokens > 0 for i in plan.stubbed)
        if previous is not None:
            assert set(previous.stubbed) <= set(plan.stubbed)
            if plan.steps == previous.steps:
                assert plan.stubbed == previous.stubbed
            assert all(previous.stubbed_at[i] == plan.stubbed_at[i] for i in previous.stubbed)
        previous = plan


@settings(max_examples=150, deadline=None)
@given(sizes, st.integers(500, 6000), st.integers(200, 6000), st.sampled_from([0, 3000, 20_000]))
def test_stubs_are_monotonic_and_stable_between_steps(spec, hot, step, deep_at):
    assert_grows_in_steps(_items(spec), hot_tokens=hot, step_tokens=step, deep_at=deep_at, deep_min=300)


def test_with_release_reach_an_output_released_long_ago_waits_unless_worth_the_prefix_a_step_rewrites():
    """The cache arithmetic: stubbing an old output rewrites the request from it to the end (a write is 12.5 reads)."""
    items = session(2)
    old = len(items) - 1
    items[old] = output(1000, pins=((old, old + 40),))  # pinned for 20 steps, then released
    grown = items + [x for _ in range(30) for x in (batch(), output(1000))]
    plain = plan_view(grown, hot_tokens=1500, step_tokens=1500)
    assert old in plain.stubbed  # today: the first step after its pin reaches back to it
    # worth 960 tokens; by the time it is released the fresh outputs are several thousand tokens past it
    held = plan_view(grown, hot_tokens=1500, step_tokens=1500, release_reach=2)
    assert old not in held.stubbed and set(held.stubbed) == set(plain.stubbed) - {old}
    assert old in plan_view(grown, hot_tokens=1500, step_tokens=1500, release_reach=1000).stubbed  # worth it
    assert held.stubbed_at and all(i in held.stubbed_at for i in held.stubbed)


@settings(max_examples=100, deadline=None)
@given(sizes, st.integers(500, 6000), st.integers(200, 6000), st.sampled_from([0, 3000]), st.sampled_from([1, 4]))
def test_with_release_reach_stubs_stay_monotonic_and_stable_between_steps(spec, hot, step, deep_at, reach):
    knobs = {"hot_tokens": hot, "step_tokens": step, "deep_at": deep_at, "deep_min": 300, "release_reach": reach}
    assert_grows_in_steps(_items(spec), **knobs)


def test_an_early_item_leaves_the_hot_zone_when_superseded_and_goes_with_the_next_step():
    items = session(6, out_tokens=600)
    stale = 2  # the first output, superseded by the assistant message at 5
    items[stale] = ViewItem(600, cold_tokens=560, superseded_at=5, early=True)
    kept = plan_view(items, hot_tokens=20_000, step_tokens=500)
    assert kept.stubbed == [stale] and kept.steps == 1  # from inside the hot zone, nothing else cold
    assert kept.stubbed_at[stale] == 5 and plan_view(items[:5], hot_tokens=20_000, step_tokens=500).stubbed == []
    plain = [ViewItem(i.tokens, i.cold_tokens, i.batch) for i in items]
    assert plan_view(plain, hot_tokens=20_000, step_tokens=500).stubbed == []  # not early: the hot zone keeps it


def test_with_payback_steps_are_fewer_and_larger_by_the_cache_arithmetic():
    items = session(80, out_tokens=700)
    plain = plan_view(items, hot_tokens=3000, step_tokens=1500)
    cached = plan_view(items, hot_tokens=3000, step_tokens=1500, payback=11.5)
    # pace 660 cold tokens a turn: a step waits for sqrt(2 x 11.5 x 660 x 3000), about 6,700 tokens, not 1,500
    assert 0 < cached.steps < plain.steps / 3
    assert abs(len(cached.stubbed) - len(plain.stubbed)) <= 12  # the same outputs go, in fewer steps
    assert (
        plan_view(items, hot_tokens=3000, step_tokens=10_000, payback=11.5).steps
        == plan_view(items, hot_tokens=3000, step_tokens=10_000).steps
    )  # never below step_tokens


@settings(max_examples=100, deadline=None)
@given(sizes, st.integers(500, 6000), st.integers(200, 6000), st.sampled_from([0, 3000]), st.sampled_from([2, 11.5]))
def test_with_payback_and_early_items_stubs_stay_monotonic_and_stable_between_steps(spec, hot, step, deep_at, payback):
    items = [
        ViewItem(i.tokens, i.cold_tokens, i.batch, superseded_at=n + 3, early=True)
        if i.cold_tokens and n % 3 == 0
        else i
        for n, i in enumerate(_items(spec))
    ]
    knobs = {"hot_tokens": hot, "step_tokens": step, "deep_at": deep_at, "deep_min": 300, "payback": payback}
    assert_grows_in_steps(items, **knobs)
