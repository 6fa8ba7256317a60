// @ts-check
/// <reference lib="dom" />
// The Wallet panel: connecting a Wallet Standard wallet, signing in with it, signing out.

import { base58Encode } from "../../kernel/encoding.ts";
import { api } from "./api.js";
import { shortAddress } from "./format.js";
import { loadState, run } from "./load.js";
import { dropSession, render, S } from "./state.js";
import { $, announce, button, h, Problem } from "./ui.js";
import { CONNECT, DISCONNECT, EVENTS, has, SIGN_MESSAGE } from "./wallets.js";

let offWalletEvents = () => {};

/** @param {any} wallet a Wallet Standard wallet */
function connect(wallet) {
  return run(
    `Waiting for ${wallet.name}: approve the connection there.`,
    "Connecting",
    async () => {
      const out = await wallet.features[CONNECT].connect();
      const accounts = out?.accounts?.length ? out.accounts : wallet.accounts;
      const account = accounts?.find((/** @type {any} */ a) =>
        !a.chains || a.chains.some((/** @type {string} */ c) => c.startsWith("solana:"))
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

/**
 * @param {any} wallet
 * @param {any} account the Wallet Standard account it shared
 */
function setConnected(wallet, account) {
  offWalletEvents();
  S.wallet = wallet;
  S.account = account;
  if (has(wallet, EVENTS)) {
    // Switching accounts in the wallet must not leave us paying from an address we didn't sign
    // in with: forget the connection and let the user sign in again.
    offWalletEvents = wallet.features[EVENTS].on("change", (/** @type {any} */ props) => {
      if (!props?.accounts) return;
      const same = props.accounts.find((/** @type {any} */ a) => a.address === S.account?.address);
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
  S.focusNext = "access-heading";
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
    S.focusNext = "wallet-heading";
  });
}

/** @param {any} w */
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

export function renderWallet() {
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
