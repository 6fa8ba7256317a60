/**
 * Pyth legacy (v2, "push oracle on Solana mainnet") price account layout, as read by
 * pyth-sdk-solana's `SolanaPriceAccount` (a `#[repr(C)]` struct, all little endian):
 *
 *   0 magic u32 (0xa1b2c3d4)   4 ver u32 (2)        8 atype u32 (3 = price)  12 size u32
 *  16 ptype u32 (1 = price)   20 expo i32          24 num u32               28 num_qt u32
 *  32 last_slot u64           40 valid_slot u64    48 ema_price {val,numer,denom: i64}
 *  72 ema_conf {val,numer,denom: i64}             96 timestamp i64 (unix s)
 * 104 min_pub u8  105 drv2 u8  106 drv3 u16  108 drv4 u32  112 prod [32]  144 next [32]
 * 176 prev_slot u64  184 prev_price i64  192 prev_conf u64  200 prev_timestamp i64
 * 208 agg {price i64, conf u64, status u32, corp_act u32, pub_slot u64}
 * 240 comp[32] {publisher [32], agg PriceInfo, latest PriceInfo} (96 bytes each) -> 3312 bytes.
 */

export const PYTH_ORACLE_PROGRAM_ID = "FsJ3A3u2vn5cTVofAjvy6y5kwABJAqYWpe4975bi2epH";
export const PYTH_SOL_USD_PRICE_ACCOUNT = "H6ARHf6YXhGYeQfUzQNGk6rDNnLBQKrenN712K4AQJEG";
/** The product account the mainnet SOL/USD price account links to. */
export const PYTH_SOL_USD_PRODUCT_ACCOUNT = "ALP8SdU9oARYVLgLR7LrqMNCYBnhtnQz1cj6bwgwQmgj";

export const PYTH_MAGIC = 0xa1b2c3d4;
export const PYTH_VERSION = 2;
export const PYTH_PRICE_ACCOUNT_SIZE = 3312;
const ACCOUNT_TYPE_PRICE = 3;
const PRICE_TYPE_PRICE = 1;
const COMP_OFFSET = 240;

export type PythPriceStatus = "unknown" | "trading" | "halted" | "auction" | "ignored";
const STATUSES: PythPriceStatus[] = ["unknown", "trading", "halted", "auction", "ignored"];

export interface PythPriceInput {
  priceUsd: number;
  /** Decimal exponent of the stored integers; mainnet SOL/USD uses -8. */
  expo?: number;
  /** Confidence interval in USD (same scale as priceUsd). Defaults to 0.05% of the price. */
  conf?: number;
  /** Unix seconds of the aggregate. */
  publishTime: number;
  slot: number | bigint;
  status?: PythPriceStatus;
  /** Publisher key stored in component 0; any 32 bytes. */
  publisher?: Uint8Array;
  /** Product account key (32 bytes); defaults to the mainnet SOL/USD product. */
  product?: Uint8Array;
}

export interface PythPrice {
  /** Aggregate price, already scaled by the exponent. */
  price: number;
  conf: number;
  expo: number;
  status: PythPriceStatus;
  /** Unix seconds of the aggregate price. */
  publishTime: number;
  /** Slot the aggregate was published in. */
  slot: number;
  emaPrice: number;
  numPublishers: number;
}

export class PythDecodeError extends Error {
  override name = "PythDecodeError";
}

function toScaled(value: number, expo: number): bigint {
  return BigInt(Math.round(value * 10 ** -expo));
}

export function encodePythPriceAccount(input: PythPriceInput): Uint8Array {
  const expo = input.expo ?? -8;
  const slot = BigInt(input.slot);
  const price = toScaled(input.priceUsd, expo);
  const conf = toScaled(input.conf ?? input.priceUsd * 0.0005, expo);
  const status = STATUSES.indexOf(input.status ?? "trading");
  const ts = BigInt(Math.floor(input.publishTime));
  const buf = new Uint8Array(PYTH_PRICE_ACCOUNT_SIZE);
  const v = new DataView(buf.buffer);
  v.setUint32(0, PYTH_MAGIC, true);
  v.setUint32(4, PYTH_VERSION, true);
  v.setUint32(8, ACCOUNT_TYPE_PRICE, true);
  v.setUint32(12, PYTH_PRICE_ACCOUNT_SIZE, true);
  v.setUint32(16, PRICE_TYPE_PRICE, true);
  v.setInt32(20, expo, true);
  v.setUint32(24, 1, true); // one publisher component
  v.setUint32(28, 1, true); // which quoted in the last aggregation
  v.setBigUint64(32, slot, true);
  v.setBigUint64(40, slot, true);
  v.setBigInt64(48, price, true);
  v.setBigInt64(56, price, true);
  v.setBigInt64(64, 1n, true);
  v.setBigInt64(72, conf, true);
  v.setBigInt64(80, conf, true);
  v.setBigInt64(88, 1n, true);
  v.setBigInt64(96, ts, true);
  buf[104] = 1; // min_pub
  buf.set(input.product ?? PRODUCT_BYTES, 112);
  v.setBigUint64(176, slot > 0n ? slot - 1n : 0n, true);
  v.setBigInt64(184, price, true);
  v.setBigUint64(192, conf, true);
  v.setBigInt64(200, ts, true);
  writePriceInfo(v, 208, price, conf, status, slot);
  if (input.publisher) buf.set(input.publisher.subarray(0, 32), COMP_OFFSET);
  writePriceInfo(v, COMP_OFFSET + 32, price, conf, status, slot);
  writePriceInfo(v, COMP_OFFSET + 64, price, conf, status, slot);
  return buf;
}

function writePriceInfo(
  v: DataView,
  off: number,
  price: bigint,
  conf: bigint,
  status: number,
  slot: bigint,
): void {
  v.setBigInt64(off, price, true);
  v.setBigUint64(off + 8, conf, true);
  v.setUint32(off + 16, status, true);
  v.setUint32(off + 20, 0, true);
  v.setBigUint64(off + 24, slot, true);
}

/** Validates the header like pyth-sdk-solana's `load_price_account` and reads the aggregate. */
export function decodePythPriceAccount(data: Uint8Array): PythPrice {
  if (data.length < COMP_OFFSET) {
    throw new PythDecodeError(`price account too small: ${data.length} bytes`);
  }
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (v.getUint32(0, true) !== PYTH_MAGIC) throw new PythDecodeError("bad magic number");
  if (v.getUint32(4, true) !== PYTH_VERSION) throw new PythDecodeError("bad version number");
  if (v.getUint32(8, true) !== ACCOUNT_TYPE_PRICE) {
    throw new PythDecodeError("not a price account");
  }
  const expo = v.getInt32(20, true);
  const scale = 10 ** expo;
  const statusIndex = v.getUint32(224, true);
  return {
    price: Number(v.getBigInt64(208, true)) * scale,
    conf: Number(v.getBigUint64(216, true)) * scale,
    expo,
    status: STATUSES[statusIndex] ?? "unknown",
    publishTime: Number(v.getBigInt64(96, true)),
    slot: Number(v.getBigUint64(232, true)),
    emaPrice: Number(v.getBigInt64(48, true)) * scale,
    numPublishers: v.getUint32(24, true),
  };
}

const PRODUCT_BYTES = base58Decode32(PYTH_SOL_USD_PRODUCT_ACCOUNT);

/** Tiny local decoder so this module has no dependency beyond the platform. */
function base58Decode32(s: string): Uint8Array {
  const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  let n = 0n;
  for (const ch of s) n = n * 58n + BigInt(alphabet.indexOf(ch));
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}
