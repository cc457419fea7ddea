import { currentLang } from './i18n';

// The JSON API of gpuplan serve (GET /api/openapi.json describes it). In token mode the page is
// opened once as /#token=...: openSessionFromHash posts it to /api/session, which answers with an
// HttpOnly, SameSite=Strict cookie; no script keeps or reads the token after that.

export class ApiError extends Error {
  constructor(public status: number, public field: string | null, message: string) {
    super(message);
  }
}

// The page's language for the API's prose (messages, notes, evidence, advice: issue 26 req. 4).
function headers(json: boolean): HeadersInit {
  const h: Record<string, string> = { 'Accept-Language': currentLang() === 'zh' ? 'zh-CN' : 'en' };
  if (json) h['Content-Type'] = 'application/json';
  return h;
}

// "#token=..." in the address: trade it for the cookie, then take it out of the address (and of
// the history), so it is neither bookmarked nor shown.
export async function openSessionFromHash(): Promise<void> {
  const m = /^#token=(.+)$/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, '', location.pathname + location.search);
  const token = decodeURIComponent(m[1]);
  await answer(await fetch('/api/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: '{}',
  }));
}

async function answer<T>(res: Response): Promise<T> {
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
