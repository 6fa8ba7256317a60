/**
 * Turns of the event loop for long synchronous work (a log read from a file): messages from
 * workers, their start-up among them, are only handled between tasks, and a loop that only ever
 * awaits settled promises never lets one through. `setTimeout(0)` waits about 2 ms here; a message
 * to oneself through a `MessageChannel` takes about 11 µs. Why our own: the platform has no
 * `setImmediate`-like primitive outside node:timers' compatibility layer, and that is a timer too.
 */
export class EventLoopTurns {
  #channel: MessageChannel | null = null;
  #resolve: (() => void) | null = null;

  /** Resolves once the event loop has run the tasks already waiting. */
  turn(): Promise<void> {
    if (!this.#channel) {
      this.#channel = new MessageChannel();
      this.#channel.port2.onmessage = () => {
        const r = this.#resolve;
        this.#resolve = null;
        r?.();
      };
    }
    const channel = this.#channel;
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      channel.port1.postMessage(null);
    });
  }

  /** Lets the channel go: an open one would keep the process from ending. */
  close(): void {
    this.#channel?.port1.close();
    this.#channel?.port2.close();
    this.#channel = null;
  }
}
