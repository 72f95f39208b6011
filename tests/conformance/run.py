"""Run the official MCP conformance suite's client scenarios against ``client.py``.

Two pinned suites (tests/interop/package.json, installed by tests/interop/install.sh):

- ``stable``: @modelcontextprotocol/conformance 0.1.16, every client scenario (26);
- ``2026``: 0.2.0-alpha.12, the client scenarios the 2026-07-28 revision requires
  (``--requirements 2026-07-28``, 32), each run at the 2026-07-28 wire.

Scenarios run one by one, two at a time (all at once, Python clients on a 2-core machine miss
the suite's 30 s limit). ``expected-failures.json`` lists the scenarios known to fail, each
with why; any other failure fails the run, and so does an expected failure that now passes
(so the list cannot go stale).

Usage::

    python tests/conformance/run.py                 # both suites
    python tests/conformance/run.py --suite 2026 --scenario auth/scope-step-up
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
INTEROP = HERE.parent / "interop"
NODE = INTEROP / "node_modules" / "node" / "bin" / "node"
SUITES = {
    "stable": INTEROP / "node_modules" / "conformance-stable" / "dist" / "index.js",
    "2026": INTEROP / "node_modules" / "conformance-next" / "dist" / "index.js",
}
SPEC_VERSION = {"stable": None, "2026": "2026-07-28"}


@dataclass(frozen=True)
class Outcome:
    suite: str
    scenario: str
    passed: bool
    seconds: float
    detail: str


def _node_env() -> dict[str, str]:
    env = dict(os.environ)
    env["NODE_OPTIONS"] = f"--require {INTEROP / 'loopback.cjs'}"
    return env


def list_scenarios(suite: str) -> list[str]:
    """The client scenarios a suite runs, as the suite itself lists them."""
    args = [str(NODE), str(SUITES[suite]), "list", "--client"]
    if suite == "2026":
        args += ["--requirements", "2026-07-28"]
    out = subprocess.run(args, capture_output=True, text=True, check=True, env=_node_env()).stdout
    names: list[str] = []
    in_clients = suite == "stable"
    for line in out.splitlines():
        if line.startswith("Client scenarios"):
            in_clients = True
            continue
        if suite == "2026" and in_clients and not line.startswith("  - "):
            if names:
                break
            continue
        if in_clients and line.startswith("  - "):
            names.append(line[4:].split(" ")[0])
    return names


def run_scenario(suite: str, scenario: str, output: Path) -> Outcome:
    """Run one scenario; passed when the suite prints its overall verdict as passed."""
    client = f"{sys.executable} {HERE / 'client.py'}"
    args = [str(NODE), str(SUITES[suite]), "client", "--command", client, "--scenario", scenario]
    args += ["-o", str(output)]
    if SPEC_VERSION[suite]:
        args += ["--spec-version", str(SPEC_VERSION[suite])]
    started = time.monotonic()
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, env=_node_env(), timeout=120, check=False
        )
        text = done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        text = "the suite did not finish within 120 s"
    passed = "OVERALL: PASSED" in text
    failed_checks = [
        line.strip() for line in text.splitlines() if "❌" in line or "FAILURE" in line
    ]
    return Outcome(
        suite, scenario, passed, time.monotonic() - started, "; ".join(failed_checks)[:300]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=[*SUITES, "all"], default="all")
    parser.add_argument("--scenario", action="append", help="run only this scenario")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios at a time (default 2)")
    parser.add_argument("--verbose", action="store_true", help="print failed checks")
    args = parser.parse_args(argv)
    if not NODE.exists():
        print("conformance: run tests/interop/install.sh first", file=sys.stderr)
        return 2
    expected: dict[str, dict[str, str]] = json.loads((HERE / "expected-failures.json").read_text())
    suites = list(SUITES) if args.suite == "all" else [args.suite]
    work = [
        (suite, name)
        for suite in suites
        for name in list_scenarios(suite)
        if not args.scenario or name in args.scenario
    ]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        outcomes = list(
            pool.map(lambda job: run_scenario(job[0], job[1], Path(tmp) / job[0]), work)
        )
    problems = 0
    for suite in suites:
        rows = [o for o in outcomes if o.suite == suite]
        passed = sum(o.passed for o in rows)
        print(f"\n== {suite}: {passed}/{len(rows)} scenarios passed")
        for o in rows:
            known = expected.get(suite, {}).get(o.scenario)
            if o.passed and known:
                verdict = "PASS (listed as expected to fail: remove it)"
                problems += 1
            elif o.passed:
                verdict = "PASS"
            elif known:
                verdict = f"expected failure: {known}"
            else:
                verdict = "FAIL"
                problems += 1
            print(f"  {o.scenario:45} {verdict:10} {o.seconds:5.1f}s")
            if not o.passed and (args.verbose or not known) and o.detail:
                print(f"      {o.detail}")
    total = sum(o.passed for o in outcomes)
    print(f"\nconformance: {total}/{len(outcomes)} passed, {problems} unexpected")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
