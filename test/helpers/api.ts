// Calls to the API under a key, for tests that drive JSON endpoints (webhook management, deliveries, replays).

import type { TestApp } from './app.js';

/** the JSON body of a response, untyped */
export const j = (r: Response): Promise<any> => r.json() as Promise<any>;

/** `method path` with `X-API-Key: key` and, when given, a JSON body */
export function call(app: TestApp, method: string, path: string, key: string, body?: unknown): Promise<Response> {
  return fetch(app.base + path, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** polls `pred` every 25 ms until it holds; throws after `ms` */
export async function until(pred: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
