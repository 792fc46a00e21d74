import http from 'node:http';
import { ContractChecker } from './contract.js';

const checker = new ContractChecker();

export interface AddressedAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * A JSON request to the service from another loopback address: Linux routes all of 127.0.0.0/8 to the
 * loopback interface, so a request bound to `localAddress` (e.g. 127.0.3.7) reaches a service listening on
 * 127.0.0.1 as a client of that address. The answer is checked against the OpenAPI document.
 */
export function requestFrom(localAddress: string, baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AddressedAnswer> {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method,
        localAddress,
        agent: false,
        headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const contentType = response.headers['content-type'] ?? null;
          const parsed: unknown = contentType?.startsWith('application/json') && text ? JSON.parse(text) : text;
          const problems = checker.check({ method, path }, { status: response.statusCode!, contentType, body: parsed });
          if (problems.length > 0) return reject(new Error(`${method} ${path} from ${localAddress}: the answer does not match the OpenAPI document:\n${problems.join('\n')}`));
          resolve({ status: response.statusCode!, headers: response.headers, body: parsed });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
