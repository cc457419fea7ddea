// The JSON API of gpuplan serve (GET /api/openapi.json describes it).
const TOKEN_KEY = 'gpuplan.token';

export class ApiError extends Error {
  constructor(public status: number, public field: string | null, message: string) {
    super(message);
  }
}

function headers(json: boolean): HeadersInit {
  const h: Record<string, string> = {};
  if (json) h['Content-Type'] = 'application/json';
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h['Authorization'] = `Bearer ${token}`;
  return h;
}

async function answer<T>(res: Response): Promise<T> {
  if (res.status === 401) {
    const token = window.prompt('token');
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
  }
  const type = res.headers.get('Content-Type') ?? '';
  if (!type.startsWith('application/json')) {
    if (!res.ok) throw new ApiError(res.status, null, await res.text());
    return (await res.text()) as unknown as T;
  }
  const body = await res.json();
  if (!res.ok) {
    const e = body?.error ?? {};
    const where = [e.file, e.line, e.field].filter((x: unknown) => x !== null && x !== undefined).join(':');
    throw new ApiError(res.status, e.field ?? null, (where ? where + ': ' : '') + (e.message ?? res.statusText));
  }
  return body as T;
}

export async function get<T>(path: string): Promise<T> {
  return answer<T>(await fetch(path, { headers: headers(false) }));
}

export async function post<T>(path: string, body: unknown): Promise<T> {
  return answer<T>(await fetch(path, { method: 'POST', headers: headers(true), body: JSON.stringify(body) }));
}
