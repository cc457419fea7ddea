// The page's words from gpuplan's one message catalogue (data/messages.json), Chinese first;
// the choice is remembered in localStorage.
import catalogue from '../../data/messages.json';

export type Lang = 'zh' | 'en';
const KEY = 'gpuplan.lang';
const messages = catalogue.messages as Record<string, Record<Lang, string>>;

let lang: Lang = localStorage.getItem(KEY) === 'en' ? 'en' : 'zh';

export function currentLang(): Lang {
  return lang;
}

export function setLang(l: Lang): void {
  lang = l;
  localStorage.setItem(KEY, l);
  document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
}

// The message in the current language; the key itself when the catalogue lacks it.
export function t(key: string): string {
  return messages[key]?.[lang] ?? key;
}
