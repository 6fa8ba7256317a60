/**
 * A port a start must open is taken: one line naming the setting and the port, instead of
 * Deno's `AddrInUse` stack trace. The embedded chain raises it for its two ports, the service's
 * entry point for PORT; the entry points print the message and exit.
 */
export class PortInUse extends Error {
  constructor(readonly setting: string, readonly port: number, what: string) {
    super(
      `${what} cannot listen: port ${port} (${setting}) is already in use. Stop what holds it, ` +
        `or start with ${setting} set to a free port.`,
    );
    this.name = "PortInUse";
  }
}

/** Runs `listen`, turning an address-in-use failure into PortInUse. */
export function listenOn<T>(setting: string, port: number, what: string, listen: () => T): T {
  try {
    return listen();
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) throw new PortInUse(setting, port, what);
    throw e;
  }
}
