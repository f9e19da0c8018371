"""Schemathesis hooks for draftline's schema-driven fuzz run (tests/fuzz/openapi.sh).

The built-in positive_data_acceptance check expects every schema-valid request
to succeed. A draftline tool may refuse a schema-valid request for a reason the
schema cannot express (an unknown vendor, a unit the item is not stocked in, a
date in the past, a draft without any idempotency key): such refusals carry
details of kind "rule". This check keeps the built-in's promise where it
applies: a schema-valid request must never be refused for a reason the schema
states (a detail of kind "schema"), nor with a 400 that names no rule.
"""

import schemathesis


@schemathesis.check
def schema_valid_requests_are_refused_only_for_rules(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if response.status_code != 400:
        return None
    try:
        details = response.json().get("error", {}).get("details") or []
    except ValueError:
        raise AssertionError("a 400 answer that is not the JSON error envelope")
    schema_issues = [d for d in details if d.get("kind") != "rule"]
    if not details or schema_issues:
        raise AssertionError(
            "a request valid by the published schema was refused for a reason the schema states: "
            + repr(schema_issues or response.text[:500])
        )
    return None
