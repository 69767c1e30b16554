"""The functional API's plan cache: one build per distinct call, reused after; bounded."""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")

import rime


def _qkv(s):
    rng = np.random.default_rng(s)
    return [rng.standard_normal((1, 2, s, 16)).astype(np.float16) for _ in range(3)]


def test_a_loop_builds_once_per_distinct_call():
    rime.plan_cache_clear()
    q, k, v = _qkv(16)
    for _ in range(5):
        o, stats = rime.sdpa(q, k, v, causal=True)
        rime.sdpa_backward(q, k, v, o, o, stats, causal=True)
    info = rime.plan_cache_info()
    assert info["misses"] == 2 and info["hits"] == 8 and info["entries"] == 2
    rime.sdpa(q, k, v, causal=False)  # another option: another plan
    q2, k2, v2 = _qkv(24)  # another shape: another plan
    rime.sdpa(q2, k2, v2, causal=True)
    rime.sdpa(q.transpose(0, 2, 1, 3).copy().transpose(0, 2, 1, 3), k, v, causal=True)  # strides
    assert rime.plan_cache_info()["misses"] == 5


def test_capacity_drops_the_least_recently_used():
    rime.plan_cache_clear()
    rime.set_plan_cache_capacity(2)
    try:
        a, b, c = _qkv(16), _qkv(20), _qkv(24)
        rime.sdpa(*a)
        rime.sdpa(*b)
        rime.sdpa(*a)  # a is now more recent than b
        rime.sdpa(*c)  # evicts b
        assert rime.plan_cache_info()["entries"] == 2
        rime.sdpa(*a)
        assert rime.plan_cache_info()["hits"] == 2
        rime.sdpa(*b)
        assert rime.plan_cache_info()["misses"] == 4
    finally:
        rime.set_plan_cache_capacity(256)
        rime.plan_cache_clear()
