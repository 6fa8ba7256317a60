/**
 * The access purchase as the portal drives it: quote (price the fee, build the unsigned payment
 * with a fresh reference, record the quote) and check (find the payment on chain by its
 * reference, record it once).
 */
import { PublicKey } from "@solana/web3.js";
import { toHex } from "../../../events/hash.ts";
import { projectionKey } from "../../../events/keys.ts";
import type { PurchaseDoc } from "../../../projections/purchases.ts";
import { ApiError } from "../../http/errors.ts";
import { usdToLamports } from "../../pricing/price-source.ts";
import { solPriceOr503 } from "../../pricing/quote.ts";
import type { Services } from "../../services.ts";
import { handleAccess } from "./handle.ts";
import {
  buildPaymentTransaction,
  findPayment,
  newReference,
  type PaymentRequest,
} from "./payment.ts";

export type Currency = "SOL" | "STABLECOIN";

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
}

export interface PurchaseCheck {
  purchaseId: string;
  status: "pending" | "paid";
  signature: string | null;
}

export async function quotePurchase(
  s: Services,
  wallet: string,
  currency: Currency,
): Promise<PurchaseQuote> {
  const usd = s.config.fees.accessUsd;
  let amount: bigint;
  let solUsd: number | null = null;
  if (currency === "SOL") {
    solUsd = (await solPriceOr503(s.price, (d) =>
      s.logger.log("warn", "price unavailable", d))).usd;
    amount = usdToLamports(usd, solUsd);
  } else {
    if (!s.config.stablecoin.mint) {
      throw new ApiError("invalid_request", "No stablecoin is configured on this service", {
        currency: "use SOL",
      });
    }
    amount = stablecoinUnits(usd, s.config.stablecoin.decimals);
  }
  const purchaseId = toHex(crypto.getRandomValues(new Uint8Array(8)));
  const request = paymentRequest(s, {
    wallet,
    currency,
    amount: amount.toString(),
    reference: newReference().toBase58(),
  });
  const built = await buildPaymentTransaction(s.connection, request);
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
  });
  return {
    purchaseId,
    currency,
    amount: amount.toString(),
    usd,
    reference: request.reference.toBase58(),
    treasury: s.treasury.toBase58(),
    transaction: built.transaction,
    lastValidBlockHeight: built.lastValidBlockHeight,
  };
}

/** Looks for the payment on chain by its reference; records it the first time it is seen. */
export async function checkPurchase(
  s: Services,
  purchaseId: string,
  wallet: string,
): Promise<PurchaseCheck> {
  const p = await ownPurchase(s, purchaseId, wallet);
  if (p.status === "paid") return { purchaseId, status: "paid", signature: p.signature };
  const found = await findPayment(s.connection, paymentRequest(s, p), {
    kv: s.kv,
    logger: s.logger,
    purchaseId,
  });
  if (!found) return { purchaseId, status: "pending", signature: null };
  await handleAccess(s.store, { type: "RecordPayment", purchaseId, ...found });
  return { purchaseId, status: "paid", signature: found.signature };
}

/** The wallet's own purchase; another wallet's is "not found", so ids can't be probed. */
export async function ownPurchase(s: Services, id: string, wallet: string): Promise<PurchaseDoc> {
  const p = /^[0-9a-f]{16}$/.test(id)
    ? (await s.kv.get<PurchaseDoc>(projectionKey("purchase", [id]))).value
    : null;
  if (!p || p.wallet !== wallet) throw new ApiError("not_found", "purchase not found");
  return p;
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
    stablecoin: s.config.stablecoin.mint
      ? { mint: new PublicKey(s.config.stablecoin.mint), decimals: s.config.stablecoin.decimals }
      : undefined,
  };
}

/**
 * A USD amount in a stablecoin's base units, rounded up as the SOL amount is (the treasury never
 * receives less than the fee), in exact micro-dollars like `usdToLamports`.
 */
export function stablecoinUnits(usd: number, decimals: number): bigint {
  const micro = BigInt(Math.round(usd * 1_000_000));
  const scale = 10n ** BigInt(decimals);
  return (micro * scale + 999_999n) / 1_000_000n;
}
