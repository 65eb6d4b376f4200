"""An independent judge of emitted schemas: Python `jsonschema` (Draft 2020-12).

Reads one JSON document on stdin: {"cases": [{"schema": ..., "instances": [...]}, ...]}.
Checks every schema against the 2020-12 meta-schema, then writes on stdout
{"verdicts": [[true, false, ...], ...]}, one list per case.
"""

import json
import sys

from jsonschema import Draft202012Validator


def main() -> None:
    doc = json.load(sys.stdin)
    verdicts = []
    for case in doc["cases"]:
        Draft202012Validator.check_schema(case["schema"])
        validator = Draft202012Validator(case["schema"])
        verdicts.append([validator.is_valid(x) for x in case["instances"]])
    json.dump({"verdicts": verdicts}, sys.stdout)


if __name__ == "__main__":
    main()
