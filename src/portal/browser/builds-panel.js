// @ts-check
/// <reference lib="dom" />
// A key's newest builds, and "Refresh" for one whose blockhash expired before it was signed and
// sent (POST /v1/tokens/{mint}/refresh, reached through the portal API with the wallet's
// session): the same mint and instructions under a fresh blockhash, not counted again. The wallet
// that pays for the build can sign and send the refreshed transaction from here.

import { base58Encode, base64Decode } from "../../kernel/encoding.ts";
import { api } from "./api.js";
import { formatSol, formatTime, formatUsd } from "./format.js";
import { loadBuilds, run } from "./load.js";
import { S } from "./state.js";
import { announce, button, h, Problem } from "./ui.js";
import { has, SIGN_AND_SEND } from "./wallets.js";
import { openUpdate, updateBlock } from "./update-panel.js";

/**
 * @param {string} keyId
 * @param {import("./state.js").BuildItem} b
 */
function refresh(keyId, b) {
  return run(`Refreshing ${b.name}…`, "Refreshing the build", async () => {
    const r = await api(`/portal/api/keys/${keyId}/builds/${b.mint}/refresh`, { json: {} });
    S.refreshed = {
      keyId,
      mint: r.mint,
      name: b.name,
      transaction: r.transaction,
      requiredSigner: r.requiredSigner,
      recentBlockhash: r.recentBlockhash,
      lastValidBlockHeight: r.lastValidBlockHeight,
      expiresInSeconds: r.expiresInSeconds,
      fee: r.fee,
      feeQuote: r.feeQuote,
      refreshes: r.refreshes,
      sent: null,
    };
    await loadBuilds();
    announce(
      `${b.name} refreshed: the same mint under a fresh blockhash. Sign and send it within ` +
        `about ${r.expiresInSeconds} s.`,
    );
    S.focusNext = "refreshed-heading";
  });
}

function signAndSend() {
  const r = S.refreshed;
  if (!r) return;
  return run("Approve the transaction in your wallet…", "Sending the transaction", async () => {
    const wallet = S.wallet;
    if (!S.account || S.account.address !== r.requiredSigner) {
      throw new Problem(
        `Connect the wallet that pays for this build (${r.requiredSigner}) to sign it here, ` +
          "or copy the transaction to that wallet's signer.",
      );
    }
    if (!has(wallet, SIGN_AND_SEND)) {
      throw new Problem(
        `${wallet.name} can't send Solana transactions from this page; copy the transaction ` +
          "to the payer's signer instead.",
      );
    }
    const [sent] = await wallet.features[SIGN_AND_SEND].signAndSendTransaction({
      account: S.account,
      chain: S.chain,
      transaction: base64Decode(r.transaction),
      options: { preflightCommitment: "confirmed", commitment: "confirmed" },
    });
    r.sent = base58Encode(sent.signature);
    announce("Sent. The service follows it and records the creation once it lands.");
    S.focusNext = "refreshed-heading";
  });
}

/** @param {string} status */
const badgeOf = (status) =>
  status === "confirmed"
    ? "active"
    : status === "failed" || status === "unverified"
    ? "banned"
    : "pending";

/** @param {import("./state.js").RefreshedBuild} r */
function refreshedBlock(r) {
  const payerHere = S.account?.address === r.requiredSigner;
  return h(
    "div",
    { class: "reveal refreshed", "data-refreshed": r.mint },
    h("p", { id: "refreshed-heading", tabindex: "-1" }, h("strong", null, `${r.name} refreshed`)),
    h(
      "p",
      { class: "small" },
      "The same mint ",
      h("code", null, r.mint),
      `, re-issued (refresh ${r.refreshes}) under blockhash `,
      h("code", { id: "refreshed-blockhash" }, r.recentBlockhash),
      `, valid for about ${r.expiresInSeconds} s (to block height ${r.lastValidBlockHeight}). `,
      h(
        "span",
        { id: "refreshed-fee" },
        `Service fee ${r.feeQuote === "quoted" ? "as quoted" : "re-priced (the quote ran out)"}: ` +
          `${formatSol(r.fee.lamports)} (${formatUsd(r.fee.usd)}).`,
      ),
      " Not counted again against today's builds.",
    ),
    r.sent
      ? h(
        "p",
        { class: "notice", id: "refreshed-sent" },
        "Sent: ",
        h("code", null, r.sent),
        ". The build's status changes once the network confirms it.",
      )
      : [
        payerHere
          ? button(`Sign and send with ${S.wallet?.name ?? "your wallet"}`, signAndSend, {
            class: "btn btn-primary",
            fid: "refreshed-send",
          })
          : h(
            "p",
            { class: "muted small" },
            `Its payer ${r.requiredSigner} signs it: connect that wallet to sign here, or copy ` +
              "the transaction (base64) to its signer.",
          ),
        h("label", { for: "refreshed-tx" }, "Transaction (base64, unsigned)"),
        h("textarea", {
          id: "refreshed-tx",
          rows: 3,
          readonly: true,
          value: r.transaction,
          spellcheck: "false",
          onfocus: (/** @type {FocusEvent} */ e) =>
            /** @type {HTMLTextAreaElement} */ (e.target).select(),
        }),
      ],
  );
}

/** @param {import("./state.js").Key} k */
export function buildsBlock(k) {
  const items = S.builds[k.keyId] ?? [];
  const refreshed = S.refreshed?.keyId === k.keyId ? S.refreshed : null;
  return h(
    "div",
    { class: "builds", "data-builds": k.keyId },
    h("h4", null, "Recent builds"),
    h(
      "p",
      { class: "muted small" },
      "A build not signed and sent within about 60 s expires. Refresh re-issues it: the same " +
        "mint under a fresh blockhash, not counted again against today's builds. Update changes " +
        "a confirmed token's metadata uri or makes it immutable, signed by its authority.",
    ),
    items.length === 0 ? h("p", { class: "muted small" }, "No builds yet.") : h(
      "ul",
      { class: "build-list" },
      items.map((b) =>
        h(
          "li",
          { "data-build": b.mint },
          h("strong", null, b.name),
          ` (${b.symbol}) `,
          h("span", { class: `badge badge-${badgeOf(b.status)}` }, b.status),
          " ",
          h("code", null, b.mint),
          h("span", { class: "muted small" }, ` built ${formatTime(b.createdAt * 1000)} `),
          b.uri
            ? h(
              "span",
              { class: "small build-uri" },
              b.updates > 0 ? " now at " : " metadata ",
              h("code", null, b.uri),
              " ",
            )
            : null,
          b.status === "confirmed"
            ? button("Update", () => openUpdate(k.keyId, b), {
              class: "btn btn-small btn-secondary",
              fid: `update-build-${b.mint}`,
            })
            : null,
          b.status === "expired"
            ? button("Refresh build", () => refresh(k.keyId, b), {
              class: "btn btn-small btn-secondary",
              fid: `refresh-build-${b.mint}`,
            })
            : null,
        )
      ),
    ),
    refreshed ? refreshedBlock(refreshed) : null,
    updateBlock(k.keyId),
  );
}
