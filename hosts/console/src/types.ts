/** The API's answers the console reads (names and fields as /openapi.json states them). */
export type Scope = 'read' | 'rent' | 'manage' | 'billing';

export interface Node {
  id: string;
  provider: string;
  gpu_type: string;
  gpu_model: string;
  gpu_count: number;
  vram_gb: number;
  price_per_hour_cents: number;
  price_per_gpu_hour_cents: number;
  spot_price_per_gpu_hour_cents: number | null;
  price_verified: boolean;
  cpus: number;
  ram_gb: number;
  disk_gb: number;
  download_mbps: number | null;
  ports: number | null;
  country: string | null;
  region: string | null;
  docker_in_docker: boolean;
  mig: boolean;
  baremetal: boolean;
  virtualized: boolean;
  available: number;
  supported_operations: string[];
}
export interface ProviderStatus {
  provider: string;
  status: 'ok' | 'error';
  error: string | null;
  snapshot_age_seconds: number | null;
  fetched_at: string | null;
  count: number;
  ignored_filters: string[];
  extra_filter_keys: string[];
}
export interface GpuSearch {
  nodes: Node[];
  total: number;
  providers: ProviderStatus[];
  ignored_filters: string[];
  rentals_open: boolean;
}
export interface MarketSummary {
  updated_at: string;
  stale: boolean;
  gpus_available: number;
  machines: number;
  families: { gpu_type: string; gpu_model: string; min_price_per_gpu_hour_cents: number; available_gpus: number; machines: number; max_vram_gb: number }[];
  rentals_open: boolean;
}
export interface Instance {
  id: string;
  node_id: string;
  provider: string;
  name: string | null;
  status: 'provisioning' | 'running' | 'rebooting' | 'terminating' | 'terminated' | 'failed';
  gpu_type: string;
  gpu_count: number;
  rate_cents_per_hour: number;
  charged_cents: number;
  created_at: string;
  started_at: string | null;
  paid_until: string;
  removal_scheduled_at: string | null;
  window_ends_at: string | null;
  terminated_at: string | null;
  ssh_host: string | null;
  ssh_port: number | null;
  failure: string | null;
  image: string | null;
  supported_operations: string[];
}
export interface Pause {
  kind: 'emergency_stop' | 'breaker' | 'hold';
  reason: string | null;
  paused_at: string;
  tenant_can_resume: boolean;
}
export interface Account {
  tenant_id: string;
  balance_cents: number;
  owed_cents: number;
  available_cents: number;
  burn_cents_per_hour: number;
  stops_at: string | null;
  paid_to_removal: boolean;
  rentals: 'open' | 'paused';
  running_machines: number;
  pause: Pause | null;
  card: { brand: string; last4: string } | null;
  auto_recharge: { enabled: boolean; threshold_cents: number; amount_cents: number; last_error: string | null; payments_last_24h: number; max_payments_per_24h: number };
  payments: { card: boolean; bank_transfer: boolean };
}
export interface LedgerEntry {
  id: string;
  kind: string;
  amount_cents: number;
  balance_after_cents: number;
  reference: string | null;
  description: string | null;
  created_at: string;
}
export interface Deposit {
  id: string;
  kind: 'bank_transfer' | 'checkout' | 'credit';
  status: 'pending' | 'confirmed' | 'rejected' | 'expired';
  amount_cents: number;
  reference: string | null;
  reason: string | null;
  created_at: string;
  decided_at: string | null;
}
export interface Checkout {
  session_id: string;
  url: string;
  amount_cents: number;
  status: string;
  deposit_id: string;
}
export interface Token {
  id: string;
  kind: 'api' | 'session';
  name: string | null;
  scopes: Scope[];
  spend_limit_cents: number | null;
  committed_cents: number;
  max_rental_hours: number | null;
  expires_at: string | null;
  parent_id: string | null;
  created_at: string;
  revoked_at: string | null;
}
export interface TokenCreated extends Token {
  token: string;
}
export interface TokenSelf extends Token {
  tenant_id: string;
  remaining_cents: number | null;
}
export interface SshKey {
  id: string;
  name: string;
  public_key: string;
  fingerprint: string;
  created_at: string;
}
export interface Image {
  id: string;
  name: string;
  image: string;
  registry_username: string | null;
  has_registry_password: boolean;
  command: string | null;
  created_at: string;
}
export interface Template {
  id: string;
  name: string;
  image_id: string | null;
  image: string | null;
  ssh_key_ids: string[];
  termination_hours: number | null;
  volume_ids: string[];
  created_at: string;
}
export interface Volume {
  id: string;
  name: string;
  size_gb: number;
  provider: string;
  region: string;
  status: string;
  attached_instance_id: string | null;
  price_per_gb_month_cents: number;
  created_at: string;
}
export interface Reservation {
  id: string;
  status: string;
  starts_at: string;
  hours: number;
  ends_at: string;
  node_id: string | null;
  instance_id: string | null;
  rate_cents_per_hour: number;
  failure: string | null;
  created_at: string;
}
export interface SignedIn {
  status: 'signed_in' | 'new_password_required';
  token?: string;
  tenant_id?: string;
  expires_at?: string;
  session?: string;
}
export interface DeviceStart {
  device_code: string;
  user_code: string;
  verification_uri: string;
  expires_in: number;
  interval: number;
}
export interface DevicePoll {
  status: 'pending' | 'slow_down' | 'expired' | 'denied' | 'complete';
  interval: number;
  token?: string;
}
