/**
 * Runs `work` as background work at the providers (the sweep and its starts): in a provider's pacer its calls wait
 * behind those made for a person's request (POST /v1/instances, a reboot), which go first. What that means is the
 * adapters' (adapters/providers/shared/pacing.ts); the composition root hands the core the function.
 */
export type Background = <T>(work: () => Promise<T>) => Promise<T>;

/** Marks nothing: every call is served in the order it came (services built without the adapters' pacing). */
export const ALL_INTERACTIVE: Background = (work) => work();
