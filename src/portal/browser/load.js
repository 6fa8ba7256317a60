// @ts-check
/// <reference lib="dom" />
// Loading what the page shows from the service, and run(): the frame every user action runs in.

import { api, ApiFailure } from "./api.js";
import { dropSession, render, S } from "./state.js";
import { announce, clearError, explain, Problem, showError } from "./ui.js";
import { classifyWalletError } from "./wallets.js";

/** Runs one user action: marks the page busy, reports failures, always re-renders. */
/**
 * @param {string} description what the status line says meanwhile
 * @param {string} doing what a failure's explanation starts with
 * @param {() => Promise<unknown>} fn
 */
export async function run(description, doing, fn) {
  if (S.busy) return;
  clearError();
  S.busy = description;
  announce(description);
  render();
  try {
    await fn();
  } catch (e) {
    // For whoever debugs the page; a request the user declined is no fault.
    if (!(e instanceof Problem) && classifyWalletError(e) !== "rejected") console.warn(doing, e);
    if (e instanceof ApiFailure && e.status === 401) dropSession();
    if (e instanceof ApiFailure && e.code === "price_unavailable") void loadPricing();
    announce("");
    showError(explain(e, doing));
  } finally {
    S.busy = null;
    render();
  }
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let pricingTimer;
export async function loadPricing() {
  clearTimeout(pricingTimer);
  try {
    S.pricing = await api("/v1/pricing");
    S.pricingError = null;
  } catch (e) {
    const wait = e instanceof ApiFailure && e.retryAfter ? e.retryAfter : 5;
    S.pricingError = {
      message: e instanceof ApiFailure && e.code === "price_unavailable"
        ? "Prices are temporarily unavailable: the SOL price feed isn't answering."
        : explain(e, "Loading prices"),
      retryAt: Date.now() + wait * 1000,
    };
    pricingTimer = setTimeout(loadPricing, wait * 1000);
  }
  render();
}

export async function loadState() {
  try {
    // Signed out is an answer, not a 401: a browser logs every 401 as an error.
    const { wallet } = await api("/portal/api/session");
    if (!wallet) {
      dropSession();
      return;
    }
    const st = await api("/portal/api/state");
    S.signedIn = st.wallet;
    S.purchases = st.purchases;
    await loadWebhooks();
    await loadBuilds();
  } catch (e) {
    if (!(e instanceof ApiFailure && e.status === 401)) throw e;
    dropSession();
  } finally {
    S.stateLoaded = true;
  }
}

export async function loadWebhooks() {
  /** @type {Record<string, import("./state.js").Webhook[]>} */
  const next = {};
  for (const p of S.purchases) {
    const k = p.key;
    if (!k || k.status !== "active") continue;
    next[k.keyId] = (await api(`/portal/api/keys/${k.keyId}/webhooks`)).items;
  }
  S.webhooks = next;
}

export async function loadBuilds() {
  /** @type {Record<string, import("./state.js").BuildItem[]>} */
  const next = {};
  for (const p of S.purchases) {
    const k = p.key;
    if (!k || k.status !== "active") continue;
    next[k.keyId] = (await api(`/portal/api/keys/${k.keyId}/builds`)).items;
  }
  S.builds = next;
}
