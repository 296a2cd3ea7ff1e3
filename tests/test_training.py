"""Training commands (training/): the shared command line (tyro flags, exit codes, one-line
errors, progress bars), tiny BC and PPO runs, PPO from a BC checkpoint with an advantage head,
learning curves, the shipped checkpoints by name, duplicate evaluation."""

from __future__ import annotations

import ast
import csv
import dataclasses
import importlib
import inspect
import itertools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.network import PRIOR_ROWS, load_checkpoint
from agents.torch_agent import TorchAgent
from mahjong_env.features import ANALYSIS_CHANNELS
from mahjong_env.observation import NUM_CHANNELS
from training import bc, ppo
from training.cli import curve_figure, parse_args
from training.evaluate import duplicate_eval, format_table
from training.rollout import OpponentPool, heuristic_dataset

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

ROOT = Path(__file__).absolute().parents[1]
COMMANDS = ("paired", "bc", "duplicate", "ppo", "evaluate", "export", "rllib_example")
REQUIRED = {"paired": ["--out", "x.npz"], "duplicate": ["--candidate", "heuristic"], "export": ["a.pt", "b.pt"]}
"""The flags each command cannot run without."""


def logged_tags(run_dir: Path) -> set[str]:
    with (run_dir / "metrics.csv").open() as f:
        return {row["tag"] for row in csv.DictReader(f)}


def logged_history(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    history: dict[str, list[tuple[int, float]]] = {}
    with (run_dir / "metrics.csv").open() as f:
        for row in csv.DictReader(f):
            history.setdefault(row["tag"], []).append((int(row["step"]), float(row["value"])))
    return history


def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of a dataclass."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body  # type: ignore[attr-defined]
    return {
        node.target.id: inspect.cleandoc(after.value.value)
        for node, after in itertools.pairwise(body)
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
    }


def command(name: str):
    return importlib.import_module(f"training.{name}")


def run_command(name: str, argv: list[str], capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``python -m training.NAME ARGV``, in this process."""
    try:
        command(name).main(argv)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ---------------------------------------------------------------------- command line


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_the_same_help_with_every_field_documented(name, capsys):
    code, out, _ = run_command(name, ["--help"], capsys)
    assert code == 0 and out.startswith(f"usage: python -m training.{name} ")
    assert "options" in out and "-h, --help" in out
    text = " ".join(out.replace("│", " ").split())
    docs = field_docs(command(name).Args)
    for field in dataclasses.fields(command(name).Args):
        assert docs.get(field.name), f"{name}.Args.{field.name} has no docstring"
        assert " ".join(docs[field.name].split()) in text, field.name
        if name != "export" or field.name not in ("source", "target"):
            assert "--" + field.name.replace("_", "-") in text


@pytest.mark.parametrize("name", COMMANDS)
def test_an_unknown_flag_exits_2_with_one_line_naming_it(name, capsys):
    code, out, err = run_command(name, [*REQUIRED.get(name, []), "--no-such-flag", "3"], capsys)
    assert code == 2 and not out
    assert "--no-such-flag" in one_error_line(err)


@pytest.mark.parametrize("name", [n for n in COMMANDS if n != "export"])
def test_a_bad_variant_exits_2_with_one_line_naming_it(name, capsys):
    code, _, err = run_command(name, [*REQUIRED.get(name, []), "--variant", "changchn"], capsys)
    assert code == 2 and "--variant" in one_error_line(err)


@pytest.mark.parametrize(
    ("name", "argv", "named"),
    [
        ("paired", ["--decisions", "0"], "--decisions"),
        ("paired", ["--rollout-prob", "1.5"], "--rollout-prob"),
        ("paired", ["--teacher", "random"], "--teacher"),
        ("bc", ["--epochs", "0"], "--epochs"),
        ("bc", ["--decisions", "-1"], "--decisions"),
        ("bc", ["--decisions", "many"], "--decisions"),
        ("ppo", ["--total-steps", "-5"], "--total-steps"),
        ("ppo", ["--num-envs", "64", "--num-steps", "256", "--total-steps", "100"], "--total-steps"),
        ("duplicate", ["--deals", "0"], "--deals"),
        ("duplicate", ["--rule", "no_equals_sign"], "--rule"),
        ("duplicate", ["--baseline", "torch:"], "--baseline"),
        ("evaluate", ["--hands", "0"], "--hands"),
        ("evaluate", ["--agents", "a=nonsense"], "--agents"),
        ("rllib_example", ["--iterations", "0"], "--iterations"),
    ],
)
def test_a_bad_value_exits_2_with_one_line_naming_it_before_anything_is_created(
    name, argv, named, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    extra = ["--out-dir", "runs"] if name in ("bc", "ppo") else REQUIRED.get(name, [])
    code, out, err = run_command(name, [*extra, *argv], capsys)
    assert code == 2 and not out
    assert named in one_error_line(err)
    assert not list(tmp_path.iterdir())


@pytest.fixture
def a_file(tmp_path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a checkpoint")
    return path


@pytest.mark.parametrize(
    ("name", "argv", "named"),
    [
        ("paired", ["--out", "{file}/data.npz", "--decisions", "10"], "--out"),
        ("paired", ["--out", "runs/data/"], "--out"),
        ("bc", ["--data", "missing.npz"], "--data"),
        ("bc", ["--data", "{file}"], "--data"),
        ("bc", ["--decisions", "10", "--save-path", "{file}/bc.pt"], "--save-path"),
        ("ppo", ["--init", "missing.pt"], "--init"),
        ("ppo", ["--init", "{file}"], "--init"),
        ("ppo", ["--save-path", "{file}/ppo.pt"], "--save-path"),
        ("duplicate", ["--candidate", "torch:missing.pt"], "--candidate"),
        ("duplicate", ["--candidate", "torch:no_such_shipped_name"], "changchun, xinjiang"),
        ("evaluate", ["--agents", "mine=torch:missing.pt", "h=heuristic"], "--agents mine"),
        ("export", ["missing.pt", "out.pt"], "SOURCE"),
        ("export", ["{file}", "out.pt"], "SOURCE"),
        ("rllib_example", ["--checkpoint", "{file}/rllib"], "--checkpoint"),
    ],
)
def test_a_user_error_exits_1_with_one_line_before_any_work(name, argv, named, tmp_path, a_file, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = [item.replace("{file}", a_file.name) for item in argv]
    extra = ["--out-dir", "runs"] if name in ("bc", "ppo") else []
    code, out, err = run_command(name, [*extra, *argv], capsys)
    assert code == 1 and not out
    assert named in one_error_line(err)
    assert "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == [a_file.name]  # no run directory, no output folder


def test_ppo_refuses_an_init_it_cannot_feed_before_creating_a_run_directory(
    tmp_path, bc_checkpoint, plain_bc_checkpoint, capsys
):
    out = tmp_path / "runs"
    code, _, err = run_command("ppo", ["--init", str(bc_checkpoint), "--out-dir", str(out)], capsys)
    assert code == 1 and "--no-analysis" in one_error_line(err)  # reads the analysis planes
    code, _, err = run_command(
        "ppo", ["--init", str(plain_bc_checkpoint), "--variant", "xinjiang", "--out-dir", str(out)], capsys
    )
    assert code == 1 and "'changchun', not --variant 'xinjiang'" in one_error_line(err)
    assert not out.exists()


def test_paired_makes_its_output_folder_before_any_work(tmp_path, monkeypatch, capsys):
    """Issue 24: the folder of --out exists before the (long) generation starts, and the command
    prints the path it wrote, .npz appended as numpy does."""
    from training import paired

    out = tmp_path / "runs" / "data" / "x"
    real = paired.generate

    def generate(*args, **kwargs):
        assert out.parent.is_dir(), "the generation started before the output folder was made"
        return real(*args, **kwargs)

    monkeypatch.setattr(paired, "generate", generate)
    code, stdout, err = run_command("paired", ["--decisions", "40", "--variant", "xinjiang", "--out", str(out)], capsys)
    assert code == 0, err
    assert stdout == f"{out}.npz\n" and Path(f"{out}.npz").is_file()
    assert "training.paired:" in err and "rows" in err and "%|" not in err  # the log; no bar off a terminal


def test_flags_parse_types_booleans_and_none():
    args = parse_args(
        ppo.Args,
        [
            "--variant",
            "xinjiang",
            "--total-steps",
            "123",
            "--central-critic",
            "--no-anneal-lr",
            "--target-kl",
            "None",
            "--init",
            "x.pt",
            "--learning-rate",
            "3e-4",
        ],
    )
    assert args.variant == "xinjiang" and args.total_steps == 123 and args.learning_rate == 3e-4
    assert args.central_critic is True and args.anneal_lr is False
    assert args.target_kl is None and args.init == "x.pt"
    assert parse_args(ppo.Args, []) == ppo.Args()
    rules = parse_args(command("duplicate").Args, ["--candidate", "heuristic", "--rule", "a=1", "--rule", "b=x"])
    assert rules.rule == ("a=1", "b=x")
    others = parse_args(command("duplicate").Args, ["--candidate", "heuristic", "--others", "h=heuristic", "r=random"])
    assert others.others == ("h=heuristic", "r=random")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_bars_show_on_a_terminal_unless_no_progress(tmp_path):
    import fcntl
    import struct
    import termios

    def stderr_on_a_terminal(*flags: str) -> str:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        argv = [sys.executable, "-m", "training.duplicate", "--candidate", "heuristic", "--deals", "1", *flags]
        proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        stdout = proc.stdout.read().decode()
        assert proc.wait(timeout=120) == 0 and "points/hand" in stdout  # the table on stdout, the bar elsewhere
        return b"".join(chunks).decode(errors="replace")

    shown = stderr_on_a_terminal()
    assert "duplicate changchun" in shown and "4/4" in shown and "hand" in shown
    assert "duplicate changchun" not in stderr_on_a_terminal("--no-progress")


# ---------------------------------------------------------------------- data and rollouts


def test_tile_planes_are_small_integers():
    """`heuristic_dataset` stores rows 0-135 as uint8: they must be integers 0..255."""
    from agents import RandomAgent
    from mahjong_env import changchun_v0

    env, agent = changchun_v0.env(), RandomAgent(0)
    for seed in range(3):
        env.reset(seed=seed)
        for _name in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            planes = obs["observation"][: NUM_CHANNELS - 3]
            assert np.array_equal(planes, np.round(planes)) and planes.min() >= 0 and planes.max() <= 255
            env.step(None if termination or truncation else agent.act(obs))


def test_heuristic_dataset_is_integral_and_labels_are_legal():
    data = heuristic_dataset("xinjiang", 256, seed=3, num_envs=8, explore=0.2)
    n = len(data["actions"])
    assert n > 50 and data["planes"].shape == (n, NUM_CHANNELS - 3, 34) and data["scalars"].shape == (n, 102)
    assert data["masks"][np.arange(n), data["actions"]].all()
    assert (data["masks"].sum(axis=1) > 1).all()
    again = heuristic_dataset("xinjiang", 256, seed=3, num_envs=8, explore=0.2)
    assert np.array_equal(again["actions"], data["actions"]) and np.array_equal(again["planes"], data["planes"])


def test_opponent_pool_validates_weights():
    with pytest.raises(ValueError, match="opponent weights"):
        OpponentPool({"heuristic": 1.0, "grandmaster": 1.0})
    with pytest.raises(ValueError, match="opponent weights"):
        OpponentPool({"heuristic": 0.0})
    pool = OpponentPool({"snapshot": 1.0})
    kind, players = pool.seating()  # no snapshot yet: pure self-play
    assert kind == "self" and players == [None] * 4


# ---------------------------------------------------------------------- tiny runs


@pytest.fixture(scope="module")
def bc_checkpoint(tmp_path_factory) -> Path:
    """A tiny BC run with the analysis planes and an advantage head from paired rollouts."""
    out = tmp_path_factory.mktemp("bc")
    args = bc.Args(
        variant="changchun",
        decisions=768,
        num_envs=8,
        epochs=2,
        batch_size=128,
        channels=8,
        blocks=1,
        hidden=32,
        out_dir=str(out),
        progress=False,
        rollout_prob=0.3,
    )
    return bc.train(args)


@pytest.fixture(scope="module")
def plain_bc_checkpoint(tmp_path_factory) -> Path:
    """A tiny BC run on the plain observation (``--no-analysis``), as PPO starts from, from data
    with paired rollouts: so it has an advantage head, which PPO drops."""
    out = tmp_path_factory.mktemp("plain_bc")
    args = bc.Args(
        variant="changchun",
        decisions=768,
        num_envs=8,
        epochs=2,
        batch_size=128,
        channels=8,
        blocks=1,
        hidden=32,
        out_dir=str(out),
        progress=False,
        rollout_prob=0.3,
        analysis=False,
        tensorboard=False,
    )
    return bc.train(args)


def test_tiny_bc_run_writes_checkpoint_log_and_curve(bc_checkpoint):
    run_dir = bc_checkpoint.parent
    assert bc_checkpoint.is_file() and (run_dir / "learning_curve.png").stat().st_size > 1000
    assert list(run_dir.glob("events.out.tfevents.*"))
    tags = logged_tags(run_dir)
    assert {"bc/train_loss", "bc/val_accuracy", "bc/advantage_loss", "bc/val_agreement_discard"} <= tags
    payload = torch.load(bc_checkpoint, weights_only=True)
    meta = payload["metadata"]
    assert meta["trainer"] == "bc" and 0.0 <= meta["val"]["accuracy"] <= 1.0 and meta["rollout_rows"] > 0
    assert payload["arch"] == {
        "channels": 8,
        "blocks": 1,
        "hidden": 32,
        "extra_planes": len(ANALYSIS_CHANNELS),
        "advantage_head": True,
        "prior_planes": False,
    }
    assert payload["obs_shape"] == [NUM_CHANNELS + len(ANALYSIS_CHANNELS), 34]


def test_bc_agent_with_analysis_and_advantages_plays_the_default_env_from_its_view(bc_checkpoint):
    """The shipped kind of agent: computes its analysis planes from agents.agent_info alone."""
    import agents
    from mahjong_env import changchun_v0

    agent = agents.load(f"torch:{bc_checkpoint}")
    assert agent.needs_info
    env = changchun_v0.env()
    env.reset(seed=5)
    decisions = 0
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        action = None if termination or truncation else agent.act(obs, agents.agent_info(env, name))
        if action is not None:
            assert obs["action_mask"][action] == 1
            decisions += 1
        env.step(action)
    assert decisions > 10
    with pytest.raises(ValueError, match="agent_info"):
        env.reset(seed=6)
        agent.act(env.observe(env.agent_selection), None)


def test_tiny_bc_run_with_a_teacher_and_prior_planes(tmp_path):
    """BC of a heuristic with options on prior planes: the checkpoint reads 12 extra planes, logs
    how often it departs from the default heuristic, and plays the default env from its view."""
    import agents
    from mahjong_env import changchun_v0

    args = bc.Args(
        variant="changchun",
        decisions=768,
        num_envs=8,
        epochs=1,
        batch_size=128,
        channels=8,
        blocks=1,
        hidden=32,
        out_dir=str(tmp_path),
        progress=False,
        rollout_prob=0.0,
        advantage_head=False,
        tensorboard=False,
        teacher='heuristic?kongs="always"',
        prior_planes=True,
        departure_weight=5.0,
    )
    path = bc.train(args)
    payload = torch.load(path, weights_only=True)
    assert payload["arch"]["prior_planes"] is True
    assert payload["obs_shape"] == [NUM_CHANNELS + len(ANALYSIS_CHANNELS) + PRIOR_ROWS, 34]
    assert 0.0 <= payload["metadata"]["val"]["departure_rate"] <= 1.0
    agent = agents.load(f"torch:{path}")
    env = changchun_v0.env()
    env.reset(seed=2)
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        action = None if termination or truncation else agent.act(obs, agents.agent_info(env, name))
        assert action is None or obs["action_mask"][action] == 1
        env.step(action)
    with pytest.raises(ValueError, match="--teacher"):
        bc.train(bc.Args(variant="changchun", teacher="random", out_dir=str(tmp_path / "bad"), progress=False))
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("central_critic", [False, True])
def test_tiny_ppo_run_from_bc(tmp_path, plain_bc_checkpoint, central_critic, caplog):
    """Issue 24: PPO starts from a --no-analysis BC checkpoint that has an advantage head (it
    crashed in the first rollout): the head is dropped with a one-line note."""
    assert load_checkpoint(plain_bc_checkpoint)[0].advantage_head
    caplog.set_level("INFO", logger="training")
    args = ppo.Args(
        variant="changchun",
        total_steps=256,
        num_envs=4,
        num_steps=32,
        init=str(plain_bc_checkpoint),
        gate_deals=2,
        central_critic=central_critic,
        snapshot_every=1,
        out_dir=str(tmp_path),
        progress=False,
        opp_heuristic=0.4,
        opp_random=0.2,
        opp_snapshot=0.2,
        opp_self=0.2,
    )
    path = ppo.train(args)
    run_dir = path.parent
    assert path.is_file() and (run_dir / "learning_curve.png").stat().st_size > 1000
    assert {"charts/SPS", "losses/approx_kl", "charts/env_decisions_per_s", "losses/value_loss"} <= logged_tags(run_dir)
    network, meta = load_checkpoint(path)
    gate = torch.load(run_dir / "ppo_candidate.pt", weights_only=True)["metadata"]["gate"]
    assert set(gate) == {"final_vs_heuristic", "final_ci", "init_vs_heuristic", "passed"}
    assert gate["passed"] == (gate["final_vs_heuristic"] > gate["init_vs_heuristic"])
    if gate["passed"]:
        assert meta["metadata"]["trainer"] == "ppo" and meta["metadata"]["global_step"] == 256
        assert not network.advantage_head
    else:  # the gate kept the --init policy, as it is
        assert meta["metadata"]["trainer"] == "bc"
    assert not any(name.startswith("net.") for name in network.state_dict())  # no critic in the policy
    TorchAgent(network, device="cpu")
    notes = [r for r in caplog.records if r.name == "training.ppo" and "advantage head" in r.getMessage()]
    assert len(notes) == 1 and "\n" not in notes[0].getMessage()
    assert not load_checkpoint(run_dir / "ppo_candidate.pt")[0].advantage_head


def test_ppo_init_drops_only_the_advantage_head(plain_bc_checkpoint):
    """The network PPO trains from is the BC checkpoint's trunk, policy and value heads, bit for bit."""
    original, _ = load_checkpoint(plain_bc_checkpoint)
    network, meta, dropped = ppo.load_init(plain_bc_checkpoint, "changchun")
    assert dropped and not network.advantage_head and meta["variant"] == "changchun"
    kept = network.state_dict()
    assert set(kept) < set(original.state_dict())
    assert all(torch.equal(kept[k], original.state_dict()[k]) for k in kept)
    obs = torch.rand(5, NUM_CHANNELS, 34)
    with torch.no_grad():
        for a, b in zip(network(obs), original(obs)):
            assert torch.equal(a, b)


def test_ppo_is_reproducible_in_process_and_with_rollout_workers(tmp_path):
    paths = []
    for run, workers in enumerate((0, 0, 2)):
        args = ppo.Args(
            variant="xinjiang",
            total_steps=128,
            num_envs=4,
            num_steps=32,
            channels=8,
            blocks=1,
            hidden=32,
            out_dir=str(tmp_path / str(run)),
            progress=False,
            tensorboard=False,
            rollout_workers=workers,
        )
        paths.append(ppo.train(args))
    first, *others = (torch.load(p, weights_only=True)["state_dict"] for p in paths)
    assert all(torch.equal(first[k], other[k]) for other in others for k in first)
    assert not list(paths[0].parent.glob("events.out.tfevents.*"))  # CSV only
    assert (paths[0].parent / "metrics.csv").is_file()
    # one update: its learning curve still shows every metric's point (issue 24: it was blank)
    history = logged_history(paths[0].parent)
    tags = ["losses/approx_kl", "losses/entropy", "losses/value_loss", "charts/SPS"]
    assert all(len(history[t]) == 1 for t in tags)
    assert_curves_show_their_points(curve_figure(history, tags, "one update", smooth=10), 1)
    assert (paths[0].parent / "learning_curve.png").stat().st_size > 1000


def assert_curves_show_their_points(figure, points: int) -> None:
    for ax in figure.axes:
        drawn = [line for line in ax.get_lines() if len(line.get_xdata()) == points]
        assert drawn, "a panel without its data"
        assert all(line.get_marker() not in (None, "None", "", " ") for line in drawn), "points without markers"
        assert all(line.get_alpha() in (None, 1.0) for line in drawn)


@pytest.mark.parametrize("points", [1, 2, 60])
def test_learning_curves_show_short_runs(points, tmp_path):
    from training.cli import plot_curves

    history = {"a/x": [(k * 100, float(k % 3)) for k in range(points)], "b/y": [(k, -1.0) for k in range(points)]}
    figure = curve_figure(history, ["a/x", "b/y", "c/never_logged"], "t", smooth=10)
    assert len(figure.axes) == 2  # a panel per logged tag
    drawn = [line for line in figure.axes[0].get_lines() if len(line.get_xdata()) == points]
    if points <= 2:
        assert_curves_show_their_points(figure, points)
    else:  # long runs: the raw line faint, its moving average on top
        assert len(figure.axes[0].get_lines()) == 2 and drawn[0].get_alpha() == 0.35
    assert plot_curves(history, ["a/x"], tmp_path / "c.png", "t").stat().st_size > 1000


# ---------------------------------------------------------------------- shipped checkpoints by name


def test_shipped_checkpoints_load_by_name_from_any_folder(tmp_path, monkeypatch):
    """Issue 24: torch:changchun and torch:xinjiang come from the package data, whatever the working
    directory; a folder of the same name there changes nothing; paths still work."""
    import importlib.resources

    import agents

    assert agents.shipped_checkpoints() == ("changchun", "xinjiang")
    shipped = Path(str(importlib.resources.files("agents") / "checkpoints" / "changchun.pt"))
    repository_path = ROOT / "agents" / "checkpoints" / "changchun.pt"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "changchun").mkdir()
    assert agents.checkpoint_path("changchun") == shipped
    for variant in ("changchun", "xinjiang"):
        agent = agents.load(f"torch:{variant}?greedy=false")
        assert agent.variant == variant and not agent.greedy
    assert agents.resolve_spec("torch:changchun") == "torch:changchun"
    assert agents.describe("torch:xinjiang", None)["sources"][0]["sha256"] == agents.file_sha256(
        shipped.with_name("xinjiang.pt")
    )
    assert agents.load(f"torch:{repository_path}").variant == "changchun"  # a path, as before
    assert TorchAgent.from_checkpoint("xinjiang", device="cpu").variant == "xinjiang"
    with pytest.raises(ValueError, match=r"shipped ones are changchun, xinjiang"):
        agents.load("torch:changchn")
    for path_like in ("./changchun", "changchun.pt", "sub/changchun"):  # paths, not names
        assert not agents.is_checkpoint_name(path_like)
        with pytest.raises(ValueError, match=r"does not exist|is not"):
            agents.load(f"torch:{path_like}")


def test_a_command_plays_a_shipped_checkpoint_by_name_from_another_folder(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "training.evaluate",
            "--variant",
            "xinjiang",
            "--hands",
            "4",
            "--agents",
            "shipped=torch:xinjiang",
            "h=heuristic",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split() == ["agent", "points/hand", "95%", "CI", "win", "rate", "hands"]
    assert {line.split()[0] for line in proc.stdout.splitlines()[1:]} == {"shipped", "h"}


# ---------------------------------------------------------------------- evaluation


def test_duplicate_eval_rotates_seats_and_reports_a_table():
    table = duplicate_eval("xinjiang", {"h": "heuristic", "r": "random"}, hands=8, seed=1)
    assert set(table) == {"h", "r"}
    assert table["h"]["deals"] == 4 and table["h"]["hands"] == 16  # two seatings of A B A B
    assert abs(table["h"]["mean"] + table["r"]["mean"]) < 1e-9  # zero-sum with two agents
    text = format_table(table)
    assert "points/hand" in text and "h" in text
    with pytest.raises(ValueError):
        duplicate_eval("xinjiang", {}, hands=4)
