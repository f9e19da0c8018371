// @ts-check
// A person's browser without a browser: fetch with one cookie jar per origin, no
// redirect followed (each answer is looked at as it is), the Origin header on form posts.
// Enough for draftline's review pages and the provider's login: cookies are host-only,
// Path=/ and SameSite=Lax there, and every navigation here is top-level.

export class Browser {
  /** @type {Map<string, Map<string, string>>} origin → cookie name → value */
  jar = new Map();

  /**
   * The cookies this browser holds for `origin`.
   * @param {string} origin
   */
  cookies(origin) {
    let cookies = this.jar.get(origin);
    if (!cookies) {
      cookies = new Map();
      this.jar.set(origin, cookies);
    }
    return cookies;
  }

  /**
   * A copy of this browser's cookies (another browser that stole them).
   * @returns {Browser}
   */
  clone() {
    const copy = new Browser();
    for (const [origin, cookies] of this.jar) copy.jar.set(origin, new Map(cookies));
    return copy;
  }

  /**
   * @param {string | URL} url
   * @param {RequestInit} [init]
   * @returns {Promise<{ status: number, location: string | null, body: string, setCookies: string[], url: URL }>}
   */
  async request(url, init = {}) {
    const target = new URL(url);
    const cookies = this.cookies(target.origin);
    /** @type {Record<string, string>} */
    const headers = { ...(/** @type {Record<string, string>} */ (init.headers ?? {})) };
    if (cookies.size > 0) headers.cookie = [...cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    const response = await fetch(target, { ...init, headers, redirect: "manual", signal: AbortSignal.timeout(30_000) });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(";");
      const at = (pair ?? "").indexOf("=");
      if (at <= 0) continue;
      const name = (pair ?? "").slice(0, at).trim();
      const value = (pair ?? "").slice(at + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === "") cookies.delete(name);
      else cookies.set(name, value);
    }
    const location = response.headers.get("location");
    return {
      status: response.status,
      location: location === null ? null : new URL(location, target).href,
      body: await response.text(),
      setCookies,
      url: target,
    };
  }

  /** @param {string | URL} url */
  get(url) {
    return this.request(url);
  }

  /**
   * Posts `form` (urlencoded) as a page of `url`'s own origin would.
   * @param {string | URL} url
   * @param {Record<string, string>} form
   */
  post(url, form) {
    return this.request(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin },
      body: new URLSearchParams(form).toString(),
    });
  }
}
