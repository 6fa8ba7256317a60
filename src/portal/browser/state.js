// @ts-check
/// <reference lib="dom" />
// The page's one state object, what the served page tells it (its <meta>s), and the render
// hooks the panels call after changing it.

import { chainFor } from "./wallets.js";

/**
 * The payment being followed. "confirming": the wallet sent it, the page waits for the network;
 * "rechecking": a payment that timed out is being checked again; "timeout": not seen in time. A
 * top-up is waited for until the purchase has received more than `receivedBefore`.
 * @typedef {{
 *   purchaseId: string | null,
 *   phase: "quote" | "wallet" | "confirming" | "rechecking" | "timeout",
 *   started: number,
 *   now: number,
 *   amount?: string,
 *   currency?: string,
 *   usd?: number,
 *   signature?: string,
 *   receivedBefore?: string,
 * }} Payment
 */

/**
 * A purchase as GET /portal/api/state lists it (src/portal/state.ts), with its active key.
 * @typedef {{
 *   purchaseId: string,
 *   status: string,
 *   currency: string,
 *   amount: string,
 *   usd: number,
 *   quotedAt: number,
 *   paidAt: number | null,
 *   signature: string | null,
 *   received: string,
 *   shortfall: string | null,
 *   key: Key | null,
 * }} Purchase
 */

/**
 * @typedef {{
 *   keyId: string,
 *   status: string,
 *   createdAt: number,
 *   rotatedAt: number | null,
 *   usageToday: { tokens: number, metadata: number, requests: number },
 *   reason: string | null,
 *   conduct: Conduct,
 * }} Key
 */

/**
 * Creations of the purchase that landed without the full fee (or altered), as GET /v1/me shows.
 * @typedef {{
 *   recent: { window: number, landings: number, unverified: number, payers: number },
 *   byKeyWallet: number,
 *   unverifiedLandings: { mint: string, signature: string, payer: string, at: string, byKeyWallet: boolean }[],
 *   policy: { refusePayerAfter: number, suspendAfterByKeyWallet: number, suspendShare: number, suspendMinPayers: number },
 * }} Conduct
 */

/** @typedef {{ id: string, url: string, status: string }} Webhook */

/**
 * One of a key's newest builds, as GET /portal/api/keys/{keyId}/builds lists it
 * (src/portal/builds.ts).
 * @typedef {{
 *   buildId: number,
 *   mint: string,
 *   name: string,
 *   symbol: string,
 *   uri: string | null,
 *   updates: number,
 *   status: string,
 *   signature: string | null,
 *   createdAt: number,
 * }} BuildItem
 */

/**
 * An update of a confirmed build being written, reviewed or followed: the form's draft, then
 * what POST /portal/api/keys/{keyId}/builds/{mint}/update answered, then the record's status.
 * @typedef {{
 *   keyId: string,
 *   mint: string,
 *   name: string,
 *   draftUri: string,
 *   immutable: boolean,
 *   built: null | {
 *     updateId: string,
 *     transaction: string,
 *     requiredSigner: string,
 *     costs: Record<"networkFeeLamports" | "priorityFeeLamports" | "rentTopUpLamports" | "serviceFeeLamports" | "totalLamports", string>,
 *     before: Record<"name" | "symbol" | "uri" | "isMutable" | "updateAuthority", unknown>,
 *     after: Record<"name" | "symbol" | "uri" | "isMutable" | "updateAuthority", unknown>,
 *   },
 *   status: string | null,
 * }} TokenUpdate
 */

/**
 * A build just refreshed (POST /portal/api/keys/{keyId}/builds/{mint}/refresh): the new
 * transaction to sign, and what changed. `sent`: the wallet's signature once it sent it.
 * @typedef {{
 *   keyId: string,
 *   mint: string,
 *   name: string,
 *   transaction: string,
 *   requiredSigner: string,
 *   recentBlockhash: string,
 *   lastValidBlockHeight: number,
 *   expiresInSeconds: number,
 *   fee: { lamports: string, usd: number },
 *   feeQuote: "quoted" | "repriced",
 *   refreshes: number,
 *   sent: string | null,
 * }} RefreshedBuild
 */

/** What an amount is shown from: a quote, a payment, a purchase. */
/** @typedef {{ currency: string, amount: string, usd: number }} Amount */

/** Wallets that inject late still register; after this long with none we say none is installed. */
export const DISCOVERY_GRACE_MS = 1500;
export const POLL_MS = 1500;
/** A payment's blockhash lives ~60-90 s; past this it either landed or never will. */
export const CONFIRM_TIMEOUT_MS = 90_000;
export const TYPICAL_CONFIRM_S = 30;

const network = document.querySelector('meta[name="tcb-network"]')?.getAttribute("content") ||
  "mainnet-beta";
/** The currencies this service is configured to take; the page offers no other. */
export const currencies = (document.querySelector('meta[name="tcb-currencies"]')?.getAttribute(
  "content",
) || "SOL").split(/\s+/).filter((c) => c === "SOL" || c === "STABLECOIN");
/** Quotes whose payment the user declined in the wallet: never signed, so they can't be paid. */
const DECLINED_KEY = "tcb-declined-quotes";

export const S = {
  network,
  chain: chainFor(network),
  pricing: /** @type {any} */ (null),
  pricingError: /** @type {null | {message: string, retryAt: number}} */ (null),
  wallets: /** @type {any[]} */ ([]),
  discoveryDone: false,
  wallet: /** @type {any} */ (null),
  account: /** @type {any} */ (null),
  /** The wallet address of the server session (cookie), if any. */
  signedIn: /** @type {string | null} */ (null),
  stateLoaded: false,
  purchases: /** @type {Purchase[]} */ ([]),
  /** A short operation in flight: its description; buttons are disabled meanwhile. */
  busy: /** @type {string | null} */ (null),
  /** @type {Payment | null} */
  payment: null,
  /** @type {Set<string>} */
  declined: readDeclined(),
  /** @type {null | {keyId: string, apiKey: string, reason: "created" | "rotated"}} */
  reveal: null,
  /** @type {null | {kind: "rotate" | "delete", keyId: string}} */
  confirm: null,
  currency: currencies[0] ?? "SOL",
  /** Each active key's webhook endpoints, by key id. */
  webhooks: /** @type {Record<string, Webhook[]>} */ ({}),
  /** The URL being typed per key, kept across re-renders. */
  webhookDraft: /** @type {Record<string, string>} */ ({}),
  /** A just-registered endpoint's secret, shown once. */
  webhookSecret: /** @type {null | {keyId: string, id: string, url: string, secret: string}} */ (
    null
  ),
  /** Each active key's newest builds, by key id. */
  builds: /** @type {Record<string, BuildItem[]>} */ ({}),
  /** @type {RefreshedBuild | null} */
  refreshed: null,
  /** @type {TokenUpdate | null} */
  tokenUpdate: null,
  /** The element (data-fid or id) the next render moves the focus to. */
  focusNext: /** @type {string | null} */ (null),
};

/**
 * The renderers, which app.js sets at start. Panels re-render through these rather than importing
 * app.js, so the modules import one way only.
 */
const renderers = { all: () => {}, access: () => {} };

/** @param {{ all: () => void, access: () => void }} r */
export function setRenderers(r) {
  Object.assign(renderers, r);
}

/** Rebuilds every section from S. */
export const render = () => renderers.all();
/** Rebuilds the access section only (the payment's elapsed time). */
export const renderAccess = () => renderers.access();

function readDeclined() {
  try {
    const v = JSON.parse(sessionStorage.getItem(DECLINED_KEY) ?? "[]");
    return new Set(Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);
  } catch {
    return new Set();
  }
}

/** A declined quote leaves the list: the next quote replaces it. */
/** @param {string} purchaseId */
export function markDeclined(purchaseId) {
  S.declined.add(purchaseId);
  try {
    sessionStorage.setItem(DECLINED_KEY, JSON.stringify([...S.declined]));
  } catch {
    // Storage off (private mode): it is hidden for this page's life only.
  }
}

export function dropSession() {
  S.signedIn = null;
  S.purchases = [];
  S.confirm = null;
  S.builds = {};
  S.refreshed = null;
}
