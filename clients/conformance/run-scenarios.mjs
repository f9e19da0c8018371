// Runs the MCP conformance scenarios that apply to draftline's tools-only,
// stateless endpoint, and decides pass or fail from each check the suite
// reports (not only from the CLI's exit code), so that a scenario can be
// required while its checks that need the suite's reference tools are known
// not to apply. README.md lists every scenario left out, and why.
//
// Usage: node run-scenarios.mjs <endpoint url> <results dir>
// Exit code: 0 if every required check passed, 1 otherwise.

import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const local = (path) => fileURLToPath(new URL(path, import.meta.url));
const STABLE = local("./node_modules/@modelcontextprotocol/conformance/dist/index.js"); // 0.1.16
const NEXT = local("./node_modules/conformance-next/dist/index.js"); // 0.2.0-alpha.12: has the 2026-07-28 scenarios

/** A check that cannot run here because it calls one of the suite's own test tools. */
const NEEDS_REFERENCE_TOOL = (tool) => ({
  reason: `needs the suite's diagnostic tool '${tool}', which a production catalogue does not contain`,
  expect: /^Not testable:/,
});
/** A check of a feature the server does not offer, which it refuses with Method not found. */
const NOT_OFFERED = (feature) => ({ reason: `the server offers no ${feature}`, expect: /-32601/ });

/**
 * One run of one scenario. `notApplicable` maps the ids of checks that may
 * fail to why they do not apply and the error they must fail with (any other
 * error is a real failure); every other check must be SUCCESS (or SKIPPED by
 * the suite itself).
 * @type {{label: string, cli: string, scenario: string, spec?: string, notApplicable?: Record<string, {reason: string, expect: RegExp}>}[]}
 */
const RUNS = [
  // 2025-11-25 (handshake revision), with the stable suite.
  { label: "server-initialize", cli: STABLE, scenario: "server-initialize" },
  { label: "ping", cli: STABLE, scenario: "ping" },
  { label: "tools-list", cli: STABLE, scenario: "tools-list" },
  { label: "dns-rebinding-protection", cli: STABLE, scenario: "dns-rebinding-protection" },
  // 2025-11-25 again with the newer suite, which also validates every message against the spec's JSON schema.
  { label: "server-initialize@2025-11-25", cli: NEXT, scenario: "server-initialize", spec: "2025-11-25" },
  { label: "ping@2025-11-25", cli: NEXT, scenario: "ping", spec: "2025-11-25" },
  { label: "tools-list@2025-11-25", cli: NEXT, scenario: "tools-list", spec: "2025-11-25" },
  // 2026-07-28 (stateless revision).
  { label: "tools-list@2026-07-28", cli: NEXT, scenario: "tools-list", spec: "2026-07-28" },
  { label: "dns-rebinding-protection@2026-07-28", cli: NEXT, scenario: "dns-rebinding-protection", spec: "2026-07-28" },
  { label: "http-header-validation@2026-07-28", cli: NEXT, scenario: "http-header-validation", spec: "2026-07-28" },
  {
    label: "server-stateless@2026-07-28",
    cli: NEXT,
    scenario: "server-stateless",
    spec: "2026-07-28",
    notApplicable: {
      "sep-2575-server-rejects-undeclared-capability": NEEDS_REFERENCE_TOOL("test_missing_capability"),
      "sep-2575-missing-capability-http-400": NEEDS_REFERENCE_TOOL("test_missing_capability"),
      "sep-2575-http-server-no-independent-requests-on-stream": NEEDS_REFERENCE_TOOL("test_streaming_elicitation"),
      "sep-2575-server-no-log-without-loglevel": NEEDS_REFERENCE_TOOL("test_logging_tool"),
    },
  },
  {
    label: "caching@2026-07-28",
    cli: NEXT,
    scenario: "caching",
    spec: "2026-07-28",
    notApplicable: {
      "sep-2549-prompts-list-caching-hints": NOT_OFFERED("prompts"),
      "sep-2549-resources-list-caching-hints": NOT_OFFERED("resources"),
      "sep-2549-resources-templates-list-caching-hints": NOT_OFFERED("resource templates"),
    },
  },
];

const SCENARIO_TIMEOUT_MS = 120_000;

const [url, resultsRoot] = process.argv.slice(2);
if (!url || !resultsRoot) {
  console.error("usage: node run-scenarios.mjs <endpoint url> <results dir>");
  process.exit(2);
}
rmSync(resultsRoot, { recursive: true, force: true });

const failures = [];
const summary = [];
for (const run of RUNS) {
  const out = join(resultsRoot, run.label.replace(/[^A-Za-z0-9.-]/g, "_"));
  mkdirSync(out, { recursive: true });
  const args = [run.cli, "server", "--url", url, "--scenario", run.scenario, "-o", out];
  if (run.spec) args.push("--spec-version", run.spec);
  console.log(`\n=== ${run.label}`);
  const child = spawnSync(process.execPath, args, { encoding: "utf8", timeout: SCENARIO_TIMEOUT_MS });
  process.stdout.write(child.stdout ?? "");
  process.stdout.write(child.stderr ?? "");
  if (child.error) {
    failures.push(`${run.label}: the suite did not finish (${child.error.message})`);
    summary.push([run.label, "ERROR"]);
    continue;
  }
  const checks = readChecks(out);
  if (checks.length === 0) {
    failures.push(`${run.label}: the suite reported no checks (exit ${child.status})`);
    summary.push([run.label, "NO CHECKS"]);
    continue;
  }
  let passed = 0;
  let excused = 0;
  const problems = [];
  for (const check of checks) {
    const excuse = run.notApplicable?.[check.id];
    if (check.status === "SUCCESS") {
      passed += 1;
    } else if (check.status === "SKIPPED" || check.status === "INFO") {
      // The suite's own verdict that the check does not apply (INFO: e.g. no session id to inspect).
      excused += 1;
      console.log(`    ${check.status === "INFO" ? "informational" : "skipped by the suite"}: ${check.id}`);
    } else if (excuse && excuse.expect.test(check.errorMessage ?? "")) {
      excused += 1;
      console.log(`    not applicable: ${check.id} (${check.status}): ${excuse.reason}`);
    } else {
      problems.push(`${check.id} ${check.status}: ${check.errorMessage ?? check.description}`);
    }
  }
  if (passed === 0) problems.push("no check passed");
  for (const problem of problems) failures.push(`${run.label}: ${problem}`);
  summary.push([run.label, problems.length === 0 ? `PASS (${passed} passed, ${excused} not applicable)` : "FAIL"]);
}

console.log("\n=== Conformance summary");
for (const [label, verdict] of summary) console.log(`  ${label.padEnd(40)} ${verdict}`);
if (failures.length > 0) {
  console.log("\nRequired checks that failed:");
  for (const failure of failures) console.log(`  - ${failure}`);
  process.exit(1);
}
console.log(`\nAll ${RUNS.length} required scenario runs passed.`);

/** Every check of every results directory the suite wrote under `dir`. */
function readChecks(dir) {
  const checks = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    try {
      checks.push(...JSON.parse(readFileSync(join(dir, entry.name, "checks.json"), "utf8")));
    } catch {
      // A directory without checks.json holds nothing to judge.
    }
  }
  return checks;
}
