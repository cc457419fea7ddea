// The page of gpuplan serve: four views over the JSON API (sizing, cost, usage, check reports),
// in Chinese first and English. Every number shown comes from the API, which answers what the
// CLI's --json answers; the page only lays it out.
import './style.css';
import { ApiError, get, openSessionFromHash, post } from './api';
import type { ChartOption } from './charts';
import { currentLang, setLang, t } from './i18n';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const app = document.getElementById('app') as HTMLElement;
const tabs = document.getElementById('tabs') as HTMLElement;
const langButton = document.getElementById('lang') as HTMLButtonElement;

// ECharts is loaded on the first chart, not with the page: the first load stays small.
function chart(parent: HTMLElement, option: ChartOption, height = 320): void {
  const holder = document.createElement('div');
  parent.appendChild(holder);
  void import('./charts').then((m) => m.chart(holder, option, height));
}

// --- small DOM helpers --------------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function field(label: string, input: HTMLElement): HTMLElement {
  return el('label', { class: 'field' }, el('span', {}, label), input);
}

function select(name: string, values: string[], chosen?: string, labels?: string[]): HTMLSelectElement {
  const s = el('select', { name, id: `in-${name}` });
  values.forEach((v, i) => {
    const o = el('option', { value: v }, labels?.[i] ?? v);
    if (v === chosen) o.selected = true;
    s.append(o);
  });
  return s;
}

function input(name: string, value = '', type = 'text'): HTMLInputElement {
  return el('input', { name, id: `in-${name}`, value, type });
}

// Each cell carries its column's name (data-label): on a phone a table becomes one card per row,
// each line "column: value" (style.css; issue 26 req. 5).
function table(headers: string[], rows: (string | number)[][]): HTMLTableElement {
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c, i) => el('td', { 'data-label': headers[i] ?? '' }, String(c)))))),
  );
}

// The three states every view shows the same way (style.css, "States"): work under way, nothing
// to show, and an error, each with its words in the page's language.
function loadingState(): HTMLElement {
  return el('p', { class: 'state state-loading', role: 'status' }, t('loading'));
}
function emptyState(text: string): HTMLElement {
  return el('p', { class: 'state state-empty' }, text);
}
function errorState(text: string): HTMLElement {
  return el('p', { class: 'state state-error error', role: 'alert' }, text);
}

function showError(out: HTMLElement, e: unknown): void {
  const msg = e instanceof ApiError || e instanceof Error ? e.message : String(e);
  out.replaceChildren(errorState(`${t('error.prefix')}${t('sep.colon')}${msg}`));
}

const GIB = 1024 ** 3;
const gib = (b: number): string => `${(b / GIB).toFixed(1)} GiB`;
// Money with its unit, 3 significant digits under 100 (0.95 CNY, not "1 CNY"), whole above.
const money = (x: number, cur: string): string =>
  `${x.toLocaleString(currentLang() === 'zh' ? 'zh-CN' : 'en-US',
    Math.abs(x) >= 100 ? { maximumFractionDigits: 0 } : { maximumSignificantDigits: 3 })} ${cur}`;
// A message with {0}, {1}, ... filled in.
const fill = (key: string, ...args: (string | number)[]): string =>
  t(key).replace(/\{(\d+)\}/g, (_, i: string) => String(args[Number(i)] ?? ''));
// A number with 3-4 significant digits in the page's locale.
const num = (x: number, digits = 3): string =>
  x.toLocaleString(currentLang() === 'zh' ? 'zh-CN' : 'en-US', { maximumSignificantDigits: digits });
const hours = (h: number | null | undefined): string =>
  (h === null || h === undefined ? '—' : `${h.toLocaleString(currentLang() === 'zh' ? 'zh-CN' : 'en-US', { maximumSignificantDigits: 3 })} h`);

async function readFile(input: HTMLInputElement): Promise<string | null> {
  const f = input.files?.[0];
  return f ? await f.text() : null;
}

// --- sizing -------------------------------------------------------------------------------

const MEMORY_PARTS = ['weights', 'gradients', 'optimizer', 'activations', 'kv_cache', 'overhead'];
const PART_COLOURS = ['#5470c6', '#91cc75', '#fac858', '#73c0de', '#9a60b4', '#bbbbbb'];

// One stacked bar per GPU configuration against its capacity; `marks` draws vertical lines at
// figures of the first bar (what nvidia-smi shows, the load-time peak).
function memoryChart(
  parent: HTMLElement,
  names: string[],
  parts: number[][],
  capacity: number[],
  figures: { name: string; bytes: number; colour: string }[] = [],
  // The stacked series: the memory parts, or one total (the candidates have only their total).
  series: { name: string; colour: string }[] = MEMORY_PARTS.map((p, i) => ({ name: t(`mem.${p}`), colour: PART_COLOURS[i] })),
): void {
  // Figures that round to the same tenth of a GiB share one line (an inference server's load
  // peak is what nvidia-smi shows); labels alternate between the top and the bottom.
  const marks: { name: string; bytes: number; colour: string }[] = [];
  for (const f of figures) {
    const same = marks.find((m) => Math.abs(m.bytes - f.bytes) / GIB < 0.05);
    if (same) same.name = `${same.name} = ${f.name}`;
    else marks.push({ ...f });
  }
  chart(parent, {
    tooltip: { trigger: 'axis', valueFormatter: (v: number) => `${v.toFixed(1)} GiB` },
    legend: { top: 0 },
    grid: { left: 160, right: 30, top: marks.length ? 60 : 40, bottom: marks.length ? 50 : 30 },
    xAxis: { type: 'value', name: 'GiB' },
    yAxis: { type: 'category', data: names, inverse: true },  // the first row on top, as in the table
    series: [
      ...series.map((p, i) => ({
        name: p.name,
        type: 'bar',
        stack: 'mem',
        itemStyle: { color: p.colour },
        data: parts.map((row) => row[i] / GIB),
      })),
      {
        name: t('fit.capacity'),
        type: 'bar',
        barGap: '-100%',
        itemStyle: { color: 'transparent', borderColor: '#d00', borderWidth: 2, borderType: 'dashed' },
        data: capacity.map((c) => c / GIB),
        z: 10,
        markLine: marks.length
          ? {
              symbol: 'none',
              data: marks.map((m, i) => ({
                name: m.name,
                xAxis: m.bytes / GIB,
                lineStyle: { color: m.colour, type: 'solid', width: 2 },
                label: { formatter: `${m.name} ${(m.bytes / GIB).toFixed(1)} GiB`, position: i % 2 ? 'start' : 'end', color: m.colour },
              })),
            }
          : undefined,
      },
    ],
  }, Math.max(160, 60 + 40 * names.length) + (marks.length ? 30 : 0));
}

async function fitView(root: HTMLElement): Promise<void> {
  const [models, gpus, options, frameworks, shipped] = await Promise.all([
    get<Json[]>('/api/models'),
    get<Json[]>('/api/gpus'),
    get<Json>('/api/options'),
    get<Json>('/api/frameworks'),
    get<Json[]>('/api/offers'),
  ]);
  // What money is priced from (issue 26 req. 1): the catalog's illustrative card-hour prices, or
  // one of the shipped example offers files (data/offers), whose fees and night windows apply.
  const offersChoice = select('offers', ['', ...shipped.map((o) => o.name)], '',
    [t('fit.offers.catalog'), ...shipped.map((o) => fill('fit.offers.file', o.name))]);
  const choices = (key: string): string[] => options.fit.find((o: Json) => o.key === key)?.values ?? [];
  const model = select('model', ['', ...models.map((m) => m.name)], 'Qwen2.5-7B', [
    t('fit.model.pasted'),
    ...models.map((m) => m.name),
  ]);
  const config = el('textarea', { name: 'config', id: 'in-config', rows: '3', placeholder: '{"model_type": "llama", ...}' });
  const task = select('task', choices('task'), 'lora', choices('task').map((v) => t(`task.${v}`)));
  const seq = input('seq', '2048', 'number');
  // Left empty, a setting is the framework's default on one card and searched in a search
  // (issue 26 req. 2: the page pinned ZeRO 0, micro-batch 1 and mixed precision in every search,
  // and hid transformers v5's bf16 default).
  const micro = input('micro_batch', '', 'number');
  micro.placeholder = t('fit.auto');
  const precision = select('precision', ['', ...choices('precision')], '',
    [t('fit.auto'), ...choices('precision').map((v) => t(`precision.${v}`))]);
  const zero = select('zero', ['', '0', '1', '2', '3'], '', [t('fit.auto'), '0', '1', '2', '3']);
  // Activation recomputation (fit --recompute), empty = the framework's default, searched in a search.
  const recompute = select('recompute', ['', ...choices('recompute')], '',
    [t('fit.auto'), ...choices('recompute').map((v) => t(`fit.recompute.${v}`))]);
  // The framework profiles (GET /api/frameworks, data/frameworks.yaml): the generic convention
  // and the profiles of the task's kind; llama.cpp takes a GGUF type, the inference servers the
  // fraction of the card their KV rule takes.
  const profiles = frameworks.frameworks as Json[];
  const framework = select('framework', ['generic'], 'generic');
  const gguf = select('gguf_type', (frameworks.gguf_types as Json[]).map((g) => g.type), 'Q4_K_M',
    (frameworks.gguf_types as Json[]).map((g) => `${g.type} (${g.bits} bit)`));
  const utilisation = input('gpu_memory_utilization', '', 'number');
  utilisation.step = '0.01';
  utilisation.min = '0.05';
  utilisation.max = '1';
  const ggufField = field(t('fit.gguf_type'), gguf);
  const utilisationField = field(t('fit.gpu_memory_utilization'), utilisation);
  const context = input('context', '4096', 'number');
  const concurrency = input('concurrency', '1', 'number');
  const contextField = field(t('fit.context'), context);
  const concurrencyField = field(t('fit.concurrency'), concurrency);
  // Serving questions (issue 26 req. 2): "70B at 10 QPS", prompt and output lengths, a latency
  // target; and a layout to pin (tp, pp), empty = searched.
  const qps = input('qps', '', 'number');
  const promptTokens = input('prompt_tokens', '', 'number');
  const outputTokens = input('output_tokens', '', 'number');
  const latency = input('latency_ms', '', 'number');
  const servingFields = [field(t('fit.qps'), qps), field(t('fit.prompt_tokens'), promptTokens),
    field(t('fit.output_tokens'), outputTokens), field(t('fit.latency_ms'), latency)];
  const tp = input('tp', '', 'number');
  const pp = input('pp', '', 'number');
  const layoutFields = [field('tp', tp), field('pp', pp)];
  // The training-only fields (hidden for inference, and not sent).
  const training = [
    field(t('fit.seq'), seq),
    field(t('fit.micro_batch'), micro),
    field(t('fit.precision'), precision),
    field(t('fit.zero'), zero),
    field(t('fit.recompute'), recompute),
  ];
  const tokens = input('tokens', '', 'number');
  const tokensField = field(t('fit.tokens'), tokens);
  // Checkpoints and data (issue 29): storage and sync link for training and inference (a replica
  // loads its weights over them on another node); asynchronous saves, the failure rate and the
  // dataset's upload for training only. Empty: the library's defaults (16 Gbit/s assumed, no sync
  // link, the profile's save, the Llama 3 failure rate, no upload).
  const storage = input('storage_gbps', '', 'number');
  storage.step = 'any';
  storage.min = '0.001';
  storage.placeholder = fill('fit.storage_gbps.assumed', 16);
  const links = ['1gbe', '10gbe', '25gbe', '100gbe'];
  const syncLink = select('sync_link', ['', ...links], '', [t('fit.sync_link.none'), ...links]);
  const ckptAsync = select('checkpoint_async', ['', 'on', 'off'], '', [t('fit.auto'), t('fit.on'), t('fit.off')]);
  const failures = input('failures_per_gpu_hour', '', 'number');
  failures.step = 'any';
  failures.min = '0';
  failures.placeholder = '1.97e-5';
  const dataset = input('dataset_gb', '', 'number');
  dataset.step = 'any';
  dataset.min = '0';
  const uplink = select('uplink', ['', '100mbps', '1gbe', '10gbe'], '', [t('fit.uplink.none'), '100mbps', '1gbe', '10gbe']);
  const dataFields = [field(t('fit.storage_gbps'), storage), field(t('fit.sync_link'), syncLink)];
  const trainingDataFields = [field(t('fit.checkpoint_async'), ckptAsync),
    field(t('fit.failures_per_gpu_hour'), failures), field(t('fit.dataset_gb'), dataset), field(t('fit.uplink'), uplink)];
  // A framework's default version is sent as its name ("vllm"), another as NAME@VERSION
  // ("vllm@0.20"); each option says the version it models.
  const valueOf = (f: Json): string => (f.default ? f.name : f.id) as string;
  const profileOf = (value: string): Json | undefined => profiles.find((f) => valueOf(f) === value);
  const fillFrameworks = (): void => {
    const kind = task.value === 'infer' ? 'inference' : 'training';
    const names = profiles.filter((f) => f.name === 'generic' || f.kind === kind).map(valueOf);
    const keep = names.includes(framework.value) ? framework.value : 'generic';
    framework.replaceChildren(...names.map((n) => {
      const p = profileOf(n);
      const label = p?.version ? `${p.name} ${p.version}` : n;
      const o = el('option', { value: n }, n === 'generic' ? t('fit.framework.generic') : label);
      o.title = profileOf(n)?.description ?? '';
      return o;
    }));
    framework.value = keep;
  };
  const showFrameworkFields = (): void => {
    const f = profileOf(framework.value);
    ggufField.hidden = !f?.gguf;
    utilisationField.hidden = !f?.kv_rule;
    utilisation.placeholder = f?.kv_fraction === null || f?.kv_fraction === undefined ? '' : String(f.kv_fraction);
    const infer = task.value === 'infer';
    contextField.hidden = !infer;
    concurrencyField.hidden = !infer;
    for (const f of [...training, tokensField, ...trainingDataFields]) f.hidden = infer;
    for (const f of servingFields) f.hidden = !infer;
  };
  fillFrameworks();
  showFrameworkFields();
  task.addEventListener('change', () => {
    fillFrameworks();
    showFrameworkFields();
  });
  framework.addEventListener('change', showFrameworkFields);
  const gpu = select('gpu', ['', ...gpus.map((g) => g.name)], 'A100 80GB SXM', [
    t('fit.gpu.search'),
    ...gpus.map((g) => g.name),
  ]);
  const count = input('gpus', '1', 'number');
  // What a search ranks by (issue 26 req. 1): cost first, as a team lead asks it.
  const objective = select('objective', ['cost', 'time', 'gpu_hours'], 'cost',
    [t('fit.objective.cost'), t('fit.objective.time'), t('fit.objective.gpu_hours')]);
  const objectiveField = field(t('fit.objective'), objective);
  const showSearchFields = (): void => {
    objectiveField.hidden = gpu.value !== '';
  };
  gpu.addEventListener('change', showSearchFields);
  showSearchFields();
  const run = el('button', { type: 'submit', id: 'fit-run' }, t('fit.run'));
  let applied: Json = {};
  const out = el('section', { id: 'fit-out', 'aria-live': 'polite' });
  const form = el(
    'form',
    { class: 'form' },
    field(t('fit.model'), model),
    field(t('fit.config'), config),
    field(t('fit.task'), task),
    ...training,
    field(t('fit.framework'), framework),
    ggufField,
    utilisationField,
    contextField,
    concurrencyField,
    ...servingFields,
    ...layoutFields,
    field(t('fit.gpu'), gpu),
    field(t('fit.gpus'), count),
    objectiveField,
    field(t('fit.offers'), offersChoice),
    tokensField,
    ...dataFields,
    ...trainingDataFields,
    run,
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body: Json = { task: task.value, framework: framework.value };
    const profile = profileOf(framework.value);
    if (profile?.gguf) body.gguf_type = gguf.value;
    if (profile?.kv_rule && utilisation.value) body.gpu_memory_utilization = Number(utilisation.value);
    if (tp.value) body.tp = Number(tp.value);
    if (pp.value) body.pp = Number(pp.value);
    if (task.value === 'infer') {
      body.context = Number(context.value);
      body.concurrency = Number(concurrency.value);
      if (qps.value) body.qps = Number(qps.value);
      if (promptTokens.value) body.prompt_tokens = Number(promptTokens.value);
      if (outputTokens.value) body.output_tokens = Number(outputTokens.value);
      if (latency.value) body.latency_ms = Number(latency.value);
    } else {
      body.seq = Number(seq.value);
      if (micro.value) body.micro_batch = Number(micro.value);
      if (precision.value) body.precision = precision.value;
      if (zero.value) body.zero = Number(zero.value);
      if (recompute.value) body.recompute = recompute.value;
      if (tokens.value) body.tokens = Number(tokens.value);
      if (ckptAsync.value) body.checkpoint_async = ckptAsync.value;
      if (failures.value) body.failures_per_gpu_hour = Number(failures.value);
      if (dataset.value) body.dataset_bytes = Number(dataset.value) * 1e9;
      if (uplink.value) body.uplink = uplink.value;
    }
    if (storage.value) body.storage_gbps = Number(storage.value);
    if (syncLink.value) body.sync_link = syncLink.value;
    if (config.value.trim()) body.config = config.value;
    if (model.value) body.model = model.value;
    if (gpu.value) {
      body.gpu = gpu.value;
      body.gpus = Number(count.value);
    } else {
      body.objective = objective.value;
    }
    const offers = shipped.find((o) => o.name === offersChoice.value);
    if (offers) body.offers = offers.text;
    // What an applied suggestion changes beyond the form's fields (recomputation, offloading).
    Object.assign(body, applied);
    applied = {};
    out.replaceChildren(loadingState());
    try {
      renderFit(out, await post<Json>('/api/fit', body), task.value, (s: Json) => {
        // A suggestion in one click (issue 26 req. 2): its card and layout into the form, run again.
        const l = s.layout ?? {};
        gpu.value = s.gpu;
        count.value = String(l.gpus ?? 1);
        if (l.tp) tp.value = String(l.tp);
        if (l.pp) pp.value = String(l.pp);
        if (l.zero !== undefined) zero.value = String(l.zero);
        if (l.micro_batch) micro.value = String(l.micro_batch);
        applied = {};
        if (l.recompute) recompute.value = l.recompute;
        if (l.offload_optimizer) applied.offload_optimizer = true;
        if (l.offload_params) applied.offload_params = true;
        showSearchFields();
        form.requestSubmit();
      });
    } catch (e) {
      showError(out, e);
    }
  });
  root.append(form, out);
  // When the sizing form is usable (filled from the API): the "interactive" figure of the README,
  // read by the e2e test from the performance timeline.
  performance.mark('gpuplan:form-ready');
}

// The answer in one sentence with its numbers and units (issue 26 req. 1): the best candidate of
// a search, or the card asked about.
function headline(r: Json, task: string): HTMLElement | null {
  const gb = (b: number): string => gib(b);  // GiB, as every table of the page
  const name = r.model?.name ?? '';
  const c = (r.candidates as Json[] | undefined)?.[0];
  let text = '';
  if (c && c.inference) {
    const s = c.inference.sizing ?? {};
    text = fill('fit.headline.infer', name, num(s.qps ?? 0), c.gpus, c.gpu, gb(c.gpu_memory), c.replicas ?? 1,
      num(c.inference.time_to_first_token_seconds, 2), num(c.inference.per_token_latency_seconds * 1000, 3),
      c.cost ? money(c.cost.amount, c.cost.currency) : '—');
  } else if (c) {
    const time = c.total_hours !== null && c.total_hours !== undefined
      ? fill('unit.hours', num(c.total_hours))
      : fill('unit.tokens_per_second', num(c.tokens_per_second));
    const price = c.cost
      ? fill(c.cost.per === 'job' ? 'unit.for_job' : 'unit.per_mtok', money(c.cost.amount, c.cost.currency))
      : '—';
    text = fill('fit.headline.train', name, t(`task.${task}`), c.gpus, c.gpu, gb(c.gpu_memory), time, price);
  } else if (r.memory_per_gpu && r.layout) {
    text = fill(r.fits ? 'fit.headline.fits' : 'fit.headline.nofit', name, r.layout.gpus, r.layout.gpu,
      gb(r.memory_per_gpu.nvidia_smi ?? r.memory_per_gpu.total), gb(r.gpu_memory));
  }
  if (!text) return null;
  // The price's basis: the catalog's illustrative prices (said with where to put real ones), or
  // the offers chosen on the form (the API's line, in the page's language).
  const catalog = typeof c?.cost?.basis === 'string' && c.cost.basis.startsWith('illustrative catalog');
  const basis = c?.cost?.basis ? el('p', { class: 'basis' }, catalog ? t('fit.basis.catalog') : c.cost.basis) : null;
  const box = el('div', { id: 'headline', class: 'headline' }, el('p', { class: 'headline-text' }, text));
  if (basis) box.append(basis);
  return box;
}

function renderFit(out: HTMLElement, r: Json, task = '', apply?: (s: Json) => void): void {
  out.replaceChildren();
  const head = headline(r, task);
  if (head) out.append(head);
  const verdict = el(
    'p',
    { id: 'verdict', class: r.fits ? 'verdict ok' : 'verdict bad' },
    r.fits ? t('fit.verdict.fits') : t('fit.verdict.nofit'),
  );
  out.append(
    verdict,
    el('p', {}, `${r.model.name} · ${t('fit.params')} ${(r.model.params_total / 1e9).toFixed(2)} B`),
  );
  if (r.memory_per_gpu) {
    const m = r.memory_per_gpu;
    const name = `${r.layout.gpu} ×${r.layout.gpus}`;
    out.append(el('h3', {}, t('fit.per_gpu')));
    // The stack is what the components need; nvidia-smi shows more (the allocator's reserve, the
    // CUDA context, an inference server's whole KV budget), and loading may peak above both.
    memoryChart(out, [name], [MEMORY_PARTS.map((p) => m[p])], [r.gpu_memory], [
      { name: t('fit.nvidia_smi'), bytes: m.nvidia_smi, colour: '#333' },
      { name: t('fit.load_peak'), bytes: m.load_peak, colour: '#e6a700' },
    ]);
    out.append(
      table(
        [...MEMORY_PARTS.map((p) => t(`mem.${p}`)), t('fit.per_gpu'), t('fit.capacity')],
        [[...MEMORY_PARTS.map((p) => gib(m[p])), gib(m.total), gib(r.gpu_memory)]],
      ),
    );
    const peaks = table(
      [t('fit.peak_allocated'), t('fit.nvidia_smi'), t('fit.load_peak')],
      [[gib(m.peak_allocated), gib(m.nvidia_smi), gib(m.load_peak)]],
    );
    peaks.id = 'memory-peaks';
    out.append(peaks);
    // How long and how fast (issue 26 req. 2: in the answer and never shown before).
    if (r.time) {
      const tm = r.time;
      const timing = table(
        [t('fit.tokens_per_second'), t('fit.mfu'), t('fit.step_seconds'), t('fit.total_hours'), t('fit.gpu_hours'),
          t('fit.bottleneck')],
        [[num(tm.tokens_per_second), `${num(100 * tm.mfu)} %`, num(tm.step_seconds),
          tm.total_hours === null || tm.total_hours === undefined ? '—' : num(tm.total_hours),
          tm.gpu_hours === null || tm.gpu_hours === undefined ? '—' : num(tm.gpu_hours), t(`bottleneck.${tm.bottleneck}`)]],
      );
      timing.id = 'fit-time';
      out.append(el('h3', {}, t('fit.time')), timing);
      // Settings not given, chosen for speed within memory, and how much the answer hangs on them
      // (POST /api/fit `unstated`, docs/time-model.md §10).
      if (r.unstated) {
        const u = r.unstated;
        // Each setting by its name in the page's language, and its value: on/off and the
        // recomputation modes in words, numbers as they are.
        const setting = (name: string, value: string): string => {
          const words = value === 'on' || value === 'off' ? t(`fit.${value}`)
            : name === 'recompute' ? t(`fit.recompute.${value}`) : value;
          return fill('fit.setting', t(`fit.setting.${name}`), words);
        };
        const list = (which: 'chosen' | 'slowest'): string =>
          (u.choices as Json[]).map((x) => setting(x.name, x[which])).join(t('sep.list'));
        out.append(el('p', { id: 'fit-unstated', class: 'note' },
          fill('fit.unstated', list('chosen'), list('slowest'), num(u.tokens_per_second.worst),
            num(u.tokens_per_second.best))));
      }
    }
    if (r.inference?.time_to_first_token_seconds !== undefined) {
      const inf = r.inference;
      const s = inf.sizing ?? {};
      // The concurrency the times are at: the one asked, or what the server keeps in flight when
      // that is fewer (docs/time-model.md §5.2).
      const at = inf.concurrency_asked !== undefined && inf.concurrency < inf.concurrency_asked
        ? fill('fit.concurrency_capped', inf.concurrency, inf.concurrency_asked)
        : String(inf.concurrency ?? '—');
      // One row per concurrency: the times and requests per second at the one asked; with a QPS, a
      // second row at the concurrency each replica is sized for (its requests per second, the
      // replicas), whose times the API does not give. (One row had mixed the two: the times at 1
      // beside the requests per second at several hundred.)
      const rows: string[][] = [[at, `${num(inf.time_to_first_token_seconds)} s`, num(inf.per_token_latency_seconds * 1000),
        num(inf.requests_per_second_per_replica), '—', '—']];
      if (s.qps) {
        rows.push([fill('fit.concurrency_sized', s.concurrency_per_replica), '—', '—',
          num(s.requests_per_second_per_replica), num(s.qps), String(s.replicas)]);
        // What a request sees at that load, spread over the replicas (docs/time-model.md §5.4).
        const at = s.at_load;
        if (at) {
          rows.push([fill('fit.concurrency_at_load', num(at.in_flight)), `${num(at.time_to_first_token_seconds)} s`,
            num(at.per_token_latency_seconds * 1000), num(at.requests_per_second_per_replica), num(s.qps),
            String(s.replicas)]);
        }
      }
      const serving = table(
        [t('fit.concurrency'), t('fit.ttft'), t('fit.per_token_ms'), t('fit.rps_replica'), t('fit.qps'), t('fit.replicas')],
        rows,
      );
      serving.id = 'fit-serving';
      out.append(el('h3', {}, t('fit.serving')), serving);
    }
    if (r.inference) {
      const inf = r.inference;
      const count = (x: number | null | undefined): string =>
        x === null || x === undefined ? '—' : x.toLocaleString(currentLang() === 'zh' ? 'zh-CN' : 'en-US');
      const server = table(
        [t('fit.kv_cache_tokens'), t('fit.max_concurrency'), t('fit.kv_per_sequence')],
        [[count(inf.kv_cache_tokens), count(inf.max_concurrency), gib(inf.kv_cache_per_sequence)]],
      );
      server.id = 'inference';
      out.append(el('h3', {}, t('fit.inference')), server);
    }
    // How far to trust the time: the published runs on this card, or that none was checked
    // (POST /api/fit `accuracy`, data/accuracy.yaml); the CLI's sentence, in the page's language.
    if (r.accuracy && !r.accuracy.gpus) {  // (a search's is under its ranking)
      out.append(el('p', { id: 'fit-accuracy', class: 'note' }, accuracyText(r.accuracy)));
    }
    checkpointSection(out, r);
    if (r.suggestions?.length) {
      out.append(
        el('h3', {}, t('fit.suggestions')),
        el('ul', { id: 'suggestions' }, ...r.suggestions.map((s: Json) => {
          // Each with its memory per GPU against the card's, and a button that applies it.
          const li = el('li', {}, `${s.change} → ${s.result} · ${gib(s.memory_per_gpu_total)} / ${gib(s.gpu_memory)}`);
          if (apply) {
            const b = el('button', { type: 'button', class: 'apply-suggestion' }, t('fit.apply'));
            b.addEventListener('click', () => apply(s));
            li.append(' ', b);
          }
          return li;
        })),
      );
    }
  }
  if (r.candidates?.length) {
    out.append(el('h3', {}, t('fit.candidates')));
    const c = r.candidates as Json[];
    memoryChart(
      out,
      c.map((x) => `${x.gpu} ×${x.gpus}`),
      c.map((x) => [x.memory_per_gpu_total ?? 0]),
      c.map((x) => x.gpu_memory),
      [],
      [{ name: t('col.memory'), colour: '#8c9bb5' }],
    );
    const ranked = table(
        [t('col.gpu'), t('col.count'), t('col.layout'), t('col.memory'), t('col.time'), t('col.cost')],
        c.map((x) => [
          x.gpu,
          x.gpus,
          // Inference candidates are replicas of a tp x pp layout; training ones have dp and ZeRO.
          x.inference
            ? `tp${x.tp} pp${x.pp} ×${x.replicas ?? 1}`
            : `tp${x.tp} pp${x.pp}${x.vpp > 1 ? ` vpp${x.vpp}` : ''} dp${x.dp} zero${x.zero}`,
          gib(x.memory_per_gpu_total),
          // With a QPS, the latency a request sees at that load (§5.4), as the ranking uses it.
          x.inference
            ? fill('unit.ms_per_token', num((x.inference.sizing?.at_load?.per_token_latency_seconds
              ?? x.inference.per_token_latency_seconds) * 1000, 3))
            : x.total_hours !== null && x.total_hours !== undefined
              ? hours(x.total_hours)
              : fill('unit.tokens_per_second', num(x.tokens_per_second)),
          x.cost?.amount === undefined || x.cost?.amount === null
            ? '—'
            : fill(x.inference || x.cost.per === 'hour' ? 'unit.per_hour'
              : x.cost.per === 'job' ? 'unit.for_job' : 'unit.per_mtok', money(x.cost.amount, x.cost.currency)),
        ]),
      );
    ranked.id = 'candidates';
    out.append(ranked);
    if (r.accuracy) {
      out.append(el('p', { id: 'fit-accuracy', class: 'note' }, accuracyText(r.accuracy)));
    }
  }
  if (!r.memory_per_gpu) checkpointSection(out, r);
}

// A span of time as the CLI writes it (fit_text.cc, Span): tenths of a second under 10 s, whole
// seconds under two minutes, whole minutes under two hours, then hours to a tenth.
const span = (s: number): string =>
  s < 10 ? `${s.toFixed(1)} s` : s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min`
    : `${(s / 3600).toLocaleString(currentLang() === 'zh' ? 'zh-CN' : 'en-US',
      { minimumFractionDigits: 1, maximumFractionDigits: 1 })} h`;
// Decimal gigabytes, as storage and links count them (a checkpoint of 987,751,890,944 bytes: 988 GB).
const gbytes = (b: number): string => `${num(b / 1e9)} GB`;
// What providers promise for resuming a job on another node (the issue's articles): 10 minutes.
const PROMISED_RESTORE_SECONDS = 600;
const present = (x: unknown): x is number => x !== null && x !== undefined;

// How far to trust the time (POST /api/fit `accuracy`, data/accuracy.yaml), as the CLI says it:
// one card's published runs, or that none on it was checked; for a search, each card shown.
function accuracyText(a: Json): string {
  const pct = (x: number): string => (100 * x).toFixed(1);
  // The worst checked run off by half the time or more (accuracy.worst_run_time_ratio): said as the CLI says it.
  // `where`: the card (or the cards without runs) a search's warning is about.
  const worstRun = (ratio: number | null | undefined, where?: string): string => {
    if (ratio == null) return '';
    const words = fill(ratio >= 1 ? 'fit.accuracy_worst_slower' : 'fit.accuracy_worst_faster', ratio.toFixed(1));
    return t('fit.accuracy_sep') + t('fit.accuracy_warning') + (where ? fill('fit.accuracy_worst_card', where, words) : words);
  };
  const signed = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  const kind = t(`fit.accuracy_${a.kind}`);
  // The card's runs of the request's precision and framework family (`setup`), as the CLI words them.
  const precisionWords = (s: Json): string => t(s.precision === 'fp8' ? 'fit.accuracy_fp8' : 'fit.accuracy_16bit');
  const familyWords = (s: Json): string =>
    s.framework === 'any' ? t('fit.accuracy_any_framework') : fill('fit.accuracy_family', s.framework);
  if (a.gpus) {
    // (One run on a card has no median: its error alone.)
    const checked = (a.gpus as Json[]).filter((g) => g.on_gpu).map((g) => (g.on_gpu.rows === 1
      ? fill('fit.accuracy_search_card_one', g.gpu, signed(g.on_gpu.worst_error))
      : fill('fit.accuracy_search_card', g.gpu, g.on_gpu.rows, pct(g.on_gpu.median_abs_error),
        signed(g.on_gpu.worst_error))) + (g.setup
      ? fill('fit.accuracy_search_setup', precisionWords(g.setup), familyWords(g.setup), g.setup.rows,
        signed(g.setup.lowest_error), signed(g.setup.highest_error), signed(g.setup.median_error)) : ''));
    const none = (a.gpus as Json[]).filter((g) => !g.on_gpu).map((g) => g.gpu as string);
    if (none.length) checked.push(fill('fit.accuracy_search_none', none.join(t('sep.list'))));
    // Each card whose worst run was off by half or more, and once for the cards without runs.
    const warned = (a.gpus as Json[]).filter((g) => g.on_gpu && g.worst_run_time_ratio != null)
      .map((g) => worstRun(g.worst_run_time_ratio, g.gpu));
    const unchecked = (a.gpus as Json[]).find((g) => !g.on_gpu && g.worst_run_time_ratio != null);
    if (unchecked) warned.push(worstRun(unchecked.worst_run_time_ratio, t('fit.accuracy_worst_unchecked')));
    return fill('fit.accuracy_search', kind, a.source, checked.join(t('fit.accuracy_sep'))) + warned.join('');
  }
  if (a.on_gpu) {
    const s = a.setup;
    let lean = '';
    if (s) {
      const abs = (x: number): string => pct(Math.abs(x));
      lean = s.highest_error < 0
        ? fill('fit.accuracy_setup_below', precisionWords(s), familyWords(s), a.gpu, s.rows, kind,
          abs(s.highest_error), abs(s.lowest_error), abs(s.median_error))
        : s.lowest_error > 0
          ? fill('fit.accuracy_setup_above', precisionWords(s), familyWords(s), a.gpu, s.rows, kind,
            abs(s.highest_error), abs(s.lowest_error), abs(s.median_error))
          : fill('fit.accuracy_setup_mixed', precisionWords(s), familyWords(s), a.gpu, s.rows, kind,
            pct(s.median_abs_error), signed(s.lowest_error), signed(s.highest_error));
      lean += t('fit.accuracy_sep');
    }
    if (a.on_gpu.rows === 1) {
      return lean + fill('fit.accuracy_card_one', kind, a.gpu, signed(a.on_gpu.worst_error), a.all.rows,
        pct(a.all.median_abs_error), signed(a.all.worst_error), a.source) + worstRun(a.worst_run_time_ratio);
    }
    return lean + fill('fit.accuracy_card', a.on_gpu.rows, kind, a.gpu, pct(a.on_gpu.median_abs_error),
      signed(a.on_gpu.worst_error), a.all.rows, pct(a.all.median_abs_error), signed(a.all.worst_error), a.source) +
      worstRun(a.worst_run_time_ratio);
  }
  return fill('fit.accuracy_none', kind, a.gpu, a.all.rows, (a.gpus_checked as string[]).join(t('sep.list')),
    pct(a.all.median_abs_error), signed(a.all.worst_error), a.source) + worstRun(a.worst_run_time_ratio);
}

// "Checkpoint and data" (issue 29 req. 6): one checkpoint's size and who writes it, the save
// (and whether training waits), the sync off the node, a restore on another node against the
// promised 10 minutes, the interval, the time lost, and the dataset's upload; each row one
// figure of POST /api/fit's `checkpoint` and `data`, the API's notes under the table.
function checkpointSection(out: HTMLElement, r: Json): void {
  const c = r.checkpoint;
  const upload = r.data?.upload_seconds;
  if (!c && !present(upload)) return;
  const rows: [string, string, string][] = [];
  const restore = (s: number): string =>
    fill(s <= PROMISED_RESTORE_SECONDS ? 'fit.ckpt.restore_within' : 'fit.ckpt.restore_over', span(s));
  // Waiting for a replacement node (--node-wait-minutes, or the offers' node_replacement_hours)
  // comes before the restore: the resume is both, and that is what the 10 minutes are about.
  const resume = (): string => {
    const total = present(c.resume_seconds) ? c.resume_seconds : c.restore_seconds;
    return restore(total) + (c.node_wait_seconds > 0 ? fill('fit.ckpt.wait_part', span(c.node_wait_seconds)) : '');
  };
  const storageRate = (): string =>
    fill('fit.ckpt.storage_value', num(c.storage_gbps)) + (c.storage_assumed ? t('fit.ckpt.assumed') : '');
  if (c && !c.training) {
    // Inference: the weights a replica loads, and loading them on another node.
    rows.push(['weights', t('fit.ckpt.weights'), fill('fit.ckpt.weights_value', gbytes(c.bytes), gbytes(c.bytes_per_rank))]);
    rows.push(['storage', t('fit.ckpt.storage'), storageRate()]);
    rows.push(['restore', t('fit.ckpt.restore'), resume()]);
  } else if (c) {
    rows.push(['size', t('fit.ckpt.size'), fill('fit.ckpt.size_value', gbytes(c.bytes), num(c.bytes_per_param))]);
    rows.push(['split', t('fit.ckpt.split'), fill('fit.ckpt.split_value', gbytes(c.bytes_per_rank), gbytes(c.node_bytes))]);
    if (c.save_mode) {
      rows.push(['writer', t('fit.ckpt.writer'), `${r.framework ?? ''}${t('sep.colon')}${t(`fit.ckpt.${c.save_mode}`)}`]);
    }
    rows.push(['save', t('fit.ckpt.save'), c.async
      ? fill('fit.ckpt.save_async_value', span(c.save_seconds), span(c.write_seconds))
      : fill('fit.ckpt.save_value', span(c.save_seconds))]);
    rows.push(['storage', t('fit.ckpt.storage'), storageRate()]);
    rows.push(['sync', t('fit.ckpt.sync'), present(c.sync_seconds)
      ? fill('fit.ckpt.sync_value', span(c.sync_seconds))
      : t('fit.ckpt.sync_none')]);
    rows.push(['restore', t('fit.ckpt.restore'), resume()]);
    rows.push(['interval', t('fit.ckpt.interval'), present(c.interval_seconds)
      ? fill('fit.ckpt.interval_value', span(c.interval_seconds), num(c.failures_per_hour), c.failure_basis ?? '')
      : t('fit.ckpt.interval_none')]);
    if (present(c.lost_fraction) && present(c.interval_seconds)) {
      rows.push(['lost', t('fit.ckpt.lost'), fill('fit.ckpt.lost_value', num(100 * c.lost_fraction))
        + (present(c.lost_hours) ? fill('fit.ckpt.lost_hours', hours(c.lost_hours)) : '')]);
    }
    if (present(c.spot_checkpoint_minutes)) {
      rows.push(['spot', t('fit.ckpt.spot'), fill('fit.ckpt.spot_value', span(60 * c.spot_checkpoint_minutes))]);
    }
  }
  if (present(upload)) {
    rows.push(['upload', t('fit.ckpt.upload'),
      fill('fit.ckpt.upload_value', span(upload), gbytes(r.data.dataset_bytes), r.data.uplink?.name ?? '')]);
  }
  const tab = table([t('fit.ckpt.item'), t('fit.ckpt.figure')], rows.map(([, label, value]) => [label, value]));
  tab.id = 'checkpoint';
  tab.className = 'facts';
  tab.querySelectorAll('tbody tr').forEach((tr, i) => tr.setAttribute('data-row', rows[i][0]));
  out.append(el('section', { id: 'checkpoint-section' }, el('h3', { id: 'checkpoint-title' }, t('fit.ckpt.title')), tab,
    ...((c?.notes ?? []) as string[]).map((n) => el('p', { class: 'note' }, n))));
}

// --- cost ---------------------------------------------------------------------------------

async function costView(root: HTMLElement): Promise<void> {
  const offers = el('textarea', { name: 'offers', id: 'in-offers', rows: '8', placeholder: 'currency: CNY\noffers:\n  - id: ...' });
  const offersFile = el('input', { type: 'file', id: 'offers-file', accept: '.yaml,.yml,.txt' });
  const shipped = await get<Json[]>('/api/offers');
  const example = select('offers_example', ['', ...shipped.map((o) => o.name)], '',
    [t('cost.example.none'), ...shipped.map((o) => o.name)]);
  example.addEventListener('change', () => {
    const o = shipped.find((x) => x.name === example.value);
    if (o) offers.value = o.text;
  });
  const usageFile = el('input', { type: 'file', id: 'usage-file', accept: '.csv,.txt' });
  const hoursIn = input('hours_per_month', '', 'number');
  const gpusIn = input('gpus', '1', 'number');
  const month = input('month', '');
  // compare --by: side by side per provider, region or offer (each one's best plan) instead of
  // one pure strategy per billing mode.
  const by = select('by', ['mode', 'provider', 'region', 'offer'], 'mode',
    [t('cost.by.mode'), t('cost.by.provider'), t('cost.by.region'), t('cost.by.offer')]);
  const out = el('section', { id: 'cost-out', 'aria-live': 'polite' });
  offersFile.addEventListener('change', async () => {
    offers.value = (await readFile(offersFile)) ?? offers.value;
  });
  const body = async (): Promise<Json> => {
    const b: Json = { offers: offers.value };
    const usage = await readFile(usageFile);
    if (usage) b.usage = usage;
    else if (hoursIn.value) {
      b.hours_per_month = Number(hoursIn.value);
      b.gpus = Number(gpusIn.value);
    }
    if (month.value) b.month = month.value;
    return b;
  };
  const action = (id: string, label: string, job: string, render: (r: Json) => void): HTMLButtonElement => {
    const b = el('button', { type: 'button', id }, label);
    b.addEventListener('click', async () => {
      out.replaceChildren(loadingState());
      try {
        const req = await body();
        if (job === 'breakeven') {
          // Break-even is per GPU and hour of the month: it takes none of the usage fields (a
          // filled-in hours per month made the API refuse `gpus` as an unknown key).
          delete req.usage;
          delete req.hours_per_month;
          delete req.gpus;
        }
        if (job === 'compare' && by.value !== 'mode') req.by = by.value;
        out.replaceChildren();
        render(await post<Json>(`/api/cost/${job}`, req));
      } catch (e) {
        showError(out, e);
      }
    });
    return b;
  };
  root.append(
    el(
      'div',
      { class: 'form' },
      field(t('cost.offers'), offers),
      field(t('cost.example'), example),
      field(t('cost.upload'), offersFile),
      field(t('cost.usage'), usageFile),
      field(t('cost.hours'), hoursIn),
      field(t('cost.gpus'), gpusIn),
      field(t('cost.month'), month),
      field(t('cost.by'), by),
      el(
        'div',
        { class: 'buttons' },
        action('cost-breakeven', t('cost.breakeven'), 'breakeven', (r) => renderBreakeven(out, r)),
        action('cost-compare', t('cost.compare'), 'compare', (r) => renderCompare(out, r)),
        action('cost-optimize', t('cost.optimize'), 'optimize', (r) => renderPlan(out, r)),
      ),
    ),
    out,
  );
}

function renderBreakeven(out: HTMLElement, r: Json): void {
  out.append(el('h3', {}, `${t('cost.breakeven')} ${r.month}`));
  chart(out, {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 80, right: 30, top: 40, bottom: 50 },
    xAxis: { type: 'value', name: t('cost.hours_axis'), nameLocation: 'middle', nameGap: 30, max: r.month_hours },
    yAxis: { type: 'value', name: `${t('cost.cost_axis')} (${r.currency})` },
    series: r.series.map((s: Json) => ({
      name: `${s.offer} (${s.mode})`,
      type: 'line',
      showSymbol: false,
      data: s.points.map((p: Json) => [p.hours, p.cost_per_gpu]),
    })),
  });
  out.append(
    table(
      [t('col.mode'), t('col.mode'), t('cost.hours_axis')],
      r.pairs.map((p: Json) => [p.from_offer, p.to_offer, p.hours_per_month === null ? p.note : p.hours_per_month.toFixed(0)]),
    ),
  );
}

// Every fee of a plan on its own line (cost.* of gpuplan cost compare/optimize --json); lines of 0
// are left out, the total last. "addons_included" is part of the lines above it, said so.
const COST_LINES = ['reserved', 'on_demand', 'spot', 'addons_included', 'stopped_instances', 'recreate',
  'storage_and_bandwidth', 'subsidies'];
function costLines(c: Json, currency: string): HTMLTableElement {
  const rows = COST_LINES.filter((k) => Math.abs(c[k] ?? 0) > 0.005)
    .map((k) => [t(`cost.line.${k}`), k === 'subsidies' ? `− ${money(c[k], currency)}` : money(c[k], currency)]);
  rows.push([t('col.total'), money(c.total, currency)]);
  return table([t('cost.line'), t('col.money')], rows);
}

const modeName = (m: string): string => t(`mode.${m}`);

function renderCompare(out: HTMLElement, r: Json): void {
  if (r.groups) {
    renderGroups(out, r);
    return;
  }
  const modes = Object.keys(r.strategies);
  out.append(el('h3', {}, t('cost.compare')));
  chart(out, {
    tooltip: {},
    grid: { left: 100, right: 30, top: 20, bottom: 30 },
    xAxis: { type: 'category', data: modes.map(modeName) },
    yAxis: { type: 'value', name: r.currency },
    series: [{ type: 'bar', data: modes.map((m) => (r.strategies[m].feasible ? r.strategies[m].total_cost : 0)) }],
  }, 260);
  out.append(
    table(
      [t('col.mode'), t('col.total'), t('col.feasible')],
      modes.map((m) => {
        const s = r.strategies[m];
        return [modeName(m), s.feasible ? money(s.total_cost, r.currency) : '—',
          s.feasible ? '✓' : `✗ ${s.note || ''}`.trim()];
      }),
    ),
  );
}

// compare --by provider|region|offer: each group's best plan, cheapest first, every fee on its
// own line (issue 25 req. 7: the page shows the table the CLI prints).
function renderGroups(out: HTMLElement, r: Json): void {
  const groups: Json[] = r.groups;
  const ok = groups.filter((g) => g.feasible);
  out.append(el('h3', { id: 'groups-title' }, fill('cost.by.title', t(`cost.by.${r.by}`))));
  chart(out, {
    tooltip: {},
    grid: { left: 100, right: 30, top: 20, bottom: 30 },
    xAxis: { type: 'category', data: ok.map((g) => g.key) },
    yAxis: { type: 'value', name: r.currency },
    series: [{ type: 'bar', data: ok.map((g) => g.total_cost) }],
  }, 260);
  const cols = COST_LINES.filter((k) => ok.some((g) => Math.abs(g.cost[k] ?? 0) > 0.005));
  out.append(
    table(
      [t('col.rank'), t(`cost.by.${r.by}`), t('col.offers'), ...cols.map((k) => t(`cost.line.${k}`)), t('col.total')],
      groups.map((g) => [
        g.feasible ? String(g.rank) : '✗',
        g.key,
        (g.offers ?? []).join(', '),
        ...cols.map((k) => (g.feasible ? (k === 'subsidies' ? `− ${money(g.cost[k], r.currency)}` : money(g.cost[k], r.currency)) : '—')),
        g.feasible ? money(g.total_cost, r.currency) : `${t('cost.text.not_possible')} ${g.note || ''}`.trim(),
      ]),
    ),
  );
}

function renderPlan(out: HTMLElement, r: Json): void {
  out.append(
    el('h3', { id: 'plan-title' }, t('cost.plan')),
    el('p', { id: 'plan-total', class: r.feasible ? 'verdict ok' : 'verdict bad' }, `${t('col.total')}${t('sep.colon')}${money(r.total_cost, r.currency)}`),
    table(
      [t('cost.reserved'), t('cost.on_demand'), t('cost.spot')],
      [[
        r.reserved.map((x: Json) => `${x.offer} ×${x.instances}`).join(', ') || '—',
        hours(r.on_demand_gpu_hours),
        hours(r.spot_gpu_hours),
      ]],
    ),
    el('h4', {}, t('cost.lines')),
    costLines(r.cost, r.currency),
  );
  const subsidies = Object.entries(r.subsidies ?? {}) as [string, number][];
  if (subsidies.length) {
    out.append(el('h4', {}, t('cost.line.subsidies')),
      table([t('col.subsidy'), t('col.money')], subsidies.map(([id, v]) => [id, `− ${money(v, r.currency)}`])));
  }
  out.append(
    el('h4', {}, t('cost.savings')),
    table(
      [t('col.mode'), t('col.total'), t('cost.savings')],
      Object.keys(r.pure_strategies).map((m) => [
        modeName(m),
        r.pure_strategies[m] === null ? '—' : money(r.pure_strategies[m], r.currency),
        r.savings[m] === null || r.savings[m] === undefined ? '—' : `${(100 * r.savings[m]).toFixed(1)} %`,
      ]),
    ),
  );
}

// --- usage (meter) ------------------------------------------------------------------------

async function meterView(root: HTMLElement): Promise<void> {
  const from = input('from', '');
  const to = input('to', '');
  const by = select('by', ['gpu', 'user', 'job', 'pod'], 'gpu',
    ['gpu', 'user', 'job', 'pod'].map((v) => t(`meter.by.${v}`)));
  // The offer the money is priced by, from the server's --meter-offers file (issue 26 req. 3).
  const meterOffers = await get<Json[]>('/api/meter/offers').catch(() => [] as Json[]);
  const offer = select('offer', ['', ...meterOffers.map((o) => o.id)], meterOffers.length === 1 ? meterOffers[0].id : '',
    [t('meter.offer.none'), ...meterOffers.map((o) => fill('meter.offer.label', o.id, o.gpu, t(`mode.${o.mode}`),
      money(o.price, o.currency)))]);
  const load = el('button', { type: 'button', id: 'meter-load' }, t('meter.load'));
  const out = el('section', { id: 'meter-out' });
  // A second click while a load is still fetching starts over: the older load stops at its next
  // answer instead of appending its alerts and charts below the newer one's.
  let loads = 0;
  load.addEventListener('click', async () => {
    const mine = ++loads;
    const stale = (): boolean => mine !== loads;
    // No range given: the store's own span (its last 31 days at most), read from a first report
    // (issue 26 req. 3: the current month of an older store was all zeros).
    if (!from.value && !to.value) {
      try {
        const pq = new URLSearchParams({ by: by.value });
        if (offer.value) pq.set('offer', offer.value);
        const probe = await get<Json>(`/api/meter/report?${pq}`);
        if (stale()) return;
        if (probe.store) {
          const end = Date.parse(probe.store.to);
          const start = Math.max(Date.parse(probe.store.from), end - 31 * 24 * 3600 * 1000);
          from.value = new Date(start).toISOString().slice(0, 16) + 'Z';
          to.value = new Date(end).toISOString().slice(0, 16) + 'Z';
        }
      } catch (e) {
        if (e instanceof ApiError && e.field === 'meter_db') {
          out.replaceChildren(emptyState(t('meter.none')));
          return;
        }
      }
    }
    const range = new URLSearchParams();
    if (from.value) range.set('from', from.value);
    if (to.value) range.set('to', to.value);
    const q = new URLSearchParams(range);
    q.set('by', by.value);
    if (offer.value) q.set('offer', offer.value);
    try {
      out.replaceChildren(loadingState());
      const r = await get<Json>(`/api/meter/report?${q}`);
      if (stale()) return;
      out.replaceChildren();
      renderMeter(out, r);
      // The alerts the range raised: the database replayed through the server's alert rules.
      const alerts = new URLSearchParams(range);
      if (offer.value) alerts.set('offer', offer.value);
      const alertsAnswer = await get<Json>(`/api/meter/alerts?${alerts}`);
      if (stale()) return;
      renderAlerts(out, alertsAnswer);
      // Money over time: per hour up to 14 days, else per day (one read of the database for all
      // the slots on the server).
      const slots = new URLSearchParams(range);
      slots.set('step', r.hours > 14 * 24 ? 'day' : 'hour');
      if (offer.value) slots.set('offer', offer.value);
      const timeline = await get<Json>(`/api/meter/timeline?${slots}`);
      if (stale()) return;
      renderMoneyOverTime(out, timeline);
      // Hour by hour: the GPUs busy and the GPUs held (the usage CSVs the meter exports for
      // gpuplan cost, basis busy and allocated); held but not busy in red.
      const held = new URLSearchParams(range);
      held.set('basis', 'allocated');
      const busyCsv = await get<string>(`/api/meter/export?${range}`);
      const heldCsv = await get<string>(`/api/meter/export?${held}`);
      if (stale()) return;
      renderUsageOverTime(out, busyCsv, heldCsv);
    } catch (e) {
      if (stale()) return;
      if (e instanceof ApiError && e.field === 'meter_db') out.replaceChildren(emptyState(t('meter.none')));
      else showError(out, e);
    }
  });
  root.append(
    el('div', { class: 'form' }, field(t('meter.from'), from), field(t('meter.to'), to), field(t('meter.by'), by),
      field(t('meter.offer'), offer), load),
    out,
  );
}

// Per slot: the money billed while busy (blue) and the idle-but-billed money (red), stacked.
function renderMoneyOverTime(out: HTMLElement, tl: Json): void {
  const slots = tl.slots as Json[];
  const section = el('div', { id: 'meter-money' }, el('h3', {}, t('meter.money_over_time')));
  out.append(section);
  if (!tl.priced) {
    section.append(el('p', { class: 'note' }, t('meter.unpriced')));
    return;
  }
  chart(section, {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 70, right: 30, top: 40, bottom: 60 },
    xAxis: { type: 'category', data: slots.map((x) => localLabel(x.from)), axisLabel: { rotate: 30 } },
    yAxis: { type: 'value', name: tl.currency },
    series: [
      { name: t('meter.busy_money'), type: 'bar', stack: 'm', barCategoryGap: 0, itemStyle: { color: '#5470c6' },
        data: slots.map((x) => x.total.money - x.total.idle_money) },
      { name: t('meter.idle_money'), type: 'bar', stack: 'm', barCategoryGap: 0, itemStyle: { color: '#d00' },
        data: slots.map((x) => x.total.idle_money) },
    ],
  }, 280);
}

function renderUsageOverTime(out: HTMLElement, busyCsv: string, heldCsv: string): void {
  const rows = (csv: string): string[][] => csv.trim().split('\n').slice(1).map((line) => line.split(','));
  const busy = rows(busyCsv);
  const held = new Map(rows(heldCsv).map((r) => [r[0], Number(r[1])]));
  if (!busy.length) return;
  const section = el('div', { id: 'meter-hours' }, el('h3', {}, t('meter.over_time')));
  out.append(section);
  chart(section, {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 60, right: 30, top: 40, bottom: 60 },
    xAxis: { type: 'category', data: busy.map((r) => localLabel(r[0])), axisLabel: { rotate: 30 } },
    yAxis: { type: 'value', name: t('col.count') },
    series: [
      { name: t('col.busy'), type: 'line', step: 'end', stack: 'g', areaStyle: {}, showSymbol: false, itemStyle: { color: '#5470c6' },
        data: busy.map((r) => Number(r[1])) },
      { name: t('meter.held_idle'), type: 'line', step: 'end', stack: 'g', areaStyle: { color: '#d00' }, showSymbol: false,
        itemStyle: { color: '#d00' }, data: busy.map((r) => Math.max(0, (held.get(r[0]) ?? 0) - Number(r[1]))) },
    ],
  }, 280);
}

function renderMeter(out: HTMLElement, r: Json): void {
  const groups = r.groups as Json[];
  chart(out, {
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid: { left: 120, right: 30, top: 40, bottom: 30 },
    xAxis: { type: 'value', name: 'h' },
    yAxis: { type: 'category', data: groups.map((g) => g.key), inverse: true },
    series: [
      { name: t('col.busy'), type: 'bar', stack: 'h', itemStyle: { color: '#5470c6' }, data: groups.map((g) => g.busy_hours) },
      { name: t('col.idle'), type: 'bar', stack: 'h', itemStyle: { color: '#d00' }, data: groups.map((g) => g.idle_hours) },
    ],
  }, Math.max(160, 60 + 36 * groups.length));
  out.append(
    table(
      [t('col.group'), t('col.busy'), t('col.idle'), t('col.use_money'), t('col.idle_money')],
      [...groups, r.total].map((g) => [
        g === r.total ? t('col.total') : g.key,
        g.busy_hours.toFixed(1),
        g.idle_hours.toFixed(1),
        r.priced ? money(g.use_money, r.currency) : '—',
        r.priced ? money(g.idle_money, r.currency) : '—',
      ]),
    ),
  );
  if (r.idle?.length) {
    out.append(el('h3', {}, t('meter.idle')),
      el('ul', { class: 'alerts', id: 'meter-idle' }, ...r.idle.map((i: Json) => el('li', { class: 'bad' }, i.line))));
  }
  if (r.right_sizing?.length) {
    out.append(el('h3', {}, t('meter.right_sizing')),
      el('ul', { id: 'right-sizing' }, ...r.right_sizing.map((x: Json) => el('li', {}, x.line))));
  }
  if (r.projection) {
    const p = r.projection;
    out.append(el('h3', {}, `${t('meter.projection')} ${p.month}`),
      table([t('meter.so_far'), t('meter.projected')], [[money(p.so_far, r.currency), money(p.projected, r.currency)]]));
  }
  for (const n of r.notes ?? []) out.append(el('p', { class: 'note' }, n));
}

// A duration in minutes as the alert lines give it: minutes under two hours, else hours.
// An axis label from an ISO time in the report's zone: "2026-03-02T08:00+08:00" -> "03-02 08:00"
// (the zone is the report's, said in its header; issue 26 req. 3: raw ISO strings on the axes).
const localLabel = (iso: string): string => {
  const m = /^\d{4}-(\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso ?? '');
  return m ? `${m[1]} ${m[2]}` : iso;
};
const duration = (m: number): string => (m >= 120 ? `${(m / 60).toFixed(1)} h` : `${m.toFixed(0)} min`);

// gpuplan meter alerts --json: one row per alert (time, GPU, kind, how long, money per hour, money
// so far), the money of idle cards in red; reminders of an alert already raised are hidden until
// asked for.
function renderAlerts(out: HTMLElement, a: Json): void {
  const alerts = a.alerts as Json[];
  const fresh = alerts.filter((x) => !x.repeat);
  const section = el('div', { id: 'meter-alerts' }, el('h3', {}, t('meter.alerts')));
  out.append(section);
  const kinds = Object.entries(a.counts as Record<string, number>)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${t(`alert.${k}`)} ${n}`)
    .join(' · ');
  section.append(el('p', { id: 'meter-alerts-summary' },
    `${t('meter.alerts_count').replace('{n}', String(alerts.length)).replace('{new}', String(fresh.length))}${kinds ? ` (${kinds})` : ''}`));
  if (!alerts.length) {
    section.append(emptyState(t('meter.alerts_none')));
    for (const n of a.notes ?? []) section.append(el('p', { class: 'note' }, n));
    return;
  }
  const perHour = (m: Json): string => (m ? `${m.amount.toFixed(2)} ${m.currency}/h` : '—');
  // Incidents (issue 26 req. 3): each stretch once, with its whole duration and money so far (the
  // last alert of the stretch), the costliest first; an alert row alone shows only its first 30 min.
  const incidents = new Map<string, Json>();
  for (const x of alerts) {
    const key = `${x.gpu}|${x.kind}|${x.since}`;
    const seen = incidents.get(key);
    if (!seen || x.minutes > seen.minutes) incidents.set(key, x);
  }
  const worst = [...incidents.values()].sort((p, q) =>
    (q.money?.amount ?? 0) - (p.money?.amount ?? 0) || q.minutes - p.minutes);
  const incidentTable = table(
    [t('col.since'), t('col.gpu'), t('col.kind'), t('col.duration'), t('col.money')],
    worst.map((x) => [x.since, x.gpu === null ? '—' : `GPU ${x.gpu}`, t(`alert.${x.kind}`), duration(x.minutes),
      x.money ? money(x.money.amount, x.money.currency) : '—']),
  );
  incidentTable.id = 'meter-incidents';
  section.append(el('h4', {}, t('meter.incidents')), incidentTable);
  const body = el('tbody');
  const show = (all: boolean): void => {
    body.replaceChildren(...(all ? alerts : fresh).map((x) => {
      const idle = x.kind === 'idle_no_process';
      const moneyCell = el('td', idle && x.money ? { class: 'bad' } : {}, x.money ? money(x.money.amount, x.money.currency) : '—');
      moneyCell.setAttribute('data-label', t('col.money'));
      return el('tr', { 'data-kind': x.kind, class: x.repeat ? 'repeat' : '' },
        el('td', { 'data-label': t('col.at') }, x.at),
        el('td', { 'data-label': t('col.gpu') }, x.gpu === null ? '—' : `GPU ${x.gpu}`),
        el('td', { 'data-label': t('col.kind') }, t(`alert.${x.kind}`)),
        el('td', { 'data-label': t('col.duration') }, duration(x.minutes)),
        el('td', idle ? { class: 'bad', 'data-label': t('col.money_per_hour') } : { 'data-label': t('col.money_per_hour') },
          perHour(x.money_per_hour)),
        moneyCell);
    }));
  };
  const all = el('input', { type: 'checkbox', id: 'meter-alerts-all' });
  all.addEventListener('change', () => show(all.checked));
  section.append(
    el('label', { class: 'note' }, all, ` ${t('meter.alerts_all')}`),
    el('table', { id: 'meter-alerts-table' },
      el('thead', {}, el('tr', {}, ...[t('col.at'), t('col.gpu'), t('col.kind'), t('col.duration'),
        t('col.money_per_hour'), t('col.money')].map((h) => el('th', {}, h)))),
      body),
  );
  show(false);
  for (const n of a.notes ?? []) section.append(el('p', { class: 'note' }, n));
}

// --- check reports ------------------------------------------------------------------------

async function checkView(root: HTMLElement): Promise<void> {
  const out = el('section', { id: 'check-out' });
  let list: Json;
  try {
    list = await get<Json>('/api/check/reports');
  } catch (e) {
    if (e instanceof ApiError && e.field === 'reports') root.append(emptyState(t('check.none')));
    else showError(root, e);
    return;
  }
  const picked: HTMLInputElement[] = [];
  const rows = (list.reports as Json[]).map((r) => {
    const open = el('button', { type: 'button', class: 'open-report', 'data-name': r.name }, t('check.open'));
    const pick = el('input', { type: 'checkbox', class: 'pick-report', 'data-name': r.name, 'aria-label': t('check.select') });
    open.disabled = r.error !== null;
    pick.disabled = r.error !== null;
    picked.push(pick);
    open.addEventListener('click', async () => {
      try {
        out.replaceChildren();
        renderReport(out, r.name, await get<Json>(`/api/check/reports/${encodeURIComponent(r.name)}`));
      } catch (e) {
        showError(out, e);
      }
    });
    return el('tr', {}, el('td', {}, pick), el('td', {}, r.name), el('td', {}, r.error ?? t(`verdict.${r.verdict}`)),
      el('td', {}, r.expect ?? ''), el('td', {}, open));
  });
  const compare = el('button', { type: 'button', id: 'check-compare' }, t('check.compare'));
  compare.addEventListener('click', async () => {
    const names = picked.filter((p) => p.checked).map((p) => p.dataset.name as string);
    if (names.length < 2) {
      out.replaceChildren(errorState(t('check.compare_need_two')));
      return;
    }
    try {
      out.replaceChildren();
      renderComparison(out, await post<Json>('/api/check/compare', { reports: names }));
    } catch (e) {
      showError(out, e);
    }
  });
  root.append(
    el('table', { id: 'reports' },
      el('thead', {}, el('tr', {}, ...[t('check.select'), t('col.report'), t('col.verdict'), '', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows)),
    el('div', { class: 'buttons' }, compare),
    out,
  );
}

// A measured number as the page shows it: six significant digits.
const figure = (x: number): string => String(Number(x.toPrecision(6)));

// gpuplan check compare --json: one column per report; the machine's card, GPUs and verdict,
// then every test's cell (the worst status, the weakest GPU's value). The tests a lab compares
// providers by first.
const KEY_TESTS = ['gemm_bf16', 'stream_triad', 'pcie_h2d_pinned', 'burn_in_temperature', 'burn_in_tflops'];

function renderComparison(out: HTMLElement, c: Json): void {
  const machines = c.machines as Json[];
  const rank = (k: string): number => (KEY_TESTS.includes(k) ? KEY_TESTS.indexOf(k) : KEY_TESTS.length);
  const rows = [...(c.rows as Json[])].sort((a, b) => rank(a.test) - rank(b.test));
  const head: (string | number)[][] = [
    [t('col.card'), ...machines.map((m) => m.card)],
    [t('col.gpus'), ...machines.map((m) => m.gpus)],
    [t('col.verdict'), ...machines.map((m) => t(`verdict.${m.verdict}`))],
  ];
  if (machines.some((m) => m.price_per_hour !== null)) {
    head.push([t('col.price_per_hour'), ...machines.map((m) => (m.price_per_hour === null ? '—' : money(m.price_per_hour, c.currency ?? '')))]);
    head.push([t('col.rank'), ...machines.map((m) => m.rank ?? '—')]);
  }
  const body = rows.map((row) => [
    `${row.test}${row.unit ? ` (${row.unit})` : ''}`,
    ...row.cells.map((cell: Json) => (cell === null ? '—' : `${cell.measured === null ? cell.text || '—' : figure(cell.measured)} · ${t(`verdict.${cell.status}`)}`)),
  ]);
  const tbl = table([t('col.test'), ...machines.map((m) => `${m.file} (${m.label})`)], [...head, ...body]);
  tbl.id = 'comparison';
  out.append(el('h3', {}, t('check.compare_title')), tbl);
  if (c.rank_basis) out.append(el('p', { class: 'note' }, c.rank_basis));
  for (const n of c.notes ?? []) out.append(el('p', { class: 'note' }, n));
}

// The burn-in's NVML curves (docs/check.md §6 curves[]): temperature, power and SM clock over
// the seconds of the test, one line per GPU in each, on three grids of one chart.
const CURVE_FIGURES: [string, string][] = [['temperature_c', 'check.temperature'], ['power_w', 'check.power'], ['sm_clock_mhz', 'check.sm_clock']];

function burnInChart(out: HTMLElement, curves: Json[]): void {
  const box = el('div', { id: 'burn-in' }, el('h4', {}, t('check.burn_in')));
  out.append(box);
  const n = CURVE_FIGURES.length;
  const top = (i: number): number => 40 + i * 170;
  chart(box, {
    tooltip: { trigger: 'axis' },
    legend: { top: 0, type: 'scroll' },
    grid: CURVE_FIGURES.map((_, i) => ({ left: 70, right: 30, top: top(i), height: 120 })),
    xAxis: CURVE_FIGURES.map((_, i) => ({ type: 'value', gridIndex: i, name: i === n - 1 ? t('check.seconds') : '', min: 0 })),
    yAxis: CURVE_FIGURES.map(([, label], i) => ({ type: 'value', gridIndex: i, name: t(label), scale: true })),
    series: CURVE_FIGURES.flatMap(([key, label], i) =>
      curves.map((cv) => ({
        name: `GPU ${cv.gpu}${cv.node ? ` ${cv.node}` : ''} · ${t(label)}`,
        type: 'line',
        xAxisIndex: i,
        yAxisIndex: i,
        showSymbol: cv.t.length < 30,
        connectNulls: false,
        data: (cv.t as (number | null)[]).map((s, k) => [s, cv[key][k]]),
      })),
    ),
  }, top(n) + 10);
}

function renderReport(out: HTMLElement, name: string, r: Json): void {
  out.append(
    el('h3', {}, name),
    el('p', { id: 'report-verdict', class: r.verdict === 'FAIL' || r.verdict === 'ERROR' ? 'verdict bad' : 'verdict ok' },
      `${t('check.verdict')}${t('sep.colon')}${t(`verdict.${r.verdict}`)}`),
  );
  const burnIn = ((r.curves ?? []) as Json[]).filter((c) => c.test === 'burn_in');
  if (burnIn.length) burnInChart(out, burnIn);
  // Tests with a measured and a promised number: measured as a share of promised.
  const numeric = (r.tests as Json[]).filter((x) => typeof x.measured === 'number' && typeof x.expected === 'number' && x.expected !== 0);
  if (numeric.length) {
    out.append(el('h4', {}, t('check.chart')));
    chart(out, {
      tooltip: { trigger: 'axis' },
      grid: { left: 200, right: 30, top: 20, bottom: 30 },
      xAxis: { type: 'value', name: '%' },
      yAxis: { type: 'category', data: numeric.map((x) => `${x.name}${x.gpu === null ? '' : ` #${x.gpu}`}`) },
      series: [{
        type: 'bar',
        data: numeric.map((x) => ({
          value: (100 * x.measured) / x.expected,
          itemStyle: { color: x.status === 'FAIL' ? '#d00' : x.status === 'WARN' ? '#e6a700' : '#3a3' },
        })),
        markLine: { data: [{ xAxis: 100 }], symbol: 'none' },
      }],
    }, Math.max(160, 60 + 28 * numeric.length));
  }
  // Figures to 4 significant digits (3067.833782857143 GB/s -> 3,068 GB/s); what was seen and what
  // to do (issue 26 req. 3: "XID 79 ... give it back" was never shown).
  const figure = (v: number | null | undefined, unit: string): string =>
    v === null || v === undefined ? '—' : `${num(v, 4)} ${unit ?? ''}`.trim();
  const tests = table(
    [t('col.test'), t('col.status'), t('col.measured'), t('col.expected'), t('col.evidence')],
    (r.tests as Json[]).map((x) => [
      `${x.name}${x.gpu === null ? '' : ` #${x.gpu}`}`,
      t(`verdict.${x.status}`),
      x.measured_text ?? figure(x.measured, x.unit),
      x.expected_text ?? figure(x.expected, x.unit),
      [x.evidence, x.advice ? `→ ${x.advice}` : ''].filter((s: string) => s).join(' '),
    ]),
  );
  tests.id = 'report-tests';
  out.append(el('h4', {}, t('check.tests')), tests);
}

// --- plan: the coming months' work to one rental plan (POST /api/plan, docs/plan.md) ----------

// One row of the jobs or services table: an input per column, read back as the workload's keys.
type RowSpec = { key: string; kind: 'text' | 'number' | 'select' | 'check' | 'month-day'; values?: string[]; labels?: string[]; value?: string };

function editableRows(id: string, specs: RowSpec[], headers: string[], first: Record<string, string>): {
  node: HTMLElement; add: (v?: Record<string, string>) => void; read: () => Record<string, string | boolean>[];
} {
  const body = el('tbody', {});
  const add = (v: Record<string, string> = {}): void => {
    const tr = el('tr', {});
    specs.forEach((sp, i) => {
      let c: HTMLInputElement | HTMLSelectElement;
      if (sp.kind === 'select') {
        c = el('select', { 'data-key': sp.key });
        (sp.values ?? []).forEach((x, j) => {
          const o = el('option', { value: x }, sp.labels?.[j] ?? x);
          if (x === (v[sp.key] ?? sp.value)) o.selected = true;
          c.append(o);
        });
      } else {
        c = el('input', { 'data-key': sp.key, type: sp.kind === 'check' ? 'checkbox' : sp.kind === 'number' ? 'number' : 'text' });
        if (sp.kind === 'check') (c as HTMLInputElement).checked = (v[sp.key] ?? sp.value) === 'true';
        else (c as HTMLInputElement).value = v[sp.key] ?? sp.value ?? '';
        if (sp.kind === 'month-day') (c as HTMLInputElement).placeholder = 'YYYY-MM-DD';
      }
      tr.append(el('td', { 'data-label': headers[i] }, c));
    });
    body.append(tr);
  };
  add(first);
  const read = (): Record<string, string | boolean>[] =>
    [...body.querySelectorAll('tr')].map((tr) => {
      const r: Record<string, string | boolean> = {};
      tr.querySelectorAll<HTMLInputElement | HTMLSelectElement>('[data-key]').forEach((c) => {
        const k = c.getAttribute('data-key') as string;
        r[k] = c instanceof HTMLInputElement && c.type === 'checkbox' ? c.checked : c.value.trim();
      });
      return r;
    });
  const node = el('table', { id, class: 'rows' }, el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))), body);
  return { node, add, read };
}

async function planView(root: HTMLElement): Promise<void> {
  const [models, shipped] = await Promise.all([get<Json[]>('/api/models'), get<Json[]>('/api/offers')]);
  const names = models.map((m) => m.name);
  const from = input('plan_from', '2027-03');
  const to = input('plan_to', '2027-08');
  const jobs = editableRows('plan-jobs', [
    { key: 'id', kind: 'text' },
    { key: 'model', kind: 'select', values: names, value: 'Qwen2.5-7B' },
    { key: 'task', kind: 'select', values: ['full', 'lora', 'qlora', 'pretrain'], labels: ['full', 'lora', 'qlora', 'pretrain'].map((v) => t(`task.${v}`)), value: 'lora' },
    { key: 'tokens', kind: 'number' },
    { key: 'every', kind: 'select', values: ['once', 'month'], labels: [t('plan.every.once'), t('plan.every.month')], value: 'month' },
    { key: 'from', kind: 'month-day' },
    { key: 'to', kind: 'month-day' },
    { key: 'interruptible', kind: 'check' },
  ], [t('plan.col.id'), t('plan.col.model'), t('plan.col.task'), t('plan.col.tokens'), t('plan.col.every'),
    t('plan.col.window_from'), t('plan.col.window_to'), t('plan.col.interruptible')],
  { id: 'experiments', tokens: '4e8', interruptible: 'true' });
  const services = editableRows('plan-services', [
    { key: 'id', kind: 'text' },
    { key: 'model', kind: 'select', values: names, value: 'Qwen2.5-7B' },
    { key: 'qps', kind: 'number' },
    { key: 'prompt_tokens', kind: 'number', value: '1024' },
    { key: 'output_tokens', kind: 'number', value: '256' },
    { key: 'latency_ms', kind: 'number' },
  ], [t('plan.col.id'), t('plan.col.model'), t('plan.col.qps'), t('plan.col.prompt'), t('plan.col.output'), t('plan.col.latency')],
  { id: 'chat', qps: '1', latency_ms: '50' });
  const addJob = el('button', { type: 'button', id: 'plan-add-job' }, t('plan.add_job'));
  addJob.addEventListener('click', () => jobs.add({ id: `job-${jobs.read().length + 1}` }));
  const addService = el('button', { type: 'button', id: 'plan-add-service' }, t('plan.add_service'));
  addService.addEventListener('click', () => services.add({ id: `service-${services.read().length + 1}` }));
  const budget = input('plan_budget', '', 'number');
  const maxGpus = input('plan_max_gpus', '', 'number');
  const offers = el('textarea', { name: 'plan_offers', id: 'in-plan_offers', rows: '8', placeholder: 'currency: CNY\noffers:\n  - id: ...' });
  const example = select('plan_offers_example', ['', ...shipped.map((o) => o.name)], '',
    [t('cost.example.none'), ...shipped.map((o) => o.name)]);
  example.addEventListener('change', () => {
    const o = shipped.find((x) => x.name === example.value);
    if (o) offers.value = o.text;
  });
  const out = el('section', { id: 'plan-out', 'aria-live': 'polite' });
  // The workload file as JSON (a YAML parser reads JSON): the questions' answers by the keys of
  // docs/plan.md §1; an empty cell leaves its key out.
  const workload = (): Json => {
    const w: Json = { months: `${from.value.trim()}..${to.value.trim()}` };
    const training = jobs.read().filter((j) => j.id && j.tokens).map((j) => {
      const x: Json = { id: j.id, model: j.model, task: j.task, tokens: Number(j.tokens), every: j.every };
      if (j.from && j.to) x.window = { from: j.from, to: j.to };
      if (j.interruptible) x.interruptible = true;
      return x;
    });
    const serving = services.read().filter((v) => v.id && v.qps).map((v) => {
      const x: Json = { id: v.id, model: v.model, qps: Number(v.qps) };
      for (const k of ['prompt_tokens', 'output_tokens', 'latency_ms']) if (v[k]) x[k] = Number(v[k]);
      return x;
    });
    if (training.length) w.training = training;
    if (serving.length) w.serving = serving;
    const limits: Json = {};
    if (budget.value) limits.budget_per_month = Number(budget.value);
    if (maxGpus.value) limits.max_gpus = Number(maxGpus.value);
    if (Object.keys(limits).length) w.limits = limits;
    return w;
  };
  const go = el('button', { type: 'button', id: 'plan-make' }, t('plan.make'));
  go.addEventListener('click', async () => {
    out.replaceChildren(loadingState());
    try {
      const r = await post<Json>('/api/plan', { workload: JSON.stringify(workload()), offers: [offers.value] });
      out.replaceChildren();
      renderPlanResult(out, r);
    } catch (e) {
      showError(out, e);
    }
  });
  root.append(
    el('div', { class: 'form' },
      field(t('plan.months_from'), from),
      field(t('plan.months_to'), to),
      field(t('plan.budget'), budget),
      field(t('plan.max_gpus'), maxGpus),
      el('section', { class: 'wide' }, el('h3', {}, t('plan.training')), jobs.node, el('div', { class: 'buttons' }, addJob)),
      el('section', { class: 'wide' }, el('h3', {}, t('plan.serving')), services.node, el('div', { class: 'buttons' }, addService)),
      field(t('plan.offers'), offers),
      field(t('cost.example'), example),
      el('div', { class: 'buttons wide' }, go)),
    out,
  );
}

function renderPlanResult(out: HTMLElement, r: Json): void {
  const cur = r.currency;
  if (!r.feasible) {
    out.append(errorState(`${t('plan.none')}: ${r.unserved}`));
    return;
  }
  out.append(el('h3', { id: 'plan-total-sum' }, fill('plan.total', money(r.total, cur), String(r.months.length))));
  const months = table(
    [t('plan.month'), t('col.total'), t('plan.budget_check'), t('plan.runs')],
    (r.months as Json[]).map((m) => [
      m.month,
      money(m.total, cur),
      m.within_budget === null ? '—' : t(m.within_budget ? 'plan.within_budget' : 'plan.over_budget'),
      (m.runs as Json[]).map((x) => fill(x.kind === 'serving' ? 'plan.run.service' : 'plan.run.job', x.id, String(x.gpus), x.gpu,
        x.kind === 'serving' ? '' : num(x.hours))).join('; '),
    ]),
  );
  months.id = 'plan-months';
  months.querySelectorAll('tbody tr').forEach((tr, i) => tr.setAttribute('data-month', r.months[i].month));
  out.append(months);
  for (const m of r.months as Json[]) {
    const d = el('details', { class: 'plan-month', 'data-month': m.month }, el('summary', {}, `${m.month} · ${money(m.total, cur)}`));
    d.append(costLines(m.cost, cur));
    out.append(d);
  }
  if ((r.alternatives as Json[]).length) {
    const alts = table([t('plan.alternative'), t('col.total'), t('plan.gives_up')],
      (r.alternatives as Json[]).map((a) => [
        a.provider ? `${t(`plan.alt.${a.name}`)} (${a.provider})` : t(`plan.alt.${a.name}`),
        a.feasible ? money(a.total, cur) : '—',
        a.gives_up,
      ]));
    alts.id = 'plan-alternatives';
    out.append(el('h4', {}, t('plan.alternatives')), alts);
  }
  // How far the time model behind the hours and the service sizes came from published runs on
  // the cards rented (POST /api/plan's accuracy.training / training_moe / serving, as fit's note).
  for (const kind of ['training', 'training_moe', 'serving']) {
    const a = r.accuracy?.[kind];
    if (a) out.append(el('p', { id: `plan-accuracy-${kind}`, class: 'note' }, accuracyText(a)));
  }
  const checks = el('ul', { id: 'plan-checks' }, ...(r.checks as Json[]).map((c) => el('li', {}, `${c.gpu}: `, el('code', {}, c.command))));
  out.append(el('h4', {}, t('plan.checks')), checks);
  if (r.alerts) {
    out.append(el('h4', {}, t('plan.alerts')), el('pre', { id: 'plan-alerts' }, r.alerts));
  }
  for (const n of r.notes as string[]) out.append(el('p', { class: 'note' }, n));
}

// --- shell --------------------------------------------------------------------------------

const VIEWS: Record<string, (root: HTMLElement) => Promise<void>> = {
  fit: fitView,
  cost: costView,
  plan: planView,
  meter: meterView,
  check: checkView,
};
let current = location.hash.replace('#', '') in VIEWS ? location.hash.replace('#', '') : 'fit';

async function render(): Promise<void> {
  document.title = `gpuplan · ${t('app.title')}`;
  langButton.textContent = t('lang.switch');
  tabs.replaceChildren(
    ...Object.keys(VIEWS).map((v) => {
      const a = el('a', { href: `#${v}`, id: `tab-${v}`, class: v === current ? 'active' : '' }, t(`tab.${v}`));
      return a;
    }),
  );
  app.replaceChildren();
  const root = el('div', { class: 'view', id: `view-${current}` });
  app.append(root);
  try {
    await VIEWS[current](root);
  } catch (e) {
    showError(root, e);
  }
}

langButton.addEventListener('click', () => {
  setLang(currentLang() === 'zh' ? 'en' : 'zh');
  void render();
});
window.addEventListener('hashchange', () => {
  const v = location.hash.replace('#', '');
  if (v in VIEWS) {
    current = v;
    void render();
  }
});
setLang(currentLang());
// Token mode: the page opened as /#token=... keeps the token in the server's cookie first.
void openSessionFromHash().then(render, (e: unknown) => {
  app.replaceChildren();
  const root = el('div', { class: 'view' });
  app.append(root);
  showError(root, e);
});
