import { arr, bool, int, num, obj, oneOf, servedDescription, str } from '../../support/served-api.ts';

/**
 * What the Shadeform fake serves, as this project reads Shadeform's API reference (docs/decisions.md, 'Shadeform'):
 * the operations the adapter uses, the fields each request carries, and those of each answer the adapter reads.
 */
const STATUS = oneOf('creating', 'pending_provider', 'pending', 'active', 'error', 'deleting', 'deleted');
const RENTAL = oneOf('on_demand', 'spot');

const instance = obj(
  { id: str, cloud: str, region: str, name: str, status: STATUS, ip: str, ssh_user: str, ssh_port: int, hourly_price: int },
  { status_details: str, tags: arr(str), ssh_key_id: str, volume_ids: arr(str), rental_type: RENTAL },
);

const volume = obj({ id: str, cloud: str, region: str, name: str, size_in_gb: int, mounted_by: str });

export const SHADEFORM_SERVED = servedDescription({
  title: 'Shadeform API v1, as the fake serves it',
  server: 'https://api.shadeform.ai/v1',
  auth: { header: 'X-API-KEY' },
  error: obj({ message: str }, { error: str }),
  operations: {
    'GET /instances/types': {
      answers: {
        200: obj({
          instance_types: arr(
            obj(
              {
                cloud: str,
                shade_instance_type: str,
                hourly_price: int,
                configuration: obj({ num_gpus: int, gpu_type: str, vram_per_gpu_in_gb: num }, { vcpus: num, memory_in_gb: num, storage_in_gb: num }),
                availability: arr(obj({ region: str, available: bool }, { rental_type: RENTAL, hourly_price: int })),
              },
              { cloud_instance_type: str },
            ),
          ),
        }),
      },
    },
    'GET /instances': { answers: { 200: obj({ instances: arr(instance) }) } },
    'POST /instances/create': {
      body: obj(
        { cloud: str, region: str, shade_instance_type: str, shade_cloud: bool, name: str },
        {
          tags: arr(str),
          ssh_key_id: str,
          volume_ids: arr(str, { maxItems: 1 }),
          rental_type: RENTAL,
          launch_configuration: obj({ type: oneOf('script', 'docker') }, { script_configuration: obj({ base64_script: str }) }),
        },
      ),
      answers: { 200: obj({ id: str }, { cloud_assigned_id: str }) },
    },
    'GET /instances/{id}/info': { answers: { 200: instance } },
    'POST /instances/{id}/delete': { answers: { 200: null } },
    'POST /instances/{id}/restart': { answers: { 200: null } },
    'GET /sshkeys': { answers: { 200: obj({ ssh_keys: arr(obj({ id: str, name: str, public_key: str })) }) } },
    'POST /sshkeys/add': { body: obj({ name: str, public_key: str }), answers: { 200: obj({ id: str }) } },
    'GET /volumes/types': { answers: { 200: obj({ volume_types: arr(obj({ cloud: str, region: str, price_per_gb_per_hour: str })) }) } },
    'GET /volumes': { answers: { 200: obj({ volumes: arr(volume) }) } },
    'POST /volumes/create': { body: obj({ cloud: str, region: str, size_in_gb: int, name: str }), answers: { 200: obj({ id: str }) } },
    'GET /volumes/{id}/info': { answers: { 200: volume } },
    'POST /volumes/{id}/delete': { answers: { 200: null } },
  },
});
