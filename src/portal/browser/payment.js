// @ts-check
/// <reference lib="dom" />
// The access payment: a quote, the wallet's signature and send, then waiting for the network.

import { base58Encode, base64Decode } from "../../kernel/encoding.ts";
import { api, ApiFailure } from "./api.js";
import { formatSol, formatUsd } from "./format.js";
import { loadState, run } from "./load.js";
import {
  CONFIRM_TIMEOUT_MS,
  dropSession,
  markDeclined,
  POLL_MS,
  render,
  renderAccess,
  S,
} from "./state.js";
import { announce, clearError, explain, showError, sleep } from "./ui.js";
import { classifyWalletError, has, SIGN_AND_SEND, SIGN_TRANSACTION } from "./wallets.js";

export const canPay = () => !!S.account && S.account.address === S.signedIn;

/** `topUpOf`: an underpaid purchase; its top-up quote (the rest, at today's price) is paid. */
/** @param {string | null} [topUpOf] */
export function buy(topUpOf = null) {
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

/** @param {import("./state.js").Amount} p */
export function amountText(p) {
  if (p.currency === "SOL") return `${formatSol(p.amount)} (${formatUsd(p.usd)})`;
  return `${formatUsd(p.usd)} in stablecoin`;
}

/**
 * Polls the service until it sees the payment on chain, showing progress meanwhile. `how` says
 * what the user knows: "sent" just now by the wallet, or "recheck" of one that timed out.
 */
/**
 * @param {string | null} purchaseId
 * @param {"sent" | "recheck"} how
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
        S.focusNext = `create-${purchaseId}`;
        render();
        return;
      }
      if (r.status === "underpaid" && r.received !== receivedBefore) {
        // Landed after its quote expired and the price moved: the rest is a top-up away.
        S.payment = null;
        await loadState();
        announce("The payment landed but doesn't cover the fee at today's price.");
        S.focusNext = `top-up-${purchaseId}`;
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
    S.focusNext = `recheck-${purchaseId}`;
    render();
  }
}

/** The timed-out payment, checked again (another full wait). */
/** @param {string | null} purchaseId */
export function recheck(purchaseId) {
  clearError();
  void waitForPayment(purchaseId, "recheck");
}

/** Stops following a timed-out payment: buying is possible again; the quote stays listed. */
export function abandon() {
  S.payment = null;
  clearError();
  announce(
    "Stopped waiting. If that payment lands later, check it under Payments not confirmed. Nothing else moved.",
  );
  S.focusNext = "access-heading";
  render();
  // The quote joins the list of payments not confirmed, where it can be checked later.
  void loadState().catch(() => {}).finally(render);
}

/**
 * One look at a quote listed as not confirmed: the user may or may not have sent a payment for
 * it, so the page claims neither, and says what the service saw.
 */
/** @param {string} purchaseId */
export function checkQuote(purchaseId) {
  return run("Checking that quote…", "Checking the payment", async () => {
    const r = await api(`/portal/api/purchases/${purchaseId}/check`, { json: {} });
    await loadState();
    if (r.status === "paid") {
      announce("Payment confirmed. You can create your API key now.");
      S.focusNext = `create-${purchaseId}`;
    } else {
      announce(
        "No payment for that quote has reached the network. If you sent one, check again in a minute; if not, nothing moved and you can pay with a new quote.",
      );
    }
  });
}
