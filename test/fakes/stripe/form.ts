/**
 * Stripe's v1 request encoding: `application/x-www-form-urlencoded` bodies (and query strings) whose
 * keys nest with brackets, `line_items[0][price_data][unit_amount]=500`, `expand[]=customer` or
 * `expand[0]=customer` (stripe-node sends indices). Every leaf is a string, as on the wire.
 */

export type FormValue = string | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

/** A key Stripe would answer 400 for (`a[b` or `a]`), or a key used both as a scalar and a container. */
export class FormError extends Error {
  override readonly name = 'FormError';
}

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;
const isIndex = (segment: string) => segment === '' || /^\d+$/.test(segment);

const containerFor = (next: string): FormValue => (isIndex(next) ? [] : {});

const assign = (root: FormObject, path: string[], value: string, key: string): void => {
  let node: FormValue = root;
  for (let i = 0; i < path.length; i += 1) {
    const segment = path[i]!;
    const last = i === path.length - 1;
    if (Array.isArray(node)) {
      if (!isIndex(segment)) throw new FormError(`Invalid array: ${key}`);
      const index: number = segment === '' ? node.length : Number(segment);
      if (last) node[index] = value;
      else node = node[index] ??= containerFor(path[i + 1]!);
    } else if (typeof node === 'object') {
      if (last) node[segment] = value;
      else node = node[segment] ??= containerFor(path[i + 1]!);
    } else {
      throw new FormError(`Invalid parameter nesting: ${key}`);
    }
  }
};

/** Sparse arrays (`a[0]`, `a[2]`) become dense, as Stripe reads them in order. */
const compact = (value: FormValue): FormValue => {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map(compact);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compact(v)]));
};

export function decodeForm(text: string): FormObject {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const match = KEY.exec(key);
    if (!match) throw new FormError(`Invalid parameter name: ${key}`);
    const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    assign(root, path, value, key);
  }
  return compact(root) as FormObject;
}

/** The same parameters always give the same text, whatever order they were sent in (idempotency check). */
export function canonical(value: FormValue | undefined): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}

// ---- typed reads for the routes ----------------------------------------------------------------

export const str = (params: FormObject, key: string): string | undefined => {
  const value = params[key];
  return typeof value === 'string' ? value : undefined;
};

export const obj = (params: FormObject, key: string): FormObject | undefined => {
  const value = params[key];
  return value !== undefined && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
};

export const list = (params: FormObject, key: string): FormValue[] | undefined => {
  const value = params[key];
  return Array.isArray(value) ? value : undefined;
};

/** Metadata as Stripe stores it: string values only (an empty value unsets a key). */
export const metadataOf = (params: FormObject): Record<string, string> => {
  const metadata = obj(params, 'metadata') ?? {};
  return Object.fromEntries(Object.entries(metadata).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
};

/** The first parameter (as a bracketed path) that `allowed` does not name; nested allowances by key. */
export const unknownParam = (params: FormObject, allowed: Record<string, true | Record<string, unknown>>, prefix = ''): string | null => {
  for (const [key, value] of Object.entries(params)) {
    const name = prefix ? `${prefix}[${key}]` : key;
    const rule = allowed[key];
    if (!rule) return name;
    if (rule === true || typeof value === 'string') continue;
    const nested = rule as Record<string, true | Record<string, unknown>>;
    const items = Array.isArray(value) ? value.map((v, i) => [`${name}[${i}]`, v] as const) : [[name, value] as const];
    for (const [itemName, item] of items) {
      if (typeof item === 'object' && !Array.isArray(item)) {
        const found = unknownParam(item, nested, itemName);
        if (found) return found;
      }
    }
  }
  return null;
};
