"""The engine's output is pinned: digests of everything a user sees (observations, masks,
rewards, infos, views, ``state()``, records, `VectorMahjong` steps) over 200 seeded hands per
variant, profile and policy (random and heuristic play), computed with the pure-Python core
(``tests/golden/exactness.json``, `mahjong_env.tools.exactness`): at ``c4bad42``, and since
then rewritten once, for the amended C14 (``changchun/mil2024/heuristic`` alone changed: four
winds now make a three-wind 旋风杠 plus an addition, which the heuristic declares).

A change meant to keep the output bit-identical, the compiled core above all, must keep every
digest. A change of behaviour on purpose rewrites the file with ``python -m
mahjong_env.tools.exactness --hands 200 --write tests/golden/exactness.json`` in the same
commit, and says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mahjong_env.tools import exactness

GOLDEN = json.loads((Path(__file__).parent / "golden" / "exactness.json").read_text())


def test_the_golden_file_covers_every_variant_profile_and_policy():
    expected = {f"{v}/{p}/{kind}" for v, p in exactness.cases() for kind in (*exactness.POLICIES, "vector")}
    assert set(GOLDEN["digests"]) == expected
    assert GOLDEN["hands"] >= 200


@pytest.mark.parametrize("key", sorted(GOLDEN["digests"]))
def test_the_digest_is_unchanged(key):
    variant, profile, kind = key.split("/")
    if kind == "vector":
        digest = exactness.digest_vector(variant, profile, 16, GOLDEN["vector_steps"])
    else:
        digest = exactness.digest_hands(variant, profile, kind, range(GOLDEN["hands"]))
    assert digest == GOLDEN["digests"][key]


def test_the_digest_sees_a_different_deal_and_a_different_policy():
    one = exactness.digest_hands("changchun", "seed", "random", range(2))
    assert one != exactness.digest_hands("changchun", "seed", "random", range(1, 3))
    assert one != exactness.digest_hands("changchun", "seed", "heuristic", range(2))
    with pytest.raises(ValueError, match="policy"):
        exactness.digest_hands("changchun", "seed", "greedy", range(1))
