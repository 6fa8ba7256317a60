// @ts-check
/// <reference lib="dom" />
// The Access panel: buying access, a payment in progress, payments not confirmed, the purchases.

/** @typedef {import("./state.js").Amount} Amount */

import { formatSol, formatTime, formatUsd } from "./format.js";
import { keyBlock, noKeyBlock, revealPanel } from "./key-panel.js";
import { abandon, amountText, buy, canPay, checkQuote, recheck } from "./payment.js";
import { CONFIRM_TIMEOUT_MS, currencies, render, S, TYPICAL_CONFIRM_S } from "./state.js";
import { $, button, h } from "./ui.js";

export function renderAccess() {
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
  if (S.reveal) parts.push(revealPanel(S.reveal));
  if (S.payment) parts.push(paymentPanel(S.payment));
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
    button(usd ? `Pay ${formatUsd(usd)} for access` : "Pay for access", () => buy(), {
      class: "btn btn-primary",
      fid: "buy",
      disabled: !canPay() || solDisabled,
      describedBy: "buy-hint",
    }),
  );
}

/** @param {import("./state.js").Payment} pay */
function paymentPanel(pay) {
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
    // The quote's amount, currency and usd are set together.
    pay.amount ? h("p", null, "Amount: ", amountText(/** @type {Amount} */ (pay))) : null,
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

/** @param {import("./state.js").Purchase} p */
function unpaidRow(p) {
  if (p.status === "underpaid") {
    // An underpaid purchase always has a shortfall.
    const shortfall = /** @type {string} */ (p.shortfall);
    const units = (/** @type {string} */ n) =>
      p.currency === "SOL" ? formatSol(n) : `${n} stablecoin base units`;
    return h(
      "li",
      { class: "row" },
      h(
        "span",
        null,
        `Received ${units(p.received)}, ${
          units(shortfall)
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

/** @param {import("./state.js").Purchase} p */
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
