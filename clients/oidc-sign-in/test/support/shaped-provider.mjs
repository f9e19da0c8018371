// @ts-check
// Real OpenID providers (`oidc-provider`, pinned in package.json) issuing access tokens
// shaped as the identity providers companies run issue them: an agent's client gets a
// JWT access token (RFC 9068, client credentials, RFC 8707 resource indicator) for
// draftline, signed RS256 with a key of this run published at <issuer>/jwks, and
// carrying draftline's identity facts where that provider keeps them:
//
// - okta: `scp` as a list, the branch in custom claims (`branch_id`, `branch_code`), the
//   person in `uid`;
// - entra: Entra ID v2's `tid`, the person in `oid`, `scp` as one string, the branch as an
//   app role in `roles`;
// - auth0: namespaced custom claims (https://draftline.test/…) and `permissions`;
// - keycloak: the branch as a group path in `groups`, the scopes as realm roles in
//   `realm_access.roles`, the person in `preferred_username`.
//
// Each agent client of a provider (`clients`) names the claims its tokens carry, so one
// provider can also issue a token that names another tenant or lacks a claim.
import { generateKeyPairSync } from "node:crypto";
import { createServer } from "node:http";

import Provider from "oidc-provider";

import { draftlineResource } from "./provider.mjs";

/** The namespace of the auth0 shape's custom claims. */
export const NAMESPACE = "https://draftline.test/";

/**
 * buyer-sby's facts (draftline's demo data: tenant demo, branch SBY-01) in each shape.
 * @type {Record<string, Record<string, unknown>>}
 */
export const SHAPES = {
  okta: {
    uid: "buyer-sby",
    scp: ["inventory:read", "purchasing:read", "purchasing:draft"],
    branch_id: "SBY-01",
    branch_code: "SBY",
  },
  entra: {
    ver: "2.0",
    tid: "5c2f1c0e-7f3b-4d6a-9e8f-2d1b0a9c8e7f",
    oid: "buyer-sby",
    scp: "inventory:read purchasing:read purchasing:draft",
    roles: ["SBY.Branch"],
  },
  auth0: {
    permissions: ["inventory:read", "purchasing:read", "purchasing:draft"],
    [`${NAMESPACE}tenant`]: "demo",
    [`${NAMESPACE}user`]: "buyer-sby",
    [`${NAMESPACE}branch_id`]: "SBY-01",
    [`${NAMESPACE}branch_code`]: "SBY",
  },
  keycloak: {
    preferred_username: "buyer-sby",
    groups: ["/sby"],
    realm_access: { roles: ["buyer"] },
  },
};

/**
 * The `DRAFTLINE_ISSUERS` entry that reads each shape back.
 * @type {Record<string, Record<string, unknown>>}
 */
export const MAPPINGS = {
  okta: { tenants: ["demo"], claims: { tenant: { fixed: "demo" }, user: "uid", scopes: "scp" } },
  entra: {
    claims: {
      tenant: { fixed: "demo" },
      user: "oid",
      scopes: "scp",
      branch: { from: "roles", map: { "SBY.Branch": { id: "SBY-01", code: "SBY" } } },
    },
  },
  auth0: {
    tenants: ["demo"],
    claims: {
      tenant: `${NAMESPACE}tenant`,
      user: `${NAMESPACE}user`,
      scopes: "permissions",
      branch: { id: `${NAMESPACE}branch_id`, code: `${NAMESPACE}branch_code` },
    },
  },
  keycloak: {
    claims: {
      tenant: { fixed: "demo" },
      user: "preferred_username",
      branch: { from: "groups", map: { "/sby": { id: "SBY-01", code: "SBY" } } },
      scopes: {
        from: "realm_access.roles",
        map: { buyer: "inventory:read purchasing:read purchasing:draft agent:read" },
      },
    },
  },
};

/** The scopes the resource server `draftline` knows. */
const RESOURCE_SCOPES = "inventory:read purchasing:read purchasing:draft agent:read";

/**
 * @typedef {object} ShapedProvider
 * @property {string} issuer   http://127.0.0.1:<port>
 * @property {(resource: string) => void} configure   issues tokens for draftline at `resource`
 * @property {(client: string) => Promise<string>} token   an access token for agent client `client`
 * @property {() => string[]} log   what the provider reported
 * @property {() => Promise<void>} stop
 */

/**
 * Listens on a free port first (so the issuer is known before draftline starts); the
 * provider is made once draftline's URL (the resource) is known.
 * @param {Record<string, Record<string, unknown>>} clients   each agent client's claims
 * @returns {Promise<ShapedProvider>}
 */
export async function startShapedProvider(clients) {
  /** @type {((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void) | null} */
  let callback = null;
  /** @type {string[]} */
  const log = [];
  const server = createServer((req, res) => {
    if (!callback) {
      res.writeHead(503).end("not configured yet");
      return;
    }
    callback(req, res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the provider has no port");
  const issuer = `http://127.0.0.1:${address.port}`;
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: `shaped-${address.port}`, use: "sig", alg: "RS256" };
  const secret = (/** @type {string} */ client) => `${client}-secret-0123456789`;

  return {
    issuer,
    configure(resource) {
      const provider = new Provider(issuer, {
        clients: Object.keys(clients).map((client) => ({
          client_id: client,
          client_secret: secret(client),
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: "client_secret_basic",
        })),
        jwks: { keys: [/** @type {any} */ (jwk)] },
        cookies: { keys: ["shaped-provider-cookie-key-0123456789"] },
        ttl: { ClientCredentials: 600 },
        features: {
          devInteractions: { enabled: false },
          clientCredentials: { enabled: true },
          resourceIndicators: {
            enabled: true,
            defaultResource: async () => resource,
            getResourceServerInfo: draftlineResource(resource, RESOURCE_SCOPES),
          },
        },
        // The shape's claims, on the agent's access token.
        extraTokenClaims: async (_ctx, token) => {
          const client = /** @type {any} */ (token).clientId;
          return typeof client === "string" ? clients[client] : undefined;
        },
      });
      provider.on("server_error", (_ctx, err) => log.push(`server_error: ${err.stack}`));
      provider.on("grant.error", (_ctx, err) => log.push(`grant.error: ${err.message}`));
      callback = provider.callback();
    },
    async token(client) {
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${client}:${secret(client)}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", scope: "inventory:read" }).toString(),
      });
      const body = /** @type {any} */ (await response.json());
      if (!response.ok || typeof body.access_token !== "string") {
        throw new Error(`${issuer} issued no token to ${client}: ${JSON.stringify(body)} ${log.join("\n")}`);
      }
      return body.access_token;
    },
    log: () => log,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
