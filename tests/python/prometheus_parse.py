"""Reads the Prometheus text format on stdin with Prometheus's own parser and prints its samples
as JSON: [{"name": ..., "labels": {...}, "value": ...}, ...]. A text the parser refuses exits 1."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        samples.append({"name": sample.name, "labels": dict(sample.labels), "value": sample.value})
json.dump(samples, sys.stdout)
