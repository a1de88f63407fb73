/**
 * Named places where a crash tells the most (docs/decisions.md, "Crash anywhere, lose nothing"). Each is a call that
 * does nothing, unless the composition root installed a hook (the crash test's, which kills the process there).
 * The core stays free of process access: the hook is handed in, never looked up.
 */
export const CRASH_POINTS = [
  /** The rental's transaction committed (first hour charged), the provider not yet asked. */
  'after-rental-commit',
  /** The provider made the machine; its id not yet recorded. */
  'after-create-before-record',
  /** A sweep pass between two of its money steps (each its own transactions). */
  'between-sweep-steps',
  /** Between two rounds of hour blocks; a block's charge and its advance are one statement, so no point lies between. */
  'between-block-rounds',
  /** The payment webhook's deposit credited, not yet marked confirmed (one transaction: the crash rolls both back). */
  'webhook-between-credit-and-mark',
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

let hook: ((name: CrashPointName) => void) | null = null;

/** A named crash point: nothing, unless a hook was installed. */
export function crashPoint(name: CrashPointName): void {
  hook?.(name);
}

/** Installed once by the composition root of a process under a crash test. */
export function installCrashHook(at: (name: CrashPointName) => void): void {
  hook = at;
}
