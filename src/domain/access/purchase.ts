/**
 * The access purchase as the portal drives it: quote (price the fee, build the unsigned payment
 * with a fresh reference, record the quote with its expiry), check (find payments on chain by the
 * reference, record each once, priced by when it landed) and top up (a new quote for what is
 * still owed).
 */
import { PublicKey } from "@solana/web3.js";
import { toHex } from "../../kernel/hashing.ts";
import { type PurchaseDoc, purchasesProjection } from "../../../projections/purchases.ts";
import { kvReads, read } from "../../commands/read.ts";
import { ApiError } from "../../kernel/errors.ts";
import { solPriceOr503 } from "../../pricing/quote.ts";
import type { Services } from "../../services.ts";
import { handleAccess } from "./handle.ts";
import { atPrice, type Currency, feeUnits, isLate } from "./pricing.ts";
import { loadLookupCursor, saveLookupCursor } from "./lookup-cursor.ts";
import { buildPaymentTransaction, findPaymentFrom, type PaymentRequest } from "./payment.ts";
import { newReference } from "../../solana/reference.ts";

export interface PurchaseQuote {
  purchaseId: string;
  currency: Currency;
  amount: string;
  usd: number;
  reference: string;
  treasury: string;
  /** The unsigned payment transaction, base64, for the wallet to sign and send. */
  transaction: string;
  lastValidBlockHeight: number;
  /** Milliseconds since the epoch: landed later, the payment is priced at the price then. */
  expiresAt: number;
}

export interface PurchaseCheck {
  purchaseId: string;
  /** `underpaid`: payments landed but (late, priced at the current price, or short) do not cover it. */
  status: "pending" | "underpaid" | "paid";
  signature: string | null;
  /** The quote in force: unpaid after it, a payment is priced at the price of its day. */
  expiresAt: number;
  expired: boolean;
  /** Base units received so far (`receivedLamports` too when the currency is SOL). */
  received: string;
  receivedLamports?: string;
  /** Still owed, in base units at the price the last payment was priced at; a top-up pays it. */
  shortfall: string | null;
}

export async function quotePurchase(
  s: Services,
  wallet: string,
  currency: Currency,
): Promise<PurchaseQuote> {
  const usd = s.config.fees.accessUsd;
  if (currency === "STABLECOIN" && !s.stablecoin) {
    throw new ApiError("invalid_request", "No stablecoin is configured on this service", {
      currency: "use SOL",
    });
  }
  const solUsd = currency === "SOL" ? await currentSolUsd(s) : null;
  const amount = feeUnits(usd, currency, { solUsd, decimals: s.stablecoin?.decimals ?? 0 });
  const purchaseId = toHex(crypto.getRandomValues(new Uint8Array(8)));
  const { request, built, expiresAt } = await quotedPayment(s, {
    wallet,
    currency,
    amount: amount.toString(),
    reference: newReference().toBase58(),
  });
  await handleAccess(s.store, {
    type: "QuotePurchase",
    purchaseId,
    wallet,
    currency,
    amount: amount.toString(),
    usd,
    solUsd,
    reference: request.reference.toBase58(),
    treasury: s.treasury.toBase58(),
    lastValidBlockHeight: built.lastValidBlockHeight,
    expiresAt,
  }, s.clock);
  return {
    purchaseId,
    currency,
    amount: amount.toString(),
    usd,
    reference: request.reference.toBase58(),
    treasury: s.treasury.toBase58(),
    transaction: built.transaction,
    lastValidBlockHeight: built.lastValidBlockHeight,
    expiresAt,
  };
}

/**
 * A quote for what an underpaid purchase still owes, at the current price, on the purchase's own
 * reference: the payments together buy access.
 */
export async function quoteTopUp(
  s: Services,
  purchaseId: string,
  wallet: string,
): Promise<PurchaseQuote> {
  const p = await ownPurchase(s, purchaseId, wallet);
  if (p.status !== "underpaid") {
    throw new ApiError("invalid_request", "this purchase owes nothing to top up", {
      purchaseId: p.status === "paid" ? "already paid" : "no payment short of the fee yet",
    });
  }
  const solUsd = p.currency === "SOL" ? await currentSolUsd(s) : null;
  const amount = atPrice({ amount: BigInt(p.owed), solUsd: p.owedSolUsd }, solUsd);
  const { built, expiresAt } = await quotedPayment(s, { ...p, amount: amount.toString() });
  await handleAccess(s.store, {
    type: "QuoteTopUp",
    purchaseId,
    wallet,
    owed: p.owed,
    amount: amount.toString(),
    solUsd,
    lastValidBlockHeight: built.lastValidBlockHeight,
    expiresAt,
  }, s.clock);
  return {
    purchaseId,
    currency: p.currency,
    amount: amount.toString(),
    usd: solUsd === null
      ? Number(amount) / 10 ** (s.stablecoin?.decimals ?? 0)
      : Number(amount) * solUsd / 1e9,
    reference: p.reference,
    treasury: p.treasury,
    transaction: built.transaction,
    lastValidBlockHeight: built.lastValidBlockHeight,
    expiresAt,
  };
}

/**
 * Looks for payments on chain by the purchase's reference and records each new one once, priced
 * by when it landed (see ./pricing.ts). Several payments in a row (a top-up) are each recorded.
 */
export async function checkPurchase(
  s: Services,
  purchaseId: string,
  wallet: string,
): Promise<PurchaseCheck> {
  let p = await ownPurchase(s, purchaseId, wallet);
  // Each lookup goes on from where the last one got to: a check repeated on a reference someone
  // flooded reads only what landed since (or the next stretch of the flood), not all of it again.
  let cursor = p.status === "paid" ? {} : await loadLookupCursor(s.kv, purchaseId);
  // Bounded: each round records one payment the purchase had not counted yet.
  for (let round = 0; round < MAX_PAYMENTS_PER_CHECK && p.status !== "paid"; round++) {
    const looked = await findPaymentFrom(
      s.connection,
      paymentRequest(s, p),
      { kv: s.kv, logger: s.logger, purchaseId },
      new Set(p.payments),
      cursor,
    );
    cursor = looked.cursor;
    await saveLookupCursor(s.kv, purchaseId, cursor);
    const found = looked.found;
    if (!found) break;
    const late = isLate(p.quote, found.blockTime);
    await handleAccess(s.store, {
      type: "RecordPayment",
      purchaseId,
      signature: found.signature,
      slot: found.slot,
      blockTime: found.blockTime,
      received: found.received.toString(),
      currentSolUsd: late && p.currency === "SOL" ? await currentSolUsd(s) : null,
      stablecoinDecimals: s.stablecoin?.decimals ?? 0,
    }, s.clock);
    p = await ownPurchase(s, purchaseId, wallet);
  }
  return purchaseCheck(p, s.clock());
}

const MAX_PAYMENTS_PER_CHECK = 5;

export function purchaseCheck(p: PurchaseDoc, now: number): PurchaseCheck {
  const status = p.status === "quoted" ? "pending" : p.status;
  return {
    purchaseId: p.purchaseId,
    status,
    signature: p.signature,
    expiresAt: p.expiresAt,
    expired: status !== "paid" && now > p.expiresAt,
    received: p.received,
    ...(p.currency === "SOL" ? { receivedLamports: p.received } : {}),
    shortfall: status === "underpaid" ? p.shortfall : null,
  };
}

const currentSolUsd = async (s: Services) =>
  (await solPriceOr503(s.price, (d) => s.logger.log("warn", "price unavailable", d))).usd;

/** The wallet's own purchase; another wallet's is "not found", so ids can't be probed. */
export async function ownPurchase(s: Services, id: string, wallet: string): Promise<PurchaseDoc> {
  const p = /^[0-9a-f]{16}$/.test(id) ? await read(kvReads(s.kv), purchasesProjection, [id]) : null;
  if (!p || p.wallet !== wallet) throw new ApiError("not_found", "purchase not found");
  return p;
}

/** A quote's payment transaction, and when the quote lapses (the TTL runs from now). */
async function quotedPayment(
  s: Services,
  p: Pick<PurchaseDoc, "wallet" | "currency" | "amount" | "reference">,
) {
  const request = paymentRequest(s, p);
  const built = await buildPaymentTransaction(s.connection, request);
  return { request, built, expiresAt: s.clock() + s.config.quoteTtlS * 1000 };
}

function paymentRequest(
  s: Services,
  p: Pick<PurchaseDoc, "wallet" | "currency" | "amount" | "reference">,
): PaymentRequest {
  return {
    wallet: new PublicKey(p.wallet),
    treasury: s.treasury,
    currency: p.currency,
    amount: BigInt(p.amount),
    reference: new PublicKey(p.reference),
    stablecoin: s.stablecoin,
  };
}
