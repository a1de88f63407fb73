import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Ids, Secrets } from '../../../core/ports/ids.ts';
import type { Metrics } from '../../../core/ports/metrics.ts';
import type { Payments } from '../../../core/ports/payments.ts';
import type { Provider } from '../../../core/ports/providers.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { ControlPlaneConfig } from '../config.ts';

/**
 * The container's keys for what has no class of its own: the configuration and the core's ports. Services are
 * registered under their classes, so every lookup is typed and no module names another's by a string
 * (docs/decisions.md, "Composition as the wiring diagram").
 */
export type Port<T> = symbol & { readonly __port?: T };
const port = <T>(name: string): Port<T> => Symbol(name) as Port<T>;

export const CONFIG = port<ControlPlaneConfig>('Config');
export const LOGGER = port<Logger>('Logger');
export const CLOCK = port<Clock>('Clock');
export const IDS = port<Ids>('Ids');
export const SECRETS = port<Secrets>('Secrets');
export const STORAGE = port<Storage>('Storage');
export const METRICS = port<Metrics>('Metrics');
/** The providers as the core calls them: each call under its deadline, counted in the metrics. */
export const PROVIDERS = port<Provider[]>('Providers');
export const PAYMENTS = port<Payments>('Payments');

/** A port's adapter, typed by its key. */
export const get = <T>(c: DependencyContainer, key: Port<T>): T => c.resolve<T>(key);

/** What most services take: the storage, the clock and the id source. */
export const basics = (c: DependencyContainer) => ({ storage: get(c, STORAGE), clock: get(c, CLOCK), ids: get(c, IDS) });
