// @ts-check
/// <reference lib="dom" />
// A purchase's API key: create, rotate and delete (with a confirmation step), its usage today,
// and the key shown once.

import { api } from "./api.js";
import { formatTime } from "./format.js";
import { loadState, run } from "./load.js";
import { render, S } from "./state.js";
import { announce, button, clearError, h } from "./ui.js";
import { buildsBlock } from "./builds-panel.js";
import { webhooksBlock } from "./webhooks-panel.js";

/** @param {string} purchaseId */
function createKey(purchaseId) {
  return run("Creating your API key…", "Creating the key", async () => {
    const r = await api(`/portal/api/purchases/${purchaseId}/key`, { json: {} });
    S.reveal = { keyId: r.keyId, apiKey: r.apiKey, reason: "created" };
    await loadState();
    announce("Your API key is ready. Copy it now: it is shown only once.");
    S.focusNext = "reveal-heading";
  });
}

/**
 * @param {"rotate" | "delete"} kind
 * @param {string} keyId
 */
function askConfirm(kind, keyId) {
  clearError();
  S.confirm = { kind, keyId };
  S.focusNext = "confirm-text";
  render();
}

export function cancelConfirm() {
  const c = S.confirm;
  S.confirm = null;
  if (c) S.focusNext = `${c.kind}-${c.keyId}`;
  announce("Cancelled. Nothing changed.");
  render();
}

/** @param {string} keyId */
function rotate(keyId) {
  return run("Rotating the key…", "Rotating the key", async () => {
    const r = await api(`/portal/api/keys/${keyId}/rotate`, { json: {} });
    S.confirm = null;
    S.reveal = { keyId: r.keyId, apiKey: r.apiKey, reason: "rotated" };
    await loadState();
    announce(
      "Key rotated. The old key stopped working. Copy the new one now: it is shown only once.",
    );
    S.focusNext = "reveal-heading";
  });
}

/**
 * @param {string} keyId
 * @param {string} purchaseId
 */
function remove(keyId, purchaseId) {
  return run("Deleting the key…", "Deleting the key", async () => {
    await api(`/portal/api/keys/${keyId}/delete`, { json: {} });
    S.confirm = null;
    if (S.reveal?.keyId === keyId) S.reveal = null;
    await loadState();
    announce("Key deleted; it no longer works. You can create a new key on this purchase.");
    S.focusNext = `create-${purchaseId}`;
  });
}

function dismissReveal() {
  S.reveal = null;
  announce("The key is hidden now and can't be shown again.");
  S.focusNext = "access-heading";
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

/** @param {import("./state.js").Purchase} p */
export function noKeyBlock(p) {
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

/**
 * @param {import("./state.js").Purchase} p
 * @param {import("./state.js").Key} k
 */
export function keyBlock(p, k) {
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
      `This key is ${k.status}${
        k.reason ? ` (${k.reason})` : ""
      }; it can't be used, rotated or deleted. Contact support if you think this is a mistake.`,
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
    conductBlock(k),
    active ? buildsBlock(k) : null,
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

/**
 * @param {string} label
 * @param {number} used
 * @param {number | undefined} limit
 * @param {string} id
 */
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

/**
 * @param {import("./state.js").Purchase} p
 * @param {import("./state.js").Key} k
 * @param {"rotate" | "delete"} kind
 */
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

/** @param {{ keyId: string, apiKey: string, reason: "created" | "rotated" }} r */
export function revealPanel(r) {
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

/**
 * The purchase's creations that landed without the full fee: each payer is refused further
 * builds; the key itself is suspended only for its own conduct, as the policy says.
 * @param {import("./state.js").Key} k
 */
function conductBlock(k) {
  const c = k.conduct;
  if (!c || c.unverifiedLandings.length === 0) return null;
  const p = c.policy;
  return h(
    "div",
    { class: "conduct", id: `conduct-${k.keyId}` },
    h("h4", null, "Creations landed without the fee"),
    h(
      "p",
      { class: "muted small" },
      `${c.recent.unverified} of the last ${c.recent.landings} creations, from ${c.recent.payers} ` +
        `wallet(s). Each such wallet is refused further builds. The key is suspended only if its ` +
        `own wallet lands more than ${p.suspendAfterByKeyWallet}, or more than ` +
        `${Math.round(p.suspendShare * 100)}% of recent creations land so from at least ` +
        `${p.suspendMinPayers} wallets.`,
    ),
    h(
      "ul",
      { class: "small" },
      c.unverifiedLandings.map((l) =>
        h(
          "li",
          null,
          h("code", { class: "address" }, l.mint),
          " paid by ",
          h("code", { class: "address" }, l.payer),
          l.byKeyWallet ? " (this key's own wallet)" : "",
          ` at ${l.at.replace("T", " ").slice(0, 19)} UTC`,
        )
      ),
    ),
  );
}
