#!/usr/bin/python3
"""Checks that a generated text is one JSON value valid under a JSON schema.

    validate_json.py SCHEMA.json TEXT_FILE

Uses Debian's python3-jsonschema (the reference validator of issue 27), with the format checker on
so that date, time and uuid strings are checked where the validator can. Exit status 0 when valid;
otherwise 1 and the reason on stdout.
"""
import json
import sys

import jsonschema


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        text = f.read()
    try:
        instance = json.loads(text)
    except json.JSONDecodeError as e:
        print(f"not JSON ({e}): {text!r}")
        return 1
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        print(f"invalid: {errors[0].message} at {list(errors[0].path)}: {text!r}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
