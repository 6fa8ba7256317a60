// @ts-check
/// <reference lib="dom" />
// The Pricing panel, from GET /v1/pricing.

import { formatBytes, formatSol, formatUsd, plural } from "./format.js";
import { loadPricing } from "./load.js";
import { S } from "./state.js";
import { $, button, h } from "./ui.js";

export function renderPricing() {
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
