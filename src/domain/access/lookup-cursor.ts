/**
 * Where each purchase's payment lookups have got to (see `PaymentCursor`). Not an event: it is a
 * reading aid, rebuilt by reading the history again; losing it costs RPC calls, never a payment.
 */
import type { PaymentCursor } from "./payment.ts";

const key = (purchaseId: string) => ["purchase_lookup", purchaseId];

/** A check after a week reads the history again rather than keep cursors of abandoned quotes. */
const KEEP_MS = 7 * 24 * 3_600_000;

export async function loadLookupCursor(kv: Deno.Kv, purchaseId: string): Promise<PaymentCursor> {
  return (await kv.get<PaymentCursor>(key(purchaseId))).value ?? {};
}

export async function saveLookupCursor(
  kv: Deno.Kv,
  purchaseId: string,
  cursor: PaymentCursor,
): Promise<void> {
  await kv.set(key(purchaseId), cursor, { expireIn: KEEP_MS });
}
