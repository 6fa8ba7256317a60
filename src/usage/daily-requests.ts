/** The per-key count of a UTC day's API requests: the rate limiter writes it, usage reads it. */
export const dailyRequestKey = (keyId: string, day: string): Deno.KvKey => ["rq_day", keyId, day];
