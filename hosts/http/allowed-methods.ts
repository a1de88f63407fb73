import type { RouteDef } from './route.ts';

/**
 * The methods a path answers, as `Allow` lists them (HEAD with GET, OPTIONS everywhere), or null for a path
 * no route has. One reading of the route table for both OPTIONS and 405, so they never disagree.
 */
export function allowedMethods(routes: readonly RouteDef[]): (path: string) => string[] | null {
  const matchers = routes.map((route) => ({
    method: route.method.toUpperCase(),
    pattern: new RegExp(`^${route.path.replace(/\{[a-z_]+\}/g, '[^/]+')}/?$`),
  }));
  return (path) => {
    const methods = matchers.filter((m) => m.pattern.test(path)).map((m) => m.method);
    if (methods.length === 0) return null;
    if (methods.includes('GET')) methods.push('HEAD');
    methods.push('OPTIONS');
    return [...new Set(methods)];
  };
}
