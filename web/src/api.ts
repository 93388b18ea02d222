/**
 * The one way the app talks to the service: same-origin fetch with the session cookie, the
 * response envelope `{data, error, meta?}` unwrapped, and every failure turned into an ApiError
 * whose message is the service's (shown as is by <ErrorMessage>).
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface PageMeta {
  total: number;
  page: number;
  perPage: number;
  totalPages: number;
}

type Query = Record<string, string | number | boolean | null | undefined>;

/** A request that hangs is given up after this long, so no page waits forever. */
const TIMEOUT_MS = 20_000;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function send(method: string, path: string, body?: unknown, query?: Query): Promise<{ data: unknown; meta?: PageMeta }> {
  let res: Response;
  try {
    res = await fetch(withQuery(path, query), {
      method,
      credentials: 'same-origin',
      headers: body === undefined || body instanceof FormData ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    const timedOut = err instanceof DOMException && err.name === 'TimeoutError';
    throw new ApiError(
      timedOut ? 'The service did not answer in time. Please try again.' : 'The service cannot be reached. Check your connection and try again.',
      0,
      'NETWORK_ERROR',
    );
  }
  type Envelope = { data?: unknown; error?: { code: string; message: string; details?: Record<string, unknown> } | null; meta?: PageMeta };
  const payload: Envelope | null = await res.json().catch(() => null);
  if (!res.ok || payload?.error) {
    const e = payload?.error;
    throw new ApiError(e?.message ?? `The service answered ${res.status} ${res.statusText}`.trim(), res.status, e?.code ?? 'HTTP_ERROR', e?.details);
  }
  return { data: payload?.data ?? null, meta: payload?.meta };
}

export const api = {
  get: async <T>(path: string, query?: Query) => (await send('GET', path, undefined, query)).data as T,
  page: async <T>(path: string, query?: Query) => {
    const r = await send('GET', path, undefined, query);
    return { items: r.data as T[], meta: r.meta };
  },
  post: async <T>(path: string, body?: unknown) => (await send('POST', path, body ?? {})).data as T,
  put: async <T>(path: string, body: unknown) => (await send('PUT', path, body)).data as T,
  patch: async <T>(path: string, body: unknown) => (await send('PATCH', path, body)).data as T,
  delete: async <T>(path: string, body?: unknown) => (await send('DELETE', path, body)).data as T,
  form: async <T>(path: string, form: FormData) => (await send('POST', path, form)).data as T,
};

/**
 * Uploads a file the way the files module asks: a presigned address (POST /api/upload), the
 * bytes PUT there, then the object registered (POST /api/files). Returns the registered file.
 */
export async function uploadFile(file: File, scope: { courseId?: string; lessonId?: string } = {}): Promise<{ id: string; name: string; url: string }> {
  const contentType = file.type || 'application/octet-stream';
  const presigned = await api.post<{ uploadUrl: string; method: 'PUT'; key: string; headers: Record<string, string> }>('/api/upload', {
    fileName: file.name,
    contentType,
    size: file.size,
  });
  let put: Response;
  try {
    // The headers the presigned address names, as given (a second Content-Type would be joined into one value).
    const headers = new Headers(presigned.headers);
    if (!headers.has('content-type')) headers.set('content-type', contentType);
    put = await fetch(presigned.uploadUrl, { method: 'PUT', body: file, headers, credentials: 'same-origin' });
  } catch {
    throw new ApiError('The upload could not reach the file store. Please try again.', 0, 'NETWORK_ERROR');
  }
  if (!put.ok) {
    const body = await put.json().catch(() => null);
    throw new ApiError(body?.error?.message ?? `The upload failed (${put.status})`, put.status, body?.error?.code ?? 'UPLOAD_FAILED');
  }
  return api.post('/api/files', { key: presigned.key, name: file.name, contentType, size: file.size, ...scope });
}
