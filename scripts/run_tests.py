#!/usr/bin/env python3
"""Runs every tgc test suite (Catch2 unit tests, lit regression tests) and ends with one line 'N passed, N failed'.

Each suite writes JUnit XML; the counts come from those files, so they are exact whatever the suites print.
Usage: scripts/run_tests.py [BUILD_DIR]   (exit status 1 when any test failed or a suite could not run)
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = "/usr/lib/llvm-19/build/utils/lit/lit.py"


def count_junit(path):
    passed = failed = skipped = 0
    failures = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("classname", "") + "." + case.get("name", "")
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(name)
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, failures


def run_suite(name, command, xml):
    print(f"== {name}: {' '.join(command)}", flush=True)
    if os.path.exists(xml):
        os.remove(xml)
    result = subprocess.run(command, cwd=ROOT)
    if not os.path.exists(xml):
        print(f"{name}: no results (exit status {result.returncode})")
        return 0, 1, 0
    passed, failed, skipped, failures = count_junit(xml)
    for f in failures:
        print(f"  FAILED: {f}")
    if result.returncode != 0 and failed == 0:
        print(f"{name}: exit status {result.returncode} without a failed test")
        failed += 1
    print(f"{name}: {passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return passed, failed, skipped


def ubsan_param(build):
    """The UndefinedBehaviorSanitizer build beside BUILD (BUILD-ubsan, made by scripts/test.sh), for lit."""
    ubsan = os.path.join(build + "-ubsan", "bin")
    if os.path.exists(os.path.join(ubsan, "tgc")):
        return ["--param", "ubsan_bin=" + ubsan]
    print(f"note: no UBSan build at {ubsan}; fuzz/ubsan.test is skipped (scripts/test.sh builds it)")
    return []


def pyenv_param(build):
    """The virtual environment with onnx and onnxruntime (test/onnx/setup_venv.sh), for the ONNX comparisons."""
    python = os.path.join(build, "pyenv", "bin", "python")
    if os.path.exists(python):
        return ["--param", "pyenv=" + python]
    print(f"note: no Python environment at {python}; the ONNX comparison tests are skipped (test/onnx/setup_venv.sh)")
    return []


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    out = os.path.join(build, "test-results")
    os.makedirs(out, exist_ok=True)
    suites = [
        ("unit", [os.path.join(build, "bin", "tgc-unittests"), "-r", "junit", "-o",
                  os.path.join(out, "unit.xml")], os.path.join(out, "unit.xml")),
        ("lit", [sys.executable, LIT, "-sv", os.path.join(build, "test", "lit"), "--xunit-xml-output",
                 os.path.join(out, "lit.xml")] + ubsan_param(build) + pyenv_param(build), os.path.join(out, "lit.xml")),
    ]
    total_passed = total_failed = total_skipped = 0
    for name, command, xml in suites:
        p, f, s = run_suite(name, command, xml)
        total_passed += p
        total_failed += f
        total_skipped += s
    print(f"{total_passed} passed, {total_failed} failed, {total_skipped} skipped")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
