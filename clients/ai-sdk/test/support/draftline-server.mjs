// @ts-check
// Test harness shared by clients/ai-sdk and clients/mcp-client-tests (imported by
// relative path; Node built-ins only). Starts `draftline serve --port 0` (the OS picks a
// free port; the server prints the real one), waits for its `listening on` line, mints
// tokens with `draftline token`, and always stops the server: on `stop()`, on process
// exit, and on SIGINT/SIGTERM/SIGHUP.
//
// Binary: $DRAFTLINE_BIN, else ${CARGO_TARGET_DIR:-<repo>/target}/debug/draftline.
import { spawn, execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (clients/ai-sdk/test/support → four levels up). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** Path of the `draftline` binary the tests run. */
export function draftlineBin() {
  if (process.env.DRAFTLINE_BIN) return resolve(process.env.DRAFTLINE_BIN);
  const targetDir = process.env.CARGO_TARGET_DIR;
  const target = !targetDir ? join(repoRoot, "target") : isAbsolute(targetDir) ? targetDir : resolve(repoRoot, targetDir);
  return join(target, "debug", "draftline");
}

/**
 * Runs `cargo build -p draftline-cli` in the repository (skipped when $DRAFTLINE_BIN is set).
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<void>}
 */
export function buildDraftline({ timeoutMs = 30 * 60_000 } = {}) {
  if (process.env.DRAFTLINE_BIN) return Promise.resolve();
  return new Promise((resolvePromise, reject) => {
    const child = spawn("cargo", ["build", "-p", "draftline-cli"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`cargo build -p draftline-cli did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise();
      else reject(new Error(`cargo build -p draftline-cli failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** @type {Set<import("node:child_process").ChildProcess>} */
const running = new Set();
let hooksInstalled = false;

function installExitHooks() {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // Last resort: whatever happens to this process, its servers die with it.
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
  for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) {
    process.once(sig, () => {
      for (const child of running) child.kill("SIGKILL");
      process.exit(128 + (sig === "SIGINT" ? 2 : sig === "SIGTERM" ? 15 : 1));
    });
  }
}

/**
 * @typedef {"buyer-sby" | "clerk-sby" | "buyer-jkt" | "sales-bdg"} DemoUser
 * @typedef {{ sub: string, tenant: string, branch: string, scope: string }} TokenClaims
 * @typedef {object} DraftlineServer
 * @property {string} url        e.g. http://127.0.0.1:41234 (also the tokens' audience)
 * @property {number} port
 * @property {{ endpoint: string, table: string } | null} dynamodb   the embedded DynamoDB engine, for reading audit items
 * @property {(user: DemoUser) => Promise<string>} token   a demo user's bearer token
 * @property {(claims: TokenClaims) => Promise<string>} tokenFor   a token with any claims
 * @property {() => string} output   the server's recent stdout/stderr, for failure messages
 * @property {() => Promise<void>} stop   SIGTERM, then SIGKILL after 5 s; idempotent
 */

/**
 * Starts `draftline serve` on a free port and resolves once it prints `listening on`.
 * `erp` picks the backend behind the tools (`--erp`): the built-in demo ERP, or a local
 * Tryton (`tryton`; installed into the cache on first use). Default: $DRAFTLINE_TEST_ERP,
 * else builtin, so a whole suite can run again against Tryton.
 * @param {{ readyTimeoutMs?: number, env?: Record<string, string>, erp?: "builtin" | "tryton" }} [options]
 * @returns {Promise<DraftlineServer>}
 */
export async function startDraftline({
  readyTimeoutMs = 300_000,
  env = {},
  erp = /** @type {"builtin" | "tryton"} */ (process.env.DRAFTLINE_TEST_ERP === "tryton" ? "tryton" : "builtin"),
} = {}) {
  const bin = draftlineBin();
  if (!existsSync(bin)) {
    throw new Error(`${bin} does not exist: run \`cargo build -p draftline-cli\` (or set DRAFTLINE_BIN)`);
  }
  installExitHooks();
  const child = spawn(bin, ["serve", "--port", "0", "--erp", erp], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  /** @type {Promise<void>} */
  const exited = new Promise((r) => child.once("exit", () => r()));
  exited.then(() => running.delete(child));

  // Keep draining both pipes for the server's whole life (a full pipe would block it),
  // keeping the last 64 KiB for diagnostics.
  let log = "";
  const keep = (/** @type {Buffer} */ chunk) => {
    log = (log + chunk.toString("utf8")).slice(-65_536);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };

  /** @type {string} */
  let url;
  try {
    url = await new Promise((resolveUrl, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`draftline serve printed no "listening on" line within ${readyTimeoutMs} ms`)),
        readyTimeoutMs,
      );
      const onData = () => {
        const m = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(log);
        // The banner ends with the token hint; by then every line of it is in.
        if (m && m[1] && log.includes("get a token:")) {
          clearTimeout(timer);
          child.stdout?.off("data", onData);
          resolveUrl(m[1]);
        }
      };
      child.stdout?.on("data", onData);
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`draftline serve exited before it was ready (${signal ?? `exit ${code}`})`));
      });
    });
  } catch (err) {
    await stop();
    throw new Error(`${/** @type {Error} */ (err).message}\n--- server output ---\n${log}`);
  }

  /** @param {string[]} args */
  const mint = (args) =>
    new Promise((resolveToken, reject) => {
      execFile(bin, ["token", ...args, "--resource", url], { timeout: 15_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`draftline token ${args.join(" ")} failed: ${err.message}\n${stderr}`));
        else resolveToken(stdout.trim());
      });
    });

  // The embedded DynamoDB engine's endpoint and table, printed right after
  // the listening line, for tests that read the audit items directly.
  const dynamo = /dynamodb endpoint: (\S+) \(table (\S+)\)/.exec(log);

  return {
    url,
    port: Number(new URL(url).port),
    dynamodb: dynamo ? { endpoint: dynamo[1], table: dynamo[2] } : null,
    token: (user) => /** @type {Promise<string>} */ (mint(["--user", user])),
    tokenFor: (c) =>
      /** @type {Promise<string>} */ (
        mint(["--sub", c.sub, "--tenant", c.tenant, "--branch", c.branch, "--scope", c.scope])
      ),
    output: () => log,
    stop,
  };
}

/** Every scope draftline knows. */
export const ALL_SCOPES = "purchasing:read purchasing:draft inventory:read sales:read sales:draft finance:read agent:read";

/** The demo users' scopes, as DESIGN.md lists them. */
export const DEMO_SCOPES = /** @type {const} */ ({
  "buyer-sby": ["purchasing:read", "purchasing:draft", "inventory:read", "agent:read"],
  "clerk-sby": ["inventory:read"],
  "buyer-jkt": ["purchasing:read", "purchasing:draft", "inventory:read"],
  "sales-bdg": ["sales:read", "sales:draft", "finance:read", "inventory:read"],
});

/** A date `days` from today (UTC), as YYYY-MM-DD. */
export function isoDate(days = 0) {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}
