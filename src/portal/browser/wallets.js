// @ts-check
/// <reference lib="dom" />
// The app side of the Wallet Standard discovery protocol (what @wallet-standard/app's
// getWallets() does), written out so the page needs no bundle: wallets that loaded before us
// answer our `wallet-standard:app-ready`; wallets that load after us announce themselves with
// `wallet-standard:register-wallet`. Either way they call `register(wallet)` on our API.

export const CONNECT = "standard:connect";
export const DISCONNECT = "standard:disconnect";
export const EVENTS = "standard:events";
export const SIGN_MESSAGE = "solana:signMessage";
export const SIGN_AND_SEND = "solana:signAndSendTransaction";
export const SIGN_TRANSACTION = "solana:signTransaction";

/** The Wallet Standard chain id for our service's network name (/v1/pricing `network`). */
/** @param {string} network */
export function chainFor(network) {
  if (network === "mainnet-beta" || network === "mainnet") return "solana:mainnet";
  if (network === "devnet" || network === "testnet" || network === "localnet") {
    return `solana:${network}`;
  }
  return "solana:mainnet";
}

/** A wallet we can use at all: it connects and speaks some Solana chain. */
/** @param {any} w */
export function isSolanaWallet(w) {
  return !!w && typeof w === "object" && !!w.features && typeof w.features[CONNECT]?.connect ===
      "function" &&
    Array.isArray(w.chains) &&
    w.chains.some((/** @type {unknown} */ c) => typeof c === "string" && c.startsWith("solana:"));
}

/**
 * @param {any} w
 * @param {string} feature
 */
export const has = (w, feature) => !!w?.features?.[feature];

/**
 * Starts discovery on `target` (the window) and returns the live registry.
 * @param {EventTarget} target
 */
export function discoverWallets(target = globalThis) {
  /** @type {Set<any>} */
  const registered = new Set();
  /** @type {Set<() => void>} */
  const listeners = new Set();
  const notify = () => {
    for (const l of listeners) guard(l);
  };

  /** @param {...any} wallets */
  function register(...wallets) {
    const fresh = wallets.filter((w) => w && typeof w === "object" && !registered.has(w));
    if (!fresh.length) return () => {};
    for (const w of fresh) registered.add(w);
    notify();
    return function unregister() {
      for (const w of fresh) registered.delete(w);
      notify();
    };
  }
  const api = Object.freeze({ register });

  target.addEventListener("wallet-standard:register-wallet", (event) => {
    const callback = /** @type {CustomEvent} */ (event).detail;
    // A hostile page script could dispatch this too; all it can do is offer a "wallet", which
    // the user still has to pick and approve, so we only guard against it throwing.
    if (typeof callback === "function") guard(() => callback(api));
  });
  target.dispatchEvent(
    new CustomEvent("wallet-standard:app-ready", {
      detail: api,
      bubbles: false,
      cancelable: false,
      composed: false,
    }),
  );

  return {
    /** Usable wallets in registration order, without duplicates by name. */
    get() {
      const seen = new Set();
      return [...registered].filter((w) => {
        if (!isSolanaWallet(w) || seen.has(w.name)) return false;
        seen.add(w.name);
        return true;
      });
    },
    /** @param {() => void} listener */
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** @param {() => void} fn */
function guard(fn) {
  try {
    fn();
  } catch (e) {
    console.error("wallet registration failed", e);
  }
}

/**
 * What went wrong in a wallet call, as the page explains it. Wallets disagree on error shapes
 * (EIP-1193 style `code: 4001`, WalletError names, plain messages), so this reads all of them.
 */
/**
 * @param {any} e
 * @returns {"rejected" | "insufficient" | "unauthorized" | "other"}
 */
export function classifyWalletError(e) {
  const code = e?.code ?? e?.error?.code;
  const text = `${e?.name ?? ""} ${e?.message ?? e ?? ""} ${e?.error?.message ?? ""}`;
  if (code === 4001 || /reject|denied|declin|cancel|user closed|not approved/i.test(text)) {
    return "rejected";
  }
  if (
    /insufficient|debit an account but found no record|no record of a prior credit|not enough (sol|balance|funds)|custom program error: 0x1\b/i
      .test(text)
  ) {
    return "insufficient";
  }
  if (code === 4100 || /unauthori[sz]ed|not connected/i.test(text)) return "unauthorized";
  return "other";
}
