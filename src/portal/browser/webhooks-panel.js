// @ts-check
/// <reference lib="dom" />
// A key's webhook endpoints (docs/integrators.md), managed with the wallet's session.

import { api } from "./api.js";
import { loadWebhooks, run } from "./load.js";
import { render, S } from "./state.js";
import { announce, button, h } from "./ui.js";

/** @param {string} keyId */
function addWebhook(keyId) {
  const url = (S.webhookDraft[keyId] ?? "").trim();
  return run("Adding the webhook endpoint…", "Adding the endpoint", async () => {
    const r = await api(`/portal/api/keys/${keyId}/webhooks`, { json: { url } });
    S.webhookSecret = { keyId, id: r.id, url: r.url, secret: r.secret };
    S.webhookDraft[keyId] = "";
    await loadWebhooks();
    announce("Endpoint added. Copy its signing secret now: it is shown only once.");
    S.focusNext = "webhook-secret";
  });
}

/**
 * @param {string} keyId
 * @param {string} id
 */
function removeWebhook(keyId, id) {
  return run("Removing the webhook endpoint…", "Removing the endpoint", async () => {
    await api(`/portal/api/keys/${keyId}/webhooks/${id}/delete`, { json: {} });
    if (S.webhookSecret?.id === id) S.webhookSecret = null;
    await loadWebhooks();
    announce("Endpoint removed; it gets no more events.");
    S.focusNext = `webhook-url-${keyId}`;
  });
}

/** @param {import("./state.js").Key} k */
export function webhooksBlock(k) {
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
      "Each build's outcome (token.confirmed, token.unverified, token.failed, token.expired) " +
        "and each refresh (token.refreshed) is POSTed to these https URLs, signed the Standard " +
        "Webhooks way.",
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
          S.focusNext = inputId;
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
