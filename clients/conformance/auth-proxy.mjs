// A loopback proxy that adds `Authorization: Bearer $MCP_BEARER_TOKEN` to
// every request and forwards it, otherwise unchanged, to the draftline server.
//
// Why: the conformance CLI has no option to send an auth header, and every
// POST to the draftline MCP endpoint needs a bearer token. The proxy plays
// the part of a client configured with a token. It forwards `Host`, `Origin`
// and every other header as received, so the DNS-rebinding scenario tests the
// server's own Host/Origin checks, not the proxy's.
//
// Usage: MCP_BEARER_TOKEN=... node auth-proxy.mjs http://127.0.0.1:<server port>
// Prints `proxy listening on http://127.0.0.1:<port>` once ready.

import http from "node:http";

const target = new URL(process.argv[2] ?? "");
const token = process.env.MCP_BEARER_TOKEN;
if (!token) {
  console.error("auth-proxy: MCP_BEARER_TOKEN is not set");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    {
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers,
      timeout: 30_000,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("timeout", () => upstream.destroy(new Error("upstream timed out")));
  upstream.on("error", (err) => {
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "text/plain" });
    }
    res.end(`auth-proxy: ${err.message}`);
  });
  req.pipe(upstream);
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`proxy listening on http://127.0.0.1:${port}`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
