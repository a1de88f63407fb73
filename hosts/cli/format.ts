/** How gpuctl shows values to people. Money stays in integer cents until it becomes text. */

/** $12.34 from 1234 cents; -$0.05; thousands grouped. Integer arithmetic only: no float ever holds money. */
export function money(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return '-';
  if (!Number.isSafeInteger(cents)) throw new Error(`not integer cents: ${cents}`);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const dollars = Math.trunc(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, '0')}`;
}

/** $2.50/h from a rate in cents per hour. */
export const rate = (centsPerHour: number | null | undefined): string => (centsPerHour === null || centsPerHour === undefined ? '-' : `${money(centsPerHour)}/h`);

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1_000, 's'],
];

/** "3h 12m ago", "in 45m", "just now"; the two largest units, rounded down. */
export function relative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const delta = at - now;
  let left = Math.abs(delta);
  if (left < 1_000) return 'just now';
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    if (left >= size && parts.length < 2) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    } else if (parts.length > 0) break;
  }
  return delta < 0 ? `${parts.join(' ')} ago` : `in ${parts.join(' ')}`;
}

/** Columns padded to their widest cell; an empty list says so instead of printing a lone header. */
export function table(headers: string[], rows: (string | number | null | undefined)[][], empty = 'nothing to show'): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = rows.map((row) => row.map((cell) => (cell === null || cell === undefined || cell === '' ? '-' : String(cell))));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[]) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ');
  return `${[line(headers), ...cells.map(line)].join('\n')}\n`;
}

/** Key: value lines for one object. */
export function fields(pairs: [string, string | number | boolean | null | undefined][]): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return `${pairs.map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${value === null || value === undefined || value === '' ? '-' : String(value)}`).join('\n')}\n`;
}
