// @ts-check
/// <reference lib="dom" />
// Display formatting. Amounts arrive as strings of base units (lamports can exceed 2^53), so
// they are scaled with BigInt, never through a float.

/**
 * @param {string | bigint} units
 * @param {number} decimals
 */
export function formatUnits(units, decimals) {
  const v = BigInt(units);
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const scale = 10n ** BigInt(decimals);
  const whole = abs / scale;
  const frac = decimals ? (abs % scale).toString().padStart(decimals, "0").replace(/0+$/, "") : "";
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

/** @param {string | bigint} lamports */
export const formatSol = (lamports) => `${formatUnits(lamports, 9)} SOL`;

const usd = new Intl.NumberFormat("en-US", {
  style: "currency",
  currency: "USD",
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});
/** @param {number} n */
export const formatUsd = (n) => usd.format(n);

/** @param {string} address */
export const shortAddress = (address) =>
  address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;

/** @param {number | null | undefined} ms */
export const formatTime = (ms) =>
  ms
    ? new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })
    : "never";

/** @param {number} bytes */
export function formatBytes(bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/** @param {number} n @param {string} one @param {string} many */
export const plural = (n, one, many) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
