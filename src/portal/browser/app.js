// @ts-check
/// <reference lib="dom" />
// The portal page: pricing, wallet sign-in, the access payment and the API key's life.
// No framework: one state object (state.js) and a render() that rebuilds the sections with DOM
// calls (never parsed HTML strings, so nothing a wallet or the server returns can become markup).
// Each section is a panel module; this one wires them and starts the page. Bundled for the
// browser into src/portal/page/app.js by `deno task portal:build`.

import { renderAccess } from "./access-panel.js";
import { renderEnv } from "./env-panel.js";
import { cancelConfirm } from "./key-panel.js";
import { loadPricing, loadState } from "./load.js";
import { renderPricing } from "./pricing-panel.js";
import { DISCOVERY_GRACE_MS, S, setRenderers } from "./state.js";
import { explain, showError } from "./ui.js";
import { renderWallet } from "./wallet-panel.js";
import { discoverWallets } from "./wallets.js";

// ---------------------------------------------------------------------------------------------
// Rendering

function render() {
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  // Sections are rebuilt on every render (a late load, a wallet registering): the focused
  // element is found again by its data-fid or its id, so keyboard users keep their place.
  const keep = S.focusNext ?? active?.getAttribute?.("data-fid") ?? (active?.id || null);
  renderEnv();
  renderPricing();
  renderWallet();
  renderAccess();
  S.focusNext = null;
  if (keep) {
    const el = document.querySelector(`[data-fid="${CSS.escape(keep)}"]`) ??
      document.getElementById(keep);
    if (el instanceof HTMLElement && el !== document.activeElement) el.focus();
  }
}

// ---------------------------------------------------------------------------------------------
// Start

setRenderers({ all: render, access: renderAccess });

// Escape cancels an open confirmation wherever the focus is (it may be on the page itself).
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && S.confirm && !e.defaultPrevented) {
    e.preventDefault();
    cancelConfirm();
  }
});

globalThis.addEventListener("beforeunload", (e) => {
  // The key is only in this page's memory; leaving loses it for good.
  if (S.reveal) e.preventDefault();
});

const registry = discoverWallets(globalThis);
S.wallets = registry.get();
registry.on(() => {
  S.wallets = registry.get();
  render();
});
setTimeout(() => {
  S.discoveryDone = true;
  render();
}, DISCOVERY_GRACE_MS);

render();
void loadPricing();
loadState().catch((e) => showError(explain(e, "Loading your account"))).finally(render);
