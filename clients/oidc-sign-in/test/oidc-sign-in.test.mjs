// @ts-check
// The review pages' OpenID Connect sign-in against a real provider (oidc-provider, see
// support/provider.mjs): `draftline serve` configured with DRAFTLINE_OIDC_* and verifying
// the provider's access tokens (DRAFTLINE_ISSUER, DRAFTLINE_JWKS_URL), a person's browser
// driven through /review/signin/oidc → the provider's login → /review/callback → a
// session, and what a sign-in that was tampered with gets: a clear page, no session.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { startDraftline } from "../../ai-sdk/test/support/draftline-server.mjs";
import { Browser } from "./support/browser.mjs";
import { startProvider } from "./support/provider.mjs";

const CLIENT_ID = "draftline-review";
const CLIENT_SECRET = "oidc-sign-in-test-client-secret";
/** The access tokens' lifetime at the provider (support/provider.mjs, accessTokenTTL). */
const ACCESS_TOKEN_SECONDS = 600;
// On loopback http, draftline's cookie names carry the port (cookies do not tell ports apart).
let SESSION_COOKIE = "draftline_session";
let SIGN_IN_COOKIE = "draftline_sign_in";

/** @type {import("./support/provider.mjs").TestProvider} */
let provider;
/** @type {import("../../ai-sdk/test/support/draftline-server.mjs").DraftlineServer} */
let draftline;

before(async () => {
  provider = await startProvider();
  draftline = await startDraftline({
    erp: "builtin",
    env: {
      DRAFTLINE_OIDC_ISSUER: provider.issuer,
      DRAFTLINE_OIDC_CLIENT_ID: CLIENT_ID,
      DRAFTLINE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      // The provider issues the access tokens draftline verifies (the tenant claims
      // and the scopes of the session come from there).
      DRAFTLINE_ISSUER: provider.issuer,
      DRAFTLINE_JWKS_URL: `${provider.issuer}/jwks`,
      DRAFTLINE_SESSION_SECRET: "oidc-sign-in-test-session-secret-0123456789",
    },
  });
  provider.configure({ resource: draftline.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  const port = new URL(draftline.url).port;
  SESSION_COOKIE = `draftline_session_${port}`;
  SIGN_IN_COOKIE = `draftline_sign_in_${port}`;
});

after(async () => {
  await draftline?.stop();
  await provider?.stop();
});

/** Failure details: both servers' logs. */
function logs() {
  return `\n--- provider ---\n${provider.log().join("\n")}\n--- draftline ---\n${draftline.output().slice(-8000)}`;
}

/**
 * Starts a sign-in at draftline and goes through the provider's login as `person`, up to
 * (not including) the callback. `nonce` replaces the nonce of the authorization request
 * on its way to the provider (a request this browser did not start).
 * @param {Browser} browser
 * @param {string} person
 * @param {{ next?: string, nonce?: string }} [options]
 * @returns {Promise<URL>} the callback URL the provider sends the browser to
 */
async function throughTheProvider(browser, person, { next = "/review", nonce } = {}) {
  const start = await browser.get(`${draftline.url}/review/signin/oidc?next=${encodeURIComponent(next)}`);
  assert.equal(start.status, 302, start.body + logs());
  assert.ok(start.location, "a redirect to the provider");
  const authorize = new URL(start.location);
  assert.equal(authorize.origin, provider.issuer, authorize.href);
  const params = authorize.searchParams;
  assert.equal(params.get("response_type"), "code");
  assert.equal(params.get("client_id"), CLIENT_ID);
  assert.equal(params.get("redirect_uri"), `${draftline.url}/review/callback`);
  assert.equal(params.get("code_challenge_method"), "S256");
  assert.match(params.get("code_challenge") ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.ok((params.get("state") ?? "").length >= 16, "a state");
  assert.ok((params.get("nonce") ?? "").length >= 16, "a nonce");
  assert.equal(params.get("resource"), draftline.url);
  assert.deepEqual(
    (params.get("scope") ?? "").split(" ").sort(),
    ["openid", "purchasing:approve", "purchasing:read", "sales:approve", "sales:read"],
  );
  const signInCookie = start.setCookies.find((c) => c.startsWith(`${SIGN_IN_COOKIE}=`)) ?? "";
  assert.match(signInCookie, /HttpOnly/);
  assert.match(signInCookie, /SameSite=Lax/);
  if (nonce) params.set("nonce", nonce);

  const toLogin = await browser.get(authorize);
  assert.equal(toLogin.status, 303, toLogin.body + logs());
  const loginPage = await browser.get(/** @type {string} */ (toLogin.location));
  assert.equal(loginPage.status, 200, loginPage.body + logs());
  const action = /action="([^"]+)"/.exec(loginPage.body)?.[1];
  assert.ok(action, loginPage.body);
  const loggedIn = await browser.post(new URL(action, provider.issuer), { login: person });
  assert.equal(loggedIn.status, 303, loggedIn.body + logs());
  const resumed = await browser.get(/** @type {string} */ (loggedIn.location));
  assert.equal(resumed.status, 303, resumed.body + logs());
  const callback = new URL(/** @type {string} */ (resumed.location));
  assert.equal(`${callback.origin}${callback.pathname}`, `${draftline.url}/review/callback`, callback.href + logs());
  return callback;
}

/**
 * @param {{ status: number, body: string, setCookies: string[] }} page
 * @param {RegExp} says
 */
function assertRefused(page, says) {
  assert.equal(page.status, 403, page.body);
  assert.match(page.body, /Sign-in failed/);
  assert.match(page.body, /Nobody was signed in/);
  assert.match(page.body, says);
  assert.ok(
    !page.setCookies.some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/Max-Age=0/.test(c)),
    `no session: ${page.setCookies}`,
  );
  assert.ok(
    page.setCookies.some((c) => c.startsWith(`${SIGN_IN_COOKIE}=`) && /Max-Age=0/.test(c)),
    `the sign-in in progress is cleared: ${page.setCookies}`,
  );
}

describe("OpenID Connect sign-in with a real provider (oidc-provider)", () => {
  test("a person signed in at the provider gets a session whose branch and scopes are the provider's, and the queue", async () => {
    const browser = new Browser();
    const callback = await throughTheProvider(browser, "approver-sby", { next: "/review?status=draft" });
    assert.ok(callback.searchParams.get("code"), callback.href);
    const done = await browser.get(callback);
    assert.equal(done.status, 303, done.body + logs());
    assert.equal(done.location, `${draftline.url}/review?status=draft`, "back where the person was going");
    const session = done.setCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`)) ?? "";
    assert.match(session, /HttpOnly/);
    assert.match(session, /SameSite=Lax/);
    assert.match(session, /Path=\//);
    assert.doesNotMatch(session, /Secure/, "plain http on loopback only");
    // The session ends no later than the access token it was opened with (8 h otherwise).
    const maxAge = Number(/Max-Age=(\d+)/.exec(session)?.[1] ?? "NaN");
    assert.ok(maxAge > 0 && maxAge <= ACCESS_TOKEN_SECONDS, `Max-Age ${maxAge} is within the token's ${ACCESS_TOKEN_SECONDS} s: ${session}`);
    assert.ok(!browser.cookies(draftline.url).has(SIGN_IN_COOKIE), "the sign-in cookie is gone");

    // The queue of the person's branch (SBY, from the access token's branch_code).
    const queue = await browser.get(/** @type {string} */ (done.location));
    assert.equal(queue.status, 200, queue.body + logs());
    assert.match(queue.body, /approver-sby/);
    assert.match(queue.body, /SBY/);
    assert.match(queue.body, /PO-SBY-000001/);
    assert.match(queue.body, /Drafted by agent/);
    assert.doesNotMatch(queue.body, /PO-JKT-|QT-BDG-/, "another branch's documents");
    // Scopes are what the provider granted this person: purchasing, not sales.
    const quotes = await browser.get(`${draftline.url}/review?kind=quote`);
    assert.equal(quotes.status, 403, quotes.body);

    // The session is an interactive one with purchasing:approve: it approves, with CSRF.
    const document = await browser.get(`${draftline.url}/review/documents/PO-SBY-000001`);
    assert.equal(document.status, 200, document.body);
    const form = document.body.slice(document.body.indexOf('action="/review/documents/PO-SBY-000001/approve"'));
    const field = (/** @type {string} */ name) => new RegExp(`name="${name}" value="([^"]+)"`).exec(form)?.[1] ?? "";
    assert.ok(field("csrf") && field("decision_id"), document.body);
    const approved = await browser.post(`${draftline.url}/review/documents/PO-SBY-000001/approve`, {
      csrf: field("csrf"),
      decision_id: field("decision_id"),
      reason: "",
    });
    assert.equal(approved.status, 303, approved.body);
    const after = await browser.get(`${draftline.url}/review/documents/PO-SBY-000001`);
    assert.match(after.body, /Approved/);
    assert.match(after.body, /approver-sby/);
  });

  test("a Bandung approver at the provider gets Bandung's quotes and no purchase orders", async () => {
    const browser = new Browser();
    const callback = await throughTheProvider(browser, "approver-bdg");
    const done = await browser.get(callback);
    assert.equal(done.status, 303, done.body + logs());
    const queue = await browser.get(`${draftline.url}/review`);
    assert.equal(queue.status, 200, queue.body);
    assert.match(queue.body, /approver-bdg/);
    assert.match(queue.body, /QT-BDG-000001/);
    assert.doesNotMatch(queue.body, /PO-SBY-/);
    const orders = await browser.get(`${draftline.url}/review?kind=purchase_order`);
    assert.equal(orders.status, 403, orders.body);
  });

  test("a tampered state is refused, and the sign-in must start again", async () => {
    const browser = new Browser();
    const callback = await throughTheProvider(browser, "approver-sby");
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${callback.searchParams.get("state")}x`);
    assertRefused(await browser.get(tampered), /does not belong to the sign-in this browser started/);
    // The genuine answer now finds no sign-in in progress: it was cleared.
    assertRefused(await browser.get(callback), /expired or was started in another browser/);
  });

  test("an ID token with a nonce this browser did not start with is refused", async () => {
    const browser = new Browser();
    const callback = await throughTheProvider(browser, "approver-sby", { nonce: "a-nonce-of-another-sign-in-0123456789" });
    assertRefused(await browser.get(callback), /The ID token does not verify/);
  });

  test("a code used twice is refused the second time, even with the sign-in cookie", async () => {
    const browser = new Browser();
    const callback = await throughTheProvider(browser, "approver-sby");
    const thief = browser.clone();
    const first = await browser.get(callback);
    assert.equal(first.status, 303, first.body + logs());
    assertRefused(await thief.get(callback), /refused the sign-in code \(invalid_grant\)/);
  });

  test("an answer reaching another browser, or the provider's refusal, signs nobody in", async () => {
    const browser = new Browser();
    const callback = await throughTheProvider(browser, "approver-sby");
    assertRefused(await new Browser().get(callback), /expired or was started in another browser/);

    // A person the provider does not know (in a browser with no session there yet): it
    // answers access_denied.
    const stranger = new Browser();
    const start = await stranger.get(`${draftline.url}/review/signin/oidc`);
    const toLogin = await stranger.get(/** @type {string} */ (start.location));
    const loginPage = await stranger.get(/** @type {string} */ (toLogin.location));
    const action = /action="([^"]+)"/.exec(loginPage.body)?.[1] ?? "";
    const loggedIn = await stranger.post(new URL(action, provider.issuer), { login: "somebody-else" });
    const answer = await stranger.get(/** @type {string} */ (loggedIn.location));
    assert.equal(answer.status, 303, answer.body + logs());
    const denied = new URL(/** @type {string} */ (answer.location));
    assert.equal(denied.searchParams.get("error"), "access_denied", denied.href);
    assertRefused(await stranger.get(denied), /did not sign you in \(access_denied/);
  });

  // Last: it changes the provider's key for every test after it. One rotation only:
  // draftline refetches a provider's keys for an unknown kid at most once a minute.
  test("sign-in after rotation: the provider rotates its signing keys between two sign-ins, and both pass", async () => {
    /** @param {string} person */
    const signIn = async (person) => {
      const browser = new Browser();
      const done = await browser.get(await throughTheProvider(browser, person));
      assert.equal(done.status, 303, done.body + logs());
      assert.ok(
        done.setCookies.some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/Max-Age=0/.test(c)),
        `a session cookie: ${done.setCookies}`,
      );
      const queue = await browser.get(`${draftline.url}/review`);
      assert.equal(queue.status, 200, queue.body + logs());
      assert.match(queue.body, new RegExp(person));
    };
    const kids = async () => (await (await fetch(`${provider.issuer}/jwks`)).json()).keys.map((/** @type {{ kid: string }} */ k) => k.kid);
    // draftline holds the provider's keys of now (discovered at the first sign-in).
    await signIn("approver-sby");
    const before = await kids();
    const kid = provider.rotateKeys();
    assert.deepEqual(await kids(), [kid], "the provider publishes the new key alone");
    assert.ok(!before.includes(kid), `${before} then ${kid}`);
    // Its ID token and access token name a kid draftline has not seen: one refetch each
    // (the review pages' key cache, the API's), and the sign-in passes.
    await signIn("approver-bdg");
  });
});
