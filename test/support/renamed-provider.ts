import type { Offer } from '../../core/market/offer.ts';
import type { Provider } from '../../core/ports/providers.ts';

/**
 * A working provider under a name the registry does not know (adapters/providers/registry.ts): a cloud an embedder
 * passes in, or one dropped from the build while its instances remain. Its offers and node ids carry the new name;
 * everything else is the inner provider's (no reboot, volumes or spot: only the Provider port itself).
 */
export function renamedProvider(inner: Provider, name: string): Provider {
  const rename = (offer: Offer): Offer => ({ ...offer, id: `${name}:${offer.id.slice(inner.name.length + 1)}`, provider: name });
  return {
    name,
    machineOptions: inner.machineOptions,
    extraFilterKeys: inner.extraFilterKeys,
    ...(inner.unfilterable && { unfilterable: inner.unfilterable }),
    listOffers: async (signal) => (await inner.listOffers(signal)).map(rename),
    isOfferId: (offerId) => inner.isOfferId(offerId),
    getOffer: async (offerId, signal) => {
      const offer = await inner.getOffer(offerId, signal);
      return offer && rename(offer);
    },
    createMachine: (request) => inner.createMachine(request),
    getMachine: (machineId) => inner.getMachine(machineId),
    listMachines: () => inner.listMachines(),
    terminateMachine: (machineId) => inner.terminateMachine(machineId),
  };
}
