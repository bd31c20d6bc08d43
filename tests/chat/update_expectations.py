#!/usr/bin/python3
"""Fills in the expected results of tests/chat/data/jinja_features.json from the Jinja2 reference.

Run after adding or changing a case:  /usr/bin/python3 tests/chat/update_expectations.py
Each case gets "expected" (the rendered text) or "expected_error" (the Python exception, as
"Type: message"). The tests check sinter against these and the live reference against them too.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "data", "jinja_features.json")


def main():
    with open(PATH, encoding="utf-8") as f:
        cases = json.load(f)
    for case in cases:
        case.pop("expected", None)
        case.pop("expected_error", None)
    env = dict(os.environ, TZ="UTC")
    output = subprocess.run(
        ["/usr/bin/python3", os.path.join(HERE, "hf_reference.py"), PATH], capture_output=True, text=True, check=True, env=env
    ).stdout
    for case, result in zip(cases, json.loads(output)):
        if result["ok"]:
            case["expected"] = result["text"]
        else:
            case["expected_error"] = result["error"]
    with open(PATH, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases updated", file=sys.stderr)


if __name__ == "__main__":
    main()
