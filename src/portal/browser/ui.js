// @ts-check
/// <reference lib="dom" />
// DOM helpers (elements built with DOM calls, never parsed HTML), the status and error notices,
// and how a failure is explained to the user.

import { ApiFailure } from "./api.js";
import { S } from "./state.js";
import { classifyWalletError } from "./wallets.js";

export const $ = (
  /** @type {string} */ id,
) => /** @type {HTMLElement} */ (document.getElementById(id));
const statusEl = $("status");
const alertEl = $("alert");

/**
 * @param {string} tag
 * @param {Record<string, any> | null} [props]
 * @param {...any} children
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k === "value" || k === "checked" || k === "disabled") Object.assign(el, { [k]: v });
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
/**
 * @param {string | Node | (Node | string | null)[]} label
 * @param {(e: Event) => unknown} onclick
 * @param {{ always?: boolean, class?: string, fid?: string, disabled?: boolean, describedBy?: string }} [opts]
 */
export function button(label, onclick, opts = {}) {
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
export class Problem extends Error {}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let statusTimer;
/**
 * Polite progress messages for screen readers and sighted users alike. A settled message fades
 * after a while so the bar at the bottom of the screen doesn't cover the page for good.
 */
/** @param {string} text */
export function announce(text) {
  statusEl.textContent = text;
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => {
    if (!S.busy && !S.payment && statusEl.textContent === text) statusEl.textContent = "";
  }, 12_000);
}

/** @param {string} text */
export function showError(text) {
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

export function clearError() {
  alertEl.replaceChildren();
  alertEl.hidden = true;
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The sentence the user reads for a failure.
 * @param {any} e what was thrown: a Problem, an ApiFailure, or whatever a wallet threw
 * @param {string} doing what was being done ("Connecting"), to start the sentence with
 * @returns {string}
 */
export function explain(e, doing) {
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
