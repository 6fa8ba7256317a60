// @ts-check
/// <reference lib="dom" />
// The notice shown on a local development chain, where browser wallets can't pay.

import { S } from "./state.js";
import { $, h } from "./ui.js";

export function renderEnv() {
  const box = $("env");
  if (S.network !== "localnet") {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(
    h(
      "div",
      { class: "notice notice-info", id: "localnet", role: "note" },
      h("p", null, h("strong", null, "Local development chain.")),
      h(
        "p",
        null,
        "Browser wallets (Phantom, Solflare, Backpack) only know the public networks, so they can't pay here. Get a key from a terminal instead, with the service running:",
      ),
      h(
        "ul",
        { class: "plain" },
        h(
          "li",
          null,
          h("pre", { class: "command" }, "npx -y deno@2.9.6 task dev:key"),
          "buys a key with a funded local wallet and prints it;",
        ),
        h(
          "li",
          null,
          h("pre", { class: "command" }, "npx -y deno@2.9.6 task demo"),
          "does that, then creates a whole token and verifies it.",
        ),
      ),
      h("p", { class: "small" }, "Signing in and managing keys work here as usual."),
    ),
  );
}
