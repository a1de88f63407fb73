import type { MarketService } from '../market/market-service.ts';
import type { Storage } from '../ports/storage.ts';
import type { Token } from '../tenancy/token.ts';

/** Bookings one runner rents at once per provider (each rental waits on its provider's create); taken as hands free up. */
export const CONCURRENCY = 8;

/**
 * What one pass over due bookings (reservations to start, spot claims to keep) reads once: each token, which makes
 * many (the rental checks its chain again, under lock), and the market, refreshed before the first booking is
 * rented so a search chooses among offers as they are now, not as the last refresh left them.
 */
export class BookingPass {
  private readonly tokens = new Map<string, Promise<Token | null>>();
  private refreshed = false;
  private readonly storage: Storage;
  private readonly market: MarketService;

  constructor(storage: Storage, market: MarketService) {
    this.storage = storage;
    this.market = market;
  }

  tokenOf(id: string): Promise<Token | null> {
    let token = this.tokens.get(id);
    if (!token) {
      token = this.storage.read((uow) => uow.tokens.findById(id));
      this.tokens.set(id, token);
    }
    return token;
  }

  /** Refreshes what is due in the market, once a pass. */
  async refreshMarket(): Promise<void> {
    if (this.refreshed) return;
    this.refreshed = true;
    await this.market.refreshDue();
  }

  /** Hands for a pass: CONCURRENCY per provider, so a slow cloud holds its own hands only. */
  static hands(providers: number): { hands: number; perLane: number } {
    return { hands: CONCURRENCY * Math.max(1, providers), perLane: CONCURRENCY };
  }
}
