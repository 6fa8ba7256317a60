/**
 * A JSON Schema `pattern` for the decimal integers from `min` (0 or 1) to `max`, written without
 * leading zeros: how the OpenAPI document states a u64 bound exactly on a string, which no
 * `maximum` can (supplies exceed 2^53, so they travel as strings).
 */
export function decimalAtMostPattern(max: bigint, min: 0n | 1n = 1n): string {
  const m = max.toString();
  const alternatives: string[] = [];
  if (min === 0n) alternatives.push("0");
  if (m.length > 1) alternatives.push(`[1-9][0-9]{0,${m.length - 2}}`);
  // As many digits as max: its first i digits, then a smaller one, then any.
  for (let i = 0; i < m.length; i++) {
    const low = i === 0 ? 1 : 0;
    const high = Number(m[i]) - 1;
    if (high < low) continue;
    const rest = m.length - i - 1;
    const digit = high === low ? `${low}` : `[${low}-${high}]`;
    alternatives.push(m.slice(0, i) + digit + (rest > 0 ? `[0-9]{${rest}}` : ""));
  }
  if (m !== "0") alternatives.push(m);
  return `^(?:${alternatives.join("|")})$`;
}
