import type { ApiClient } from './service.js';

/**
 * ACTIVE markets for a test, created through the admin API: one series and one event named after
 * `prefix`, then as many markets in that event as the test asks for.
 */
export class MarketFactory {
  private count = 0;

  private constructor(
    private readonly api: ApiClient,
    readonly adminToken: string,
    private readonly prefix: string,
  ) {}

  /** Signs in as the admin the service was started with and creates the series and the event. */
  static async create(api: ApiClient, admin: { email: string; password: string }, prefix: string): Promise<MarketFactory> {
    const login = await api.post('/api/auth/login', admin);
    if (login.status !== 200) throw new Error(`admin login: ${login.status} ${JSON.stringify(login.body)}`);
    const factory = new MarketFactory(api, login.body.token, prefix);
    await factory.admin('/api/admin/series', { ticker: prefix, title: `${prefix} series`, category: 'economics', frequency: 'daily' });
    await factory.admin('/api/admin/events', { event_ticker: `${prefix}-E`, series_ticker: prefix, title: `${prefix} event`, strike_date: '2031-01-01T00:00:00Z' });
    return factory;
  }

  /** A new ACTIVE market: its ticker and id. */
  async newMarket(): Promise<{ ticker: string; id: string }> {
    this.count += 1;
    const ticker = `${this.prefix}-E-M${this.count}`;
    const body = await this.admin('/api/admin/markets', { ticker, event_ticker: `${this.prefix}-E`, title: `Market ${this.count}` });
    return { ticker, id: body.market.id };
  }

  async newTickers(count: number): Promise<string[]> {
    const tickers: string[] = [];
    for (let i = 0; i < count; i += 1) tickers.push((await this.newMarket()).ticker);
    return tickers;
  }

  close(ticker: string): Promise<any> {
    return this.admin(`/api/admin/markets/${ticker}/close`, undefined, 200);
  }

  resolve(ticker: string, result: 'yes' | 'no' | 'invalid'): Promise<any> {
    return this.admin(`/api/admin/markets/${ticker}/resolve`, { result }, 200);
  }

  private async admin(path: string, body: unknown, status = 201): Promise<any> {
    const response = await this.api.post(path, body, { token: this.adminToken });
    if (response.status !== status) throw new Error(`${path}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }
}
