/** The read models access decisions use: the key a command names and the purchase it belongs to. */
import type { Tx } from "../../../events/store.ts";
import { keysProjection } from "../../../projections/keys.ts";
import { purchasesProjection } from "../../../projections/purchases.ts";
import { read } from "../../commands/read.ts";
import type { AccessCommand, AccessState } from "./decide.ts";

export async function loadAccess(tx: Tx, cmd: AccessCommand): Promise<AccessState> {
  const key = "keyId" in cmd ? await read(tx, keysProjection, [cmd.keyId]) : null;
  const purchaseId = "purchaseId" in cmd ? cmd.purchaseId : key?.purchaseId;
  const purchase = purchaseId ? await read(tx, purchasesProjection, [purchaseId]) : null;
  return { purchase, key };
}
