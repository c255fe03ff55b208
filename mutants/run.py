#!/usr/bin/env python3
"""Semantic mutants of fencing's guarantee.

Each mutant removes one element of the guarantee (the fence row's share lock, the fence's
token/lease predicate, the row guard, registration's strictly-greater rule, the counter reseed, a
check of the trigger, ...) from a copy of the committed tree, never from the working tree and never
through a switch in production code. The suites that should notice run against that copy; a mutant
is killed when at least one test fails. A mutant whose text no longer occurs in the code fails the
run: the mutant list must follow the code.

Usage: mutants/run.py [--only NAME ...] [--chaos | --chaos-only] [--tests PATTERN ...] [--list]
--chaos adds the chaos short profile's fenced runs (guarded, trigger, rewrite) for the mutants
marked "chaos"; --chaos-only runs those and not the mutant's default tests. The fencing-off controls
are not run: they do not use the library, so no mutant can change their outcome.
Writes mutants/last-run.md (the table for docs/reliability.md) and mutants/last-run-failures.md
(the first lines of each failure message) and exits non-zero if a mutant survived or no longer
applies.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_mutants():
    with open(os.path.join(HERE, "mutants.json"), encoding="utf-8") as f:
        return json.load(f)


def copy_committed_tree():
    target = tempfile.mkdtemp(prefix="fencing-mutant-")
    archive = subprocess.run(
        ["git", "-C", ROOT, "archive", "HEAD"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    return target


def apply(tree, mutant):
    # One element of the guarantee may live in more than one place ("also": further edits of the
    # same form), e.g. a check made both by the public entry point and by the class behind it.
    for edit in [mutant] + mutant.get("also", []):
        path = os.path.join(tree, edit["file"])
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found = text.count(edit["find"])
        expected = edit.get("count", 1)
        if found != expected:
            raise SystemExit(
                f"mutant {mutant['name']} no longer applies: {edit['file']} contains its text "
                f"{found} times, expected {expected}; update mutants/mutants.json"
            )
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(edit["find"], edit["replace"]))


CHAOS_TESTS = (
    "dev/fencing/it/ChaosShortTest#guardedStatementsCommitNoStaleWrite"
    "+theTriggerCommitsNoStaleWrite+rewrittenPlainSqlCommitsNoStaleWrite"
)


def failed_tests(tree):
    failed = {}
    ran = 0
    for report in glob.glob(os.path.join(tree, "*", "target", "*-reports", "TEST-*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            ran += 1
            problem = case.find("failure")
            if problem is None:
                problem = case.find("error")
            if problem is not None:
                cls = case.get("classname", "").rsplit(".", 1)[-1]
                name = case.get("name", "")
                message = (problem.get("message") or problem.text or "").strip()
                failed[f"{cls}.{name.split('(')[0]}"] = " ".join(message.split())[:600]
    return dict(sorted(failed.items())), ran


def run_suites(tree, mutant, chaos, chaos_only, only_tests):
    modules = list(mutant["modules"])
    tests = [] if chaos_only else list(only_tests or mutant["tests"])
    if (chaos or chaos_only) and mutant.get("chaos", False):
        modules.append("integration-tests")
        tests.append(CHAOS_TESTS)
    command = [
        "mvn", "-B", "-q", "verify", "-pl", ",".join(modules), "-am",
        "-Dspotless.check.skip=true", "-Dmaven.test.failure.ignore=true",
        "-Dsurefire.failIfNoSpecifiedTests=false", "-Dfailsafe.failIfNoSpecifiedTests=false",
        "-Dtest=" + ",".join(tests), "-Dit.test=NONE",
    ]
    started = time.monotonic()
    build = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if build.returncode != 0 and "BUILD FAILURE" in build.stdout + build.stderr:
        compile_error = "COMPILATION ERROR" in build.stdout
        if compile_error:
            raise SystemExit(f"mutant {mutant['name']} does not compile:\n{build.stdout[-3000:]}")
    killers, ran = failed_tests(tree)
    if ran == 0:
        raise SystemExit(f"mutant {mutant['name']}: no test ran\n{build.stdout[-3000:]}")
    return killers, ran, seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--chaos", action="store_true", help="also run the chaos short profile")
    parser.add_argument(
        "--chaos-only", action="store_true", help="only the chaos short profile's fenced runs"
    )
    parser.add_argument(
        "--tests", nargs="*", default=[], help="run these tests instead of the mutant's own"
    )
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    mutants = [m for m in load_mutants() if not args.only or m["name"] in args.only]
    if args.chaos_only:
        mutants = [m for m in mutants if m.get("chaos", False)]
    if args.list:
        for m in mutants:
            print(f"{m['name']}: {m['element']}")
        return 0
    rows = []
    messages = []
    survived = []
    for mutant in mutants:
        tree = copy_committed_tree()
        try:
            apply(tree, mutant)
            killers, ran, seconds = run_suites(
                tree, mutant, args.chaos, args.chaos_only, args.tests
            )
        finally:
            shutil.rmtree(tree, ignore_errors=True)
        verdict = f"killed by {len(killers)}" if killers else "SURVIVED"
        print(f"[mutant] {mutant['name']}: {verdict} of {ran} tests ({seconds:.0f} s)", flush=True)
        for k, message in killers.items():
            print(f"           {k}: {message[:300]}", flush=True)
            messages.append(f"- `{mutant['name']}` / `{k}`: {message}")
        if not killers:
            survived.append(mutant["name"])
        shown = ", ".join(f"`{k}`" for k in list(killers)[:6])
        if len(killers) > 6:
            shown += f" and {len(killers) - 6} more"
        rows.append(f"| `{mutant['name']}` | {mutant['element']} | {shown or '**survived**'} |")
    table = "| mutant | element removed | tests that killed it |\n|---|---|---|\n" + "\n".join(rows)
    with open(os.path.join(HERE, "last-run.md"), "w", encoding="utf-8") as f:
        f.write(table + "\n")
    with open(os.path.join(HERE, "last-run-failures.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(messages) + "\n")
    print(table)
    if survived:
        print("survivors (missing tests): " + ", ".join(survived), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
