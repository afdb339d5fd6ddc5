/**
 * The page server's HTTP routes.
 *
 * | route | |
 * |---|---|
 * | `GET /` | the page (with a fresh CSRF token) |
 * | `GET /app/*.js`, `GET /static/*.css` | its scripts and style |
 * | `GET /api/status` | {@link UiStatus} |
 * | `GET /api/overview` | {@link Overview}: locks, elections, groups, services, queues, sessions |
 * | `GET /api/events` | server-sent events: `status`, `overview`, `tree` |
 * | `GET /api/children?path=&offset=&limit=` | a page of children with their Stats |
 * | `GET /api/node?path=` | data, Stat and ACL |
 * | `POST /api/create`, `/api/set`, `/api/delete` | writes, only with `--write` (and a CSRF token) |
 *
 * Every method but GET and HEAD is a write: without `--write` it gets 403 whatever its path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TenureError, type Client } from '@tenure/client';
import type { CreateRequest, DeleteRequest, ErrorAnswer, SetRequest, UiStatus } from './api-types.js';
import type { FeedMessage, LiveFeed } from './live-feed.js';
import { indexPage, NOT_BUILT, pageFile } from './page-files.js';
import type { RequestGuard } from './request-guard.js';
import { BadRequestError, createNode, deleteNode, keeperCode, listChildren, readNode, setNode } from './tree-api.js';

/** Largest write body accepted (ZooKeeper's default jute.maxbuffer is 1 MiB; base64 adds a third). */
const MAX_BODY = 2 * 1024 * 1024;
/** A comment line on idle event streams, so proxies keep them open. */
const KEEPALIVE_MS = 15_000;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export interface UiRoutesContext {
  client: Client;
  feed: LiveFeed;
  guard: RequestGuard;
  status: () => UiStatus;
}

class HttpError extends TenureError {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super('HTTP', message);
  }
}

function send(res: ServerResponse, status: number, type: string, body: Buffer | string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, ...headers });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function sendError(res: ServerResponse, status: number, error: string, code?: string, headers?: Record<string, string>): void {
  const answer: ErrorAnswer = code === undefined ? { error } : { error, code };
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(answer));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, `body larger than ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new HttpError(400, 'not an object');
    return value as Record<string, unknown>;
  } catch {
    throw new HttpError(400, 'the body is not a JSON object');
  }
}

function pathParam(url: URL): string {
  const path = url.searchParams.get('path') ?? '/';
  if (!path.startsWith('/')) throw new HttpError(400, 'path must be absolute');
  return path;
}

function intParam(url: URL, name: string, fallback: number): number {
  const raw = url.searchParams.get(name);
  const n = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new HttpError(400, `${name} must be a non-negative integer`);
  return n;
}

function openEvents(req: IncomingMessage, res: ServerResponse, ctx: UiRoutesContext): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  const write = (event: string, data: unknown): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  write('status', ctx.status());
  const unsubscribe = ctx.feed.subscribe((m: FeedMessage) =>
    m.type === 'overview' ? write('overview', m.overview) : write('tree', m.change),
  );
  void ctx.feed.current().then(
    (o) => !res.writableEnded && write('overview', o),
    () => undefined,
  );
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const end = (): void => {
    clearInterval(keepalive);
    unsubscribe();
  };
  req.on('close', end);
  res.on('close', end);
}

/** Answers one request; never throws (errors become JSON answers). */
export async function handleRequest(req: IncomingMessage, res: ServerResponse, ctx: UiRoutesContext): Promise<void> {
  try {
    const refusal = ctx.guard.admit(req);
    if (refusal) return sendError(res, refusal.status, refusal.reason, undefined, refusal.headers);
    const url = new URL(req.url ?? '/', 'http://page.invalid');
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      const writeRefusal = ctx.guard.admitWrite(req);
      if (writeRefusal) return sendError(res, writeRefusal.status, writeRefusal.reason);
      return await handleWrite(url.pathname, req, res, ctx);
    }
    switch (url.pathname) {
      case '/':
      case '/index.html': {
        const page = await indexPage({ csrf: ctx.guard.mintToken() });
        return send(res, 200, page.type, page.body);
      }
      case '/api/status':
        return sendJson(res, 200, ctx.status());
      case '/api/overview':
        return sendJson(res, 200, await ctx.feed.current());
      case '/api/events':
        return openEvents(req, res, ctx);
      case '/api/children':
        return sendJson(res, 200, await listChildren(ctx.client, pathParam(url), intParam(url, 'offset', 0), intParam(url, 'limit', 200)));
      case '/api/node':
        return sendJson(res, 200, await readNode(ctx.client, pathParam(url)));
    }
    const file = await pageFile(url.pathname);
    if (file) return send(res, 200, file.type, file.body, { 'Cache-Control': 'no-cache' });
    if (url.pathname.startsWith('/app/')) return sendError(res, 404, NOT_BUILT);
    return sendError(res, 404, `no such page: ${url.pathname}`);
  } catch (err) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof HttpError) return sendError(res, err.status, err.message, undefined, err.headers);
    if (err instanceof BadRequestError) return sendError(res, 400, err.message);
    const code = keeperCode(err);
    const message = err instanceof Error ? err.message : String(err);
    // ZooKeeper's answers are the caller's business (404 for a missing node, 409 for conflicts);
    // anything else is ours.
    const status =
      code === 'NONODE'
        ? 404
        : code === 'NODEEXISTS' || code === 'BADVERSION' || code === 'NOTEMPTY'
          ? 409
          : code === 'NOAUTH'
            ? 403
            : code
              ? 502
              : 500;
    return sendError(res, status, message, code);
  }
}

async function handleWrite(pathname: string, req: IncomingMessage, res: ServerResponse, ctx: UiRoutesContext): Promise<void> {
  if (req.method !== 'POST') throw new HttpError(405, 'writes are POST requests', { Allow: 'GET, HEAD, POST' });
  switch (pathname) {
    case '/api/create':
      return sendJson(res, 200, await createNode(ctx.client, (await readJson(req)) as Partial<CreateRequest>));
    case '/api/set':
      return sendJson(res, 200, await setNode(ctx.client, (await readJson(req)) as Partial<SetRequest>));
    case '/api/delete':
      return sendJson(res, 200, await deleteNode(ctx.client, (await readJson(req)) as Partial<DeleteRequest>));
    default:
      throw new HttpError(404, `no such write route: ${pathname}`);
  }
}
