"""Start-up time of the ``glove-mcp`` command against a bare interpreter.

Measured side by side in one run, in rounds whose order is shuffled, each a fresh process
(``sys.executable`` and the ``glove-mcp`` console script installed beside it, so the same
interpreter and site-packages):

- baseline: ``python -c pass``;
- ``glove-mcp --help``;
- ``glove-mcp status`` (the built-in catalogue) and ``glove-mcp status --catalogue FILE`` (two
  servers in a TOML file), with a token file holding one login (the default store), in a
  temporary ``GLOVE_HOME`` and ``XDG_CONFIG_HOME``;
- ``glove-mcp --version``;
- ``chat: first line``: until ``glove-mcp chat --script FILE`` prints its first line (the
  session and how to resume it), the wait a person sees before anything happens; it loads the
  MCP SDK, so it has no target: on a terminal it shows "starting…" meanwhile;
- ``chat: you> prompt``: until ``glove-mcp chat --script FILE``, on a pseudo-terminal (stdin,
  stdout and stderr), shows its ``you>`` prompt — when a person can start typing (issue 31:
  within 0.3 s, or within 15x ``python -c pass`` on a loaded machine); the model and MCP SDKs
  load behind it;
- ``glove-mcp status --store keyring`` is left out: the OS keyring's own import costs what it
  costs.

The figure is each command's median wall time divided by the baseline's median. Target
(issue 21): ``glove-mcp --help`` within 3x of ``python -c pass``.

Run: ``python bench/startup.py [--rounds 15]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 3.0
PROMPT_SECONDS = 0.3  # issue 31: the chat's prompt within 0.3 s…
PROMPT_RATIO = 15.0  # …or within 15x python -c pass on a loaded machine

CATALOGUE = """
[[servers]]
id = "notion"
name = "Notion"
description = "Pages and databases."
url = "https://mcp.notion.com/mcp"

[[servers]]
id = "linear"
name = "Linear"
description = "Issues and projects."
url = "https://mcp.linear.app/mcp"
"""


def _token_file(path: Path) -> None:
    now = time.time()
    state = {
        "server_url": "https://mcp.notion.com/mcp",
        "tokens": {
            "access_token": "bench-access",
            "refresh_token": "bench-refresh",
            "token_type": "Bearer",
            "expires_at": now + 3600,
            "obtained_at": now,
        },
    }
    doc = {"format": "glove-mcp-oauth", "version": 1, "entries": {"notion": state}}
    path.write_text(json.dumps(doc), encoding="utf-8")


def _first_line(args: list[str], env: dict[str, str]) -> float:
    """Seconds until the command writes its first line to stdout (then it is stopped)."""
    started = time.perf_counter()
    with subprocess.Popen(
        args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        elapsed = time.perf_counter() - started
        process.kill()
        _, err = process.communicate()
    if not line:
        raise SystemExit(f"{' '.join(args[1:])} printed nothing: {err.decode()[-500:]}")
    return elapsed


def _prompt_on_terminal(args: list[str], env: dict[str, str]) -> float:
    """Seconds until the command shows ``you>`` on a pseudo-terminal (then it is stopped)."""
    import pty
    import select

    controller, terminal = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdin=terminal, stdout=terminal, stderr=terminal)
    os.close(terminal)
    seen = b""
    try:
        while b"you> " not in seen:
            ready, _, _ = select.select([controller], [], [], 60)
            if not ready:
                raise SystemExit(f"no prompt within 60 s: {seen.decode(errors='replace')}")
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the command ended
                chunk = b""
            if not chunk:
                raise SystemExit(f"ended before its prompt: {seen.decode(errors='replace')}")
            seen += chunk
        return time.perf_counter() - started
    finally:
        process.kill()
        process.wait()
        os.close(controller)


def _timed(args: list[str], env: dict[str, str]) -> float:
    if args[-1] == "--first-line":
        return _first_line(args[:-1], env)
    if args[-1] == "--prompt":
        return _prompt_on_terminal(args[:-1], env)
    started = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[1:])} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        # The default catalogue, in the configuration folder, and one named by --catalogue.
        (home / "config" / "glove").mkdir(parents=True)
        (home / "config" / "glove" / "servers.toml").write_text(CATALOGUE, encoding="utf-8")
        catalogue = home / "team.toml"
        catalogue.write_text(CATALOGUE, encoding="utf-8")
        _token_file(home / "oauth.json")
        script = home / "script.json"
        script.write_text('["hello"]', encoding="utf-8")
        env = {**os.environ, "GLOVE_HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
        # As installed for a user: bytecode cached (pip compiles on install; the warm-up
        # round writes it here), not recompiled from source on every start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # The console script pip installed beside this interpreter, as a user runs it; without
        # one (a bare checkout), ``-m``, which adds runpy's own imports (~4 ms).
        installed = Path(sys.executable).with_name("glove-mcp")
        cli = [str(installed)] if installed.exists() else [sys.executable, "-m", "glove_mcp.cli"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "glove-mcp --help": [*cli, "--help"],
            "glove-mcp --version": [*cli, "--version"],
            "glove-mcp status": [*cli, "status"],
            "status --catalogue": [*cli, "status", "--catalogue", str(catalogue)],
            "chat: first line": [*cli, "chat", "--script", str(script), "--first-line"],
            "chat: you> prompt": [*cli, "chat", "--script", str(script), "--prompt"],
        }
        for command in commands.values():  # warm the file cache
            _timed(command, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        order = list(commands)
        for _ in range(args.rounds):
            random.shuffle(order)
            for name in order:
                times[name].append(_timed(commands[name], env))
    base = statistics.median(times["python -c pass"])
    print(f"{'command':<20} {'median':>9} {'min':>9} {'ratio':>7}")
    ratios: dict[str, float] = {}
    for name, samples in times.items():
        median = statistics.median(samples)
        ratios[name] = median / base
        fastest = min(samples) * 1000
        print(f"{name:<20} {median * 1000:7.1f}ms {fastest:7.1f}ms {ratios[name]:6.2f}x")
    worst = ratios["glove-mcp --help"]
    verdict = "met" if worst <= TARGET else "NOT met"
    print(
        f"\nstartup: --help {ratios['glove-mcp --help']:.2f}x of python -c pass (target "
        f"{TARGET:g}x: {verdict}); status {ratios['glove-mcp status']:.2f}x (with a catalogue "
        f"file {ratios['status --catalogue']:.2f}x); chat's first line "
        f"{ratios['chat: first line']:.1f}x"
    )
    prompt = statistics.median(times["chat: you> prompt"])
    met = prompt <= PROMPT_SECONDS or ratios["chat: you> prompt"] <= PROMPT_RATIO
    print(
        f"chat prompt: you> after {prompt * 1000:.0f} ms, {ratios['chat: you> prompt']:.1f}x "
        f"of python -c pass (target {PROMPT_SECONDS:g} s or {PROMPT_RATIO:g}x, whichever is "
        f"looser: {'met' if met else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
