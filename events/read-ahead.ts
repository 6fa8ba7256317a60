/**
 * Keeps a KV listing (or any async iterable) read ahead of its consumer, up to `max` items. A
 * `kv.list` fetches one page per round trip and only when asked for the next item, so a consumer
 * that works through a page before asking leaves the KV idle meanwhile and then waits for it;
 * read ahead, the next page is fetched while this one is worked on. Breaking out of the loop
 * stops the reading (at most `max` items were read for nothing).
 */
export async function* readAhead<T>(source: AsyncIterable<T>, max = 2_000): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  const buf: T[] = [];
  const st: {
    done: boolean;
    stop: boolean;
    failed: { error: unknown } | null;
    wakeReader: (() => void) | null;
    wakePump: (() => void) | null;
  } = { done: false, stop: false, failed: null, wakeReader: null, wakePump: null };
  const pump = (async () => {
    try {
      while (!st.stop) {
        const r = await it.next();
        if (r.done) break;
        buf.push(r.value);
        st.wakeReader?.();
        if (buf.length >= max) await new Promise<void>((w) => (st.wakePump = w));
      }
      if (st.stop) await it.return?.();
    } catch (e) {
      st.failed = { error: e };
    } finally {
      st.done = true;
      st.wakeReader?.();
    }
  })();
  let head = 0;
  try {
    while (true) {
      while (head >= buf.length) {
        if (st.failed) throw st.failed.error;
        if (st.done) return;
        await new Promise<void>((w) => (st.wakeReader = w));
        st.wakeReader = null;
      }
      const value = buf[head];
      // Let go of it now: a consumed page of segments is megabytes.
      buf[head++] = undefined as T;
      if (head >= Math.min(1024, max) && head * 2 >= buf.length) {
        buf.splice(0, head);
        head = 0;
      }
      if (st.wakePump && buf.length - head < max / 2) {
        const w = st.wakePump;
        st.wakePump = null;
        w();
      }
      yield value;
    }
  } finally {
    st.stop = true;
    const w = st.wakePump;
    st.wakePump = null;
    w?.();
    await pump;
  }
}
