// Signs this tab in, before any other script runs. The address `vtp` prints carries a one-time
// code in its fragment (`/console/#code=...&page=/runs/<id>`), which the browser never sends to
// any server. Take it out of the address bar at once, then trade it for the service's token at
// /console/signin: the browser's history keeps only the address opened, whose code is spent by
// then. The token lives in this tab's sessionStorage (this origin only, and the origin includes
// the port); app.js sends it as `Authorization: Bearer` on each API call, once `vtpSignIn` (the
// reason this tab is signed out, or "") has settled. Nothing else (no cookie) signs a request in.
"use strict";

window.vtpSignIn = (function signIn() {
  const TOKEN_KEY = "vtp-console-token";
  const fragment = new URLSearchParams(location.hash.slice(1));
  const page = fragment.get("page") || "";
  const rest = page.startsWith("/") ? `#${page}` : "";
  if (new URLSearchParams(location.search).has("token") || fragment.has("token")) {
    // An old `?token=` or `#token=` address: a token in an address stays in history, so it is
    // not taken; drop it from the address bar, and the page says which address to use.
    history.replaceState(null, "", location.pathname + rest);
    document.documentElement.dataset.oldLink = "true";
    return Promise.resolve("");
  }
  if (!fragment.has("code")) return Promise.resolve("");
  history.replaceState(null, "", location.pathname + rest);
  return fetch("signin", {
    method: "POST", credentials: "omit", cache: "no-store",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ code: fragment.get("code") }),
  }).then(async (response) => {
    const answer = await response.json().catch(() => ({}));
    if (response.ok && answer.token) {
      sessionStorage.setItem(TOKEN_KEY, answer.token);
      return "";
    }
    // A spent code in a tab already signed in (reloaded, or reopened from its history) is fine.
    if (sessionStorage.getItem(TOKEN_KEY)) return "";
    return (answer.error && answer.error.message) || `Sign-in failed (HTTP ${response.status}).`;
  }, () => "The service did not answer the sign-in: is `vtp local serve` still running?");
})();
