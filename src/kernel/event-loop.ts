/**
 * A turn of the event loop for long synchronous work (a log read from a file): messages from
 * workers, their start-up among them, are only handled between tasks, and a loop that only ever
 * awaits settled promises never lets one through. A message to oneself through a `MessageChannel`
 * is one such turn, where `setTimeout(0)` is clamped to a timer's minimum delay. Why our own: the
 * platform has no `setImmediate` outside node:timers' compatibility layer, and that is a timer
 * too. A channel per turn: an open one would keep the process alive, and no turn can then take
 * another's message.
 */
export function eventLoopTurn(): Promise<void> {
  const { port1, port2 } = new MessageChannel();
  return new Promise<void>((resolve) => {
    port2.onmessage = () => {
      port1.close();
      port2.close();
      resolve();
    };
    port1.postMessage(null);
  });
}
