"""The tools on top of the environments: game records and their checks (`records`), the HTML
replay viewer (`html_replay`, its page assets in ``static/``), the narrator of replays and
terminal play (`narrator`), terminal play (`play`), the ``mahjong-env`` command (`cli`), the
benchmark (`bench`, ``mahjong-bench``) and the soak (`soak`). Nothing in the core or the
adapters imports from here (the package re-exports `records.replay` as `mahjong_env.replay`).
"""
