import { createServer, type Server } from 'node:http';
import { monitoringAccess } from '../http/monitoring-access.ts';
import { OPERATOR_KEY_HEADER } from '../http/router.ts';

const json = (status: number, detail: string) => ({ status, type: 'application/json; charset=utf-8', body: JSON.stringify({ detail }) });

/**
 * GET /metrics for a process without the API (the sweep daemon), with the API's credentials: an operator key
 * or `Authorization: Bearer <METRICS_TOKEN>`. Anything else is 404 or 405; no rate limit (it listens where
 * only the scraper reaches it, METRICS_PORT).
 */
export function listenMetrics(
  metrics: { render(): Promise<string>; contentType: string },
  access: { operatorKeys: readonly string[]; metricsToken: string | undefined },
  port: number,
  host: string,
): Server {
  const monitoring = monitoringAccess(access.operatorKeys, access.metricsToken);
  const server = createServer((req, res) => {
    const answer = async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') return json(404, `no route ${path}; this port serves GET /metrics only`);
      if (req.method !== 'GET' && req.method !== 'HEAD') return { ...json(405, 'GET /metrics only'), allow: 'GET, HEAD' };
      const key = req.headers[OPERATOR_KEY_HEADER];
      if (!monitoring.callerOf(Array.isArray(key) ? key[0] : key, req.headers.authorization)) return json(401, monitoring.refusal);
      return { status: 200, type: metrics.contentType, body: await metrics.render() };
    };
    answer()
      .catch(() => json(500, 'the metrics could not be rendered'))
      .then(({ status, type, body, ...rest }) => {
        res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), ...('allow' in rest && { allow: rest.allow }) });
        res.end(req.method === 'HEAD' ? undefined : body);
      });
  });
  return server.listen(port, host);
}
