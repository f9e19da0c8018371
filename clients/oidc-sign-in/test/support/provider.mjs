// @ts-check
// A real OpenID provider for the sign-in tests: `oidc-provider` (pinned in package.json)
// on a free loopback port, issuing what a deployment's identity provider issues to
// draftline:
//
// - ID tokens for the review pages' client (authorization code, PKCE required), signed
//   RS256 with a key generated for this run and published at <issuer>/jwks; `rotateKeys`
//   replaces it with a new one (a new kid), as a provider's key rotation does;
// - JWT access tokens (RFC 9068) for the resource `draftline` (RFC 8707 resource
//   indicators), with the tenant claims draftline reads (tenant_id, branch_id,
//   branch_code) and the person's scopes as the provider grants them.
//
// Login is a minimal interaction of its own: GET /interaction/<uid> is a form with one
// field, `login` (a person of PEOPLE); POST /interaction/<uid>/login signs that person in
// and grants, at once, `openid` and the scopes of that person that the client asked for
// (refusing the others).
// There are no passwords: the tests are about draftline's side of the flow.
import { generateKeyPairSync } from "node:crypto";
import { createServer } from "node:http";

import Provider, { errors } from "oidc-provider";

/**
 * The people the provider knows, with their claims. `approver-sby` approves Surabaya's
 * purchase orders, `approver-bdg` Bandung's quotes, as in draftline's demo data.
 * @type {Record<string, { tenant_id: string, branch_id: string, branch_code: string, scope: string, name: string }>}
 */
export const PEOPLE = {
  "approver-sby": {
    name: "Approver Surabaya",
    tenant_id: "demo",
    branch_id: "SBY-01",
    branch_code: "SBY",
    scope: "purchasing:read purchasing:approve",
  },
  "approver-bdg": {
    name: "Approver Bandung",
    tenant_id: "demo",
    branch_id: "BDG-01",
    branch_code: "BDG",
    scope: "sales:read sales:approve",
  },
};

/** The scopes the resource server `draftline` knows. */
const RESOURCE_SCOPES = "purchasing:read purchasing:approve sales:read sales:approve";

/**
 * @typedef {object} TestProvider
 * @property {string} issuer   http://127.0.0.1:<port>
 * @property {(options: { resource: string, clientId: string, clientSecret: string }) => void} configure
 *   creates the provider for draftline at `resource` (its callback is <resource origin>/review/callback)
 * @property {() => string} rotateKeys   signs with a new key from now on and publishes it alone
 *   (the old one is withdrawn); returns the new key's kid
 * @property {() => string[]} log   what the provider reported (server errors, refused grants)
 * @property {() => Promise<void>} stop
 */

/**
 * Listens on a free port first, so the issuer is known before draftline starts; the
 * provider itself is made once draftline's own URL (the resource, the redirect URI) is
 * known. Until then every request is answered 503.
 * @returns {Promise<TestProvider>}
 */
export async function startProvider() {
  /** @type {import("oidc-provider").default | null} */
  let provider = null;
  /** @type {((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void) | null} */
  let callback = null;
  /** @type {string[]} */
  const log = [];
  /** @type {{ resource: string, clientId: string, clientSecret: string } | null} */
  let options = null;
  let generation = 0;

  const server = createServer(async (req, res) => {
    try {
      if (!provider || !callback) {
        res.writeHead(503).end("not configured yet");
        return;
      }
      const url = new URL(req.url ?? "/", "http://provider.invalid");
      const login = /^\/interaction\/([\w-]+)(\/login)?$/.exec(url.pathname);
      if (login) {
        await interaction(provider, req, res, Boolean(login[2]));
        return;
      }
      callback(req, res);
    } catch (err) {
      log.push(`interaction failed: ${/** @type {Error} */ (err).stack}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`interaction failed: ${/** @type {Error} */ (err).message}`);
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the provider has no port");
  const issuer = `http://127.0.0.1:${address.port}`;

  /** A new RS256 signing key, with a kid of its own. */
  function signingKey() {
    generation += 1;
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    return { ...privateKey.export({ format: "jwk" }), kid: `oidc-sign-in-test-${generation}`, use: "sig", alg: "RS256" };
  }

  /**
   * Makes the provider, signing with `jwk` (oidc-provider reads its keys once, when it is
   * made: a rotation makes it anew).
   * @param {{ resource: string, clientId: string, clientSecret: string }} given
   * @param {object} jwk
   */
  function build({ resource, clientId, clientSecret }, jwk) {
    const origin = new URL(resource).origin;
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [`${origin}/review/callback`],
          grant_types: ["authorization_code"],
          response_types: ["code"],
          token_endpoint_auth_method: "client_secret_basic",
        },
      ],
      pkce: { required: () => true },
      ttl: { AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600, IdToken: 600, AccessToken: 600 },
      jwks: { keys: [/** @type {any} */ (jwk)] },
      cookies: { keys: ["oidc-sign-in-test-cookie-key-0123456789"] },
      claims: { openid: ["sub"], profile: ["name"] },
      scopes: ["openid"],
      features: {
        devInteractions: { enabled: false },
        resourceIndicators: {
          enabled: true,
          // The authorization request names the resource; the token request asks for it again.
          defaultResource: async () => resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: draftlineResource(resource, RESOURCE_SCOPES),
        },
      },
      interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
      findAccount: async (_ctx, id) => {
        const person = PEOPLE[id];
        if (!person) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, name: person.name }) };
      },
      // The tenant claims draftline's verifier reads, on the access token only.
      extraTokenClaims: async (_ctx, token) => {
        if (token.kind !== "AccessToken" || !token.accountId) return undefined;
        const person = PEOPLE[token.accountId];
        if (!person) return undefined;
        return { tenant_id: person.tenant_id, branch_id: person.branch_id, branch_code: person.branch_code };
      },
      renderError: async (ctx, out) => {
        ctx.type = "text/plain";
        ctx.body = `provider error: ${out.error}: ${out.error_description ?? ""}`;
      },
    });
    provider.on("server_error", (_ctx, err) => log.push(`server_error: ${err.stack}`));
    provider.on("grant.error", (_ctx, err) => log.push(`grant.error: ${err.message}`));
    provider.on("authorization.error", (_ctx, err) => log.push(`authorization.error: ${err.message}`));
    callback = provider.callback();
  }

  return {
    issuer,
    configure(given) {
      options = given;
      build(given, signingKey());
    },
    rotateKeys() {
      if (!options) throw new Error("configure the provider first");
      const jwk = signingKey();
      build(options, jwk);
      return jwk.kid;
    },
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}

/**
 * draftline at `resource` as a resource server of oidc-provider's resource indicators
 * (RFC 8707): JWT access tokens (RFC 9068) for `scope`, signed RS256, for 10 minutes;
 * any other indicator is refused.
 * @param {string} resource
 * @param {string} scope
 */
export function draftlineResource(resource, scope) {
  return async (/** @type {unknown} */ _ctx, /** @type {string} */ indicator) => {
    if (indicator !== resource) throw new errors.InvalidTarget();
    return {
      scope,
      audience: resource,
      accessTokenFormat: /** @type {const} */ ("jwt"),
      accessTokenTTL: 600,
      jwt: { sign: { alg: /** @type {const} */ ("RS256") } },
    };
  };
}

/**
 * The login interaction: a form (GET), or signing the person in and granting their
 * scopes (POST …/login).
 * @param {import("oidc-provider").default} provider
 * @param {import("node:http").IncomingMessage} req
 * @param {import("node:http").ServerResponse} res
 * @param {boolean} submitted
 */
async function interaction(provider, req, res, submitted) {
  const details = await provider.interactionDetails(req, res);
  if (!submitted) {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(
      `<!doctype html><title>Sign in</title><form method="post" action="/interaction/${details.uid}/login">` +
        `<label>Person <input name="login"></label><button>Sign in</button></form>`,
    );
    return;
  }
  const form = new URLSearchParams(await body(req));
  const accountId = form.get("login") ?? "";
  const person = PEOPLE[accountId];
  if (!person) {
    await provider.interactionFinished(req, res, { error: "access_denied", error_description: "unknown person" });
    return;
  }
  const clientId = String(details.params.client_id);
  const grant = new provider.Grant({ accountId, clientId });
  grant.addOIDCScope("openid");
  const asked = new Set(String(details.params.scope ?? "").split(" "));
  const resource = String(details.params.resource ?? "");
  const holds = new Set(person.scope.split(" "));
  const granted = [...asked].filter((s) => holds.has(s));
  // What the person does not hold is refused, not left pending (which would ask again).
  const refused = [...asked].filter((s) => s && s !== "openid" && !holds.has(s));
  if (resource && granted.length > 0) grant.addResourceScope(resource, granted.join(" "));
  if (resource && refused.length > 0) grant.rejectResourceScope(resource, refused.join(" "));
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/** @param {import("node:http").IncomingMessage} req */
function body(req) {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      text += chunk;
      if (text.length > 16_384) reject(new Error("form too large"));
    });
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}
