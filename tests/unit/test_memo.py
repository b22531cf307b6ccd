"""tilelang.memo.ByIdentity: one computation an object, by identity, bounded."""

from tilelang.memo import ByIdentity


class Obj:
    pass


def test_a_value_is_made_once_an_object_and_answers_only_for_that_object() -> None:
    memo, made = ByIdentity(), []
    a, b = Obj(), Obj()
    assert memo.get(a, lambda: made.append("a") or 1) == 1
    assert memo.get(a, lambda: made.append("a again") or 2) == 1
    assert memo.get(b, lambda: made.append("b") or 3) == 3
    assert made == ["a", "b"]


def test_a_full_memo_starts_again_and_recomputes() -> None:
    memo = ByIdentity(limit=2)
    objs = [Obj() for _ in range(3)]
    for i, o in enumerate(objs):
        memo.get(o, lambda i=i: i)
    assert memo.get(objs[2], lambda: -1) == 2  # kept after the clear
    assert memo.get(objs[0], lambda: -1) == -1  # cleared: made again
