"""The framework adapters over the core: the PettingZoo AEC environment (`aec`, whose classes the
``xinjiang_v0`` / ``changchun_v0`` pages expose) and its Parallel-API view (`parallel`),
registration in PettingZoo's and Gymnasium's registries (`registration`), the single-agent
Gymnasium environment (`gym_env`) and the opponent policies it resolves by name (`policies`),
the ``rgb_array`` picture of the table (`picture`), and batched play for learners (`vector`,
`workers`). They read the game only through the engine, the rule sets and the encoder.
"""
