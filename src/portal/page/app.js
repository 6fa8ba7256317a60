// The portal page: pricing, wallet sign-in, the access payment and the API key's life.
// No framework: one state object and a render() that rebuilds the three sections with DOM calls
// (never parsed HTML strings, so nothing a wallet or the server returns can become markup).

import { api, ApiFailure } from "./api.js";
import { base58Encode, base64Decode } from "./encoding.js";
import { formatBytes, formatSol, formatTime, formatUsd, plural, shortAddress } from "./format.js";
import {
  chainFor,
  classifyWalletError,
  CONNECT,
  DISCONNECT,
  discoverWallets,
  EVENTS,
  has,
  SIGN_AND_SEND,
  SIGN_MESSAGE,
  SIGN_TRANSACTION,
} from "./wallets.js";

/** Wallets that inject late still register; after this long with none we say none is installed. */
const DISCOVERY_GRACE_MS = 1500;
const POLL_MS = 1500;
/** A payment's blockhash lives ~60-90 s; past this it either landed or never will. */
const CONFIRM_TIMEOUT_MS = 90_000;
const TYPICAL_CONFIRM_S = 30;

const network = document.querySelector('meta[name="tcb-network"]')?.getAttribute("content") ||
  "mainnet-beta";
/** The currencies this service is configured to take; the page offers no other. */
const currencies = (document.querySelector('meta[name="tcb-currencies"]')?.getAttribute(
  "content",
) || "SOL").split(/\s+/).filter((c) => c === "SOL" || c === "STABLECOIN");
/** Quotes whose payment the user declined in the wallet: never signed, so they can't be paid. */
const DECLINED_KEY = "tcb-declined-quotes";

const S = {
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
  purchases: /** @type {any[]} */ ([]),
  /** A short operation in flight: its description; buttons are disabled meanwhile. */
  busy: /** @type {string | null} */ (null),
  /**
   * The payment being followed. "confirming": the wallet sent it, the page waits for the network;
   * "rechecking": a payment that timed out is being checked again; "timeout": not seen in time.
   * @type {null | {purchaseId: string | null, phase: "quote" | "wallet" | "confirming" | "rechecking" | "timeout", started: number, now: number, amount?: string, currency?: string, usd?: number, signature?: string}}
   */
  payment: null,
  /** @type {Set<string>} */
  declined: readDeclined(),
  /** @type {null | {keyId: string, apiKey: string, reason: "created" | "rotated"}} */
  reveal: null,
  /** @type {null | {kind: "rotate" | "delete", keyId: string}} */
  confirm: null,
  currency: currencies[0] ?? "SOL",
  /** Each active key's webhook endpoints, by key id. */
  webhooks: /** @type {Record<string, any[]>} */ ({}),
  /** The URL being typed per key, kept across re-renders. */
  webhookDraft: /** @type {Record<string, string>} */ ({}),
  /** A just-registered endpoint's secret, shown once. */
  webhookSecret: /** @type {null | {keyId: string, id: string, url: string, secret: string}} */ (
    null
  ),
};

function readDeclined() {
  try {
    const v = JSON.parse(sessionStorage.getItem(DECLINED_KEY) ?? "[]");
    return new Set(Array.isArray(v) ? v.filter((x) => typeof x === "string") : []);
  } catch {
    return new Set();
  }
}

/** A declined quote leaves the list: the next quote replaces it. */
function markDeclined(purchaseId) {
  S.declined.add(purchaseId);
  try {
    sessionStorage.setItem(DECLINED_KEY, JSON.stringify([...S.declined]));
  } catch {
    // Storage off (private mode): it is hidden for this page's life only.
  }
}

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const statusEl = $("status");
const alertEl = $("alert");
let focusNext = /** @type {string | null} */ (null);

// ---------------------------------------------------------------------------------------------
// DOM helpers

/**
 * @param {string} tag
 * @param {Record<string, any> | null} [props]
 * @param {...any} children
 */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k === "value" || k === "checked" || k === "disabled") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/**
 * While an action runs, other buttons are aria-disabled rather than disabled: a disabled button
 * drops keyboard focus, and every re-render would throw the user back to the top of the page.
 */
function button(label, onclick, opts = {}) {
  const waiting = !!S.busy && !opts.always;
  return h("button", {
    type: "button",
    class: opts.class ?? "btn",
    "data-fid": opts.fid,
    disabled: !!opts.disabled,
    "aria-disabled": waiting ? "true" : null,
    "aria-describedby": opts.describedBy,
    onclick: (/** @type {Event} */ e) => {
      if (!S.busy || opts.always) onclick(e);
    },
  }, label);
}

/** A failure whose message is already written for the user. */
class Problem extends Error {}

let statusTimer = 0;
/**
 * Polite progress messages for screen readers and sighted users alike. A settled message fades
 * after a while so the bar at the bottom of the screen doesn't cover the page for good.
 */
function announce(text) {
  statusEl.textContent = text;
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => {
    if (!S.busy && !S.payment && statusEl.textContent === text) statusEl.textContent = "";
  }, 12_000);
}

function showError(text) {
  alertEl.replaceChildren(
    h("p", null, text),
    button("Dismiss", () => clearError(), { class: "btn btn-small", always: true }),
  );
  alertEl.hidden = false;
  // On a phone the notices sit in the flow, under the access section: bring the error into view.
  if (globalThis.matchMedia?.("(max-width: 40rem)").matches) {
    alertEl.scrollIntoView({ block: "nearest" });
  }
}

function clearError() {
  alertEl.replaceChildren();
  alertEl.hidden = true;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Explaining failures

function explain(e, doing) {
  if (e instanceof Problem) return e.message;
  if (e instanceof ApiFailure) {
    switch (e.code) {
      case "network":
        return e.message;
      case "price_unavailable":
        return "Prices are temporarily unavailable (the SOL price feed is not answering), so a payment in SOL can't be quoted right now. Try again in a few seconds.";
      case "unauthorized":
        return "Your session has ended. Connect your wallet and sign in again.";
      case "insufficient_funds":
        return "Your wallet doesn't hold enough to pay. Add funds and try again.";
      case "forbidden":
        return `${doing} was refused: ${e.message}.`;
      case "server_error":
        return `${doing} failed on our side. Please retry.`;
      default:
        return `${doing} failed: ${e.message}`;
    }
  }
  switch (classifyWalletError(e)) {
    case "rejected":
      return `You declined the request in your wallet. Nothing was signed and no funds moved.`;
    case "insufficient":
      return "Your wallet doesn't have enough balance for this payment plus the network fee. Add funds and try again.";
    case "unauthorized":
      return "Your wallet refused: this site isn't connected to it any more. Connect again.";
    default:
      return `${doing} failed in your wallet: ${e?.message ?? String(e)}`;
  }
}

/** Runs one user action: marks the page busy, reports failures, always re-renders. */
async function run(description, doing, fn) {
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

function dropSession() {
  S.signedIn = null;
  S.purchases = [];
  S.confirm = null;
}

// ---------------------------------------------------------------------------------------------
// Loading

let pricingTimer = 0;
async function loadPricing() {
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

async function loadState() {
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
  } catch (e) {
    if (!(e instanceof ApiFailure && e.status === 401)) throw e;
    dropSession();
  } finally {
    S.stateLoaded = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Wallet: connect and sign in

let offWalletEvents = () => {};

function connect(wallet) {
  return run(
    `Waiting for ${wallet.name}: approve the connection there.`,
    "Connecting",
    async () => {
      const out = await wallet.features[CONNECT].connect();
      const accounts = out?.accounts?.length ? out.accounts : wallet.accounts;
      const account = accounts?.find((a) =>
        !a.chains || a.chains.some((c) => c.startsWith("solana:"))
      );
      if (!account) throw new Problem(`${wallet.name} shared no Solana account with this page.`);
      setConnected(wallet, account);
      if (S.signedIn === account.address) {
        announce(`Connected ${wallet.name} (${shortAddress(account.address)}).`);
        return;
      }
      await signIn();
    },
  );
}

function setConnected(wallet, account) {
  offWalletEvents();
  S.wallet = wallet;
  S.account = account;
  if (has(wallet, EVENTS)) {
    // Switching accounts in the wallet must not leave us paying from an address we didn't sign
    // in with: forget the connection and let the user sign in again.
    offWalletEvents = wallet.features[EVENTS].on("change", (/** @type {any} */ props) => {
      if (!props?.accounts) return;
      const same = props.accounts.find((a) => a.address === S.account?.address);
      if (!same) {
        S.account = null;
        announce("Your wallet switched accounts. Connect again to continue with the new one.");
        render();
      }
    });
  } else {
    offWalletEvents = () => {};
  }
}

async function signIn() {
  const { wallet, account } = S;
  if (!has(wallet, SIGN_MESSAGE)) {
    throw new Problem(
      `${wallet.name} can't sign messages, which signing in needs. Use another wallet (Phantom, Solflare and Backpack can).`,
    );
  }
  const challenge = await api("/portal/api/challenge", { json: { wallet: account.address } });
  announce("Sign the sign-in message in your wallet. It costs nothing and moves no funds.");
  const [signed] = await wallet.features[SIGN_MESSAGE].signMessage({
    account,
    message: new TextEncoder().encode(challenge.message),
  });
  await api("/portal/api/session", {
    json: {
      wallet: account.address,
      nonce: challenge.nonce,
      signature: base58Encode(signed.signature),
    },
  });
  await loadState();
  announce(`Signed in as ${shortAddress(account.address)}.`);
  focusNext = "access-heading";
}

function signOut() {
  return run("Signing out…", "Signing out", async () => {
    await api("/portal/api/logout", { json: {} });
    if (S.wallet && has(S.wallet, DISCONNECT)) {
      await S.wallet.features[DISCONNECT].disconnect().catch(() => {});
    }
    offWalletEvents();
    S.wallet = null;
    S.account = null;
    S.reveal = null;
    dropSession();
    announce("Signed out.");
    focusNext = "wallet-heading";
  });
}

// ---------------------------------------------------------------------------------------------
// Payment

const canPay = () => !!S.account && S.account.address === S.signedIn;

/** `topUpOf`: an underpaid purchase; its top-up quote (the rest, at today's price) is paid. */
function buy(topUpOf = null) {
  const wallet = S.wallet;
  if (!canPay()) {
    showError("Connect the wallet you signed in with first; it pays the access fee.");
    return;
  }
  if (!has(wallet, SIGN_AND_SEND)) {
    // Without an RPC of its own (connect-src 'self'), the page can't broadcast a transaction the
    // wallet only signed; see docs/portal.md.
    showError(
      has(wallet, SIGN_TRANSACTION)
        ? `${wallet.name} can sign transactions but can't send them, and this page doesn't send them for it. Use a wallet that can send (Phantom, Solflare or Backpack).`
        : `${wallet.name} can't send Solana transactions. Use Phantom, Solflare or Backpack.`,
    );
    return;
  }
  return run("Preparing the payment…", "The payment", async () => {
    S.payment = { purchaseId: null, phase: "quote", started: Date.now(), now: Date.now() };
    try {
      const quote = typeof topUpOf === "string"
        ? await api(`/portal/api/purchases/${topUpOf}/top-up`, { json: {} })
        : await api("/portal/api/purchases", { json: { currency: S.currency } });
      S.payment = {
        ...S.payment,
        purchaseId: quote.purchaseId,
        phase: "wallet",
        amount: quote.amount,
        currency: quote.currency,
        usd: quote.usd,
        // A top-up is waited for until the purchase has received more than it had.
        receivedBefore: S.purchases.find((p) => p.purchaseId === quote.purchaseId)?.received ??
          "0",
      };
      announce(`Approve the payment of ${amountText(quote)} in your wallet.`);
      render();
      const [sent] = await wallet.features[SIGN_AND_SEND].signAndSendTransaction({
        account: S.account,
        chain: S.chain,
        transaction: base64Decode(quote.transaction),
        options: { preflightCommitment: "confirmed", commitment: "confirmed" },
      });
      S.payment = {
        ...S.payment,
        phase: "confirming",
        started: Date.now(),
        now: Date.now(),
        signature: base58Encode(sent.signature),
      };
    } catch (e) {
      const quoted = S.payment?.purchaseId;
      // Declined in the wallet: nothing was signed, so this quote can never be paid. It leaves
      // the page, and the next attempt gets a fresh quote in its place.
      if (quoted && classifyWalletError(e) === "rejected") markDeclined(quoted);
      S.payment = null;
      await loadState().catch(() => {});
      throw e;
    }
  }).then(() => {
    if (S.payment?.phase === "confirming") return waitForPayment(S.payment.purchaseId, "sent");
  });
}

function amountText(p) {
  if (p.currency === "SOL") return `${formatSol(p.amount)} (${formatUsd(p.usd)})`;
  return `${formatUsd(p.usd)} in stablecoin`;
}

/**
 * Polls the service until it sees the payment on chain, showing progress meanwhile. `how` says
 * what the user knows: "sent" just now by the wallet, or "recheck" of one that timed out.
 */
async function waitForPayment(purchaseId, how) {
  const started = Date.now();
  const receivedBefore = S.payment?.receivedBefore ?? "0";
  const phase = how === "sent" ? "confirming" : "rechecking";
  S.payment = { ...(S.payment ?? {}), purchaseId, phase, started, now: started };
  announce(
    how === "sent"
      ? "Payment sent. Waiting for the network to confirm it…"
      : "Checking again whether your payment reached the network…",
  );
  render();
  let failures = 0;
  while (S.payment?.purchaseId === purchaseId && Date.now() - started < CONFIRM_TIMEOUT_MS) {
    try {
      const r = await api(`/portal/api/purchases/${purchaseId}/check`, { json: {} });
      failures = 0;
      if (r.status === "paid") {
        S.payment = null;
        await loadState();
        announce("Payment confirmed. You can create your API key now.");
        focusNext = `create-${purchaseId}`;
        render();
        return;
      }
      if (r.status === "underpaid" && r.received !== receivedBefore) {
        // Landed after its quote expired and the price moved: the rest is a top-up away.
        S.payment = null;
        await loadState();
        announce("The payment landed but doesn't cover the fee at today's price.");
        focusNext = `top-up-${purchaseId}`;
        render();
        return;
      }
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 401) {
        S.payment = null;
        dropSession();
        showError(explain(e, "Checking the payment"));
        render();
        return;
      }
      // A hiccup while polling is not a verdict on the payment; give up only if it persists.
      if (++failures >= 5) break;
    }
    await sleep(POLL_MS);
    if (S.payment?.purchaseId !== purchaseId) return;
    S.payment.now = Date.now();
    renderAccess();
  }
  if (S.payment?.purchaseId === purchaseId) {
    // Not a failure yet: the panel explains and offers both ways forward.
    S.payment.phase = "timeout";
    announce("Your payment isn't confirmed yet. Check again, or stop waiting.");
    focusNext = `recheck-${purchaseId}`;
    render();
  }
}

/** The timed-out payment, checked again (another full wait). */
function recheck(purchaseId) {
  clearError();
  void waitForPayment(purchaseId, "recheck");
}

/** Stops following a timed-out payment: buying is possible again; the quote stays listed. */
function abandon() {
  S.payment = null;
  clearError();
  announce(
    "Stopped waiting. If that payment lands later, check it under Payments not confirmed. Nothing else moved.",
  );
  focusNext = "access-heading";
  render();
  // The quote joins the list of payments not confirmed, where it can be checked later.
  void loadState().catch(() => {}).finally(render);
}

/**
 * One look at a quote listed as not confirmed: the user may or may not have sent a payment for
 * it, so the page claims neither, and says what the service saw.
 */
function checkQuote(purchaseId) {
  return run("Checking that quote…", "Checking the payment", async () => {
    const r = await api(`/portal/api/purchases/${purchaseId}/check`, { json: {} });
    await loadState();
    if (r.status === "paid") {
      announce("Payment confirmed. You can create your API key now.");
      focusNext = `create-${purchaseId}`;
    } else {
      announce(
        "No payment for that quote has reached the network. If you sent one, check again in a minute; if not, nothing moved and you can pay with a new quote.",
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Keys

function createKey(purchaseId) {
  return run("Creating your API key…", "Creating the key", async () => {
    const r = await api(`/portal/api/purchases/${purchaseId}/key`, { json: {} });
    S.reveal = { keyId: r.keyId, apiKey: r.apiKey, reason: "created" };
    await loadState();
    announce("Your API key is ready. Copy it now: it is shown only once.");
    focusNext = "reveal-heading";
  });
}

function askConfirm(kind, keyId) {
  clearError();
  S.confirm = { kind, keyId };
  focusNext = "confirm-text";
  render();
}

function cancelConfirm() {
  const c = S.confirm;
  S.confirm = null;
  if (c) focusNext = `${c.kind}-${c.keyId}`;
  announce("Cancelled. Nothing changed.");
  render();
}

function rotate(keyId) {
  return run("Rotating the key…", "Rotating the key", async () => {
    const r = await api(`/portal/api/keys/${keyId}/rotate`, { json: {} });
    S.confirm = null;
    S.reveal = { keyId: r.keyId, apiKey: r.apiKey, reason: "rotated" };
    await loadState();
    announce(
      "Key rotated. The old key stopped working. Copy the new one now: it is shown only once.",
    );
    focusNext = "reveal-heading";
  });
}

function remove(keyId, purchaseId) {
  return run("Deleting the key…", "Deleting the key", async () => {
    await api(`/portal/api/keys/${keyId}/delete`, { json: {} });
    S.confirm = null;
    if (S.reveal?.keyId === keyId) S.reveal = null;
    await loadState();
    announce("Key deleted; it no longer works. You can create a new key on this purchase.");
    focusNext = `create-${purchaseId}`;
  });
}

function dismissReveal() {
  S.reveal = null;
  announce("The key is hidden now and can't be shown again.");
  focusNext = "access-heading";
  render();
}

async function copyKey() {
  const input = /** @type {HTMLTextAreaElement | null} */ (document.getElementById("api-key"));
  if (!input || !S.reveal) return;
  try {
    await navigator.clipboard.writeText(S.reveal.apiKey);
    announce("API key copied to the clipboard.");
  } catch {
    // No clipboard permission (some phones, http origins): leave it selected for a manual copy.
    input.focus();
    input.select();
    announce(
      "Couldn't copy automatically. The key is selected: copy it with your device's copy command.",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering

function render() {
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  // Sections are rebuilt on every render (a late load, a wallet registering): the focused
  // element is found again by its data-fid or its id, so keyboard users keep their place.
  const keep = focusNext ?? active?.getAttribute?.("data-fid") ?? (active?.id || null);
  renderEnv();
  renderPricing();
  renderWallet();
  renderAccess();
  focusNext = null;
  if (keep) {
    const el = document.querySelector(`[data-fid="${CSS.escape(keep)}"]`) ??
      document.getElementById(keep);
    if (el instanceof HTMLElement && el !== document.activeElement) el.focus();
  }
}

function renderEnv() {
  const box = $("env");
  if (S.network !== "localnet") {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(
    h(
      "div",
      { class: "notice notice-info", id: "localnet", role: "note" },
      h("p", null, h("strong", null, "Local development chain.")),
      h(
        "p",
        null,
        "Browser wallets (Phantom, Solflare, Backpack) only know the public networks, so they can't pay here. Get a key from a terminal instead, with the service running:",
      ),
      h(
        "ul",
        { class: "plain" },
        h(
          "li",
          null,
          h("pre", { class: "command" }, "npx -y deno@2.9.6 task dev:key"),
          "buys a key with a funded local wallet and prints it;",
        ),
        h(
          "li",
          null,
          h("pre", { class: "command" }, "npx -y deno@2.9.6 task demo"),
          "does that, then creates a whole token and verifies it.",
        ),
      ),
      h("p", { class: "small" }, "Signing in and managing keys work here as usual."),
    ),
  );
}

function renderPricing() {
  const box = $("pricing");
  const p = S.pricing;
  const parts = [];
  if (S.pricingError) {
    const secs = Math.max(0, Math.ceil((S.pricingError.retryAt - Date.now()) / 1000));
    parts.push(
      h(
        "div",
        { class: "notice notice-warn", id: "price-unavailable" },
        h(
          "p",
          null,
          S.pricingError.message,
          ` Retrying automatically${secs ? ` in about ${secs} s` : ""}.`,
        ),
        button("Retry now", () => loadPricing(), {
          class: "btn btn-small",
          fid: "retry-pricing",
          always: true,
        }),
      ),
    );
  }
  if (!p) {
    if (!S.pricingError) parts.push(h("p", null, "Loading prices…"));
    parts.push(
      h(
        "p",
        { class: "muted" },
        `Access costs a one-time fee per purchase; each token creation carries its own fee.`,
      ),
    );
    box.replaceChildren(...parts);
    return;
  }
  const accessSol = p.token.solUsd ? (p.access.usd / p.token.solUsd).toFixed(4) : null;
  parts.push(
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Access"),
      h(
        "dd",
        null,
        `${formatUsd(p.access.usd)} once per purchase`,
        accessSol
          ? h(
            "span",
            { class: "muted" },
            ` (about ${accessSol} SOL at ${formatUsd(p.token.solUsd)}/SOL)`,
          )
          : null,
      ),
      h("dt", null, "Per token"),
      h(
        "dd",
        null,
        `${formatUsd(p.token.usd)} (${
          formatSol(p.token.lamports)
        } now), inside each creation transaction`,
      ),
      h("dt", null, "Network costs"),
      h("dd", { id: "network-costs" }, networkCosts(p.token)),
      h("dt", null, "Options"),
      h(
        "dd",
        { id: "token-options" },
        "Token-2022 with a transfer fee, or a mint address that starts or ends with up to 4 characters of your choice (vanity): see the ",
        h("a", { href: "/docs" }, "API reference"),
        ".",
      ),
      h("dt", null, "Limits per key"),
      h(
        "dd",
        null,
        `${plural(p.limits.requestsPerHour, "request", "requests")} per hour, ${
          plural(p.limits.tokensPerDay, "token build", "token builds")
        } and ${
          plural(p.limits.metadataPerDay, "metadata item", "metadata items")
        } per day (UTC), images up to ${formatBytes(p.limits.imageBytes)}`,
      ),
      h("dt", null, "Network"),
      h("dd", null, p.network),
    ),
  );
  box.replaceChildren(...parts);
}

/**
 * What the network takes per token, for each token program, as GET /v1/pricing works it out
 * from the cluster's rent (the same arithmetic as a build's costs).
 * @param {{ networkLamports?: string, token2022NetworkLamports?: string }} token
 */
function networkCosts(token) {
  const paid =
    "Paid to the network by your wallet, besides the fee; each build lists its exact costs.";
  if (!token.networkLamports) return paid;
  const lamports = (/** @type {string} */ n) =>
    h("span", { class: "muted" }, ` (${BigInt(n).toLocaleString("en-US")} lamports)`);
  return [
    h(
      "span",
      { class: "cost-line" },
      h("strong", null, "SPL Token: "),
      `${formatSol(token.networkLamports)} per token`,
      lamports(token.networkLamports),
      ": rent of the mint, token account and metadata account, the metadata program's fee and the network fee.",
    ),
    token.token2022NetworkLamports
      ? h(
        "span",
        { class: "cost-line" },
        h("strong", null, "Token-2022: "),
        `at most ${formatSol(token.token2022NetworkLamports)}`,
        lamports(token.token2022NetworkLamports),
        ": the metadata lives in the mint, so no metadata account and no metadata program fee.",
      )
      : null,
    h("span", { class: "cost-line" }, paid),
  ];
}

function walletIcon(w) {
  // Wallet Standard icons are data: URLs; anything else would only trip our CSP.
  return typeof w.icon === "string" && /^data:image\/(svg\+xml|png|webp|gif|jpeg);/.test(w.icon)
    ? h("img", { src: w.icon, alt: "", width: 24, height: 24, class: "wallet-icon" })
    : null;
}

function walletList() {
  if (!S.wallets.length) {
    if (!S.discoveryDone) return h("p", { class: "muted" }, "Looking for wallets in this browser…");
    return h(
      "div",
      { class: "notice notice-warn", id: "no-wallet" },
      h("p", null, h("strong", null, "No Solana wallet found in this browser.")),
      h(
        "p",
        null,
        "Install a wallet that supports the Wallet Standard, such as Phantom, Solflare or Backpack, then reload this page. On a phone, open this page in your wallet app's built-in browser.",
      ),
    );
  }
  return h(
    "ul",
    { class: "wallets", "aria-label": "Wallets found in this browser" },
    S.wallets.map((w) =>
      h(
        "li",
        null,
        button([walletIcon(w), h("span", null, `Connect ${w.name}`)], () => connect(w), {
          class: "btn btn-wallet",
          fid: `connect-${w.name}`,
        }),
      )
    ),
  );
}

function renderWallet() {
  const box = $("wallet");
  const parts = [];
  const acct = S.account;
  if (S.signedIn) {
    const connectedSame = acct && acct.address === S.signedIn;
    parts.push(
      h(
        "p",
        { class: "wallet-line" },
        connectedSame ? walletIcon(S.wallet) : null,
        "Signed in as ",
        h("code", { class: "address", title: S.signedIn, id: "signed-in-address" }, S.signedIn),
        connectedSame ? ` with ${S.wallet.name}.` : ".",
      ),
    );
    if (!connectedSame) {
      parts.push(
        h(
          "p",
          { class: "muted" },
          "You can manage your key now. To pay, connect the same wallet again.",
        ),
        walletList(),
      );
    }
    parts.push(button("Sign out", signOut, { class: "btn btn-secondary", fid: "sign-out" }));
  } else if (acct) {
    parts.push(
      h(
        "p",
        null,
        `${S.wallet.name} is connected (`,
        h("code", { class: "address" }, acct.address),
        ") but not signed in.",
      ),
      button("Sign in", () => run("Signing in…", "Signing in", signIn), { fid: "sign-in" }),
    );
  } else if (!S.stateLoaded) {
    parts.push(h("p", { class: "muted" }, "Checking your session…"));
  } else {
    parts.push(
      h(
        "p",
        null,
        "Connect your Solana wallet and sign a short message to prove it's yours. Signing in costs nothing; your private key never leaves your wallet.",
      ),
      walletList(),
    );
  }
  box.replaceChildren(...parts);
}

function renderAccess() {
  const box = $("access");
  if (!S.signedIn) {
    box.replaceChildren(
      h(
        "p",
        { class: "muted" },
        S.stateLoaded ? "Sign in with your wallet to buy access or manage your API key." : "…",
      ),
    );
    return;
  }
  const paid = S.purchases.filter((p) => p.status === "paid");
  const unpaid = S.purchases.filter((p) =>
    p.status !== "paid" && p.purchaseId !== S.payment?.purchaseId && !S.declined.has(p.purchaseId)
  );
  const parts = [];
  if (S.reveal) parts.push(revealPanel());
  if (S.payment) parts.push(paymentPanel());
  for (const p of paid) parts.push(purchaseCard(p));
  if (!S.payment) {
    if (paid.length) {
      parts.push(
        h("details", { class: "more" }, h("summary", null, "Buy another access"), buyPanel()),
      );
    } else {
      parts.push(buyPanel());
    }
  }
  if (unpaid.length) {
    parts.push(
      h(
        "details",
        {
          class: "more",
          // A payment short of the fee is the user's to act on: shown, with its top-up.
          open: S.payment?.phase === "timeout" || unpaid.some((p) => p.status === "underpaid")
            ? true
            : null,
        },
        h("summary", null, `Payments not confirmed (${unpaid.length})`),
        h(
          "p",
          { class: "muted" },
          "Quotes whose payment the service hasn't seen: paid from another tab or device, still landing, or never sent. A payment that never landed moved no funds.",
        ),
        h("ul", { class: "plain" }, unpaid.map(unpaidRow)),
      ),
    );
  }
  box.replaceChildren(...parts);
}

function buyPanel() {
  const solDisabled = S.currency === "SOL" && !!S.pricingError;
  const usd = S.pricing?.access.usd;
  const hint = !canPay()
    ? "Connect the wallet you signed in with to pay."
    : solDisabled
    ? "Paying in SOL needs a current SOL price, which is unavailable right now. It will come back shortly."
    : `Your wallet will ask you to approve a transfer to the service's treasury. The page then waits for the network to confirm it.`;
  return h(
    "div",
    { class: "panel", id: "buy" },
    h("h3", null, "Buy access"),
    currencies.length < 2 ? h("p", null, "Paid in SOL from your wallet.") : h(
      "fieldset",
      { class: "choices" },
      h("legend", null, "Pay with"),
      currencies.map((cur) =>
        h(
          "label",
          { class: "choice" },
          h("input", {
            type: "radio",
            name: "currency",
            value: cur,
            checked: S.currency === cur,
            "data-fid": `currency-${cur}`,
            onchange: () => {
              S.currency = cur;
              render();
            },
          }),
          cur === "SOL" ? " SOL" : " Stablecoin (USD)",
        )
      ),
    ),
    h("p", { class: "muted", id: "buy-hint" }, hint),
    button(usd ? `Pay ${formatUsd(usd)} for access` : "Pay for access", buy, {
      class: "btn btn-primary",
      fid: "buy",
      disabled: !canPay() || solDisabled,
      describedBy: "buy-hint",
    }),
  );
}

function paymentPanel() {
  const pay = S.payment;
  const elapsed = Math.floor((pay.now - pay.started) / 1000);
  const steps = {
    quote: "Preparing the payment…",
    wallet: "Approve the payment in your wallet.",
    confirming: "Payment sent. Waiting for the network to confirm it.",
    rechecking: "Checking again whether your payment reached the network.",
    timeout: `Not confirmed after ${CONFIRM_TIMEOUT_MS / 1000} s.`,
  };
  const waiting = pay.phase === "confirming" || pay.phase === "rechecking";
  return h(
    "div",
    {
      class: "panel panel-progress",
      id: "payment",
      "aria-busy": pay.phase !== "timeout" ? "true" : null,
    },
    h("h3", null, "Payment"),
    h("p", { id: "payment-step" }, steps[pay.phase]),
    pay.amount ? h("p", null, "Amount: ", amountText(pay)) : null,
    waiting
      ? [
        h("progress", {
          max: TYPICAL_CONFIRM_S,
          value: Math.min(elapsed, TYPICAL_CONFIRM_S),
          "aria-labelledby": "payment-step",
        }),
        h(
          "p",
          { class: "muted", id: "payment-elapsed" },
          `${elapsed} s elapsed; usually under ${TYPICAL_CONFIRM_S} s.`,
        ),
      ]
      : null,
    pay.signature
      ? h("p", { class: "small" }, "Transaction: ", h("code", { class: "address" }, pay.signature))
      : null,
    pay.phase === "timeout"
      ? [
        h(
          "p",
          { id: "payment-timeout" },
          "If your wallet shows the payment as sent, it may still land: check again. If it never " +
            "landed, no funds moved: stop waiting and pay again with a new quote.",
        ),
        h(
          "div",
          { class: "actions" },
          button("Check again", () => recheck(pay.purchaseId), {
            fid: `recheck-${pay.purchaseId}`,
            always: true,
            describedBy: "payment-timeout",
          }),
          button("Stop waiting", abandon, {
            class: "btn btn-secondary",
            fid: "abandon-payment",
            always: true,
          }),
        ),
      ]
      : null,
  );
}

function unpaidRow(p) {
  if (p.status === "underpaid") {
    const units = (n) => p.currency === "SOL" ? formatSol(n) : `${n} stablecoin base units`;
    return h(
      "li",
      { class: "row" },
      h(
        "span",
        null,
        `Received ${units(p.received)}, ${
          units(p.shortfall)
        } short of the fee at the price when it landed.`,
      ),
      button("Pay the difference", () => buy(p.purchaseId), {
        class: "btn btn-small",
        fid: `top-up-${p.purchaseId}`,
        disabled: !canPay(),
      }),
      button("Check payment", () => recheck(p.purchaseId), {
        class: "btn btn-small",
        fid: `recheck-${p.purchaseId}`,
      }),
    );
  }
  return h(
    "li",
    { class: "row" },
    h("span", null, `${amountText(p)}, quoted ${formatTime(p.quotedAt)}`),
    button("Check payment", () => checkQuote(p.purchaseId), {
      class: "btn btn-small",
      fid: `recheck-${p.purchaseId}`,
    }),
  );
}

function purchaseCard(p) {
  return h(
    "article",
    { class: "card", "aria-labelledby": `purchase-${p.purchaseId}`, "data-purchase": p.purchaseId },
    h("h3", { id: `purchase-${p.purchaseId}` }, "Access purchase ", h("code", null, p.purchaseId)),
    h(
      "p",
      { class: "muted" },
      `Paid ${amountText(p)} on ${formatTime(p.paidAt)}.`,
    ),
    p.signature
      ? h(
        "p",
        { class: "small" },
        "Payment transaction: ",
        h("code", { class: "address" }, p.signature),
      )
      : null,
    p.key ? keyBlock(p, p.key) : noKeyBlock(p),
  );
}

function noKeyBlock(p) {
  return h(
    "div",
    { class: "key key-none" },
    h("p", null, "No active API key on this purchase."),
    button("Create API key", () => createKey(p.purchaseId), {
      class: "btn btn-primary",
      fid: `create-${p.purchaseId}`,
    }),
  );
}

function keyBlock(p, k) {
  const limits = S.pricing?.limits;
  const active = k.status === "active";
  const u = k.usageToday;
  const confirming = S.confirm?.keyId === k.keyId ? S.confirm : null;
  return h(
    "div",
    { class: "key", "data-key": k.keyId },
    h(
      "p",
      null,
      "API key ",
      h("code", null, k.keyId),
      " ",
      h("span", { class: `badge badge-${k.status}`, id: `key-status-${k.keyId}` }, k.status),
    ),
    h(
      "p",
      { class: "muted small" },
      `Created ${formatTime(k.createdAt)}; last rotated ${formatTime(k.rotatedAt)}.`,
    ),
    active ? null : h(
      "p",
      { class: "notice notice-warn" },
      `This key is ${k.status}; it can't be used, rotated or deleted. Contact support if you think this is a mistake.`,
    ),
    h("h4", null, "Usage today (UTC)"),
    h(
      "dl",
      { class: "usage" },
      usageRow("Token builds", u.tokens, limits?.tokensPerDay, `usage-tokens-${k.keyId}`),
      usageRow("Metadata items", u.metadata, limits?.metadataPerDay, `usage-metadata-${k.keyId}`),
      h("dt", null, "Requests"),
      h(
        "dd",
        null,
        `${u.requests.toLocaleString("en-US")} today`,
        limits
          ? h(
            "span",
            { class: "muted" },
            ` (limit ${limits.requestsPerHour.toLocaleString("en-US")} per hour)`,
          )
          : null,
      ),
    ),
    active ? webhooksBlock(k) : null,
    h(
      "div",
      { class: "actions" },
      button("Refresh usage", () => run("Refreshing…", "Refreshing", loadState), {
        class: "btn btn-secondary",
        fid: `refresh-${k.keyId}`,
      }),
      active && !confirming
        ? [
          button("Rotate key…", () => askConfirm("rotate", k.keyId), {
            class: "btn btn-secondary",
            fid: `rotate-${k.keyId}`,
          }),
          button("Delete key…", () => askConfirm("delete", k.keyId), {
            class: "btn btn-danger",
            fid: `delete-${k.keyId}`,
          }),
        ]
        : null,
    ),
    confirming ? confirmPanel(p, k, confirming.kind) : null,
  );
}

function usageRow(label, used, limit, id) {
  return [
    h("dt", { id: `${id}-label` }, label),
    h(
      "dd",
      null,
      limit
        ? [
          h("meter", {
            min: 0,
            max: limit,
            value: Math.min(used, limit),
            high: limit * 0.8,
            optimum: 0,
            "aria-labelledby": `${id}-label`,
            id,
          }),
          ` ${used.toLocaleString("en-US")} of ${limit.toLocaleString("en-US")}`,
        ]
        : `${used.toLocaleString("en-US")}`,
    ),
  ];
}

function confirmPanel(p, k, kind) {
  const rotateText =
    "Rotating gives this key a new secret. The current key stops working immediately: anything using it gets 401 until you put the new key in. The new key is shown once.";
  const deleteText =
    "Deleting stops this key immediately. You can create a new key on this purchase afterwards, at no cost.";
  return h(
    "div",
    {
      class: `confirm confirm-${kind}`,
      role: "group",
      "aria-labelledby": "confirm-text",
      onkeydown: (/** @type {KeyboardEvent} */ e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          cancelConfirm();
        }
      },
    },
    h(
      "p",
      { id: "confirm-text", tabindex: "-1" },
      h("strong", null, kind === "rotate" ? "Rotate this key? " : "Delete this key? "),
      kind === "rotate" ? rotateText : deleteText,
    ),
    h(
      "div",
      { class: "actions" },
      kind === "rotate"
        ? button("Yes, rotate the key", () => rotate(k.keyId), {
          class: "btn btn-primary",
          fid: "confirm-yes",
        })
        : button("Yes, delete the key", () => remove(k.keyId, p.purchaseId), {
          class: "btn btn-danger",
          fid: "confirm-yes",
        }),
      button("Cancel", cancelConfirm, { class: "btn btn-secondary", fid: "confirm-cancel" }),
    ),
  );
}

function revealPanel() {
  const r = S.reveal;
  return h(
    "section",
    { class: "reveal", "aria-labelledby": "reveal-heading", id: "reveal" },
    h(
      "h3",
      { id: "reveal-heading", tabindex: "-1" },
      r.reason === "rotated" ? "Your rotated API key" : "Your new API key",
    ),
    h(
      "p",
      { class: "warning", id: "reveal-warning" },
      h("strong", null, "Copy it now. You will not see this key again."),
      " We keep only a keyed hash of it, so a lost key can't be recovered, only rotated.",
    ),
    h("label", { for: "api-key" }, `API key (id ${r.keyId})`),
    // A textarea, so the whole key is visible (and checkable) even on a narrow phone screen.
    h("textarea", {
      id: "api-key",
      rows: 3,
      readonly: true,
      value: r.apiKey,
      autocomplete: "off",
      spellcheck: "false",
      autocapitalize: "off",
      "aria-describedby": "reveal-warning",
      onfocus: (/** @type {FocusEvent} */ e) =>
        /** @type {HTMLTextAreaElement} */ (e.target).select(),
    }),
    h(
      "div",
      { class: "actions" },
      button("Copy key", copyKey, { class: "btn btn-primary", fid: "copy-key", always: true }),
      button("I've stored it safely", dismissReveal, {
        class: "btn btn-secondary",
        fid: "dismiss-key",
        always: true,
      }),
    ),
    h(
      "p",
      { class: "muted small" },
      "Use it server-side only, as Authorization: Bearer <key>. Never put it in a web page or a public repository.",
    ),
    h("h4", null, "Try it"),
    h(
      "p",
      { class: "small", id: "try-it-hint" },
      "This asks the API who the key is and what it has used today:",
    ),
    h("pre", { class: "command", id: "try-it", "aria-describedby": "try-it-hint" }, tryItCommand()),
    h(
      "div",
      { class: "actions" },
      button("Copy command", copyCommand, {
        class: "btn btn-secondary",
        fid: "copy-command",
        always: true,
      }),
    ),
    h(
      "p",
      { class: "small" },
      "Then create a token: the ",
      h("a", { href: "/docs" }, "API reference"),
      " has every call with samples, and the ",
      h("a", { href: "/examples/create-token.ts" }, "example client"),
      " does the whole flow.",
    ),
  );
}

function tryItCommand() {
  return `curl -H "Authorization: Bearer ${S.reveal?.apiKey}" ${location.origin}/v1/me`;
}

async function copyCommand() {
  try {
    await navigator.clipboard.writeText(tryItCommand());
    announce("Command copied to the clipboard.");
  } catch {
    const pre = document.getElementById("try-it");
    if (pre) getSelection()?.selectAllChildren(pre);
    announce(
      "Couldn't copy automatically. The command is selected: copy it with your device's copy command.",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Webhooks: a key's endpoints (docs/integrators.md), managed with the wallet's session

async function loadWebhooks() {
  /** @type {Record<string, any[]>} */
  const next = {};
  for (const p of S.purchases) {
    const k = p.key;
    if (!k || k.status !== "active") continue;
    next[k.keyId] = (await api(`/portal/api/keys/${k.keyId}/webhooks`)).items;
  }
  S.webhooks = next;
}

function addWebhook(keyId) {
  const url = (S.webhookDraft[keyId] ?? "").trim();
  return run("Adding the webhook endpoint…", "Adding the endpoint", async () => {
    const r = await api(`/portal/api/keys/${keyId}/webhooks`, { json: { url } });
    S.webhookSecret = { keyId, id: r.id, url: r.url, secret: r.secret };
    S.webhookDraft[keyId] = "";
    await loadWebhooks();
    announce("Endpoint added. Copy its signing secret now: it is shown only once.");
    focusNext = "webhook-secret";
  });
}

function removeWebhook(keyId, id) {
  return run("Removing the webhook endpoint…", "Removing the endpoint", async () => {
    await api(`/portal/api/keys/${keyId}/webhooks/${id}/delete`, { json: {} });
    if (S.webhookSecret?.id === id) S.webhookSecret = null;
    await loadWebhooks();
    announce("Endpoint removed; it gets no more events.");
    focusNext = `webhook-url-${keyId}`;
  });
}

function webhooksBlock(k) {
  const items = S.webhooks[k.keyId] ?? [];
  const secret = S.webhookSecret?.keyId === k.keyId ? S.webhookSecret : null;
  const inputId = `webhook-url-${k.keyId}`;
  return h(
    "div",
    { class: "webhooks", "data-webhooks": k.keyId },
    h("h4", null, "Webhooks"),
    h(
      "p",
      { class: "muted small" },
      "Each build's outcome (token.confirmed, token.unverified, token.failed, token.expired) is " +
        "POSTed to these https URLs, signed the Standard Webhooks way.",
    ),
    items.length === 0 ? h("p", { class: "muted small" }, "No endpoints yet.") : h(
      "ul",
      { class: "webhook-list" },
      items.map((w) =>
        h(
          "li",
          { "data-webhook": w.id },
          h("code", null, w.url),
          " ",
          h(
            "span",
            { class: `badge badge-${w.status === "enabled" ? "active" : "banned"}` },
            w.status,
          ),
          " ",
          button("Remove", () => removeWebhook(k.keyId, w.id), {
            class: "btn btn-small btn-secondary",
            fid: `webhook-remove-${w.id}`,
          }),
        )
      ),
    ),
    secret
      ? h(
        "div",
        { class: "reveal" },
        h("p", { class: "warning" }, h("strong", null, "Signing secret for "), secret.url),
        h("textarea", {
          id: "webhook-secret",
          rows: 2,
          readonly: true,
          value: secret.secret,
          autocomplete: "off",
          spellcheck: "false",
          onfocus: (/** @type {FocusEvent} */ e) =>
            /** @type {HTMLTextAreaElement} */ (e.target).select(),
        }),
        button("Secret stored", () => {
          S.webhookSecret = null;
          focusNext = inputId;
          render();
        }, { class: "btn btn-secondary btn-small", fid: "webhook-secret-done", always: true }),
      )
      : null,
    h("label", { for: inputId }, "Endpoint URL"),
    h("input", {
      id: inputId,
      type: "url",
      placeholder: "your https endpoint URL",
      value: S.webhookDraft[k.keyId] ?? "",
      oninput: (/** @type {Event} */ e) =>
        S.webhookDraft[k.keyId] = /** @type {HTMLInputElement} */ (e.target).value,
    }),
    h(
      "div",
      { class: "actions" },
      button("Add endpoint", () => addWebhook(k.keyId), {
        class: "btn btn-secondary",
        fid: `webhook-add-${k.keyId}`,
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Start

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
