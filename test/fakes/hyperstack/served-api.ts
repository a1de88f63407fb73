import { arr, bool, int, nullable, num, obj, servedDescription, str } from '../../support/served-api.ts';

/**
 * What the Hyperstack fake serves, as this project reads Hyperstack's Infrahub API (docs/decisions.md,
 * 'Hyperstack'): the operations the adapter uses, the fields each request carries, and those of each answer the
 * adapter reads. Every answer but the pricebook is the `{status, message, ...}` envelope.
 */
const answer = (fields: Record<string, Record<string, unknown>>) => obj({ status: bool, ...fields });
const paged = { page: int, pageSize: int };
const environment = obj({ name: str }, { region: str });
const instance = obj(
  { id: int, name: str, status: str },
  { floating_ip: nullable(str), labels: arr(str), environment, flavor: obj({ name: str }, { gpu: str, gpu_count: int }), keypair: obj({ name: nullable(str) }), volume_attachments: arr(obj({}, { volume: obj({ id: int }, { name: str }) })) },
);
const volume = obj({ id: int, name: str, size: num }, { status: str, environment, attachments: arr(obj({}, { instance_id: nullable(int) })) });

export const HYPERSTACK_SERVED = servedDescription({
  title: 'Hyperstack Infrahub API v1, as the fake serves it',
  server: 'https://infrahub-api.nexgencloud.com/v1',
  auth: { header: 'api_key' },
  error: obj({ status: bool, message: str }, { error_reason: str }),
  operations: {
    'GET /core/flavors': {
      answers: { 200: answer({ data: arr(obj({ flavors: arr(obj({ name: str }, { gpu: str, gpu_count: int, cpu: num, ram: num, disk: num, region_name: str, stock_available: bool })) }, { region_name: str })) }) },
    },
    'GET /pricebook': { answers: { 200: arr(obj({ name: str, value: { anyOf: [str, num] } })) } },
    'GET /core/regions': { answers: { 200: answer({ regions: arr(obj({ name: str }, { country: nullable(str) })) }) } },
    'GET /core/environments': { query: { search: str }, answers: { 200: answer({ environments: arr(environment) }) } },
    'POST /core/environments': { body: obj({ name: str, region: str }), answers: { 200: answer({ environment }) } },
    'GET /core/keypairs': { query: paged, answers: { 200: answer({ keypairs: arr(obj({ id: int, name: str }, { public_key: str, environment })) }) } },
    'POST /core/keypairs': { body: obj({ environment_name: str, name: str, public_key: str }), answers: { 200: answer({ keypair: obj({ id: int, name: str }) }) } },
    'GET /core/virtual-machines': { query: paged, answers: { 200: answer({ instances: arr(instance) }) } },
    'POST /core/virtual-machines': {
      body: obj(
        { name: str, environment_name: str, flavor_name: str, image_name: str, key_name: str, count: int },
        { labels: arr(str), assign_floating_ip: bool, enable_port_randomization: bool, user_data: str, volume_name: str },
      ),
      answers: { 200: answer({ instances: arr(instance) }) },
    },
    'GET /core/virtual-machines/{id}': { answers: { 200: answer({ instance }) } },
    'DELETE /core/virtual-machines/{id}': { answers: { 200: answer({}) } },
    'GET /core/virtual-machines/{id}/hard-reboot': { answers: { 200: answer({}) } },
    'GET /core/volumes': { query: paged, answers: { 200: answer({ volumes: arr(volume) }) } },
    'POST /core/volumes': { body: obj({ name: str, environment_name: str, size: int, volume_type: str }, { description: str }), answers: { 200: answer({ volume }) } },
    'GET /core/volumes/{id}': { answers: { 200: answer({ volume }) } },
    'DELETE /core/volumes/{id}': { answers: { 200: answer({}) } },
  },
});
