import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import {
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type ProviderFailureKind,
  type Rebootable,
  type SpotMachineRequest,
  type SpotMarket,
} from '../../../core/ports/providers.ts';
import type { VastClient, VastResponse } from './client.ts';
import {
  EXTRA_FILTER_KEYS,
  PROVIDER_NAME,
  contractIdOf,
  createBody,
  errorOf,
  machineFromWire,
  offerFromWire,
  offerSearchBody,
  offersOf,
  singleInstanceOf,
  storageCostOf,
  type CreateSettings,
  type SearchSettings,
} from './mapping.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { divideDecimalDown, isPlainDecimal, subtractDecimal } from '../shared/decimal.ts';

export interface VastAdapterSettings {
  search: SearchSettings;
  create: CreateSettings;
}

/** Destroy answers that mean the instance is already gone (the spec's and the one dstack has seen). */
const GONE_CODES = new Set(['no_such_instance', 'not_found']);
/** The v1 instance list serves at most 25 per page; the cap stops a server that never ends the cursor. */
const PAGE_SIZE = 25;
const MAX_PAGES = 400;

const NUMERIC_ID = /^\d{1,15}$/;
const isOk = (response: VastResponse): boolean =>
  response.status >= 200 && response.status < 300 && (response.body as { success?: unknown } | null)?.success !== false;

const describe = (response: VastResponse): string => {
  const { code, message } = errorOf(response.body);
  const auth = response.status === 401 || response.status === 403 ? 'API key rejected: ' : '';
  const limited = response.status === 429 ? 'rate limited: ' : '';
  return `${auth}${limited}HTTP ${response.status}${code ? ` ${code}` : ''}: ${message}`;
};

const failure = (kind: ProviderFailureKind, what: string, detail: string, status: number | null = null): ProviderFailure =>
  new ProviderFailure(PROVIDER_NAME, kind, `${what}: ${detail}`, status);

const fromResponse = (kind: ProviderFailureKind, what: string, response: VastResponse): ProviderFailure =>
  failure(kind, what, describe(response), response.status);

const fromTransport = (kind: ProviderFailureKind, what: string, error: unknown): ProviderFailure =>
  error instanceof ProviderFailure ? error : failure(kind, what, error instanceof Error ? error.message : String(error));

/** Lets one caller stop waiting on a shared request without cancelling it for the others. */
const withSignal = <T>(shared: Promise<T>, signal: AbortSignal | undefined): Promise<T> => {
  if (!signal) return shared;
  if (signal.aborted) return Promise.reject(failure('unavailable', 'search offers', 'aborted by caller'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(failure('unavailable', 'search offers', 'aborted by caller'));
    signal.addEventListener('abort', onAbort, { once: true });
    shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
};

/** Vast's range for `price`, the bid of an interruptible instance (USD per hour). */
const MIN_BID_PRICE = '0.001';
const MAX_BID_PRICE = 128;

/**
 * Vast behind our Provider port; also a SpotMarket: interruptible instances at a bid (`price` on the create),
 * the spot price from each ask's `min_bid` plus its storage, preemption read from the instance record (an
 * `is_bid` instance stopped: outbid).
 */
export class VastProvider implements Provider, Rebootable, SpotMarket {
  readonly name = PROVIDER_NAME;
  /**
   * No `command`: with SSH access Vast runs its own entrypoint, so the image's command never runs (a startup
   * script does); no `volumes`: Vast's volumes are local to one host, not network storage (no VolumeHost).
   */
  readonly machineOptions: readonly MachineOption[] = ['custom_image', 'registry_auth', 'env', 'ports', 'startup_script', 'ssh_keys'];
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  /** Vast offers are containers on hosts that do not say how they are built. */
  readonly unfilterable: readonly StandardFilter[] = ['docker_in_docker', 'mig', 'baremetal', 'virtualized'];
  readonly #client: VastClient;
  readonly #settings: VastAdapterSettings;
  /** Identical searches in flight share one upstream request: Vast allows about 10 searches a minute. */
  readonly #searches = new Map<string, Promise<unknown[]>>();

  constructor(client: VastClient, settings: VastAdapterSettings) {
    this.#client = client;
    this.#settings = settings;
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    const raw = await this.#search(offerSearchBody(this.#settings.search), signal);
    const seen = new Set<string>();
    const offers: Offer[] = [];
    for (const entry of raw) {
      const offer = offerFromWire(entry, this.#settings.search.diskGb);
      if (offer && !seen.has(offer.id)) {
        seen.add(offer.id);
        offers.push(offer);
      }
    }
    return offers;
  }

  isOfferId(offerId: string): boolean {
    return NUMERIC_ID.test(offerId);
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    // an id Vast could never have issued costs no search
    if (!this.isOfferId(offerId)) return null;
    const id = Number(offerId);
    const raw = await this.#search(offerSearchBody(this.#settings.search, id), signal);
    const offers = raw.map((entry) => offerFromWire(entry, this.#settings.search.diskGb));
    return offers.find((offer) => offer?.id === `${PROVIDER_NAME}:${id}`) ?? null;
  }

  #search(body: Record<string, unknown>, signal?: AbortSignal): Promise<unknown[]> {
    const key = JSON.stringify(body);
    let shared = this.#searches.get(key);
    if (!shared) {
      shared = this.#client
        .call('POST', '/api/v0/bundles/', { body, retry: 'safe', paced: true })
        .then(
          (response) => {
            if (response.status < 200 || response.status >= 300) throw fromResponse('unavailable', 'search offers', response);
            const offers = offersOf(response.body);
            if (!offers) throw failure('unavailable', 'search offers', 'answer has no offers list', response.status);
            return offers;
          },
          (error: unknown) => {
            throw fromTransport('unavailable', 'search offers', error);
          },
        )
        .finally(() => this.#searches.delete(key));
      this.#searches.set(key, shared);
    }
    return withSignal(shared, signal);
  }

  createMachine(request: CreateMachineRequest): Promise<Machine> {
    return this.#create(request, `create on offer ${request.offerId}`);
  }

  /**
   * Vast's bid is compute only and storage is billed beside it, so the ask is read first (one search): the
   * bid sent is ours less the ask's storage, rounded down, and the whole machine never costs more than our bid.
   * A bid under the ask's minimum is Vast's to refuse.
   */
  async createSpotMachine(request: SpotMachineRequest): Promise<Machine> {
    const what = `interruptible create on offer ${request.offerId} at ${request.bidUsdPerHour}`;
    if (!NUMERIC_ID.test(request.offerId)) throw failure('rejected', what, 'not a Vast offer id', 404);
    if (!isPlainDecimal(request.bidUsdPerHour)) throw failure('rejected', what, 'the bid is not a decimal USD amount');
    const id = Number(request.offerId);
    const raw = (await this.#search(offerSearchBody(this.#settings.search, id))).find((entry) => (entry as { id?: unknown })?.id === id);
    const offer = raw === undefined ? null : offerFromWire(raw, this.#settings.search.diskGb);
    if (!offer) throw failure('rejected', what, 'the ask is gone', 410);
    if (offer.spotPriceUsdPerHour === null) throw failure('rejected', what, 'the ask states no minimum bid: no spot market');
    const price = subtractDecimal(request.bidUsdPerHour, storageCostOf(raw as { storage_total_cost?: number | null }));
    const bidPrice = price === null ? null : divideDecimalDown(price, 1, 8);
    if (bidPrice === null || subtractDecimal(bidPrice, MIN_BID_PRICE) === null) {
      throw failure('rejected', what, `the bid does not cover the ask's storage and Vast's least bid of ${MIN_BID_PRICE}`);
    }
    if (Number(bidPrice) > MAX_BID_PRICE) throw failure('rejected', what, `Vast takes bids up to ${MAX_BID_PRICE} USD per hour`);
    return this.#create(request, what, bidPrice);
  }

  async #create(request: CreateMachineRequest, what: string, bidPrice?: string): Promise<Machine> {
    if (!NUMERIC_ID.test(request.offerId)) throw failure('rejected', what, 'not a Vast offer id', 404);
    if (request.label.length === 0 || request.label.length > 256) throw failure('rejected', what, 'label must be 1 to 256 characters');
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw failure('rejected', what, `Vast cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw failure('rejected', what, problem);
    // image_login is a flag string: a credential with whitespace would split into other flags
    if (request.registryAuth && /\s/.test(request.registryAuth.username + request.registryAuth.password)) {
      throw failure('rejected', what, 'Vast takes registry credentials without spaces');
    }

    let response: VastResponse;
    try {
      response = await this.#client.call('PUT', `/api/v0/asks/${request.offerId}/`, {
        body: createBody(request, this.#settings.create, bidPrice),
        retry: 'never',
      });
    } catch (error) {
      // the request may have reached Vast: only a lookup by label can tell
      throw fromTransport('ambiguous', what, error);
    }

    const contractId = contractIdOf(response.body);
    if (contractId !== null && isOk(response)) {
      return { machineId: contractId, label: request.label, status: 'provisioning', sshHost: null, sshPort: null, priceUsdPerHour: null };
    }
    if (contractId !== null) {
      // An error that still names a new contract means an instance exists (created stopped, for example).
      // Remove it so nothing keeps billing; if that fails, the reconciler must find it by label.
      const removed = await this.terminateMachine(contractId).then(
        () => true,
        () => false,
      );
      const detail = `${describe(response)}; Vast still created instance ${contractId}`;
      if (removed) throw failure('rejected', what, `${detail}, which was destroyed`, response.status);
      throw failure('ambiguous', what, `${detail}, and destroying it failed`, response.status);
    }
    if (response.status >= 500) throw fromResponse('ambiguous', what, response);
    if (response.status >= 400) throw fromResponse('rejected', what, response);
    if (response.status >= 200 && response.status < 300 && !isOk(response)) throw fromResponse('rejected', what, response);
    throw failure('ambiguous', what, `HTTP ${response.status} without an instance id`, response.status);
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    if (!NUMERIC_ID.test(machineId)) return null;
    const what = `get instance ${machineId}`;
    const response = await this.#read(what, `/api/v0/instances/${machineId}/`, { owner: 'me' });
    if (response.status === 404) return null;
    if (response.status < 200 || response.status >= 300) throw fromResponse('unavailable', what, response);
    const raw = singleInstanceOf(response.body, machineId);
    if (raw === null) return null;
    const machine = machineFromWire(raw);
    if (!machine) throw failure('unavailable', what, 'unreadable instance record', response.status);
    return machine;
  }

  async listMachines(): Promise<Machine[]> {
    const machines: Machine[] = [];
    let token: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query: Record<string, string> = {
        limit: String(PAGE_SIZE),
        select_cols: JSON.stringify(['*']),
        order_by: JSON.stringify([{ col: 'id', dir: 'asc' }]),
      };
      // the previous next_token as it is: Vast answers a JSON-quoted token with a 400
      if (token !== null) query.after_token = token;
      const response = await this.#read('list instances', '/api/v1/instances/', query);
      if (response.status < 200 || response.status >= 300) throw fromResponse('unavailable', 'list instances', response);
      const body = response.body as { instances?: unknown; next_token?: unknown } | null;
      if (!Array.isArray(body?.instances)) throw failure('unavailable', 'list instances', 'answer has no instances list', response.status);
      for (const raw of body.instances) {
        const machine = machineFromWire(raw);
        if (machine && isInstanceId(machine.label)) machines.push(machine); // only machines labelled with our ids
      }
      const next = typeof body.next_token === 'string' && body.next_token.length > 0 ? body.next_token : null;
      if (next === null || next === token) return machines;
      token = next;
    }
    throw failure('unavailable', 'list instances', `more than ${MAX_PAGES} pages`);
  }

  async terminateMachine(machineId: string): Promise<void> {
    // an id Vast never issued cannot be running
    if (!NUMERIC_ID.test(machineId)) return;
    const what = `destroy instance ${machineId}`;
    let response: VastResponse;
    try {
      response = await this.#client.call('DELETE', `/api/v0/instances/${machineId}/`, { retry: 'safe' });
    } catch (error) {
      throw fromTransport('unavailable', what, error);
    }
    if (isOk(response)) return;
    const { code } = errorOf(response.body);
    if (response.status === 404 || (code !== null && GONE_CODES.has(code))) return;
    throw fromResponse('unavailable', what, response);
  }

  async rebootMachine(machineId: string): Promise<void> {
    const what = `reboot instance ${machineId}`;
    if (!NUMERIC_ID.test(machineId)) throw failure('rejected', what, 'no such instance', 404);
    let response: VastResponse;
    try {
      response = await this.#client.call('PUT', `/api/v0/instances/reboot/${machineId}/`, { retry: 'rate-limit-only' });
    } catch (error) {
      throw fromTransport('ambiguous', what, error);
    }
    if (isOk(response)) return;
    if (response.status >= 500) throw fromResponse('ambiguous', what, response);
    throw fromResponse('rejected', what, response);
  }

  async #read(what: string, path: string, query: Record<string, string>): Promise<VastResponse> {
    try {
      return await this.#client.call('GET', path, { query, retry: 'safe' });
    } catch (error) {
      throw fromTransport('unavailable', what, error);
    }
  }
}
