import { ProviderFailure, type Provider } from '../ports/providers.ts';

/** The longest the core waits for a provider, whatever the configuration says (docs/decisions.md, Deadlines on cloud calls). */
export const MAX_CREATE_MS = 60_000;
export const MAX_CALL_MS = 30_000;

export interface DeadlineSettings {
  /** createMachine, createSpotMachine, createVolume: at most MAX_CREATE_MS. */
  createMs: number;
  /** Every other call (terminate, get, list, reboot, volumes, offers): at most MAX_CALL_MS. */
  callMs: number;
}

/** Calls that may leave something upstream: one cut by its deadline is ambiguous (the reconcilers settle it). */
const CREATES = new Set(['createMachine', 'createSpotMachine', 'createVolume']);
/** Where a call takes an AbortSignal: the deadline aborts the adapter's request too. */
const SIGNAL_AT: Readonly<Record<string, number>> = { listOffers: 0, getOffer: 1 };

/**
 * Every call the core makes to a provider, given a deadline in real time: the core never waits
 * on a cloud longer than that. A create past its deadline is ambiguous (ProviderFailure `ambiguous`): the
 * instance stays provisioning and the reconciler adopts its machine by label or fails it at the provisioning
 * deadline, as after any create whose answer was lost; any other call past its deadline is `unavailable`
 * (retried by the next pass). The adapter's own request is not awaited further: when it answers late, nobody
 * listens. `cut` counts the calls cut here, for the sweep's report.
 */
export class CallDeadlines {
  readonly settings: DeadlineSettings;
  private cutCount = 0;
  private readonly onCut: (provider: string, operation: string) => void;

  constructor(settings: Partial<DeadlineSettings> = {}, onCut: (provider: string, operation: string) => void = () => undefined) {
    this.settings = {
      createMs: Math.min(MAX_CREATE_MS, settings.createMs ?? MAX_CREATE_MS),
      callMs: Math.min(MAX_CALL_MS, settings.callMs ?? MAX_CALL_MS),
    };
    this.onCut = onCut;
  }

  /** Calls cut by a deadline in this process so far. */
  get cut(): number {
    return this.cutCount;
  }

  /**
   * The provider with every asynchronous method under its deadline. A Proxy keeps whatever capabilities the adapter
   * has (SpotMarket, VolumeHost, Rebootable...) and its class; a method replaced on the adapter later (tests do) is
   * read at each call, so it is bounded too. Synchronous methods (isOfferId) pass through.
   */
  bound(provider: Provider): Provider {
    const wrapperOf = new WeakMap<Function, Function>();
    const wrappers = new WeakSet<Function>();
    return new Proxy(provider, {
      get: (target, property) => {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function' || property === 'constructor' || wrappers.has(value)) return value;
        let wrapper = wrapperOf.get(value);
        if (wrapper === undefined) {
          const method = value;
          const operation = String(property);
          const self = this;
          wrapper = function (this: unknown, ...args: unknown[]): unknown {
            return self.call(target, operation, method, args);
          };
          wrapperOf.set(value, wrapper);
          wrappers.add(wrapper);
        }
        return wrapper;
      },
    });
  }

  private call(target: Provider, operation: string, method: Function, args: unknown[]): unknown {
    const create = CREATES.has(operation);
    const ms = create ? this.settings.createMs : this.settings.callMs;
    const controller = new AbortController();
    const at = SIGNAL_AT[operation];
    if (at !== undefined) {
      const given = args[at] as AbortSignal | undefined;
      args = [...args];
      args[at] = given ? AbortSignal.any([given, controller.signal]) : controller.signal;
    }
    const result: unknown = Reflect.apply(method, target, args);
    if (!(result instanceof Promise)) return result;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.cutCount++;
        this.onCut(target.name, operation);
        controller.abort();
        const what = create ? 'whatever it made is settled by the reconciler' : 'the next pass asks again';
        reject(new ProviderFailure(target.name, create ? 'ambiguous' : 'unavailable', `${operation}: no answer within ${ms} ms (the control plane's deadline; ${what})`));
      }, ms);
      result.then(
        (answer: unknown) => {
          clearTimeout(timer);
          resolve(answer);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
