// Signs this tab in, before any other script runs. The URL `vtp` prints carries the service's
// token in its fragment (`/console/#token=...&page=/runs/<id>`), which the browser never sends
// to any server: keep it in this tab's sessionStorage (this origin only, and the origin includes
// the port) and take it out of the address bar and the tab's history at once. app.js sends it as
// `Authorization: Bearer` on each API call; nothing else (no cookie) signs a request in.
"use strict";

(function signIn() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.has("token")) {
    sessionStorage.setItem("vtp-console-token", fragment.get("token"));
    const page = fragment.get("page") || "";
    history.replaceState(null, "", location.pathname + (page.startsWith("/") ? `#${page}` : ""));
  } else if (new URLSearchParams(location.search).has("token")) {
    // An old `/console/?token=...` link: its token went to the server in the query, so it is
    // not taken; drop it from the address bar, and the page says which address to use.
    history.replaceState(null, "", location.pathname + location.hash);
    document.documentElement.dataset.oldLink = "true";
  }
})();
