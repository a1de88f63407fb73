import { VERDA_ERROR_CODES } from '../../../adapters/providers/verda/client.ts';
import { arr, bool, int, nullable, num, obj, oneOf, servedDescription, str } from '../../support/served-api.ts';

/**
 * What the Verda fake serves, as this project reads Verda's public API (docs/decisions.md, 'Verda'): the operations
 * the adapter uses, the fields each request carries, and those of each answer the adapter reads. New resources are
 * answered with their id alone.
 */
const price = { anyOf: [str, num] };
const tag = obj({ key: str }, { value: nullable(str) });
const instance = obj(
  { id: str, status: str, ip: nullable(str) },
  { hostname: str, description: str, tags: arr(tag), location: str, price_per_hour: price, is_spot: bool, instance_type: str, startup_script_id: nullable(str), volume_ids: arr(str) },
);
const volume = obj({ id: str, name: str, status: str, size: num, location: str }, { instance_id: nullable(str), tags: arr(tag) });
const NEW_ID = str;

export const VERDA_SERVED = servedDescription({
  title: 'Verda public API v1, as the fake serves it',
  server: 'https://api.verda.com/v1',
  auth: 'bearer',
  error: obj({ code: oneOf(...VERDA_ERROR_CODES), message: str }),
  operations: {
    'POST /oauth2/token': {
      open: true,
      body: obj({ grant_type: oneOf('client_credentials', 'refresh_token') }, { client_id: str, client_secret: str, refresh_token: str }),
      answers: { 200: obj({ access_token: str, expires_in: int }, { refresh_token: str, token_type: str }) },
    },
    'GET /instance-types': {
      query: { currency: oneOf('usd', 'eur') },
      answers: {
        200: arr(obj({ instance_type: str, price_per_hour: price, gpu: obj({ number_of_gpus: int }), gpu_memory: obj({ size_in_gigabytes: num }) }, { spot_price: price, currency: str })),
      },
    },
    'GET /instance-availability': { query: { is_spot: bool }, answers: { 200: arr(obj({ location_code: str, availabilities: arr(str) })) } },
    'GET /locations': { answers: { 200: arr(obj({ code: str }, { name: str, country_code: str })) } },
    'GET /instances': { answers: { 200: arr(instance) } },
    'POST /instances': {
      body: obj(
        { instance_type: str, image: str, hostname: str, location_code: str },
        { description: str, tags: arr(tag), ssh_key_ids: arr(str), startup_script_id: str, existing_volumes: arr(str), is_spot: bool, contract: oneOf('PAY_AS_YOU_GO', 'SPOT') },
      ),
      answers: { 202: NEW_ID },
    },
    'PUT /instances': {
      body: obj({ action: oneOf('delete'), id: str }, { delete_permanently: bool }),
      answers: { 202: arr(obj({ instanceId: str, action: str, status: str })) },
    },
    'GET /instances/{id}': { answers: { 200: instance } },
    'GET /ssh-keys': { answers: { 200: arr(obj({ id: str, name: str, key: str })) } },
    'POST /ssh-keys': { body: obj({ name: str, key: str }), answers: { 201: NEW_ID } },
    'POST /scripts': { body: obj({ name: str, script: str }), answers: { 201: NEW_ID } },
    'GET /scripts/{id}': { answers: { 200: obj({ id: str, name: str, script: str }) } },
    'DELETE /scripts/{id}': { answers: { 200: null } },
    'GET /volume-types': { query: { currency: oneOf('usd', 'eur') }, answers: { 200: arr(obj({ type: str, price: obj({ price_per_month_per_gb: num }) })) } },
    'GET /volumes': { answers: { 200: arr(volume) } },
    'POST /volumes': { body: obj({ type: str, location_code: str, size: int, name: str }, { tags: arr(tag) }), answers: { 202: NEW_ID } },
    'GET /volumes/{id}': { answers: { 200: volume } },
    'DELETE /volumes/{id}': { body: obj({ is_permanent: bool }), answers: { 202: null } },
  },
});
