"""Agent specs and framework adapters (agents/__init__.py, agents/adapters.py): user agents
from the working directory, from a file and with keyword arguments, and a model trained with
sb3-contrib's MaskablePPO on our Gymnasium env entering a tournament directly. (The RLlib
adapter is tested with the RLlib example in tests/test_rllib.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.tournament.config import TournamentConfig
from agents.tournament.runner import TournamentError, run_tournament
from agents.tournament.storage import ResultStore

VENV_BIN = Path(sys.executable).parent

USER_AGENT = """\
import numpy as np
from agents import Agent


class FirstLegal(Agent):
    def __init__(self, offset=0, label="x", greedy=True, extra=None):
        self.offset, self.label, self.greedy, self.extra = offset, label, greedy, extra

    def act(self, observation, info=None):
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[min(self.offset, len(legal) - 1)])
"""


@pytest.mark.parametrize(
    "spec, kind, target, attribute, kwargs",
    [
        ("random", "random", "", "", ()),
        ("heuristic?seed=3", "heuristic", "", "", (("seed", 3),)),
        ("torch:run/a.pt?greedy=false", "torch", "run/a.pt", "", (("greedy", False),)),
        ("sb3:m.zip?variant=changchun", "sb3", "m.zip", "", (("variant", "changchun"),)),
        ("pkg.mod:Cls?ckpt=run/model.zip&temperature=0.5", "module", "pkg.mod", "Cls",
         (("ckpt", "run/model.zip"), ("temperature", 0.5))),
        ("dir/agent.py:Cls?label=a%26b", "file", "dir/agent.py", "Cls", (("label", "a&b"),)),
    ],
)  # fmt: skip
def test_parse_spec_forms(spec, kind, target, attribute, kwargs):
    parsed = agents.parse_spec(spec)
    assert (parsed.kind, parsed.target, parsed.attribute, parsed.kwargs) == (kind, target, attribute, kwargs)
    assert agents.parse_spec(parsed.text()) == parsed  # the canonical text parses back


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mod:Cls?", "nothing after"),
        ("mod:Cls?x", "key=value"),
        ("mod:Cls?a=1&a=2", "given twice"),
        ("mod:Cls?1a=2", "identifier"),
        ("mod:1Cls", "class name"),
        ("my-mod:Cls", "neither a module"),
        ("torch:", "needs a path"),
    ],
)
def test_malformed_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ValueError, match=message):
        agents.parse_spec(spec)


def test_a_seed_in_the_spec_wins_over_the_default():
    first, second = agents.load("random?seed=5", seed=1), agents.load("random", seed=5)
    assert first.rng.integers(1 << 30) == second.rng.integers(1 << 30)


def test_user_agent_from_a_file_with_keyword_arguments(tmp_path):
    (tmp_path / "my_agent.py").write_text(USER_AGENT)
    agent = agents.load(f"{tmp_path / 'my_agent.py'}:FirstLegal?offset=2&label=hello&extra=null")
    assert (agent.offset, agent.label, agent.extra) == (2, "hello", None)
    mask = np.zeros(182, np.int8)
    mask[[3, 5, 9]] = 1
    assert agent.act({"observation": np.zeros((1, 34)), "action_mask": mask}) == 9
    with pytest.raises(ValueError, match="keywords"):
        agents.load(f"{tmp_path / 'my_agent.py'}:FirstLegal?nosuch=1")
    with pytest.raises(ValueError, match="no file"):
        agents.load(f"{tmp_path / 'missing.py'}:FirstLegal")


def test_resolve_spec_makes_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_agent.py").write_text(USER_AGENT)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "model.zip").write_bytes(b"weights")
    resolved = agents.resolve_spec("my_agent.py:FirstLegal?extra=run/model.zip&offset=1")
    assert resolved == f"{tmp_path / 'my_agent.py'}:FirstLegal?extra={tmp_path / 'run' / 'model.zip'}&offset=1"
    assert agents.resolve_spec("random") == "random" and agents.resolve_spec("pkg.mod:Cls") == "pkg.mod:Cls"
    description = agents.describe(resolved, agents.load(resolved))
    assert {s["path"] for s in description["sources"]} == {
        str(tmp_path / "my_agent.py"),
        str(tmp_path / "run" / "model.zip"),
    }
    assert not agents.is_trusted(resolved) and agents.is_trusted("agents.heuristic:HeuristicAgent")


def test_console_script_imports_a_user_module_from_the_working_directory(tmp_path):
    """Console scripts do not put the working directory on sys.path; agents.load does."""
    (tmp_path / "my_agent.py").write_text(USER_AGENT)
    script = VENV_BIN / "mahjong-tournament"
    if not script.exists():
        pytest.skip("the console script is not installed (pip install -e .)")
    result = subprocess.run(
        [str(script), "--variant", "changchun", "--agents", "mine=my_agent:FirstLegal?offset=1", "random",
         "--deals", "1", "--workers", "0", "--db", "t.sqlite", "--quiet", "--no-report", "--export-jsonl", "h.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = json.loads((tmp_path / "h.jsonl").read_text().splitlines()[0])
    assert sorted(set(line["players"])) == ["mine", "random"] and line["players"] == line["tournament"]["seats"]


# ---------------------------------------------------------------------- SB3 MaskablePPO


@pytest.fixture(scope="module")
def sb3_model(tmp_path_factory):
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    import mahjong_env  # noqa: F401 - registers the Gymnasium ids

    torch.set_num_threads(1)
    env = gym.make("mahjong_env/Changchun-v0", opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    return path


def test_an_sb3_model_plays_through_agents_load(sb3_model):
    agent = agents.load(f"sb3:{sb3_model}?variant=changchun")
    assert agent.variant == "changchun"
    from mahjong_env import changchun_v0

    env = changchun_v0.env()
    env.reset(seed=3)
    for name in env.agent_iter(max_iter=40):
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        action = agent.act(obs, agents.agent_info(env, name))
        assert obs["action_mask"][action] == 1  # MaskablePPO plays only legal actions
        env.step(action)


def test_an_sb3_model_enters_a_tournament(sb3_model, tmp_path):
    config = TournamentConfig(
        variant="changchun", agents=(("ppo", f"sb3:{sb3_model}?variant=changchun"), ("rand", "random")), deals=1
    )
    summary = run_tournament(config, tmp_path / "t.sqlite", workers=0)
    assert summary.hands_played == 2 and not summary.forfeits and not summary.failures
    with ResultStore(tmp_path / "t.sqlite") as store:
        entrant = store.entrants()["ppo"]
    assert entrant["isolated"] and entrant["variant"] == "changchun"  # an SB3 zip unpickles: own process
    assert entrant["sources"][0]["path"] == str(sb3_model.resolve())


def test_a_model_trained_for_the_other_variant_is_refused_unless_allowed(sb3_model, tmp_path):
    entrants = (("ppo", f"sb3:{sb3_model}?variant=xinjiang"), ("rand", "random"))
    config = TournamentConfig(variant="changchun", agents=entrants, deals=1)
    with pytest.raises(TournamentError, match=r"trained for xinjiang.*--allow-variant-mismatch"):
        run_tournament(config, tmp_path / "t.sqlite", workers=0, isolate="none")
    summary = run_tournament(config, tmp_path / "t.sqlite", workers=0, isolate="none", allow_variant_mismatch=True)
    assert summary.hands_played == 2
