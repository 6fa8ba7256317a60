/**
 * Pyth's pull oracle on Solana: price feed accounts of the Pyth Solana Receiver program
 * (`PriceUpdateV2`, an Anchor account), which replaced the legacy push price accounts
 * (src/solana/pyth.ts) in 2024. Layout, little endian, Borsh:
 *
 *   0 discriminator [8] = sha256("account:PriceUpdateV2")[..8]
 *   8 write_authority [32]
 *  40 verification_level: enum { Partial { num_signatures: u8 } (tag 0, 2 bytes), Full (tag 1) }
 *   then price_message: feed_id [32], price i64, conf u64, exponent i32, publish_time i64,
 *        prev_publish_time i64, ema_price i64, ema_conf u64
 *   then posted_slot u64           (134 bytes allocated; a Full update leaves the last one unused)
 *
 * The sponsored SOL/USD feed account is the push-oracle program's PDA of (shard 0, feed id), the
 * same address on mainnet and devnet.
 */
import { toHex } from "../kernel/hashing.ts";
import type { PythPrice } from "./pyth.ts";

export const PYTH_RECEIVER_PROGRAM_ID = "rec5EKMGg6MxZYaMdyBfgwp4d5rB9T1VQH5pJv5LtFJ";
export const PYTH_PUSH_ORACLE_PROGRAM_ID = "pythWSnswVUd12oZpeFP8e9CVaEqJg25g1Vtc2biRsT";
export const PYTH_SOL_USD_FEED_ID =
  "ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d";
/** PDA of [0u16 LE, feed id] under the push-oracle program (pinned by a test). */
export const PYTH_SOL_USD_PRICE_FEED_ACCOUNT = "7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE";

export const PRICE_UPDATE_V2_SIZE = 134;
/** sha256("account:PriceUpdateV2")[..8] (pinned by a test). */
export const PRICE_UPDATE_V2_DISCRIMINATOR = new Uint8Array([34, 241, 35, 99, 157, 126, 244, 205]);

export type VerificationLevel = { kind: "full" } | { kind: "partial"; signatures: number };

export interface PriceUpdateInput {
  priceUsd: number;
  /** Decimal exponent of the stored integers; SOL/USD uses -8. */
  expo?: number;
  /** Confidence interval in USD; defaults to 0.05% of the price. */
  conf?: number;
  publishTime: number;
  postedSlot: number | bigint;
  feedId?: string;
  verification?: VerificationLevel;
  writeAuthority?: Uint8Array;
}

export interface PriceUpdate extends PythPrice {
  feedId: string;
  verification: VerificationLevel;
}

export function isPriceUpdateV2(data: Uint8Array): boolean {
  return data.length >= 8 && PRICE_UPDATE_V2_DISCRIMINATOR.every((b, i) => data[i] === b);
}

export function encodePriceUpdateV2(input: PriceUpdateInput): Uint8Array {
  const expo = input.expo ?? -8;
  const scaled = (usd: number) => BigInt(Math.round(usd * 10 ** -expo));
  const buf = new Uint8Array(PRICE_UPDATE_V2_SIZE);
  const v = new DataView(buf.buffer);
  buf.set(PRICE_UPDATE_V2_DISCRIMINATOR, 0);
  if (input.writeAuthority) buf.set(input.writeAuthority.subarray(0, 32), 8);
  const level = input.verification ?? { kind: "full" };
  let off = 40;
  if (level.kind === "full") buf[off++] = 1;
  else {
    buf[off++] = 0;
    buf[off++] = level.signatures;
  }
  buf.set(hexBytes(input.feedId ?? PYTH_SOL_USD_FEED_ID), off);
  off += 32;
  const price = scaled(input.priceUsd);
  const conf = scaled(input.conf ?? input.priceUsd * 0.0005);
  const ts = BigInt(Math.floor(input.publishTime));
  v.setBigInt64(off, price, true);
  v.setBigUint64(off + 8, conf, true);
  v.setInt32(off + 16, expo, true);
  v.setBigInt64(off + 20, ts, true);
  v.setBigInt64(off + 28, ts - 1n, true);
  v.setBigInt64(off + 36, price, true);
  v.setBigUint64(off + 44, conf, true);
  v.setBigUint64(off + 52, BigInt(input.postedSlot), true);
  return buf;
}

export class PriceUpdateDecodeError extends Error {
  override name = "PriceUpdateDecodeError";
}

export function decodePriceUpdateV2(data: Uint8Array): PriceUpdate {
  if (!isPriceUpdateV2(data)) throw new PriceUpdateDecodeError("not a PriceUpdateV2 account");
  const tag = data[40];
  if (tag !== 0 && tag !== 1) throw new PriceUpdateDecodeError("bad verification level");
  const verification: VerificationLevel = tag === 1
    ? { kind: "full" }
    : { kind: "partial", signatures: data[41] };
  const off = tag === 1 ? 41 : 42;
  if (data.length < off + 32 + 60) throw new PriceUpdateDecodeError("account too small");
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const feedId = toHex(data.subarray(off, off + 32));
  const m = off + 32;
  const expo = v.getInt32(m + 16, true);
  const scale = 10 ** expo;
  return {
    feedId,
    verification,
    price: Number(v.getBigInt64(m, true)) * scale,
    conf: Number(v.getBigUint64(m + 8, true)) * scale,
    expo,
    // The pull oracle has no trading status: a feed that stops trading stops being updated, which
    // the age check catches.
    status: "trading",
    publishTime: Number(v.getBigInt64(m + 20, true)),
    slot: Number(v.getBigUint64(m + 52, true)),
    emaPrice: Number(v.getBigInt64(m + 36, true)) * scale,
    numPublishers: 0,
  };
}

function hexBytes(hex: string): Uint8Array {
  const h = hex.replace(/^0x/, "");
  return Uint8Array.from(h.match(/../g)!.map((b) => parseInt(b, 16)));
}
