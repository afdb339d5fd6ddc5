/** Talking to the page server: JSON reads, and writes that carry the page's CSRF token. */
import type { ChildrenPage, ErrorAnswer, NodeView, Overview, UiStatus } from '../../src/ui/api-types.js';

export type * from '../../src/ui/api-types.js';
export type * from '../../src/inspect/report.js';
export type * from '../../src/inspect/observer-report.js';

/** An answer other than 2xx, with the server's one-line reason. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const csrf = document.querySelector<HTMLMetaElement>('meta[name="tenure-csrf"]')?.content ?? '';

async function answer<T>(res: Response): Promise<T> {
  if (res.ok) return (await res.json()) as T;
  let body: ErrorAnswer = { error: res.statusText };
  try {
    body = (await res.json()) as ErrorAnswer;
  } catch {
    // not JSON: keep the status text
  }
  throw new ApiError(res.status, body.error, body.code);
}

export async function getJson<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }));
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(
    await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Tenure-Csrf': csrf },
      body: JSON.stringify(body),
    }),
  );
}

export const api = {
  status: () => getJson<UiStatus>('/api/status'),
  overview: () => getJson<Overview>('/api/overview'),
  node: (path: string) => getJson<NodeView>(`/api/node?path=${encodeURIComponent(path)}`),
  children: (path: string, offset: number, limit: number) =>
    getJson<ChildrenPage>(`/api/children?path=${encodeURIComponent(path)}&offset=${offset}&limit=${limit}`),
};
