/** A fetch for the service's RPC that counts the JSON-RPC calls going through it, by method. */
export function countingFetch() {
  const calls: Record<string, number> = {};
  const fetchFn: typeof fetch = async (input, init) => {
    if (typeof init?.body === "string") {
      const body = JSON.parse(init.body);
      for (const r of Array.isArray(body) ? body : [body]) {
        calls[r.method] = (calls[r.method] ?? 0) + 1;
      }
    }
    return await fetch(input, init);
  };
  return {
    fetchFn,
    /** The calls since the last take, by method. */
    take() {
      const out = { ...calls };
      for (const k of Object.keys(calls)) delete calls[k];
      return out;
    },
  };
}
