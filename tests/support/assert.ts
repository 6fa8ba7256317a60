/** Node's assert, with the names Deno's @std/assert would give (jsr is out of reach here). */
import nodeAssert from "node:assert/strict";

export function assert(cond: unknown, msg?: string): asserts cond {
  nodeAssert.ok(cond, msg);
}
export const assertEquals = <T>(actual: T, expected: T, msg?: string) =>
  nodeAssert.deepStrictEqual(actual, expected, msg);
export const assertNotEquals = <T>(actual: T, expected: T, msg?: string) =>
  nodeAssert.notDeepStrictEqual(actual, expected, msg);
export const assertMatch = (actual: string, re: RegExp, msg?: string) =>
  nodeAssert.match(actual, re, msg);
export async function assertRejects(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  errorClass?: new (...args: any[]) => Error,
  msgIncludes?: string,
): Promise<Error> {
  try {
    await fn();
  } catch (e) {
    if (errorClass && !(e instanceof errorClass)) {
      throw new Error(`expected ${errorClass.name}, got ${(e as Error)?.constructor?.name}: ${e}`);
    }
    if (msgIncludes && !(e as Error).message.includes(msgIncludes)) {
      throw new Error(
        `expected message to include "${msgIncludes}", got "${(e as Error).message}"`,
      );
    }
    return e as Error;
  }
  throw new Error("expected the promise to reject");
}
