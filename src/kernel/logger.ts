/** Structured JSON logs, one line per event. Never given a key, a secret or a body. */
export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level | "silent", number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
  silent: 99,
};

export interface Logger {
  log(level: Level, msg: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(
  min: Level | "silent" = "info",
  write: (line: string) => void = (l) => console.log(l),
): Logger {
  return {
    log(level, msg, fields = {}) {
      if (ORDER[level] < ORDER[min]) return;
      write(JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields }));
    },
  };
}

/** Collects lines in memory, for tests that assert what is (and is not) logged. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, ...jsonLogger("debug", (l) => lines.push(l)) };
}
