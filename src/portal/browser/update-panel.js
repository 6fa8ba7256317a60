// @ts-check
/// <reference lib="dom" />
// "Update" for a confirmed build: a new metadata uri and/or "make immutable"
// (POST /portal/api/keys/{keyId}/builds/{mint}/update, the same command as
// POST /v1/tokens/{mint}/update with the signed-in wallet as the authority). The page shows what
// changes and every lamport it costs; the connected authority signs it here, the service relays
// it (POST /portal/api/keys/{keyId}/transactions) and follows it to landed, which the page reads
// from the update's record.

import { base64Decode, base64Encode } from "../../kernel/encoding.ts";
import { api } from "./api.js";
import { formatSol } from "./format.js";
import { loadBuilds, run } from "./load.js";
import { POLL_MS, render, S } from "./state.js";
import { announce, button, h, Problem, sleep } from "./ui.js";
import { has, SIGN_TRANSACTION } from "./wallets.js";

/** How many times the page reads the record after sending: a blockhash lives ~60-90 s. */
const MAX_POLLS = 60;

/**
 * @param {string} keyId
 * @param {import("./state.js").BuildItem} b
 */
export function openUpdate(keyId, b) {
  S.tokenUpdate = {
    keyId,
    mint: b.mint,
    name: b.name,
    draftUri: "",
    immutable: false,
    built: null,
    status: null,
  };
  S.focusNext = "update-uri";
  render();
}

function ask() {
  const u = S.tokenUpdate;
  if (!u) return;
  return run(`Preparing the update of ${u.name}…`, "Preparing the update", async () => {
    /** @type {Record<string, unknown>} */
    const json = {};
    if (u.draftUri.trim() !== "") json.metadataUri = u.draftUri.trim();
    if (u.immutable) json.isMutable = false;
    u.built = await api(`/portal/api/keys/${u.keyId}/builds/${u.mint}/update`, { json });
    u.status = "built";
    announce(`Update of ${u.name} ready: review it, then sign it within about 60 s.`);
    S.focusNext = "update-heading";
  });
}

function signAndRelay() {
  const u = S.tokenUpdate;
  const built = u?.built;
  if (!u || !built) return;
  return run("Approve the update in your wallet…", "Sending the update", async () => {
    const wallet = S.wallet;
    if (!S.account || S.account.address !== built.requiredSigner) {
      throw new Problem(`Connect the token's authority (${built.requiredSigner}) to sign it here.`);
    }
    if (!has(wallet, SIGN_TRANSACTION)) {
      throw new Problem(`${wallet.name} can't sign Solana transactions for this page.`);
    }
    const [signed] = await wallet.features[SIGN_TRANSACTION].signTransaction({
      account: S.account,
      chain: S.chain,
      transaction: base64Decode(built.transaction),
    });
    const sent = await api(`/portal/api/keys/${u.keyId}/transactions`, {
      json: { transaction: base64Encode(signed.signedTransaction) },
    });
    u.status = sent.status;
    announce("Sent. The service follows it until it lands.");
    render();
    await follow(u.keyId, u.mint, built.updateId);
  });
}

/**
 * @param {string} keyId
 * @param {string} mint
 * @param {string} updateId
 */
async function follow(keyId, mint, updateId) {
  for (let i = 0; i < MAX_POLLS; i++) {
    const r = await api(`/portal/api/keys/${keyId}/builds/${mint}/updates/${updateId}`);
    if (!S.tokenUpdate || S.tokenUpdate.built?.updateId !== updateId) return;
    S.tokenUpdate.status = r.status;
    if (r.status === "landed" || r.status === "failed") {
      await loadBuilds();
      announce(r.status === "landed" ? "The update landed." : "The update failed on chain.");
      S.focusNext = "update-heading";
      return;
    }
    await sleep(POLL_MS);
  }
}

/** @param {import("./state.js").TokenUpdate} u */
function form(u) {
  return [
    h("label", { for: "update-uri" }, "New metadata URI (optional)"),
    h("input", {
      id: "update-uri",
      type: "url",
      placeholder: "the new metadata document's https URL",
      value: u.draftUri,
      oninput: (/** @type {Event} */ e) =>
        u.draftUri = /** @type {HTMLInputElement} */ (e.target).value,
    }),
    h(
      "label",
      { class: "check" },
      h("input", {
        id: "update-immutable",
        type: "checkbox",
        checked: u.immutable,
        onchange: (/** @type {Event} */ e) =>
          u.immutable = /** @type {HTMLInputElement} */ (e.target).checked,
      }),
      " Make the metadata immutable (for good)",
    ),
    h(
      "div",
      { class: "actions" },
      button("Prepare update", ask, { class: "btn btn-primary", fid: "update-ask" }),
      button("Cancel", () => {
        S.tokenUpdate = null;
        render();
      }, { class: "btn btn-secondary", fid: "update-cancel" }),
    ),
  ];
}

/** @param {NonNullable<import("./state.js").TokenUpdate["built"]>} b */
function review(b) {
  /** @param {keyof typeof b.before} f */
  const row = (f) =>
    String(b.before[f]) === String(b.after[f]) ? null : h(
      "li",
      null,
      `${f}: `,
      h("code", null, String(b.before[f])),
      " → ",
      h(
        "code",
        null,
        String(b.after[f]),
      ),
    );
  return [
    h("ul", { class: "small", id: "update-changes" }, [
      row("name"),
      row("symbol"),
      row("uri"),
      row("isMutable"),
      row("updateAuthority"),
    ]),
    h(
      "p",
      { class: "small", id: "update-costs" },
      `Costs the authority ${formatSol(b.costs.totalLamports)}: network ` +
        `${formatSol(b.costs.networkFeeLamports)}, priority ${
          formatSol(b.costs.priorityFeeLamports)
        }, rent top-up ${formatSol(b.costs.rentTopUpLamports)}, service ` +
        `${formatSol(b.costs.serviceFeeLamports)}.`,
    ),
  ];
}

/** @param {string} keyId */
export function updateBlock(keyId) {
  const u = S.tokenUpdate;
  if (!u || u.keyId !== keyId) return null;
  const b = u.built;
  const authorityHere = !!b && S.account?.address === b.requiredSigner;
  return h(
    "div",
    { class: "reveal token-update", "data-update": u.mint },
    h("p", { id: "update-heading", tabindex: "-1" }, h("strong", null, `Update ${u.name}`)),
    !b ? form(u) : review(b),
    !b
      ? null
      : u.status === "built"
      ? authorityHere
        ? button(`Sign and send with ${S.wallet?.name ?? "your wallet"}`, signAndRelay, {
          class: "btn btn-primary",
          fid: "update-send",
        })
        : h(
          "p",
          { class: "muted small" },
          `Its authority ${b.requiredSigner} signs it: connect that wallet to sign here.`,
        )
      : h("p", { class: "notice", id: "update-status" }, `Update ${u.status}.`),
  );
}
