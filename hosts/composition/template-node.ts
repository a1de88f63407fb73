import { DomainError } from '../../core/errors.ts';
import type { CatalogService } from '../../core/catalog/catalog-service.ts';
import type { MarketService } from '../../core/market/market-service.ts';
import type { TemplateNode } from '../http/routes/instance-routes.ts';
import { searchFilterOf } from '../http/schemas/catalog.ts';

/** A template's search, run like GET /v1/gpus: its cheapest node (a rental from a template without a node_id). */
export const templateNode =
  (catalog: CatalogService, market: MarketService): TemplateNode =>
  async (tenantId, templateId) => {
    const template = await catalog.templateForRental(tenantId, templateId);
    if (Object.keys(template.search).length === 0) {
      throw new DomainError('INVALID_INPUT', `body.node_id: required: template ${templateId} has no search to choose a node by`, [{ loc: ['body', 'node_id'], msg: `required: template ${templateId} has no search` }]);
    }
    const { nodes } = await market.search(searchFilterOf(template.search), 1);
    if (!nodes[0]) throw new DomainError('CONFLICT', `no node matches template ${templateId}'s search now; widen it, or rent a node_id from GET /v1/gpus`);
    return nodes[0].offer.id;
  };
