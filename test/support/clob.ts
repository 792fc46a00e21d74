import axios, { type AxiosResponse } from 'axios';
import { expect } from 'vitest';
import { ContractChecker } from './contract.js';
import type { TestService } from './service.js';

/**
 * A rewarded market (`<prefix>-E-M1`: rewards min size 5, max spread 0.03) whose book another account makes:
 * a YES bid at 0.49 and a YES ask at 0.51 (midpoint 0.50). Returns the market's ticker.
 */
export async function rewardedMarketWithBook(api: TestService, admin: { email: string; password: string }, prefix: string): Promise<string> {
  const adminToken = (await api.post('/api/auth/login', admin)).body.token;
  const created = async (path: string, body: object) => expect((await api.post(path, body, { token: adminToken })).status).toBe(201);
  const ticker = `${prefix}-E-M1`;
  await created('/api/admin/series', { ticker: prefix, title: `${prefix} series`, category: 'economics', frequency: 'daily' });
  await created('/api/admin/events', { event_ticker: `${prefix}-E`, series_ticker: prefix, title: `${prefix} event`, strike_date: '2031-01-01T00:00:00Z' });
  await created('/api/admin/markets', { ticker, event_ticker: `${prefix}-E`, title: 'Rewarded', rewards_min_size: '5', rewards_max_spread: '0.03' });
  const maker = (await api.register()).token;
  for (const side of ['yes', 'no']) expect((await api.post('/api/portfolio/orders', { ticker, side, count: '10', price: '0.49' }, { token: maker })).status).toBe(201);
  return ticker;
}

/**
 * Checks every answer the service gives through axios' default instance (which the published clients use)
 * against the OpenAPI document, as the other integration tests check theirs: each problem is pushed to
 * `problems`, and `onAnswer` sees each answer. Returns a function that removes the interceptor.
 */
export function checkAxiosAnswers(api: TestService, problems: string[], onAnswer?: (method: string, path: string, status: number) => void): () => void {
  const checker = new ContractChecker();
  const check = (response: AxiosResponse | undefined) => {
    if (!response || !String(response.config.url).startsWith(api.baseUrl)) return;
    const method = String(response.config.method).toUpperCase();
    const path = new URL(String(response.config.url)).pathname;
    onAnswer?.(method, path, response.status);
    problems.push(...checker.check({ method, path }, { status: response.status, contentType: String(response.headers['content-type'] ?? ''), body: response.data }));
  };
  const interceptor = axios.interceptors.response.use(
    (response) => {
      check(response);
      return response;
    },
    (error: Error & { response?: AxiosResponse }) => {
      check(error.response);
      return Promise.reject(error);
    },
  );
  return () => axios.interceptors.response.eject(interceptor);
}
