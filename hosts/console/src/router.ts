import { useEffect, useState } from 'preact/hooks';

/** Paths under /console/, the History API, no library: the server answers index.html for any of them. */
export const BASE = '/console';

const listeners = new Set<() => void>();
addEventListener('popstate', () => listeners.forEach((l) => l()));

export function navigate(to: string, replace = false): void {
  const url = to.startsWith('/') ? `${BASE}${to}` : to;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((l) => l());
  scrollTo(0, 0);
}

/** The path within the console ("/market") and its query. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path: path.length > 1 ? path.replace(/\/$/, '') : path, query: new URLSearchParams(location.search) };
}

/** Clicks on <a href="/console/..."> stay in the app (modifier keys and new tabs behave as usual). */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = (event.target as HTMLElement).closest('a');
    if (!a || a.target || a.origin !== location.origin || !a.pathname.startsWith(`${BASE}/`) && a.pathname !== BASE) return;
    event.preventDefault();
    navigate(a.pathname.slice(BASE.length) + a.search || '/');
  });
}
