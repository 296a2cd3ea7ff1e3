"""Training commands (CleanRL-shaped, importable; the guide is docs/training.md).

- `training.paired`: behaviour-cloning rows of four heuristic players, with paired rollouts;
- `training.bc`: behaviour cloning of the heuristic (with an advantage head from the rollouts);
- `training.duplicate`: the gate, batched duplicate play 1-vs-3 or four agents;
- `training.ppo`: PPO self-play with action masking, from a BC checkpoint;
- `training.evaluate`: duplicate evaluation of one to four agents;
- `training.export`: a shippable copy of a checkpoint;
- `training.rllib_example`: PPO through RLlib's PettingZoo wrapper.

`training.rollout` plays the training games; `training.cli` holds what the commands share (flags
from an ``Args`` dataclass by tyro, one-line errors and exit codes, logging, progress bars, run
directories, metrics and the learning curve).
"""
