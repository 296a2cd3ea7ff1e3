"""The rule sets: what each variant answers when the engine asks (RULES.md X1–X10, C1–C14).

This package owns the variants' rules, never the table mechanics:

- `base`: the contract (`RuleSet`: every question the engine asks, typed, with its contract),
  its result types (`TurnStart`, `Settlement`, `Fan`, `Owed`), the shared configuration fields
  and helpers (`RuleConfig`, `make_config`, profiles);
- `xinjiang`: Xinjiang Balang mahjong 巴郎新疆麻将 (config, fans, payments);
- `changchun`: Changchun mahjong 长春麻将 (config and its profiles, special groups, bao, fans).

A rule set keeps no per-hand state and never changes the game while it answers a question.
"""
